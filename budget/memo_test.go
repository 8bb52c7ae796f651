package budget

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"
)

// deepClone copies v the way adk-go rebuilds request contents (a
// reflective deep copy): new structs, slices, pointers and maps; strings
// and values held in interfaces are assigned, so their data stays shared.
func deepClone[T any](v T) T {
	src := reflect.ValueOf(&v).Elem()
	dst := reflect.New(src.Type()).Elem()
	cloneValue(src, dst)
	return dst.Interface().(T)
}

func cloneValue(src, dst reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if !src.IsNil() {
			p := reflect.New(src.Elem().Type())
			cloneValue(src.Elem(), p.Elem())
			dst.Set(p)
		}
	case reflect.Struct:
		for i := range src.NumField() {
			cloneValue(src.Field(i), dst.Field(i))
		}
	case reflect.Slice:
		if !src.IsNil() {
			s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
			for i := range src.Len() {
				cloneValue(src.Index(i), s.Index(i))
			}
			dst.Set(s)
		}
	case reflect.Map:
		if !src.IsNil() {
			m := reflect.MakeMapWithSize(src.Type(), src.Len())
			it := src.MapRange()
			for it.Next() {
				k := reflect.New(it.Key().Type()).Elem()
				cloneValue(it.Key(), k)
				v := reflect.New(it.Value().Type()).Elem()
				cloneValue(it.Value(), v)
				m.SetMapIndex(k, v)
			}
			dst.Set(m)
		}
	default:
		dst.Set(src)
	}
}

