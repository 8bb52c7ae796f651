package steps_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/processors/request"
)

// FuzzEnforceBudget plays requests of every shape the bytes describe (turns of user messages,
// tool steps and answers of any size, a summary, an instruction) against a hard limit. Whatever
// it does, the request sent fits the limit, keeps every call with its response and the newest
// user message's head; a refused one is left as it came.
func FuzzEnforceBudget(f *testing.F) {
	f.Add([]byte{3, 40, 200, 5, 1, 9, 60, 2, 7}, uint16(900), uint16(300), true)
	f.Add([]byte{1, 250, 250, 250, 0, 0, 4, 200}, uint16(3500), uint16(1500), false)
	f.Add([]byte{8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, uint16(400), uint16(10), true)
	f.Fuzz(func(t *testing.T, shape []byte, hard, instruction uint16, withSummary bool) {
		if len(shape) > 64 || hard < 64 {
			return
		}
		words := func(b byte, what string) string { return strings.Repeat(what+" ", 1+int(b)*4) }
		var contents []*genai.Content
		summary := userText("[Summary] " + words(byte(len(shape)*7), "fact"))
		if withSummary {
			contents = append(contents, summary)
		}
		newestUser := ""
		for i := 0; i < len(shape); i++ {
			b := shape[i]
			switch b % 4 {
			case 0, 1: // a user message
				newestUser = fmt.Sprintf("task %d: %s", i, words(b, "ask"))
				contents = append(contents, userText(newestUser))
			case 2: // a tool step: call and response
				name := fmt.Sprintf("t%d", i)
				contents = append(contents, modelCall(name), toolResult(name, words(b, "out")))
			case 3:
				contents = append(contents, modelText(words(b, "answer")))
			}
		}
		if newestUser == "" {
			return
		}
		orig := append([]*genai.Content(nil), contents...)
		req := &request.LLMRequest{Model: "m", Contents: contents,
			Config: &genai.GenerateContentConfig{SystemInstruction: userText(strings.Repeat("rule ", int(instruction)))}}
		limits := budget.Limits{Window: 4 * int(hard), Usable: 2 * int(hard), Soft: int(hard) / 2, Hard: int(hard)}
		d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limits, Pinned: func(c *genai.Content) bool { return c == summary }})
		var tooBig *request.BudgetExceededError
		if errors.As(err, &tooBig) {
			for i := range orig {
				if req.Contents[i] != orig[i] || len(req.Contents) != len(orig) {
					t.Fatal("a refused request was changed")
				}
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.FinalTokens > int(hard) {
			t.Fatalf("sent %d tokens over the hard limit %d: %+v", d.FinalTokens, hard, d)
		}
		if got := budget.EstimateRequest(req.Contents, req.Config); got > int(hard) {
			t.Fatalf("the request sent estimates at %d tokens, over %d (decision: %d)", got, hard, d.FinalTokens)
		}
		checkPairs(t, req.Contents)
		head := newestUser[:min(len(newestUser), 24)]
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if strings.HasPrefix(p.Text, head) {
					return
				}
			}
		}
		t.Fatalf("the newest user message's head %q was lost: %+v", head, d)
	})
}
