package engine

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/truncate"
)

type testCall struct{ inv, branch, agent string }

func (c testCall) AppName() string      { return "app" }
func (c testCall) UserID() string       { return "user" }
func (c testCall) SessionID() string    { return "s1" }
func (c testCall) InvocationID() string { return c.inv }
func (c testCall) Branch() string       { return c.branch }
func (c testCall) AgentName() string    { return c.agent }

func newRequest(text string) *request.LLMRequest {
	return &request.LLMRequest{Model: "gemini-2.5-flash", Contents: []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}}
}

// The per-session state never keeps a request (the whole history) alive once adk-go is done
// with it, and remembers at most maxCallsInSession calls however many invocations interleave.
func TestSessionStateIsBounded(t *testing.T) {
	e, err := New(adkctx.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := newRequest("hello")
	w := weak.Make(req)
	if err := e.BeforeModel(ctx, testCall{inv: "i0"}, nil, req, nil); err != nil {
		t.Fatal(err)
	}
	req = nil
	runtime.GC()
	if w.Value() != nil {
		t.Error("the engine keeps a processed request alive")
	}
	for i := range 200 {
		if err := e.BeforeModel(ctx, testCall{inv: fmt.Sprint("inv-", i), agent: fmt.Sprint("agent-", i%3)}, nil, newRequest("hi"), nil); err != nil {
			t.Fatal(err)
		}
	}
	st := e.state(keyOf(testCall{}))
	if n := st.calls.Len(); n > maxCallsInSession {
		t.Errorf("%d calls remembered, want at most %d", n, maxCallsInSession)
	}
	if n := st.streams.Len(); n != 3+1 {
		t.Errorf("%d streams, want one per agent and branch (4)", n)
	}
	e.AfterRun(ctx, keyOf(testCall{}), "inv-199", nil)
	if _, ok := st.calls.Get(callKey{"inv-199", "", "agent-1"}); ok {
		t.Error("a finished invocation's call is still remembered")
	}
}

// A request seen by the plugin and by the agent's own callback is processed once: one call
// sequence number, one decision.
func TestRequestProcessedOnce(t *testing.T) {
	e, err := New(adkctx.Config{})
	if err != nil {
		t.Fatal(err)
	}
	req := newRequest("hello")
	for range 2 {
		if err := e.BeforeModel(context.Background(), testCall{inv: "i"}, nil, req, weak.Make(req)); err != nil {
			t.Fatal(err)
		}
	}
	if st := e.state(keyOf(testCall{})); st.seq != 1 {
		t.Errorf("call_seq = %d after one request seen twice, want 1", st.seq)
	}
}

// Each request of a stream is truncated where it needs it: a tool output stored before the
// limits existed is cut in every request that carries it (adk-go rebuilds it whole from storage
// each time), while contents the previous request held unchanged are left as they are.
func TestHistoryTruncatedInEveryRequest(t *testing.T) {
	e, err := New(adkctx.Config{})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a line of an old tool output\n", 2_000) // ~58 KB, over the 10 KiB limit
	history := func(extra int) []*genai.Content {
		cs := []*genai.Content{
			genai.NewContentFromText("read the log", genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "read_log"}}}},
			{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "read_log", Response: map[string]any{"output": big}}}}},
			genai.NewContentFromText("the log is long", genai.RoleModel),
		}
		for i := range extra {
			cs = append(cs, genai.NewContentFromText(fmt.Sprint("follow-up ", i), genai.RoleUser))
		}
		return cs
	}
	for call := range 3 {
		req := &request.LLMRequest{Model: "gemini-2.5-flash", Contents: history(call)}
		stored := req.Contents[2]
		if err := e.BeforeModel(context.Background(), testCall{inv: "i1", agent: "a"}, nil, req, nil); err != nil {
			t.Fatal(err)
		}
		out, _ := req.Contents[2].Parts[0].FunctionResponse.Response["output"].(string)
		if len(out) > 11_000 || !strings.Contains(out, truncate.MarkerPrefix) {
			t.Errorf("request %d: the old output reaches the model with %d bytes, want it cut", call, len(out))
		}
		if got, _ := stored.Parts[0].FunctionResponse.Response["output"].(string); got != big {
			t.Errorf("request %d: the stored content was modified", call)
		}
	}
}

// Sizes reused across requests and across a trim are the sizes a fresh estimate gives: over
// three requests of a history past the window (each trimmed, the next extending the previous
// one as adk-go sends it), every content's recorded size equals budget.EstimateContent of it.
func TestReusedSizesMatchFreshEstimates(t *testing.T) {
	e, err := New(adkctx.Config{Models: []budget.ModelInfo{{Name: "gemini-2.5-flash", ContextWindow: 60_000, MaxOutputTokens: 8_192}}})
	if err != nil {
		t.Fatal(err)
	}
	full := fixtures.ChainRequest(600)
	call := testCall{inv: "i1", agent: "coder"}
	for n := 596; n <= 600; n += 2 {
		req := &request.LLMRequest{Model: full.Model, Config: full.Config, Contents: append([]*genai.Content(nil), full.Contents[:n]...)}
		if err := e.BeforeModel(context.Background(), call, nil, req, nil); err != nil {
			t.Fatal(err)
		}
		st := e.state(keyOf(call))
		st.mu.Lock()
		sm := *st.stream(streamKey{"", "coder"})
		st.mu.Unlock()
		if sm.turnsDrop == 0 {
			t.Fatalf("request of %d contents not trimmed", n)
		}
		if len(sm.prefix.sizes) != len(req.Contents) {
			t.Fatalf("request of %d contents: %d sizes for %d contents sent", n, len(sm.prefix.sizes), len(req.Contents))
		}
		for i, c := range req.Contents {
			if want := budget.EstimateContent(c); sm.prefix.sizes[i] != want {
				t.Errorf("request of %d contents, content %d: size %d, a fresh estimate %d", n, i, sm.prefix.sizes[i], want)
			}
		}
	}
}