// TestMemoSharedStringsDifferentStructure builds contents from the same
// few strings (same data pointers) arranged differently: keys and values
// swapped, nesting changed, a string moved to another field, prefixes of
// one string. Each arrangement must get its own memo entry, and every
// cached answer (on adk-go-style clones) must equal a fresh count.
func TestMemoSharedStringsDifferentStructure(t *testing.T) {
	long := strings.Repeat("error: build failed in ./pkg/x ", 40) // ≥ 512 bytes: string cache too
	a, b := "path", "README.md, go.mod and 17 more files"
	fc := func(args map[string]any) *genai.Content {
		return genai.NewContentFromFunctionCall("list", args, genai.RoleModel)
	}
	fr := func(resp map[string]any) *genai.Content {
		return genai.NewContentFromFunctionResponse("list", resp, genai.RoleUser)
	}
	contents := map[string]*genai.Content{
		"a:b":               fc(map[string]any{a: b}),
		"b:a":               fc(map[string]any{b: a}),
		"a:b,b:a":           fc(map[string]any{a: b, b: a}),
		"a:a,b:b":           fc(map[string]any{a: a, b: b}),
		"a:{b:a}":           fc(map[string]any{a: map[string]any{b: a}}),
		"a:[b]":             fc(map[string]any{a: []any{b}}),
		"a:[[b]]":           fc(map[string]any{a: []any{[]any{b}}}),
		"a:[b,a]":           fc(map[string]any{a: []any{b, a}}),
		"a:[a,b]":           fc(map[string]any{a: []any{a, b}}),
		"a:strlist[b]":      fc(map[string]any{a: []string{b}}),
		"a:strmap{b:a}":     fc(map[string]any{a: map[string]string{b: a}}),
		"a:nil":             fc(map[string]any{a: nil}),
		"a:nilmap":          fc(map[string]any{a: map[string]any(nil)}),
		"nil args":          fc(nil),
		"empty args":        fc(map[string]any{}),
		"a:1":               fc(map[string]any{a: 1}),
		"a:-1":              fc(map[string]any{a: -1}),
		"a:1.5":             fc(map[string]any{a: 1.5}),
		"a:123456789":       fc(map[string]any{a: 123456789.0}),
		"a:json 1.5":        fc(map[string]any{a: json.Number("1.5")}),
		"a:true":            fc(map[string]any{a: true}),
		"a:bytes":           fc(map[string]any{a: []byte(b)}),
		"a:b[:4]":           fc(map[string]any{a: b[:4]}),
		"a[:2]:b":           fc(map[string]any{a[:2]: b}),
		"resp a:b":          fr(map[string]any{a: b}),
		"resp a:long":       fr(map[string]any{a: long}),
		"resp b:long":       fr(map[string]any{b: long}),
		"resp a:long[:600]": fr(map[string]any{a: long[:600]}),
		"text b":            genai.NewContentFromText(b, genai.RoleUser),
		"text a":            genai.NewContentFromText(a, genai.RoleUser),
		"text long":         genai.NewContentFromText(long, genai.RoleUser),
		"texts a,b":         genai.NewContentFromParts([]*genai.Part{{Text: a}, {Text: b}}, genai.RoleUser),
		"texts b,a":         genai.NewContentFromParts([]*genai.Part{{Text: b}, {Text: a}}, genai.RoleUser),
		"code b":            genai.NewContentFromExecutableCode(b, genai.LanguagePython, genai.RoleModel),
		"result b":          genai.NewContentFromCodeExecutionResult(genai.OutcomeOK, b, genai.RoleModel),
		"file a/b":          genai.NewContentFromParts([]*genai.Part{{FileData: &genai.FileData{MIMEType: a, FileURI: b}}}, genai.RoleUser),
		"file b/a":          genai.NewContentFromParts([]*genai.Part{{FileData: &genai.FileData{MIMEType: b, FileURI: a}}}, genai.RoleUser),
		"audio 100":         genai.NewContentFromBytes(make([]byte, 100_000), "audio/wav", genai.RoleUser),
		"audio 200":         genai.NewContentFromBytes(make([]byte, 200_000), "audio/wav", genai.RoleUser),
		"nil part":          {Role: genai.RoleUser, Parts: []*genai.Part{nil}},
		"no parts":          {Role: genai.RoleUser},
	}
	e := NewEstimator(0)
	want := map[string]int{}
	for name, c := range contents {
		want[name] = EstimateContent(c)
		if got := e.EstimateContent(c); got != want[name] {
			t.Errorf("%s: first Estimator answer %d, fresh count %d", name, got, want[name])
		}
	}
	// Every arrangement has its own entry: a collision of two fingerprints
	// would leave fewer entries (and could answer with the other's cost).
	st := e.Stats()
	if st.ContentEntries != len(contents) || st.ContentMisses != uint64(len(contents)) || st.ContentSkips != 0 {
		t.Fatalf("stats %+v: want %d distinct content entries, no skips", st, len(contents))
	}
	// Some arrangements must cost differently, or the test proves nothing.
	for _, pair := range [][2]string{{"a:b", "a:b[:4]"}, {"a:[b]", "a:[b,a]"}, {"a:1", "a:1.5"}, {"resp a:long", "resp a:long[:600]"}, {"code b", "text b"}, {"audio 100", "audio 200"}} {
		if want[pair[0]] == want[pair[1]] {
			t.Errorf("%s and %s both cost %d: pick arrangements that differ", pair[0], pair[1], want[pair[0]])
		}
	}
	// Second pass on clones: all hits, all equal to the fresh count.
	got := map[string]int{}
	for name, c := range contents {
		got[name] = e.EstimateContent(deepClone(c))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cached answers on clones differ from fresh counts (-fresh +cached):\n%s", diff)
	}
	if st2 := e.Stats(); st2.ContentHits != uint64(len(contents)) || st2.ContentMisses != st.ContentMisses {
		t.Errorf("stats after the clone pass %+v: want %d hits and no new miss", st2, len(contents))
	}
}

// TestMemoMutatedMap: maps are walked, never identified by address, so a
// map changed in place after being memoized is counted afresh.
func TestMemoMutatedMap(t *testing.T) {
	args := map[string]any{"path": "a", "nested": map[string]any{"k": "short"}}
	c := genai.NewContentFromFunctionCall("list", args, genai.RoleModel)
	e := NewEstimator(0)
	before := e.EstimateContent(c)
	args["nested"].(map[string]any)["k"] = strings.Repeat("a much longer value ", 20)
	args["more"] = []any{1.0, 2.0, 3.0}
	after, fresh := e.EstimateContent(c), EstimateContent(c)
	if after != fresh || after <= before {
		t.Errorf("after mutation: Estimator %d, fresh %d, before %d", after, fresh, before)
	}
}

