package pipeline_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/processors/request"
)

// appendBrokenHistory appends to the session a history that adk-go passes through with a call that
// has no response (list_dir: the process died before the tool finished) and an orphan response
// (ghost: its call was made by another agent, which adk-go turns into text, but the response
// landed in this agent's response event).
func appendBrokenHistory(t *testing.T, ctx context.Context, svc session.Service, sess session.Session, agentName string) {
	t.Helper()
	ts := time.Now().Add(-time.Hour)
	n := 0
	add := func(author string, c *genai.Content) {
		n++
		ev := session.NewEventWithContext(ctx, "inv-old")
		ev.Author = author
		ev.Content = c
		ev.Timestamp = ts.Add(time.Duration(n) * time.Second)
		if err := svc.AppendEvent(ctx, sess, ev); err != nil {
			t.Fatalf("AppendEvent: %v", err)
		}
	}
	add("other_agent", modelContent(call("call-zz", "ghost")))
	add("user", userContent(text("list the files")))
	add(agentName, modelContent(call("adk-111", "list_dir")))
	add("user", userContent(text("never mind; what's the weather?")))
	add(agentName, modelContent(call("adk-222", "get_weather")))
	add(agentName, userContent(resp("adk-222", "get_weather", "sunny"), resp("call-zz", "ghost", "boo")))
	add(agentName, modelContent(text("It is sunny.")))
}

func runBrokenHistory(t *testing.T, normalize bool) ([][]*genai.Content, []request.NormalizeReport) {
	t.Helper()
	ctx := context.Background()
	llm := &llmtest.Model{Default: llmtest.Text("you're welcome")}
	var mu sync.Mutex
	var reports []request.NormalizeReport
	cfg := llmagent.Config{Name: "assistant", Model: llm, Instruction: "Be brief."}
	if normalize {
		cfg.BeforeModelCallbacks = []llmagent.BeforeModelCallback{
			func(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
				r := &request.LLMRequest{Model: req.Model, Contents: req.Contents, Config: req.Config}
				rep := request.Normalize(r)
				req.Contents = r.Contents
				mu.Lock()
				reports = append(reports, rep)
				mu.Unlock()
				return nil, nil
			},
		}
	}
	a, err := llmagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc := session.InMemoryService()
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	appendBrokenHistory(t, ctx, svc, created.Session, "assistant")

	r, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: svc})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range r.Run(ctx, "u", "s1", userContent(text("thanks")), agent.RunConfig{}) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	}
	var contents [][]*genai.Content
	for _, req := range llm.Requests() {
		contents = append(contents, req.Contents)
	}
	return contents, reports
}

// TestNormalizeWithADKRunner drives adk-go's real runner and llmagent over a session whose history
// has a missing response and an orphan, and checks what the model receives.
func TestNormalizeWithADKRunner(t *testing.T) {
	// Control: without Normalize, adk-go sends the broken history as is.
	raw, _ := runBrokenHistory(t, false)
	if len(raw) != 1 {
		t.Fatalf("model called %d times, want 1", len(raw))
	}
	want := request.NormalizeReport{
		SyntheticResponses: 1, OrphansRemoved: 1, ContentsInserted: 1,
		SyntheticNames: []string{"list_dir"}, OrphanNames: []string{"ghost"},
	}
	// The model received exactly the two crafted defects.
	if diff := cmp.Diff(want, request.Normalize(&request.LLMRequest{Contents: raw[0]})); diff != "" {
		t.Errorf("control run: defects differ from the crafted ones (-want +got):\n%s", diff)
	}

	got, reports := runBrokenHistory(t, true)
	if len(got) != 1 || len(reports) != 1 {
		t.Fatalf("model called %d times, %d reports; want 1, 1", len(got), len(reports))
	}
	// Normalize finds nothing left to fix in what the model received.
	if rep := request.Normalize(&request.LLMRequest{Contents: got[0]}); !cmp.Equal(rep, request.NormalizeReport{}) {
		t.Fatalf("request sent to the model still needs repair: %+v", rep)
	}
	if diff := cmp.Diff(want, reports[0]); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	// The synthetic response follows the list_dir call, with the (blanked) id of the call.
	var found bool
	for i, c := range got[0] {
		for _, p := range c.Parts {
			if p.FunctionCall != nil && p.FunctionCall.Name == "list_dir" {
				next := got[0][i+1].Parts[0].FunctionResponse
				if next == nil || next.Name != "list_dir" || next.ID != "" || !isSynthetic(next.Response) {
					t.Errorf("list_dir call is followed by %+v", got[0][i+1])
				}
				found = true
			}
			if p.FunctionResponse != nil && p.FunctionResponse.Name == "ghost" {
				t.Errorf("orphan ghost response still sent")
			}
		}
	}
	if !found {
		t.Errorf("list_dir call not in the request")
	}
	last := got[0][len(got[0])-1]
	if last.Role != genai.RoleUser || len(last.Parts) != 1 || last.Parts[0].Text != "thanks" {
		t.Errorf("newest user message not last: %+v", last)
	}
}

// isSynthetic reports whether a function response is one Normalize made for a call without one.
func isSynthetic(resp map[string]any) bool {
	e, _ := resp["error"].(string)
	return strings.HasPrefix(e, "aborted: no result is available")
}
