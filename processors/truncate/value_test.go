package truncate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tiktoken-go/tokenizer"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// sizeOf is the JSON size and line count Value bounds.
func sizeOf(v any) (bytes, lines int) {
	z := sizer{capB: math.MaxInt}
	z.walk(v, 0)
	return z.bytes, z.lines
}

// noteCollector returns a note function recording every Cut it is given.
func noteCollector(cuts *[]Cut) func(Cut) string {
	return func(c Cut) string {
		*cuts = append(*cuts, c)
		return "note"
	}
}

func TestValue(t *testing.T) {
	big := numberedLines(2000) // 18000 bytes, 2000 lines
	cfg := Config{MaxBytes: 4096, MaxLines: 100}
	for _, tc := range []struct {
		name        string
		in          any
		wantCut     int
		wantOmitted int
		wantSame    bool // the very same value is returned
		keepStrings []string
	}{
		{name: "nil", in: nil, wantSame: true},
		{name: "number", in: 42.0, wantSame: true},
		{name: "small map", in: map[string]any{"output": "ok", "code": 0.0}, wantSame: true},
		{name: "small typed struct", in: map[string]any{"r": struct{ A string }{"x"}}, wantSame: true},
		{name: "one big string", in: map[string]any{"stdout": big, "exit_code": 2.0}, wantCut: 1},
		{name: "bare string", in: big, wantCut: 1},
		{name: "bare []byte", in: []byte(big), wantCut: 1},
		{
			name:        "big string cut, small strings survive",
			in:          map[string]any{"stdout": big, "stderr": "warning: x\n", "cmd": "go build ./..."},
			wantCut:     1,
			keepStrings: []string{"warning: x\n", "go build ./..."},
		},
		{
			name:    "nested lists and maps share one budget",
			in:      map[string]any{"runs": []any{map[string]any{"log": big}, map[string]any{"log": big}}, "names": []string{big, "short"}},
			wantCut: 3,
		},
		{
			name:    "the same big string under two keys",
			in:      map[string]any{"a": numberedLines(20000), "b": []any{numberedLines(20000)}, "c": "small"},
			wantCut: 2,
		},
		{
			name:    "map[string]string",
			in:      map[string]any{"env": map[string]string{"A": big}},
			wantCut: 1,
		},
		{
			name:        "many small strings: first and last kept",
			in:          map[string]any{"lines": manyStrings(500, 100)},
			wantOmitted: 500 - 37, // 37 × 101 bytes fit 4 KiB beside the marker and its note
			keepStrings: []string{"item 0000 ", "item 0499 "},
		},
		{
			name:        "many small entries of a map: first and last keys kept",
			in:          map[string]any{"files": manyEntries(1000)},
			wantOmitted: 1000 - 99, // one line each: 99 lines beside the marker
			keepStrings: []string{"value of file-0000", "value of file-0999"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := deepCopy(tc.in)
			var cuts []Cut
			out, st := Value(tc.in, cfg, noteCollector(&cuts))
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Fatalf("Value mutated its input (-before +after):\n%s", diff)
			}
			// One note per cut string, and one per list or map that left elements out.
			wantNotes := tc.wantCut + min(tc.wantOmitted, 1)
			if st.StringsCut != tc.wantCut || len(cuts) != wantNotes || st.ItemsOmitted != tc.wantOmitted {
				t.Errorf("StringsCut = %d, notes = %d, ItemsOmitted = %d; want %d cut, %d omitted", st.StringsCut, len(cuts), st.ItemsOmitted, tc.wantCut, tc.wantOmitted)
			}
			if st.Truncated != (tc.wantCut+tc.wantOmitted > 0) {
				t.Errorf("Truncated = %v", st.Truncated)
			}
			if tc.wantSame {
				if diff := cmp.Diff(tc.in, out); diff != "" {
					t.Errorf("value changed (-in +out):\n%s", diff)
				}
				return
			}
			if b, l := sizeOf(out); b > cfg.MaxBytes || l > cfg.MaxLines {
				t.Errorf("output is %d bytes / %d lines, over %+v", b, l, cfg)
			}
			if st.KeptBytes+st.OmittedBytes != st.OriginalBytes {
				t.Errorf("stats do not add up: %+v", st)
			}
			if want, _ := sizeOf(tc.in); st.OriginalBytes != want {
				t.Errorf("OriginalBytes = %d, want %d", st.OriginalBytes, want)
			}
			all := strings.Join(collect(out), "\x00")
			for _, k := range tc.keepStrings {
				if !strings.Contains(all, k) {
					t.Errorf("string %q was not kept", k)
				}
			}
			if got := strings.Count(all, MarkerPrefix); got != wantNotes || strings.Count(all, "; note ...]") != wantNotes {
				t.Errorf("want %d markers with the note, in:\n%.2000s", wantNotes, all)
			}
			for i, c := range cuts {
				if c.Index != i || c.Count != len(cuts) {
					t.Errorf("cut %d: Index %d, Count %d", i, c.Index, c.Count)
				}
			}
			// Idempotent: the result is within the budget and is not cut again.
			again, st2 := Value(out, cfg, noteCollector(new([]Cut)))
			if st2.Truncated {
				t.Errorf("second Value cut again: %+v", st2)
			}
			if diff := cmp.Diff(out, again); diff != "" {
				t.Errorf("Value not idempotent:\n%s", diff)
			}
		})
	}
}

