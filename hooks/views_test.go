package hooks_test

// One read of a session gives one view: Len, At and All of one session value agree with each
// other whatever compactions land meanwhile; a later read sees them. The adk-go v2 glue runs the
// same tests (adk2/hooks/views_test.go is generated from this file).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/longrun"
	"github.com/adkctx/adkctx/hooks/internal/sqlitetest"
)

// viewStores are the session services the view tests run on.
var viewStores = []struct {
	name string
	open func(t *testing.T) session.Service
}{
	{"inmemory", func(*testing.T) session.Service { return session.InMemoryService() }},
	{"sqlite", func(t *testing.T) session.Service { return sqlitetest.Open(t, sqlitetest.TempDSN(t)).Sessions }},
}

// viewRig is a runner wired with adkctx whose compactions come only when the test asks.
type viewRig struct {
	h     *hooks.Hooks
	rc    runner.Config
	r     *runner.Runner
	model *llmtest.Model
}

func newViewRig(t *testing.T, base session.Service) *viewRig {
	t.Helper()
	m := peopleModel()
	h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{Interval: 1000, RetainRecentInvocations: 1, RetainRecentTokens: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant."})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: peopleApp, Agent: a, SessionService: base, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &viewRig{h: h, rc: rc, r: r, model: m}
}

// turn runs one user turn; a panic inside adk-go's runner fails the test instead of the binary.
func (v *viewRig) turn(t *testing.T, text string) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("turn %q: the runner panicked: %v", text, p)
		}
	}()
	for _, err := range v.r.Run(context.Background(), "u1", "s1", genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			t.Fatalf("turn %q: %v", text, err)
		}
	}
}

// A compaction stored between the runner's Len and At (adk-go reads Len, then At(Len()-1), to
// find the agent to run) changes nothing the runner reads of the session it already holds: no
// nil event, no panic. The run that follows reads the new summary, and so does a later read.
func TestCompactionBetweenLenAndAt(t *testing.T) {
	for _, store := range viewStores {
		t.Run(store.name, func(t *testing.T) {
			v := newViewRig(t, store.open(t))
			const turns = 6
			for i := range turns {
				v.turn(t, peopleTurn(i))
			}
			var mu sync.Mutex
			var marker *compaction.Marker
			var compactErr error
			var traced []string
			hooks.TraceEvents(v.h, func(method string, run bool) {
				mu.Lock()
				defer mu.Unlock()
				traced = append(traced, fmt.Sprintf("%s(run=%v)", method, run))
				if method != "At" || run || marker != nil || compactErr != nil {
					return
				}
				// Len was read: store a compaction before At reads the event it counted.
				marker, compactErr = v.h.Compact(context.Background(), peopleApp, "u1", "s1")
			})
			before := len(v.model.Requests())
			v.turn(t, peopleTurn(turns))
			mu.Lock()
			defer mu.Unlock()
			if compactErr != nil {
				t.Fatalf("Compact: %v", compactErr)
			}
			if marker == nil {
				t.Fatalf("no compaction was stored between Len and At (methods read: %v): the test proves nothing", traced)
			}
			if i := slices.Index(traced, "Len(run=false)"); i < 0 || !slices.Contains(traced[i:], "At(run=false)") {
				t.Fatalf("the runner did not read Len then At before its run: %v", traced)
			}
			reqs := v.model.Requests()[before:]
			if len(reqs) == 0 {
				t.Fatal("the turn made no model call")
			}
			if !requestHolds(reqs[0], compaction.SummaryHeader) {
				t.Error("the run after the compaction does not read its summary")
			}
			if requestHolds(reqs[0], peopleTurn(0)) {
				t.Error("the run after the compaction still reads the first turn raw")
			}
		})
	}
}

