package refs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`grep -rn "def parse_line" ./src/parse.py:12`, []string{"grep", "parse_line", "src/parse.py"}},
		{"Flight HAT136 on 2024-05-20 for mia_li_3668, pay 127 or 4421486.", []string{"Flight", "HAT136", "2024-05-20", "mia_li_3668", "4421486"}},
		{"the THIS with true null and 1.5 v1.2.3 10.0.0.1 os.path.join", []string{"v1.2.3", "10.0.0.1", "os.path.join"}},
		{"a@b.io user@example.com /testbed/pkg/ ../x ...", []string{"a@b.io", "user@example.com", "testbed/pkg"}},
		{"Ünïcode naïve café résumé — «HAT136»…", []string{"Ünïcode", "naïve", "café", "résumé", "HAT136"}},
		{"", nil},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, Tokens(tt.in), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("Tokens(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

func readSession(t *testing.T, path string) *trajectory.Session {
	t.Helper()
	for s, err := range trajectory.ReadFile(path) {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Fatal("no session")
	return nil
}

func TestAnalyzeChat(t *testing.T) {
	p := Analyze(readSession(t, "../trajectory/testdata/chat.json"))
	want := &Plan{
		Steps: []StepPlan{
			// The first calls: nothing was read before them.
			{Turn: 0, FactsDue: 4},
			{Turn: 0, FactsDue: 4},
			// update_reservation_flights(NO6JO3, HAT136, 2024-05-22, gift_card_7091239): the date
			// and the card are in the turn's own message (read right before), the reservation
			// and the flight only earlier.
			{Turn: 1, Refs: []string{"HAT136", "NO6JO3"}, FactsDue: 7},
			{Turn: 1, FactsDue: 7},
		},
		Facts: []string{"mia_li_3668", "change", "reservation", "NO6JO3", "Move", "2024-05-22", "gift_card_7091239"},
		Head:  "Hi, I am mia_li_3668 and I want to change reservation NO6JO3.",
	}
	if d := cmp.Diff(want, p, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("plan (-want +got):\n%s", d)
	}
}

func TestAnalyzeShellBlockIsTheOutputRightBefore(t *testing.T) {
	s := &trajectory.Session{Turns: []trajectory.Turn{{User: "Fix pkg/cache/lru.go", Origin: trajectory.Person, Steps: []trajectory.Step{
		{Calls: []trajectory.Call{{Name: "bash", Args: map[string]any{"command": "grep -rn Evict pkg/"}, Output: "pkg/cache/lru.go:40:func (c *LRU) Evict()\npkg/cache/util.go:3:func helperEvict()"}}},
		{Calls: []trajectory.Call{{Name: "bash", Args: map[string]any{"command": "sed -n 1,60p pkg/cache/lru.go"}, Output: "package cache"}}},
		{Calls: []trajectory.Call{{Name: "bash", Args: map[string]any{"command": "cat pkg/cache/util.go && grep helperEvict pkg/cache/lru.go"}, Output: "x"}}},
	}}}}
	p := Analyze(s)
	var got [][]string
	for _, st := range p.Steps {
		got = append(got, st.Refs)
	}
	want := [][]string{
		nil,
		// pkg/cache/lru.go was in the task (turn message), not in the grep output right before:
		// it was, so it is not a reference.
		nil,
		// util.go and helperEvict come from the grep output two steps back; lru.go from it too.
		{"helperEvict", "pkg/cache/lru.go", "pkg/cache/util.go"},
	}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("refs (-want +got):\n%s", d)
	}
}

func TestScore(t *testing.T) {
	p := Analyze(readSession(t, "../trajectory/testdata/chat.json"))
	summary := &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "[Summary] Hi, I am   mia_li_3668 and I want to change\nreservation NO6JO3. and more"}}}
	turn2 := genai.NewContentFromText("Move it to 2024-05-22, pay with gift_card_7091239.", "user")
	call := &genai.Content{Role: "model", Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "x", Args: map[string]any{"flight": "HAT136"}}}}}
	sc := NewScorer(p)
	got := sc.Score(2, Request{Contents: []*genai.Content{summary, turn2}})
	want := StepScore{Refs: 2, RefsKept: 1, Missed: []string{"HAT136"}, Facts: 7, FactsKept: 7, Head: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("score (-want +got):\n%s", d)
	}
	// A plain cut that dropped the first turn: the head and its facts are gone.
	got = sc.Score(2, Request{Contents: []*genai.Content{call, turn2}})
	want = StepScore{Refs: 2, RefsKept: 1, Missed: []string{"NO6JO3"}, Facts: 7, FactsKept: 3}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("cut score (-want +got):\n%s", d)
	}
	// Score: a step with no request keeps nothing.
	all := Score(p, []*Request{nil, nil, {Contents: []*genai.Content{summary, turn2}}})
	if all[2].RefsKept != 1 || all[3].Refs != 0 || all[0].FactsKept != 0 || all[1].Facts != 4 {
		t.Errorf("Score: %+v", all)
	}
}