func manyStrings(n, size int) []any {
	l := make([]any, n)
	for i := range l {
		l[i] = fmt.Sprintf("item %04d ", i) + strings.Repeat("x", size-10)
	}
	return l
}

func manyEntries(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprintf("file-%04d", i)] = fmt.Sprintf("value of file-%04d", i)
	}
	return m
}

func TestValueFairShare(t *testing.T) {
	// A 3000-byte and a 600-byte string under a 3000-byte budget: the small one keeps
	// everything, the big one gets the rest.
	in := map[string]any{"a": strings.Repeat("a", 3000), "b": strings.Repeat("b", 600)}
	out, st := Value(in, Config{MaxBytes: 3000}, nil)
	m := out.(map[string]any)
	if m["b"] != in["b"] {
		t.Errorf("small string was cut")
	}
	if got := len(m["a"].(string)); got > 2400 || got < 2000 {
		t.Errorf("big string cut to %d bytes, want about 2400", got)
	}
	if st.StringsCut != 1 {
		t.Errorf("StringsCut = %d", st.StringsCut)
	}
}

// nested returns {"a": {"a": ... leaf}} depth levels deep.
func nested(depth int, leaf any) any {
	v := leaf
	for range depth {
		v = map[string]any{"a": v}
	}
	return v
}

type fileInfo struct {
	Name    string `json:"name"`
	Content string `json:"content"`
	Size    int    `json:"size"`
}

// jsonMarshaler is a tool result type with its own encoding.
type jsonMarshaler struct{ text string }

func (m jsonMarshaler) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"text": m.text})
}

