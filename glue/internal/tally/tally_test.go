package tally

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// A tally counts user turns (invocations) and model calls, sums usage, and projects the turns
// left before the soft limit from the average growth of the prompt per turn.
func TestReport(t *testing.T) {
	limits := budget.Limits{Soft: 30_000, Hard: 40_000}
	call := func(prompt int) budget.Usage { return budget.Usage{Prompt: prompt, Output: 500, Total: prompt + 500} }
	for _, tc := range []struct {
		name  string
		calls []struct {
			turn   string
			prompt int
		}
		want budget.Report
	}{
		{"none", nil, budget.Report{Known: true, Soft: 30_000, Hard: 40_000, TurnsRemaining: -1}},
		{"one turn", []struct {
			turn   string
			prompt int
		}{{"a", 10_000}}, budget.Report{Known: true, Turns: 1, ModelCalls: 1, Total: call(10_000), Last: call(10_000), Soft: 30_000, Hard: 40_000, TurnsRemaining: -1}},
		{"growing turns", []struct {
			turn   string
			prompt int
		}{{"a", 10_000}, {"b", 14_000}, {"b", 15_000}, {"c", 18_000}}, budget.Report{Known: true, Turns: 3, ModelCalls: 4,
			Total: call(10_000).Add(call(14_000)).Add(call(15_000)).Add(call(18_000)), Last: call(18_000),
			AvgTurnGrowth: 4_000, TurnsRemaining: 2, Soft: 30_000, Hard: 40_000}},
		{"over the soft limit", []struct {
			turn   string
			prompt int
		}{{"a", 20_000}, {"b", 31_000}}, budget.Report{Known: true, Turns: 2, ModelCalls: 2, Total: call(20_000).Add(call(31_000)),
			Last: call(31_000), AvgTurnGrowth: 11_000, TurnsRemaining: 0, Soft: 30_000, Hard: 40_000}},
		{"a compaction's drop is no growth", []struct {
			turn   string
			prompt int
		}{{"a", 20_000}, {"b", 8_000}, {"c", 12_000}}, budget.Report{Known: true, Turns: 3, ModelCalls: 3,
			Total: call(20_000).Add(call(8_000)).Add(call(12_000)), Last: call(12_000), AvgTurnGrowth: 4_000, TurnsRemaining: 4,
			Soft: 30_000, Hard: 40_000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tl Tally
			for _, c := range tc.calls {
				tl.Add(c.turn, call(c.prompt))
			}
			if diff := cmp.Diff(tc.want, tl.Report(limits)); diff != "" {
				t.Errorf("Report (-want +got):\n%s", diff)
			}
			// The stored form restores the same tally: a later call adds up the same way.
			b, err := json.Marshal(&tl)
			if err != nil {
				t.Fatal(err)
			}
			var restored Tally
			if err := json.Unmarshal(b, &restored); err != nil {
				t.Fatal(err)
			}
			tl.Add("later", call(25_000))
			restored.Add("later", call(25_000))
			if diff := cmp.Diff(tl.Report(limits), restored.Report(limits)); diff != "" {
				t.Errorf("restored from %s (-kept +restored):\n%s", b, diff)
			}
		})
	}
}

// A stored tally that is not one is an error, not a zero tally.
func TestUnmarshalBad(t *testing.T) {
	var tl Tally
	if err := json.Unmarshal([]byte(`{"turns":"three"}`), &tl); err == nil {
		t.Errorf("a tally with a string for turns decoded as %+v", tl)
	}
}

// Account usage per user turn and estimate how many turns remain before the soft limit.
func ExampleTally() {
	var t Tally
	limits := budget.LimitsFor(nil, "my-test-model", budget.LimitConfig{}) // fallback: soft 83,865
	for i, prompt := range []int32{10_000, 14_000, 18_000} {
		md := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: prompt, CandidatesTokenCount: 500}
		t.Add(fmt.Sprint("inv-", i), budget.UsageFrom(md))
	}
	r := t.Report(limits)
	fmt.Printf("turns=%d calls=%d last_prompt=%d avg_growth=%.0f turns_remaining=%d\n", r.Turns, r.ModelCalls, r.Last.Prompt, r.AvgTurnGrowth, r.TurnsRemaining)
	// Output:
	// turns=3 calls=3 last_prompt=18000 avg_growth=4000 turns_remaining=16
}
