package steps_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/glue/internal/calibrate"
	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/processors/request"
)

// trimReport is what a trimmed decision says it took out.
type trimReport struct {
	Turns, Contents, Exchanges, Responses int
	SummaryCut, TokensTaken               bool
}

// Whatever trimming did — turns left out, tool-loop steps left out, the newest results cut, the
// summary cut — tokens_dropped says how many tokens it took out of the request: at least the
// request's shrinkage (what it took, less the note it put in their place).
func TestEnforceBudgetReportsWhatItTook(t *testing.T) {
	big := strings.Repeat("line of build output\n", 100) + "FAILED: exit status 2\n"
	summary := userText("[Summary of earlier conversation]\nGoal: fix the build.\n" + strings.Repeat("- a fact we learned\n", 400) + "Open tasks: run the tests")
	tests := []struct {
		name     string
		contents []*genai.Content
		hard     int
		want     trimReport
	}{
		{"oldest turn left out", []*genai.Content{userText("first " + big), modelText("done " + big), userText("newest question")}, 1_000,
			trimReport{Turns: 1, Contents: 2, TokensTaken: true}},
		{"oldest steps of the tool loop left out", []*genai.Content{userText("build"), modelCall("s1"), toolResult("s1", big),
			modelCall("s2"), toolResult("s2", big), modelCall("s3"), toolResult("s3", big)}, 1_000,
			trimReport{Contents: 4, Exchanges: 2, TokensTaken: true}},
		{"only the newest results cut", []*genai.Content{userText("build"), modelCall("s1"), toolResult("s1", big+big+big)}, 500,
			trimReport{Responses: 1, TokensTaken: true}},
		{"summary cut", []*genai.Content{summary, userText("newest question")}, 1_000,
			trimReport{SummaryCut: true, TokensTaken: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &request.LLMRequest{Model: "m", Contents: tt.contents}
			d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(tt.hard), Pinned: isSummary})
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != steps.ActionTrimmed {
				t.Fatalf("action %s, want trimmed", d.Action)
			}
			got := trimReport{d.TurnsDropped, d.ContentsDropped, d.ExchangesDropped, d.ResponsesCut, d.SummaryCut, d.TokensDropped > 0}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision %+v (-want +got):\n%s", d, diff)
			}
			if shrunk := d.PredictedTokens - d.FinalTokens; d.TokensDropped < shrunk {
				t.Errorf("tokens_dropped %d < the request's shrinkage %d (%d → %d)", d.TokensDropped, shrunk, d.PredictedTokens, d.FinalTokens)
			}
		})
	}
}

// A refusal states the safety margin it added: the parts it names fit in the request it names,
// and the margin is what pushes them over.
func TestBudgetExceededErrorStatesTheMargin(t *testing.T) {
	const margin = 300
	predict := func(n int) calibrate.Prediction { return calibrate.Prediction{Tokens: n, Margin: margin} }
	text := strings.Repeat("word ", 700) // ~900 tokens: fits 1,000 alone, not with the margin
	req := &request.LLMRequest{Model: "m", Contents: []*genai.Content{userText(text)},
		Config: &genai.GenerateContentConfig{SystemInstruction: userText("Answer briefly.")}}
	limits := budget.Limits{Window: 4_000, Usable: 2_000, Soft: 500, Hard: 1_000}
	d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limits, Predict: predict})
	var tooBig *request.BudgetExceededError
	if !errors.As(err, &tooBig) {
		t.Fatalf("err = %v, want *BudgetExceededError", err)
	}
	if d.PredictedTokens > 1_000 {
		t.Fatalf("the request alone (%d tokens) is over the hard limit: the test needs one the margin pushes over", d.PredictedTokens)
	}
	if tooBig.Margin != margin || tooBig.NewestTurnTokens+tooBig.FixedTokens > tooBig.RequestTokens+1 {
		t.Errorf("error %+v: want margin %d and newest turn + fixed ≤ whole request", tooBig, margin)
	}
	if want := fmt.Sprintf("plus a safety margin of %d", margin); !strings.Contains(err.Error(), want) {
		t.Errorf("message %q does not say %q", err, want)
	}
}

// A refusal says which margin it is: a prior (no count yet: not added, so the estimate alone is
// over), learned from the model's counts, one the caller's prediction gave, or none.
func TestBudgetExceededErrorNamesTheMarginSource(t *testing.T) {
	tests := []struct {
		source budget.MarginSource
		margin int
		want   string
	}{
		{budget.MarginPrior, 347, "even without a safety margin (the model has reported no token count for this session yet: its prior margin of 347 was not added)"},
		{budget.MarginLearned, 31, "plus a safety margin of 31 learned from the token counts the model reported"},
		{"", 300, "plus a safety margin of 300, over"},
		{budget.MarginLearned, 0, "with no safety margin"},
	}
	for _, tc := range tests {
		t.Run(string(tc.source), func(t *testing.T) {
			err := &request.BudgetExceededError{Model: "small", Window: 4_096, HardLimit: 3_502, NewestTurnTokens: 400,
				FixedTokens: 3_400, RequestTokens: 3_800, Margin: tc.margin, MarginSource: tc.source}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("message %q does not say %q", err, tc.want)
			}
		})
	}
}