// The red-team findings: every shape of tool result is bounded. Each case failed before Value
// bounded any value (passed through or stored far over the budget).
func TestValueBoundsAnyShape(t *testing.T) {
	const maxBytes = defaultMaxBytes
	o200k, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	cyclic := map[string]any{"name": "loop"}
	cyclic["self"] = cyclic
	numbers := make([]any, 200_000)
	for i := range numbers {
		numbers[i] = float64(i)
	}
	bools := make(map[string]any, 100_000)
	for i := range 100_000 {
		bools[fmt.Sprintf("flag-%06d", i)] = i%2 == 0
	}
	files := make([]fileInfo, 2000)
	for i := range files {
		files[i] = fileInfo{Name: fmt.Sprintf("f%d.go", i), Content: strings.Repeat("package main\n", 40), Size: 520}
	}
	for _, tc := range []struct {
		name string
		in   any
		// wantText must appear in the result's JSON (the tail survives).
		wantText string
	}{
		{"150 levels deep, 4.2 MB", nested(150, strings.Repeat("deep line of output\n", 210_000)+"DEEP TAIL"), "DEEP TAIL"},
		{"20,000 strings of ~1 KB", map[string]any{"lines": manyStrings(20_000, 1000)}, "item 19999"},
		{"200k numbers", map[string]any{"values": numbers}, "199999"},
		{"100k bools in a map", bools, "flag-099999"},
		{"[]byte of 2 MB", map[string]any{"raw": []byte(strings.Repeat("byte output\n", 180_000) + "BYTES TAIL")}, "BYTES TAIL"},
		{"typed slice of structs", map[string]any{"files": files}, "f1999.go"},
		{"typed struct with a huge field", map[string]any{"file": fileInfo{Name: "big.log", Content: strings.Repeat("log\n", 500_000) + "STRUCT TAIL"}}, "STRUCT TAIL"},
		{"pointer to struct", &fileInfo{Name: "p.log", Content: strings.Repeat("p\n", 100_000) + "PTR TAIL"}, "PTR TAIL"},
		{"json.Marshaler", map[string]any{"m": jsonMarshaler{strings.Repeat("m ", 100_000) + "MARSHALER TAIL"}}, "MARSHALER TAIL"},
		{"cycle", cyclic, "loop"},
		{"channel", map[string]any{"ch": make(chan int), "ok": "kept"}, "kept"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before any
			if tc.name != "cycle" {
				before = deepCopy(tc.in)
			}
			out, st := Value(tc.in, Config{}, nil)
			if before != nil && !reflect.DeepEqual(before, tc.in) {
				t.Fatal("Value mutated its input")
			}
			if !st.Truncated {
				t.Fatalf("not truncated: %+v", st)
			}
			js, err := json.Marshal(out)
			if err != nil {
				t.Fatalf("result cannot be encoded: %v", err)
			}
			// JSON escapes (\n, \", base64) make the text longer than Value's count; allow that.
			if b, _ := sizeOf(out); b > maxBytes || len(js) > 2*maxBytes {
				t.Errorf("result is %d bytes by Value's count, %d bytes of JSON; budget %d", b, len(js), maxBytes)
			}
			if !bytes.Contains(js, []byte(tc.wantText)) {
				t.Errorf("result lacks %q:\n%.3000s", tc.wantText, js)
			}
			if !bytes.Contains(js, []byte(MarkerPrefix)) {
				t.Errorf("result has no marker")
			}
			// The estimator walks whatever Value lets through, and counts it at least as the real
			// tokenizer counts its JSON.
			real, err := o200k.Count(string(js))
			if err != nil {
				t.Fatal(err)
			}
			if est := budget.EstimateContent(genai.NewContentFromFunctionResponse("f", map[string]any{"v": out}, genai.RoleUser)); est < real || est > 2*real {
				t.Errorf("EstimateContent(result) = %d, o200k of its JSON = %d, want within [1, 2]×", est, real)
			}
			if again, st2 := Value(out, Config{}, nil); st2.Truncated || !cmp.Equal(out, again) {
				t.Errorf("not idempotent: %+v", st2)
			}
		})
	}
}