// Len, At and All of one session value agree with each other and with themselves whatever
// compactions land after it was read, in and out of a run's hands; a later Get sees them.
func TestOneReadOneView(t *testing.T) {
	for _, store := range viewStores {
		t.Run(store.name, func(t *testing.T) {
			v := newViewRig(t, store.open(t))
			for i := range 5 {
				v.turn(t, peopleTurn(i))
			}
			ctx := context.Background()
			get := func() session.Session {
				t.Helper()
				resp, err := v.rc.SessionService.Get(ctx, &session.GetRequest{AppName: peopleApp, UserID: "u1", SessionID: "s1"})
				if err != nil {
					t.Fatal(err)
				}
				return resp.Session
			}
			old := get()
			evs := old.Events()
			n := evs.Len()
			atFirst := make([]*session.Event, n)
			for i := range n {
				atFirst[i] = evs.At(i)
			}
			peopleFirst := slices.Collect(evs.All())

			m, err := v.h.Compact(ctx, peopleApp, "u1", "s1")
			if err != nil || m == nil {
				t.Fatalf("Compact = %v, %v: want a compaction", m, err)
			}

			for _, ev := range []session.Events{evs, old.Events()} {
				if got := ev.Len(); got != n {
					t.Errorf("Len after a compaction landed = %d, want %d (the value's own view)", got, n)
				}
				for i := range n {
					if got := ev.At(i); got != atFirst[i] {
						t.Errorf("At(%d) changed after a compaction landed: %v, want %v", i, eventID(got), eventID(atFirst[i]))
					}
				}
				if got := slices.Collect(ev.All()); !slices.Equal(got, peopleFirst) {
					t.Errorf("All changed after a compaction landed: %d events, want the %d it gave before", len(got), len(peopleFirst))
				}
			}
			if got := hooks.ModelView(old); !slices.Equal(got, atFirst) {
				t.Errorf("ModelView of the value = %d events, want the %d Len/At give", len(got), len(atFirst))
			}

			fresh := get()
			if got := fresh.Events().Len(); got >= n {
				t.Errorf("a later read shows %d events, want fewer than %d: it should read the compaction", got, n)
			}
			if first := fresh.Events().At(0); first == nil || !strings.HasPrefix(textOfEvent(first), compaction.SummaryHeader) {
				t.Errorf("a later read does not start with the summary: %v", eventID(first))
			}
			people := slices.Collect(fresh.Events().All())
			if len(people) != len(peopleFirst)+1 {
				t.Errorf("people read %d events after the compaction, want %d (every stored event and the marker's notice)", len(people), len(peopleFirst)+1)
			}
		})
	}
}

// requestHolds reports whether a text part of req holds s.
func requestHolds(req *model.LLMRequest, s string) bool {
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p != nil && strings.Contains(p.Text, s) {
				return true
			}
		}
	}
	return false
}

func eventID(e *session.Event) string {
	if e == nil {
		return "<nil>"
	}
	return e.ID
}

func textOfEvent(e *session.Event) string {
	if e == nil || e.Content == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range e.Content.Parts {
		if p != nil {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// A long tool loop (one user message, 90 tool calls) at a small window compacts many times over
// inside its one invocation, and every request stays within the compacted view: the run's
// session takes in each stored marker's whole chain at its next event, so no request is
// trimmed while the summary, the task and the newest call fit.
func TestLongToolLoopStaysInTheView(t *testing.T) {
	longrun.Test(t)
	for _, store := range viewStores {
		t.Run(store.name, func(t *testing.T) {
			const calls = 90
			var step atomic.Int32
			m := &llmtest.Model{ModelName: "small-model", UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
				n := int(step.Add(1))
				if n > calls {
					return genai.NewContentFromText("Done: every file was read.", genai.RoleModel), nil
				}
				return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
					Name: "read_file", Args: map[string]any{"path": fmt.Sprintf("pkg/file%03d.go", n)}}}}}, nil
			}}
			core, logs := observer.New(zapcore.InfoLevel)
			h, err := hooks.New(adkctx.Config{Logger: zap.New(core),
				Models:     []budget.ModelInfo{{Name: "small-model", ContextWindow: 8192, MaxOutputTokens: 512}},
				Compaction: &compaction.Config{Synchronous: true}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close(context.Background()) })
			readFile, err := llmtest.PathTool("read_file", func(path string) map[string]any {
				return map[string]any{"path": path, "content": strings.Repeat("func helper() { return }\n", 50)}
			})
			if err != nil {
				t.Fatal(err)
			}
			a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful coding agent.",
				Tools: []tool.Tool{readFile}})
			if err != nil {
				t.Fatal(err)
			}
			rc, err := h.Wire(runner.Config{AppName: peopleApp, Agent: a, SessionService: store.open(t), AutoCreateSession: true})
			if err != nil {
				t.Fatal(err)
			}
			r, err := runner.New(rc)
			if err != nil {
				t.Fatal(err)
			}
			v := &viewRig{h: h, rc: rc, r: r, model: m}
			v.turn(t, "Read every file of pkg, one at a time, and tell me when you are done.")

			decisions := logs.FilterMessage("budget decision").All()
			if len(decisions) < calls {
				t.Fatalf("%d model calls, want at least %d", len(decisions), calls)
			}
			compactions := logs.FilterMessage("compaction").FilterField(zap.String("outcome", "compacted")).Len()
			if compactions < 6 {
				t.Fatalf("%d compactions: the loop should be compacted more often than the markers the wrapper remembers", compactions)
			}
			trimmed, most := 0, 0
			for _, d := range decisions {
				f := d.ContextMap()
				if f["action"] != "none" {
					trimmed++
				}
				most = max(most, int(f["contents"].(int64)))
			}
			if trimmed > 0 {
				t.Errorf("%d of %d requests were trimmed or refused inside the loop (%d compactions): the view should bound them", trimmed, len(decisions), compactions)
			}
			t.Logf("%d requests, %d compactions, at most %d contents", len(decisions), compactions, most)
		})
	}
}
