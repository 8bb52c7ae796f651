package steps_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/glue/internal/calibrate"
	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/processors/request"
)

// smallWindow is the limits of a 4,096-token model: hard limit 3,502, soft 2,580.
func smallWindow() budget.Limits {
	r := budget.NewRegistry(budget.ModelInfo{Name: "small", ContextWindow: 4_096, MaxOutputTokens: 1_024})
	return budget.LimitsFor(r, "small", budget.LimitConfig{})
}

// policyOf is a system instruction of about tokens estimated tokens.
func policyOf(tokens int) *genai.GenerateContentConfig {
	var b strings.Builder
	cfg := &genai.GenerateContentConfig{}
	for i := 0; ; i++ {
		b.WriteString("Refunds over the limit need a supervisor's approval; quote the order number. ")
		cfg.SystemInstruction = genai.NewContentFromText(b.String(), genai.RoleUser)
		if budget.EstimateRequest(nil, cfg) >= tokens {
			return cfg
		}
	}
}

// Before the model has reported any count the margin is a prior, a guess at the estimate's
// error: a request the estimate alone fits is sent, whatever the margin. Once counts were
// reported the margin is learned and always added. Every request size from the soft limit to
// past the hard one, single-turn (nothing to trim): refused exactly when it cannot fit.
func TestPriorMarginNeverRefusesWhatTheEstimateFits(t *testing.T) {
	limits := smallWindow()
	var learned calibrate.Calibration
	learned.Observe(2_000, 2_000) // one count, equal to the estimate: factor 1, margins learned
	for _, tc := range []struct {
		name string
		cal  calibrate.Calibration
	}{{"prior", calibrate.Calibration{}}, {"learned", learned}} {
		t.Run(tc.name, func(t *testing.T) {
			sent, refused, waived := 0, 0, 0
			for size := limits.Soft; size <= limits.Hard+400; size += 23 {
				cfg := policyOf(size)
				req := &request.LLMRequest{Model: "small", Config: cfg, Contents: []*genai.Content{userText("Where is my order 4417?")}}
				cal := tc.cal
				d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limits, Predict: cal.Predict})
				var fits bool
				switch tc.name {
				case "prior":
					fits = d.PredictedTokens <= limits.Hard
				default:
					fits = d.PredictedTokens+d.Margin <= limits.Hard
				}
				var tooBig *request.BudgetExceededError
				switch {
				case fits && err != nil:
					t.Fatalf("predicted %d + margin %d (%s), hard %d: refused: %v", d.PredictedTokens, d.Margin, d.MarginSource, limits.Hard, err)
				case !fits && !errors.As(err, &tooBig):
					t.Fatalf("predicted %d + margin %d (%s), hard %d: err = %v, want *BudgetExceededError", d.PredictedTokens, d.Margin, d.MarginSource, limits.Hard, err)
				case err != nil:
					refused++
					if tooBig.MarginSource != budget.MarginSource(tc.name) || d.Action != steps.ActionRejected {
						t.Errorf("refusal %+v, decision %s: want margin source %s", tooBig, d.Action, tc.name)
					}
				default:
					sent++
					if d.MarginSource != budget.MarginSource(tc.name) {
						t.Errorf("decision margin source %q, want %q", d.MarginSource, tc.name)
					}
					if d.MarginWaived {
						waived++
					}
					if d.MarginWaived != (d.PredictedTokens+d.Margin > limits.Hard) {
						t.Errorf("predicted %d + margin %d, hard %d: margin waived %v", d.PredictedTokens, d.Margin, limits.Hard, d.MarginWaived)
					}
				}
			}
			// The sweep must cover each outcome the margin's source allows.
			if sent == 0 || refused == 0 || (tc.name == "prior") != (waived > 0) {
				t.Errorf("sent %d, refused %d, margin waived on %d: the sweep misses a case", sent, refused, waived)
			}
		})
	}
}

// What a prior margin changes, request by request: it is kept where trimming old turns makes
// room, waived (and says so) where it alone would refuse or cut the newest turn further; a
// learned margin is never waived.
func TestMarginSourceDecisions(t *testing.T) {
	limits := smallWindow()
	var learned calibrate.Calibration
	learned.Observe(2_000, 2_000)
	big := strings.Repeat("order 4417 shipped from the Leipzig warehouse on Monday\n", 120)
	type outcome struct {
		Action        steps.Action
		Source        budget.MarginSource
		Waived        bool
		ResponsesCut  int
		TurnsDropped  int
		Refused       bool
		ErrorSays     string
		ContentsAsRaw bool // the request was sent as it came in
	}
	tests := []struct {
		name     string
		cal      calibrate.Calibration
		policy   int
		contents []*genai.Content
		want     outcome
	}{
		{"first request: the estimate fits, the prior margin does not", calibrate.Calibration{}, 3_400,
			[]*genai.Content{userText("Where is my order 4417?")},
			outcome{Action: steps.ActionCompactionNeeded, Source: budget.MarginPrior, Waived: true, ContentsAsRaw: true}},
		{"first request over by its estimate alone", calibrate.Calibration{}, 3_600,
			[]*genai.Content{userText("Where is my order 4417?")},
			outcome{Action: steps.ActionRejected, Source: budget.MarginPrior, Waived: true, Refused: true,
				ErrorSays: "even without a safety margin (the model has reported no token count for this session yet"}},
		{"older turns to leave out: the prior margin is kept", calibrate.Calibration{}, 2_000,
			[]*genai.Content{userText("first " + big), modelText("noted"), userText("Where is my order 4417?")},
			outcome{Action: steps.ActionTrimmed, Source: budget.MarginPrior, TurnsDropped: 1}},
		{"the newest result cut to what the estimate fits", calibrate.Calibration{}, 3_300,
			[]*genai.Content{userText("Look up order 4417"), modelCall("lookup"), toolResult("lookup", big)},
			outcome{Action: steps.ActionTrimmed, Source: budget.MarginPrior, Waived: true, ResponsesCut: 1}},
		{"learned margin: refused as it always was", learned, 3_420,
			[]*genai.Content{userText("Where is my order 4417?")},
			outcome{Action: steps.ActionRejected, Source: budget.MarginLearned, Refused: true,
				ErrorSays: "learned from the token counts the model reported"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &request.LLMRequest{Model: "small", Config: policyOf(tc.policy), Contents: tc.contents}
			d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limits, Predict: tc.cal.Predict})
			got := outcome{Action: d.Action, Source: d.MarginSource, Waived: d.MarginWaived, ResponsesCut: d.ResponsesCut,
				TurnsDropped: d.TurnsDropped, Refused: err != nil, ContentsAsRaw: sameSlice(req.Contents, tc.contents)}
			if err != nil {
				got.ContentsAsRaw = false
				var tooBig *request.BudgetExceededError
				if !errors.As(err, &tooBig) {
					t.Fatalf("err = %v, want *BudgetExceededError", err)
				}
				if strings.Contains(err.Error(), tc.want.ErrorSays) {
					got.ErrorSays = tc.want.ErrorSays
				} else {
					got.ErrorSays = err.Error()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision %+v (-want +got):\n%s", d, diff)
			}
			if err == nil && d.FinalTokens > limits.Hard {
				t.Errorf("sent %d predicted tokens, over the hard limit %d", d.FinalTokens, limits.Hard)
			}
		})
	}
}

func sameSlice(a, b []*genai.Content) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