// Every cut leaf is reported with its path and its original, byte-exact, even when it is not
// valid UTF-8; the marker of each leaf carries its own note.
func TestValueReportsCutLeaves(t *testing.T) {
	binary := make([]byte, 40_960)
	for i := range binary {
		binary[i] = byte(i*7 + i/251)
	}
	text := strings.Repeat("ok\n", 10_000) + "FAIL"
	lines := manyStrings(100, 300)
	in := map[string]any{
		"stdout": string(binary),
		"files":  []any{"small", map[string]any{"a/b~c": text}},
		"raw":    binary,
		"small":  "kept",
		"lines":  lines,
	}
	var cuts []Cut
	out, st := Value(in, Config{}, func(c Cut) string {
		cuts = append(cuts, c)
		return fmt.Sprintf("leaf %d of %d", c.Index+1, c.Count)
	})
	if st.StringsCut != 3 {
		t.Fatalf("StringsCut = %d, want 3", st.StringsCut)
	}
	m := out.(map[string]any)
	keptLines := m["lines"].([]any)
	got := make([]string, len(cuts))
	for i, c := range cuts {
		got[i] = fmt.Sprintf("%s %d/%d text=%d omitted=%d", c.Path, c.Index, c.Count, len(c.Text), c.Omitted)
	}
	want := []string{
		"/files/1/a~1b~0c 0/4 text=30004 omitted=0",
		fmt.Sprintf("/lines 1/4 text=0 omitted=%d", 100-(len(keptLines)-1)),
		"/raw 2/4 text=0 omitted=0",
		"/stdout 3/4 text=40960 omitted=0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cuts (-want +got):\n%s", diff)
	}
	if cuts[0].Text != text || !bytes.Equal(cuts[2].Bytes, binary) || cuts[3].Text != string(binary) {
		t.Errorf("originals are not byte-exact")
	}
	// The elements left out, as JSON, fill the place of their marker.
	var omitted []any
	if err := json.Unmarshal(cuts[1].Bytes, &omitted); err != nil {
		t.Fatal(err)
	}
	head := slices.IndexFunc(keptLines, func(e any) bool { return strings.HasPrefix(e.(string), MarkerPrefix) })
	if head < 0 || !strings.Contains(keptLines[head].(string), "leaf 2 of 4") {
		t.Fatalf("no omitted-marker with its note in %v", keptLines)
	}
	rebuilt := slices.Concat(keptLines[:head], omitted, keptLines[head+1:])
	if diff := cmp.Diff(lines, rebuilt); diff != "" {
		t.Errorf("kept and omitted elements do not rebuild the list (-want +got):\n%.2000s", diff)
	}
	for key, note := range map[string]string{"stdout": "leaf 4 of 4", "raw": "leaf 3 of 4"} {
		s, ok := m[key].(string)
		if !ok || !strings.Contains(s, note) {
			t.Errorf("%s: %T %.200q lacks its note %q", key, m[key], m[key], note)
		}
	}
	if m["small"] != "kept" {
		t.Errorf("small string changed")
	}
}