// TestMemoSkipsWhatItCannotDescribe: typed values, schemas and text inline
// data are counted directly, with the same result.
func TestMemoSkipsWhatItCannotDescribe(t *testing.T) {
	contents := []*genai.Content{
		genai.NewContentFromFunctionResponse("f", map[string]any{"r": typedResult{Path: "a", Lines: 3}}, genai.RoleUser),
		genai.NewContentFromFunctionCall("f", map[string]any{"s": &genai.Schema{Type: genai.TypeString}}, genai.RoleModel),
		genai.NewContentFromBytes([]byte(`{"a": "b"}`), "application/json", genai.RoleUser),
		genai.NewContentFromFunctionCall("f", map[string]any{"deep": deepValue(fpMaxDepth + 2)}, genai.RoleModel),
	}
	e := NewEstimator(0)
	for pass := range 2 {
		for i, c := range contents {
			if got, want := e.EstimateContent(c), EstimateContent(c); got != want {
				t.Errorf("pass %d, content %d: Estimator %d, fresh %d", pass, i, got, want)
			}
		}
	}
	if st := e.Stats(); st.ContentSkips != uint64(2*len(contents)) || st.ContentEntries != 0 {
		t.Errorf("stats %+v: want every content skipped", st)
	}
	// A self-referencing map is bounded too.
	cyc := map[string]any{"a": "b"}
	cyc["self"] = cyc
	c := genai.NewContentFromFunctionCall("f", cyc, genai.RoleModel)
	if got, want := e.EstimateContent(c), EstimateContent(c); got != want {
		t.Errorf("cyclic map: Estimator %d, fresh %d", got, want)
	}
}

func deepValue(depth int) any {
	var v any = "leaf"
	for range depth {
		v = map[string]any{"k": v}
	}
	return v
}

// randomValue builds a JSON-like value from a small pool of shared
// strings, so that many values share data pointers.
func randomValue(r *rand.Rand, pool []string, depth int) any {
	switch k := r.IntN(10); {
	case depth > 3 || k < 3:
		return pool[r.IntN(len(pool))]
	case k == 3:
		return float64(r.IntN(2000)-1000) / float64(1+r.IntN(3))
	case k == 4:
		return r.IntN(2) == 0
	case k == 5:
		return nil
	case k < 8:
		m := map[string]any{}
		for range r.IntN(4) {
			m[pool[r.IntN(len(pool))]] = randomValue(r, pool, depth+1)
		}
		return m
	default:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, pool, depth+1)
		}
		return l
	}
}

