package hooks

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// fakeCallbackContext is the part of agent.CallbackContext the model callbacks read.
type fakeCallbackContext struct {
	agent.CallbackContext
	context.Context
	invocation, branch, agentName string
}

func (f fakeCallbackContext) AppName() string      { return "app" }
func (f fakeCallbackContext) UserID() string       { return "user" }
func (f fakeCallbackContext) SessionID() string    { return "s1" }
func (f fakeCallbackContext) InvocationID() string { return f.invocation }
func (f fakeCallbackContext) Branch() string       { return f.branch }
func (f fakeCallbackContext) AgentName() string    { return f.agentName }

// Resolve the ambiguity between the embedded interfaces.
func (f fakeCallbackContext) Deadline() (time.Time, bool) { return f.Context.Deadline() }
func (f fakeCallbackContext) Done() <-chan struct{}       { return f.Context.Done() }
func (f fakeCallbackContext) Err() error                  { return f.Context.Err() }
func (f fakeCallbackContext) Value(k any) any             { return f.Context.Value(k) }

func cbCtx(invocation, branch, agentName string) fakeCallbackContext {
	return fakeCallbackContext{Context: context.Background(), invocation: invocation, branch: branch, agentName: agentName}
}

func textRequest(text string) *model.LLMRequest {
	return &model.LLMRequest{Model: "gemini-2.5-flash", Contents: []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}}
}

func usageResponse(prompt int) *model.LLMResponse {
	return &model.LLMResponse{
		Content:       genai.NewContentFromText("ok", genai.RoleModel),
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(prompt), CandidatesTokenCount: 1},
	}
}

func newObservedHooks(t *testing.T) (*Hooks, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	h, err := New(Config{Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	return h, logs
}

// Two invocations of one session whose model calls interleave (concurrent runners, or the
// branches of a parallel agent): each response is recorded and calibrates against its own request.
func TestInterleavedCallsAreAccountedSeparately(t *testing.T) {
	h, _ := newObservedHooks(t)
	a, b := cbCtx("inv-a", "", "assistant"), cbCtx("inv-b", "", "assistant")
	if _, err := h.beforeModel(a, textRequest("short question")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.beforeModel(b, textRequest(string(make([]byte, 40_000)))); err != nil {
		t.Fatal(err)
	}
	h.afterModel(a, usageResponse(5), nil)
	h.afterModel(b, usageResponse(10_000), nil)

	rep := h.Usage("app", "user", "s1")
	if rep.Turns != 2 {
		t.Fatalf("recorded %d turns, want 2 (one per model call)", rep.Turns)
	}
	// inv-a's estimate of a two-word request, calibrated against inv-a's prompt count, must not
	// be a tiny factor from pairing 5 reported tokens with inv-b's ~10,000-token estimate.
	key := sessionKey("app", "user", "s1")
	if f := h.calibrator.Factor(key, "gemini-2.5-flash"); f < 0.5 {
		t.Errorf("calibration factor %.3f: a response was paired with another call's estimate", f)
	}
}

// With the plugin and the agent callbacks both registered, a request is processed once even when
// another invocation of the same session sends a request in between.
func TestDoubleRegistrationDetectedAcrossInterleavedInvocations(t *testing.T) {
	h, logs := newObservedHooks(t)
	a, b := cbCtx("inv-a", "", "assistant"), cbCtx("inv-b", "", "assistant")
	reqA, reqB := textRequest("first"), textRequest("second")
	h.beforeModel(a, reqA) // plugin, invocation a
	h.beforeModel(b, reqB) // plugin, invocation b
	h.beforeModel(a, reqA) // agent callback, invocation a
	h.beforeModel(b, reqB) // agent callback, invocation b
	if n := logs.FilterMessage("budget decision").Len(); n != 2 {
		t.Fatalf("%d budget decisions for 2 requests", n)
	}
}

// The per-session state does not keep a request (the whole history) alive.
func TestSessionStateDoesNotRetainRequests(t *testing.T) {
	h, _ := newObservedHooks(t)
	collected := make(chan struct{})
	func() {
		req := textRequest(string(make([]byte, 1<<20)))
		runtime.AddCleanup(req, func(ch chan struct{}) { close(ch) }, collected)
		h.beforeModel(cbCtx("inv", "", "assistant"), req)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-collected:
			runtime.KeepAlive(h)
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			runtime.KeepAlive(h)
			t.Fatal("the request is still reachable after the callbacks returned")
		}
	}
}

// The per-call states of a session stay bounded however many invocations it runs.
func TestCallStatesStayBounded(t *testing.T) {
	h, _ := newObservedHooks(t)
	for i := range 200 {
		c := cbCtx(fmt.Sprintf("inv-%d", i), "", "assistant")
		h.beforeModel(c, textRequest("question"))
		h.afterModel(c, usageResponse(10), nil)
	}
	h.sessions.with(sessionKey("app", "user", "s1"), func(st *sessionState) {
		if n := len(st.calls); n > maxCallsPerSession {
			t.Errorf("%d call states kept for one session", n)
		}
		st.forgetInvocation("inv-199")
		if _, ok := st.calls[callKey("inv-199", "", "assistant")]; ok {
			t.Errorf("forgetInvocation kept the invocation's call state")
		}
	})
}