func TestFairCap(t *testing.T) {
	for _, tc := range []struct {
		sizes         []int
		budget, floor int
		want          int
	}{
		{[]int{10, 20, 30}, 100, 1, 30},
		{[]int{10, 20, 300}, 100, 1, 70},
		{[]int{100, 100, 100}, 90, 1, 30},
		{[]int{100, 100, 100}, 90, 50, 50},
		{nil, 90, 5, 90},
	} {
		if got := fairCap(tc.sizes, tc.budget, tc.floor); got != tc.want {
			t.Errorf("fairCap(%v, %d, %d) = %d, want %d", tc.sizes, tc.budget, tc.floor, got, tc.want)
		}
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		if x == nil {
			return x
		}
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	case []string:
		if x == nil {
			return x
		}
		return append([]string{}, x...)
	case map[string]string:
		if x == nil {
			return x
		}
		m := make(map[string]string, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m
	case []byte:
		return bytes.Clone(x)
	}
	return v
}

func collect(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case map[string]any:
		for _, e := range x {
			out = append(out, collect(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, collect(e)...)
		}
	case []string:
		out = append(out, x...)
	case map[string]string:
		for _, e := range x {
			out = append(out, e)
		}
	}
	return out
}

type fuzzRecord struct {
	Name  string   `json:"name"`
	Lines []string `json:"lines"`
}

// valueFromBytes builds a nested value from fuzz bytes: maps, lists, strings of various sizes,
// []byte, typed structs, long lists of numbers (some NaN or infinite) and deep nesting.
func valueFromBytes(data []byte, depth int) any {
	if len(data) == 0 {
		return ""
	}
	op, rest := data[0], data[1:]
	switch {
	case depth > 4 || op%8 == 0:
		return strings.Repeat(string(rest[:min(len(rest), 8)])+"\n", int(op)*20)
	case op%8 == 1:
		m := map[string]any{}
		for i := 0; i < int(op>>5)+1 && len(rest) > 0; i++ {
			n := min(len(rest), int(rest[0])%16+1)
			m[string(rune('a'+i))] = valueFromBytes(rest[:n], depth+1)
			rest = rest[n:]
		}
		return m
	case op%8 == 2:
		var l []any
		for i := 0; i < int(op>>5)+1 && len(rest) > 0; i++ {
			n := min(len(rest), int(rest[0])%16+1)
			l = append(l, valueFromBytes(rest[:n], depth+1))
			rest = rest[n:]
		}
		return l
	case op%8 == 3:
		return []string{string(rest), strings.Repeat("y", int(op)*30)}
	case op%8 == 4:
		return bytes.Repeat(rest, int(op))
	case op%8 == 5:
		return fuzzRecord{Name: string(rest), Lines: strings.Split(strings.Repeat(string(rest)+"\n", int(op)), "\n")}
	case op%8 == 6:
		l := make([]any, int(op)*40)
		specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
		for i := range l {
			l[i] = float64(i)
			if len(rest) > 0 && i%(int(rest[0])+1) == 0 { // JSON has no number for these
				l[i] = specials[i%len(specials)]
			}
		}
		return l
	default:
		return nested(int(op)/2, string(rest))
	}
}

func FuzzValue(f *testing.F) {
	f.Add([]byte{1, 4, 200, 'a', 'b', 2, 250, 'c'}, uint16(1024), uint8(20))
	f.Add([]byte{0x61, 3, 255, 1, 2, 3, 7, 9}, uint16(4096), uint8(100))
	f.Add([]byte{3, 'z'}, uint16(0), uint8(0))
	f.Add([]byte{6, 4}, uint16(4096), uint8(100))       // NaN and ±Inf among numbers
	f.Add([]byte{0x0e, 0}, uint16(512), uint8(9))       // nothing but
	f.Add([]byte("10\xff000"), uint16(4096), uint8(23)) // a cut single line gains 2 lines
	f.Add([]byte("1\x107"), uint16(1366), uint8(241))   // a line cut of empty lines gains bytes
	f.Add([]byte{0xfc, 'x', 'y'}, uint16(2048), uint8(50))
	f.Add([]byte{0xf4, '\xff', '\n'}, uint16(600), uint8(10))
	f.Add([]byte{0xed, 'a', '\n', 'b'}, uint16(512), uint8(9))
	f.Add([]byte{0xee, 0xfe, 'q'}, uint16(700), uint8(30))
	f.Fuzz(func(t *testing.T, data []byte, maxBytes uint16, maxLines uint8) {
		cfg := Config{MaxBytes: max(int(maxBytes), minMaxBytes), MaxLines: max(int(maxLines), minMaxLines)}
		in := valueFromBytes(data, 0)
		before := deepCopy(in)
		var cuts []Cut
		out, st := Value(in, cfg, noteCollector(&cuts))
		if !cmp.Equal(before, in, cmpopts.EquateNaNs()) {
			t.Fatalf("input mutated")
		}
		eff := cfg.WithDefaults()
		b, l := sizeOf(out)
		if eff.MaxBytes >= 512 && (b > eff.MaxBytes || l > eff.MaxLines) {
			t.Fatalf("output %d bytes / %d lines, budget %+v, stats %+v", b, l, eff, st)
		}
		leaves := 0
		for _, c := range cuts {
			if c.Omitted == 0 {
				leaves++
			}
		}
		if st.KeptBytes+st.OmittedBytes != st.OriginalBytes || st.StringsCut != leaves {
			t.Fatalf("stats do not add up: %+v, %d cut leaves", st, leaves)
		}
		if !st.Truncated && !cmp.Equal(in, out) {
			t.Fatalf("value changed without a cut")
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("result cannot be encoded: %v", err)
		}
		if eff.MaxBytes >= 512 {
			again, st2 := Value(out, cfg, nil)
			if st2.Truncated || !cmp.Equal(out, again) {
				t.Fatalf("not idempotent: %+v", st2)
			}
		}
	})
}

// Go randomizes map order; what Value keeps, cuts and reports must not depend on it.
func TestValueDeterministic(t *testing.T) {
	in := map[string]any{"files": manyEntries(300), "logs": map[string]any{}, "n": manyStrings(50, 300)}
	for i := range 40 {
		in["logs"].(map[string]any)[fmt.Sprintf("step-%02d", i)] = numberedLines(100 + 37*i)
	}
	cfg := Config{MaxBytes: 8192, MaxLines: 200}
	var firstCuts []Cut
	first, firstStats := Value(in, cfg, noteCollector(&firstCuts))
	if len(firstCuts) == 0 || firstStats.ItemsOmitted == 0 {
		t.Fatalf("want strings cut and elements left out: %+v", firstStats)
	}
	for range 20 {
		var cuts []Cut
		out, st := Value(in, cfg, noteCollector(&cuts))
		if diff := cmp.Diff(first, out); diff != "" {
			t.Fatalf("result differs between runs:\n%.2000s", diff)
		}
		asText := cmp.Transformer("text", func(b []byte) string { return string(b) })
		if diff := cmp.Diff(firstCuts, cuts, asText); diff != "" || st != firstStats {
			t.Fatalf("cuts or stats differ between runs: %+v vs %+v\n%.2000s", st, firstStats, diff)
		}
	}
}

// JSON has no NaN or infinity: a tool result holding one cannot be stored by adk-go's database
// session service (encoding/json refuses it), so Value replaces every non-finite float64 and
// float32, at any size and depth and whether or not anything else is cut, by its text as
// strconv writes it, and counts it in Stats.NumbersReplaced.
func TestValueNonFiniteNumbers(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	big := numberedLines(2000)
	cfg := Config{MaxBytes: 4096, MaxLines: 100}
	for _, tc := range []struct {
		name     string
		in       any
		want     any // nil: only checked to encode, with replaced numbers
		replaced int
		cut      int
	}{
		{name: "bare NaN", in: nan, want: "NaN", replaced: 1},
		{name: "bare float32 -Inf", in: float32(math.Inf(-1)), want: "-Inf", replaced: 1},
		{name: "small map", in: map[string]any{"x": nan, "y": 1.5, "z": "ok"},
			want: map[string]any{"x": "NaN", "y": 1.5, "z": "ok"}, replaced: 1},
		{name: "+Inf and -Inf in a list", in: map[string]any{"l": []any{inf, -inf, 0.0, float32(inf)}},
			want: map[string]any{"l": []any{"+Inf", "-Inf", 0.0, "+Inf"}}, replaced: 3},
		{name: "deep", in: map[string]any{"a": []any{map[string]any{"b": []any{nan}}}},
			want: map[string]any{"a": []any{map[string]any{"b": []any{"NaN"}}}}, replaced: 1},
		{name: "beside a cut string", in: map[string]any{"stdout": big, "score": nan}, replaced: 1, cut: 1},
		{name: "many", in: map[string]any{"l": slices.Repeat([]any{nan}, 90)},
			want: map[string]any{"l": slices.Repeat([]any{"NaN"}, 90)}, replaced: 90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := deepCopy(tc.in)
			out, st := Value(tc.in, cfg, nil)
			if !cmp.Equal(before, tc.in, cmpopts.EquateNaNs()) {
				t.Fatal("input mutated")
			}
			if _, err := json.Marshal(out); err != nil {
				t.Fatalf("the result cannot be encoded: %v", err)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, out); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
			}
			if !st.Truncated || st.NumbersReplaced != tc.replaced || st.StringsCut != tc.cut || st.ItemsOmitted != 0 {
				t.Errorf("stats %+v; want Truncated, %d numbers replaced, %d strings cut, none omitted", st, tc.replaced, tc.cut)
			}
			// The text of a number is as long as the number: nothing cut, nothing grew.
			if b, _ := sizeOf(out); st.StringsCut == 0 && (st.OriginalBytes != b || st.KeptBytes != b) {
				t.Errorf("stats %+v, result %d bytes", st, b)
			}
			if again, st2 := Value(out, cfg, nil); st2.Truncated || !cmp.Equal(out, again) {
				t.Errorf("not idempotent: %+v", st2)
			}
		})
	}
}
