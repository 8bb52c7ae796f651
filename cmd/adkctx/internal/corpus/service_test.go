package corpus

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testServiceSessions = 10

var serviceCorpus = sync.OnceValues(func() ([]string, error) {
	return Service(ServiceOptions{Seed: 7, Sessions: testServiceSessions, Dir: filepath.Join(testDir, "service")})
})

func generatedService(t *testing.T) []string {
	t.Helper()
	files, err := serviceCorpus()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func readService(t *testing.T, file string) serviceFile {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var sf serviceFile
	if err := dec.Decode(&sf); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return sf
}

func TestServiceDeterministic(t *testing.T) {
	first := generatedService(t)
	second, err := Service(ServiceOptions{Seed: 7, Sessions: testServiceSessions, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		a, _ := os.ReadFile(first[i])
		b, _ := os.ReadFile(second[i])
		if diff := cmp.Diff(string(a), string(b)); diff != "" {
			t.Errorf("%s differs between two runs (-first +second):\n%s", filepath.Base(first[i]), diff)
		}
	}
	other, err := Service(ServiceOptions{Seed: 8, Sessions: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(first[0])
	b, _ := os.ReadFile(other[0])
	if string(a) == string(b) {
		t.Error("seeds 7 and 8 give the same conversation")
	}
}

// TestServiceStructure checks the files against the OpenAI chat format and the shape of the
// recorded conversations: 36 to 62 messages, a long policy, several user turns, every call
// answered by its tool message, arguments that fit the tool's schema, JSON results.
func TestServiceStructure(t *testing.T) {
	calls := map[string]int{}
	for _, f := range generatedService(t) {
		sf := readService(t, f)
		name := filepath.Base(f)
		msgs := sf.Messages
		if n := len(msgs); n < MinServiceMessages || n > MaxServiceMessages {
			t.Errorf("%s: %d messages, want %d to %d", name, n, MinServiceMessages, MaxServiceMessages)
		}
		if len(sf.Tools) != 14 {
			t.Errorf("%s: %d tools, want 14", name, len(sf.Tools))
		}
		schemas := map[string]map[string]any{}
		for _, tool := range sf.Tools {
			schemas[tool.Function.Name] = tool.Function.Parameters
		}
		if msgs[0].Role != "system" || msgs[0].Content == nil {
			t.Fatalf("%s: no system message first", name)
		}
		if n := len(*msgs[0].Content); n < 6000 || n > 12000 {
			t.Errorf("%s: a policy of %d characters, want about 1,500 to 3,000 tokens", name, n)
		}
		users := 0
		for i := 1; i < len(msgs); i++ {
			m := msgs[i]
			switch m.Role {
			case "user":
				users++
				if msgs[i-1].Role == "user" {
					t.Errorf("%s: two user messages in a row at %d", name, i)
				}
			case "assistant":
				if m.ToolCalls == nil && (m.Content == nil || *m.Content == "") {
					t.Errorf("%s: message %d says nothing", name, i)
				}
				for k, tc := range m.ToolCalls {
					calls[tc.Function.Name]++
					answer := msgs[i+1+k]
					if answer.Role != "tool" || answer.ToolCallID != tc.ID || answer.Name != tc.Function.Name {
						t.Fatalf("%s: call %s at %d is not answered by message %d", name, tc.ID, i, i+1+k)
					}
					if !json.Valid([]byte(*answer.Content)) {
						t.Errorf("%s: result %d is not JSON: %q", name, i+1+k, *answer.Content)
					}
					if strings.Contains(*answer.Content, `"error"`) {
						t.Errorf("%s: the tool refused call %d: %s", name, i, *answer.Content)
					}
					checkArguments(t, name, tc, schemas[tc.Function.Name])
				}
			case "tool":
				if msgs[i-1].Role != "assistant" && msgs[i-1].Role != "tool" {
					t.Errorf("%s: tool message %d answers nothing", name, i)
				}
			default:
				t.Errorf("%s: role %q", name, m.Role)
			}
		}
		if users < 4 {
			t.Errorf("%s: %d user messages, want several turns", name, users)
		}
	}
	t.Logf("calls: %v", calls)
	for _, tool := range []string{"get_user_details", "get_reservation_details", "search_direct_flights", "calculate"} {
		if calls[tool] == 0 {
			t.Errorf("no call of %s", tool)
		}
	}
	writes := 0
	for _, tool := range []string{"book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_passengers", "update_reservation_baggage", "send_certificate"} {
		writes += calls[tool]
	}
	if writes < testServiceSessions {
		t.Errorf("%d write calls in %d conversations", writes, testServiceSessions)
	}
}

// checkArguments checks a call's arguments against the tool's schema: a JSON object with every
// required property and no other.
func checkArguments(t *testing.T, file string, tc toolCall, schema map[string]any) {
	t.Helper()
	if schema == nil {
		t.Errorf("%s: call of undeclared tool %q", file, tc.Function.Name)
		return
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
		t.Errorf("%s: %s arguments: %v", file, tc.Function.Name, err)
		return
	}
	props := schema["properties"].(map[string]any)
	for _, r := range schema["required"].([]any) {
		if _, ok := args[r.(string)]; !ok {
			t.Errorf("%s: %s without %q", file, tc.Function.Name, r)
		}
	}
	for k := range args {
		if _, ok := props[k]; !ok {
			t.Errorf("%s: %s with unknown argument %q", file, tc.Function.Name, k)
		}
	}
}

// TestServiceToolsReplay runs every call of every conversation again, in order, on a fresh
// airline from the same seed, and compares with the recorded results: the results come from the
// tools running on the state, and the writes are what changes it.
func TestServiceToolsReplay(t *testing.T) {
	for _, f := range generatedService(t) {
		sf := readService(t, f)
		al := newAirline(rand.New(rand.NewPCG(7, 0xa1)), usersInDomain)
		results := map[string]string{}
		for _, m := range sf.Messages {
			if m.Role == "tool" {
				results[m.ToolCallID] = *m.Content
			}
		}
		for _, m := range sf.Messages {
			for _, tc := range m.ToolCalls {
				var args map[string]any
				if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
					t.Fatal(err)
				}
				res, err := al.call(tc.Function.Name, args, today)
				if got := toolContent(res, err); got != results[tc.ID] {
					t.Errorf("%s: %s(%s) gives\n%s\nrecorded\n%s", filepath.Base(f), tc.Function.Name, tc.Function.Arguments, got, results[tc.ID])
				}
			}
		}
	}
}

// TestServiceReferences: write calls reuse ids the read tools returned many messages before
// (distances in messages, as a conversation's requests are).
func TestServiceReferences(t *testing.T) {
	var all refStats
	withFarWrite := 0
	for _, f := range generatedService(t) {
		ev := sessionEvents(t, f)
		all.add(ev, 20, true)
		far := false
		for _, r := range references(ev) {
			if r.from == "tool" && r.messages >= 10 && isWrite(r.tool) {
				far = true
			}
		}
		if far {
			withFarWrite++
		}
	}
	t.Logf("%s; %d of %d conversations write back a tool's value 10 or more messages later", &all, withFarWrite, testServiceSessions)
	if withFarWrite*10 < 7*testServiceSessions {
		t.Errorf("%d of %d conversations write back a value a tool returned 10 or more messages before, want most", withFarWrite, testServiceSessions)
	}
	if all.far*100 < 5*all.refs {
		t.Errorf("%d of %d references are 20 or more messages back, want at least 5%%", all.far, all.refs)
	}
}

func isWrite(tools string) bool {
	return slices.ContainsFunc(strings.Split(tools, ","), func(t string) bool {
		return strings.HasPrefix(t, "book_") || strings.HasPrefix(t, "update_") || strings.HasPrefix(t, "cancel_") || t == "send_certificate"
	})
}

func TestServiceOptionsErrors(t *testing.T) {
	if _, err := Service(ServiceOptions{Sessions: 1}); err == nil {
		t.Error("no error without Dir")
	}
}

func TestCalculate(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want float64
		bad  bool
	}{
		{expr: "2 * (154 + 30)", want: 368},
		{expr: "(468 - 233) * 1", want: 235},
		{expr: "((911 - 429)) * 2", want: 964},
		{expr: "-3 + 10 / 4", want: -0.5},
		{expr: "1.25 * 3", want: 3.75},
		{expr: "1 / 3", want: 0.33},
		{expr: "1 / 0", bad: true},
		{expr: "2 * (3", bad: true},
		{expr: "2 +", bad: true},
		{expr: "abc", bad: true},
		{expr: "", bad: true},
	} {
		got, err := calculate(tc.expr)
		if (err != nil) != tc.bad || !tc.bad && got != tc.want {
			t.Errorf("calculate(%q) = %v, %v; want %v (error: %v)", tc.expr, got, err, tc.want, tc.bad)
		}
	}
}

func FuzzCalculate(f *testing.F) {
	for _, s := range []string{"2 * (154 + 30)", "-(1)", "1/0", "((((", "3.5.1", "--2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := calculate(expr)
		if err == nil && math.IsNaN(v) {
			t.Errorf("calculate(%q) = NaN", expr)
		}
	})
}

// BenchmarkService reports the time to write one conversation.
func BenchmarkService(b *testing.B) {
	dir := b.TempDir()
	for i := 0; b.Loop(); i++ {
		if _, err := Service(ServiceOptions{Seed: int64(i), Sessions: 1, Dir: dir}); err != nil {
			b.Fatal(err)
		}
	}
}