// TestMemoRandomMatchesUncached: random contents over a shared string
// pool, estimated through one Estimator on clones, concurrently, always
// equal the fresh count.
func TestMemoRandomMatchesUncached(t *testing.T) {
	long := strings.Repeat("0123456789 abcdef\n", 40)
	pool := []string{"a", "b", "path", "Name", "x y", "", "12", long, long[:520], long[3:600], "日本語", "é"}
	r := rand.New(rand.NewPCG(1, 2))
	var contents []*genai.Content
	for range 400 {
		var parts []*genai.Part
		for range 1 + r.IntN(3) {
			switch r.IntN(3) {
			case 0:
				parts = append(parts, &genai.Part{Text: pool[r.IntN(len(pool))]})
			case 1:
				args, _ := randomValue(r, pool, 0).(map[string]any)
				parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{Name: pool[r.IntN(len(pool))], Args: args}})
			default:
				resp, _ := randomValue(r, pool, 0).(map[string]any)
				parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: pool[r.IntN(len(pool))], Response: resp}})
			}
		}
		contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: parts})
	}
	want := make([]int, len(contents))
	for i, c := range contents {
		want[i] = EstimateContent(c)
	}
	e := NewEstimator(32 << 10) // small: evictions happen
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for pass := range 3 {
				if g%2 == 1 {
					// In order, through EstimateEach.
					sizes := make([]int, len(contents))
					e.EstimateEach(deepClone(contents), sizes)
					if diff := cmp.Diff(want, sizes); diff != "" {
						t.Errorf("goroutine %d pass %d: EstimateEach differs from fresh counts (-fresh +each):\n%s", g, pass, diff)
						return
					}
					continue
				}
				for i := range contents {
					j := (i*7 + g*13 + pass) % len(contents)
					if got := e.EstimateContent(deepClone(contents[j])); got != want[j] {
						t.Errorf("goroutine %d pass %d content %d: Estimator %d, fresh %d", g, pass, j, got, want[j])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	st := e.Stats()
	if st.ContentHits == 0 || st.ContentBytes > 32<<10 {
		t.Errorf("stats %+v: want hits and at most 32 KiB held by the memo", st)
	}
	t.Logf("stats %+v", st)
}

// memoModel answers with a tool call (nested arguments) on even calls and
// a text on odd ones.
type memoModel struct{ calls int }

func (m *memoModel) Name() string { return "gemini-2.5-flash" }

func (m *memoModel) GenerateContent(_ context.Context, _ *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	call := m.calls
	m.calls++
	return func(yield func(*model.LLMResponse, error) bool) {
		if call%2 == 0 {
			yield(&model.LLMResponse{Content: genai.NewContentFromFunctionCall("inspect", map[string]any{
				"path": fmt.Sprint("dir", call), "options": map[string]any{"depth": 2.0, "hidden": true}, "globs": []any{"*.go", "*.md"},
			}, genai.RoleModel)}, nil)
			return
		}
		yield(&model.LLMResponse{Content: genai.NewContentFromText(fmt.Sprintf("Call %d: the directory holds a Go module.", call), genai.RoleModel), TurnComplete: true}, nil)
	}
}

type inspectArgs struct {
	Path    string         `json:"path"`
	Options map[string]any `json:"options"`
	Globs   []string       `json:"globs"`
}

// TestMemoThroughRunner drives adk-go's runner and llmagent: the history
// adk-go rebuilds on every model call must hit the memo (its fingerprints
// are stable across adk-go's deep copies), only the contents added since
// the previous call may miss, and every answer equals a fresh count.
func TestMemoThroughRunner(t *testing.T) {
	ls := readSample(t, "ls_la.txt")
	e := NewEstimator(0)
	var (
		calls        int
		prevContents int
	)
	inspect, err := functiontool.New(functiontool.Config{Name: "inspect", Description: "Inspect a directory."},
		func(_ agent.ToolContext, a inspectArgs) (map[string]any, error) {
			return map[string]any{"path": a.Path, "output": ls, "stats": map[string]any{"files": 17.0, "dirs": []any{"cmd", "pkg"}}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{
		Name:  "assistant",
		Model: &memoModel{},
		Tools: []tool.Tool{inspect},
		BeforeModelCallbacks: []llmagent.BeforeModelCallback{func(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
			before := e.Stats()
			for i, c := range req.Contents {
				if got, want := e.EstimateContent(c), EstimateContent(c); got != want {
					t.Errorf("call %d content %d: Estimator %d, fresh %d", calls, i, got, want)
				}
			}
			after := e.Stats()
			hits, misses := after.ContentHits-before.ContentHits, after.ContentMisses-before.ContentMisses
			// Contents already seen in the previous request are hits; at
			// most the contents added since miss (new user message, call,
			// response).
			if calls > 0 && (hits < uint64(prevContents) || misses > uint64(len(req.Contents)-prevContents)) {
				t.Errorf("call %d: %d contents (%d before): %d hits, %d misses, skips %d", calls, len(req.Contents), prevContents, hits, misses, after.ContentSkips)
			}
			calls++
			prevContents = len(req.Contents)
			return nil, nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Config{AppName: "memo-test", Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		msg := genai.NewContentFromText(fmt.Sprintf("Round %d: what is in the directory?", i), genai.RoleUser)
		for _, err := range r.Run(t.Context(), "u", "s1", msg, agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
		}
	}
	st := e.Stats()
	if calls != 10 || st.ContentHits == 0 || st.ContentSkips != 0 {
		t.Errorf("%d model calls, stats %+v: want 10 calls, hits, no skips", calls, st)
	}
	t.Logf("%d model calls, stats %+v", calls, st)
}

// TestEstimateEach: the same figures as EstimateContent per content, nil
// contents and a nil Estimator included, warm or cold.
func TestEstimateEach(t *testing.T) {
	req := bigRequest(t, 120)
	cs := append([]*genai.Content{nil}, req.Contents...)
	want := make([]int, len(cs))
	wantTotal := 0
	for i, c := range cs {
		want[i] = EstimateContent(c)
		wantTotal += want[i]
	}
	var nilEst *Estimator
	e := NewEstimator(0)
	for pass, est := range []*Estimator{nilEst, e, e, e} {
		sizes := make([]int, len(cs)+3)
		in := cs
		if pass > 1 {
			in = deepClone(cs)
		}
		total := est.EstimateEach(in, sizes)
		if diff := cmp.Diff(want, sizes[:len(cs)]); diff != "" || total != wantTotal {
			t.Errorf("pass %d: total %d, want %d; sizes (-EstimateContent +EstimateEach):\n%s", pass, total, wantTotal, diff)
		}
	}
	if st := e.Stats(); st.ContentHits < 2*uint64(len(req.Contents)) {
		t.Errorf("stats %+v: want the second and third pass served from the memo", st)
	}
}
