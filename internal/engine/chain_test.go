package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/processors/request"
)

// No step of the chain changes a content in place, whatever it does to a request: every content
// is checked after each step against what was measured of it (request.Measures.Check), over
// requests that truncate a stored oversized output, answer a call left without its response,
// carry a summary, and pass the hard limit (trimmed), each request extending the one before.
func TestChainStepsNeverChangeAContentInPlace(t *testing.T) {
	e, err := New(adkctx.Config{Models: []budget.ModelInfo{{Name: "small", ContextWindow: 45_000, MaxOutputTokens: 2_000}}})
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	e.stepCheck = func(step string, err error) {
		checked[step]++
		if err != nil {
			t.Errorf("after the %s step: %v", step, err)
		}
	}
	base := fixtures.ChainRequest(300)
	base.Model = "small"
	summary := genai.NewContentFromText(compaction.SummaryHeader+"\nGoal: ship it. "+strings.Repeat("fact ", 200), genai.RoleUser)
	huge := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		Name: "run_tests", Response: map[string]any{"output": strings.Repeat("ok line\n", 20_000)}}}}}
	call := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "run_tests"}}}}
	orphan := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "deploy"}}}}
	history := append([]*genai.Content{summary}, base.Contents...)
	actions := map[request.Action]int{}
	for n := 200; n <= len(history); n += 10 {
		contents := append([]*genai.Content{}, history[:n]...)
		contents = append(contents, call, huge, orphan, genai.NewContentFromText(fmt.Sprint("question ", n), genai.RoleUser))
		req := &request.LLMRequest{Model: base.Model, Config: base.Config, Contents: contents}
		err := e.BeforeModel(context.Background(), testCall{inv: fmt.Sprint("i", n), agent: "coder"}, nil, req, nil)
		st := e.state(keyOf(testCall{}))
		st.mu.Lock()
		trimmed := st.stream(streamKey{"", "coder"}).turnsDrop > 0
		st.mu.Unlock()
		switch {
		case err != nil:
			actions[request.ActionRejected]++
		case trimmed:
			actions[request.ActionTrimmed]++
		default:
			actions[request.ActionNone]++
		}
	}
	for _, step := range []string{"instructions", "truncate", "normalize", "budget"} {
		if checked[step] == 0 {
			t.Errorf("the %s step was never checked", step)
		}
	}
	if actions[request.ActionTrimmed] == 0 || actions[request.ActionNone] == 0 {
		t.Errorf("requests %v: want some sent whole and some trimmed", actions)
	}
}
