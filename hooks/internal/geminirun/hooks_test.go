package geminirun_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/hooks/internal/geminitest"
)

// intField reads an integer field of a logged entry.
func intField(t *testing.T, e observer.LoggedEntry, key string) int {
	t.Helper()
	v, ok := e.ContextMap()[key].(int64)
	if !ok {
		t.Fatalf("log entry %q has no integer field %q: %v", e.Message, key, e.ContextMap())
	}
	return int(v)
}

// adkctx's hooks, wired as an application does, over the real Gemini model: every model call
// gets one budget decision, the usage the fake reported reaches the accounting (once per call,
// also when streaming), and the next decisions are calibrated against it.
func TestHooksUseReportedUsage(t *testing.T) {
	const canary = "zebra-canary-7431"
	question := canary + " " + strings.Repeat("We plan a long walk along the Seine in Paris tomorrow afternoon. ", 120) +
		"What is the weather in Paris?"
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			srv := geminitest.NewServer(t, geminitest.Options{
				// A tokenizer that counts half again as much as the stand-in: calibration has work.
				PromptTokens: func(r *geminitest.Request) int { return geminitest.DefaultPromptTokens(r) * 3 / 2 },
			})
			srv.Enqueue(
				geminitest.Calls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}),
				geminitest.Text("Sunny, 21 °C: a fine day for the walk. "+canary),
				geminitest.Text("You are welcome."),
			)
			w := wire(t, geminiModel(t, srv, modelName), nil, weatherTool(t))
			if _, err := run(t, w.runner, "s1", question, mode); err != nil {
				t.Fatalf("turn 1: %v", err)
			}
			if _, err := run(t, w.runner, "s1", "Thanks!", mode); err != nil {
				t.Fatalf("turn 2: %v", err)
			}

			reqs := srv.Requests()
			decisions := w.logs.FilterMessage("budget decision").All()
			usages := w.logs.FilterMessage("model usage").All()
			if len(reqs) != 3 || len(decisions) != 3 || len(usages) != 3 {
				t.Fatalf("model calls %d, budget decisions %d, usage entries %d; want 3 each", len(reqs), len(decisions), len(usages))
			}

			type figures struct{ Prompt, Output, Estimated int }
			var got, want []figures
			var total int
			for i, r := range reqs {
				want = append(want, figures{int(r.Reported.PromptTokenCount), int(r.Reported.CandidatesTokenCount), intField(t, decisions[i], "estimated_tokens")})
				got = append(got, figures{intField(t, usages[i], "prompt_tokens"), intField(t, usages[i], "output_tokens"), intField(t, usages[i], "estimated_tokens")})
				total += int(r.Reported.PromptTokenCount)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("usage entries (-reported by the fake +logged):\n%s", diff)
			}

			// The first decision predicts the estimate itself (nothing reported yet); each later one
			// is anchored on the count reported for the call before it and adds the estimated growth
			// since, scaled by the ratio learned from that count: above 1, since the model counts
			// half again as much as the estimate, and never above 4.
			var gotCal []int
			for i, d := range decisions {
				est, predicted := intField(t, d, "estimated_tokens"), intField(t, d, "predicted_tokens")
				gotCal = append(gotCal, predicted)
				if i == 0 {
					if predicted != est {
						t.Errorf("first decision predicts %d for an estimate of %d", predicted, est)
					}
					continue
				}
				anchor, grown := int(reqs[i-1].Reported.PromptTokenCount), est-intField(t, decisions[i-1], "estimated_tokens")
				if grown < 0 {
					continue
				}
				if added := predicted - anchor; added <= grown || added > 4*grown+1 {
					t.Errorf("decision %d predicts %d: %d over the count %d reported before it, for %d estimated tokens added", i, predicted, added, anchor, grown)
				}
			}
			if gotCal[1] == intField(t, decisions[1], "estimated_tokens") {
				t.Errorf("second decision not calibrated: %v", decisions[1].ContextMap())
			}

			rep := w.usageReport("s1")
			if rep.Turns != 2 || rep.ModelCalls != 3 || rep.Total.Prompt != total || rep.Last.Prompt != int(reqs[2].Reported.PromptTokenCount) {
				t.Errorf("usage report = %+v, want 2 turns, 3 model calls, %d prompt tokens in total", rep, total)
			}
			assertNoText(t, w.logs, canary, "Seine")
		})
	}
}
