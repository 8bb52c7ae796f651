package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/processors/truncate"
)

// bigResp is a failed build's output of about size bytes: the head and the verdict at the end matter.
func bigResp(id, name string, size int) *genai.Part {
	out := strings.Repeat("building step ...\n", size/18) + "FAIL: 3 tests failed\n"
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name,
		Response: map[string]any{"stdout": out, "exit_code": 1.0}}}
}

// TestTruncateResponsesWithADKRunner puts a 2 MB tool output into a real session (as if stored
// before truncation existed) and checks what adk-go's runner sends to the model when a
// BeforeModel callback runs truncate.Responses on each content of the request.
func TestTruncateResponsesWithADKRunner(t *testing.T) {
	ctx := context.Background()
	llm := &llmtest.Model{}
	var cut int
	a, err := llmagent.New(llmagent.Config{
		Name: "assistant", Model: llm,
		BeforeModelCallbacks: []llmagent.BeforeModelCallback{
			func(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
				// The slice is the request's own; its contents are the session's (Responses
				// copies what it cuts).
				for i, c := range req.Contents {
					var n int
					req.Contents[i], n, _ = truncate.Responses(c, truncate.Config{}, nil)
					cut += n
				}
				return nil, nil
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := session.InMemoryService()
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		author string
		c      *genai.Content
	}{
		{"user", userContent(text("run the build"))},
		{"assistant", modelContent(call("adk-1", "build"))},
		{"assistant", userContent(bigResp("adk-1", "build", 2<<20))},
		{"assistant", modelContent(text("The build failed."))},
	} {
		ev := session.NewEventWithContext(ctx, "inv-old")
		ev.Author, ev.Content = e.author, e.c
		if err := svc.AppendEvent(ctx, created.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	r, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: svc})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range r.Run(ctx, "u", "s", userContent(text("why?")), agent.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(llm.Requests()) != 1 {
		t.Fatalf("%d model calls", len(llm.Requests()))
	}
	var sent string
	for _, c := range llm.Requests()[0].Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				sent, _ = p.FunctionResponse.Response["stdout"].(string)
			}
		}
	}
	if len(sent) == 0 || len(sent) > (truncate.Config{}).WithDefaults().MaxBytes {
		t.Fatalf("sent %d bytes of tool output", len(sent))
	}
	if !strings.HasPrefix(sent, "building step ...\n") || !strings.HasSuffix(sent, "FAIL: 3 tests failed\n") ||
		!strings.Contains(sent, truncate.MarkerPrefix) {
		t.Errorf("sent output lacks head, tail or marker")
	}
	if cut != 1 {
		t.Errorf("%d responses cut, want 1", cut)
	}
	// The stored event is untouched.
	got, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ev := got.Session.Events().At(2)
	if s, _ := ev.Content.Parts[0].FunctionResponse.Response["stdout"].(string); len(s) < 2<<20-100 {
		t.Errorf("stored event was modified: %d bytes", len(s))
	}
}
