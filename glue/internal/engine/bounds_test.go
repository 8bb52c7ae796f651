package engine

import (
	"context"
	"fmt"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/processors/response"
)

// sessionCall is a model call of invocation inv in session id.
type sessionCall struct{ id, inv string }

func (c sessionCall) AppName() string      { return "app" }
func (c sessionCall) UserID() string       { return "user" }
func (c sessionCall) SessionID() string    { return c.id }
func (c sessionCall) InvocationID() string { return c.inv }
func (c sessionCall) Branch() string       { return "" }
func (c sessionCall) AgentName() string    { return "agent" }

// The state a process keeps is bounded in entries, whatever it serves — the README's "heap flat"
// as counts: after more sessions than maxSessions and more model names than maxModels, each with
// a call, its report and the end of its run, the engine holds at most maxSessions sessions' state,
// maxModels models' limits and maxModels models' attribute sets, and every session it still holds
// remembers no call of its finished invocation.
func TestStateStaysBoundedAcrossSessions(t *testing.T) {
	const extra = 500
	e, err := New(adkctx.Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range maxSessions + extra {
		c := sessionCall{id: fmt.Sprint("s", i), inv: fmt.Sprint("inv-", i)}
		req := newRequest("hello")
		req.Model = fmt.Sprint("model-", i%(maxModels+extra))
		if err := e.BeforeModel(ctx, c, nil, req, nil); err != nil {
			t.Fatal(err)
		}
		e.AfterModel(ctx, c, &response.LLMResponse{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 10}})
		e.AfterRun(ctx, keyOf(c), c.inv, nil)
	}
	e.tel.mu.Lock()
	attributeSets := len(e.tel.byModel)
	e.tel.mu.Unlock()
	got := map[string]int{"sessions": e.sessions.Len(), "limits": e.limits.Len(), "attribute sets": attributeSets}
	bound := map[string]int{"sessions": maxSessions, "limits": maxModels, "attribute sets": maxModels}
	for k, n := range got {
		if n > bound[k] || n == 0 {
			t.Errorf("%d %s kept, want between 1 and %d", n, k, bound[k])
		}
	}
	held := 0
	for i := range maxSessions + extra {
		st, ok := e.sessions.Get(keyOf(sessionCall{id: fmt.Sprint("s", i)}))
		if !ok {
			continue
		}
		held++
		st.mu.Lock()
		if n := st.calls.Len(); n != 0 {
			t.Errorf("session s%d remembers %d calls of its finished invocation", i, n)
		}
		st.mu.Unlock()
	}
	if held != e.sessions.Len() {
		t.Errorf("%d sessions found of the %d kept", held, e.sessions.Len())
	}
}
