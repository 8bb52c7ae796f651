package hooks_test

// Wiring mistakes, through adk-go's runner as a user meets them, and what is not one. The adk-go
// v2 glue runs the same tests (adk2/hooks/wiring_test.go is generated from this file).

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/dbartifact"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/sqlitetest"
	"github.com/adkctx/adkctx/hooks/sessiondb"
	"github.com/adkctx/adkctx/processors/truncate"
)

const wiringApp = "wiring-app"

// wiringHooks returns Hooks configured by cfg (compaction every 2 invocations, extractive, on
// the turn, when cfg has none), logging to the returned observer.
func wiringHooks(t *testing.T, cfg adkctx.Config) (*hooks.Hooks, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Logger = zap.New(core)
	if cfg.Compaction == nil {
		cfg.Compaction = &compaction.Config{Interval: 2, Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}}
	}
	h, err := hooks.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h, logs
}

// wiringAgent is an llmagent on m with tools and, when callbacks, adkctx's model and tool
// callbacks of h.
func wiringAgent(t *testing.T, h *hooks.Hooks, m model.LLM, callbacks bool, tools ...tool.Tool) agent.Agent {
	t.Helper()
	cfg := llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant.", Tools: tools}
	if callbacks {
		cfg.BeforeModelCallbacks = []llmagent.BeforeModelCallback{h.BeforeModel()}
		cfg.AfterModelCallbacks = []llmagent.AfterModelCallback{h.AfterModel()}
		cfg.AfterToolCallbacks = []llmagent.AfterToolCallback{h.AfterTool()}
	}
	a, err := llmagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newRunner(t *testing.T, rc runner.Config) *runner.Runner {
	t.Helper()
	rc.AppName, rc.AutoCreateSession = wiringApp, true
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// turn runs one user message and returns the first error the run yields.
func turn(t *testing.T, r *runner.Runner, sessionID, text string) error {
	t.Helper()
	for _, err := range r.Run(t.Context(), "user", sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			return err
		}
	}
	return nil
}

// wiringEvents returns every stored event of a session, straight from svc.
func wiringEvents(t *testing.T, svc session.Service, sessionID string) []*session.Event {
	t.Helper()
	resp, err := svc.Get(t.Context(), &session.GetRequest{AppName: wiringApp, UserID: "user", SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Collect(resp.Session.Events().All())
}

// problems returns the Problem of each *adkctx.WiringError joined in err.
func problems(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	joined, ok := err.(interface{ Unwrap() []error })
	errs := []error{err}
	if ok {
		errs = joined.Unwrap()
	}
	var out []string
	for _, e := range errs {
		var w *adkctx.WiringError
		if !errors.As(e, &w) {
			t.Errorf("not a *adkctx.WiringError: %v", e)
			continue
		}
		out = append(out, w.Problem)
	}
	return out
}

// wiringStores are the session stores the tests run on: in-memory and SQLite (the index created).
func wiringStores(t *testing.T) map[string]func() session.Service {
	return map[string]func() session.Service{
		"inmemory": session.InMemoryService,
		"sqlite":   func() session.Service { return sqlitetest.Open(t, sqlitetest.TempDSN(t)).Sessions },
	}
}

// An application that appends events through the wrapped service outside a run — a
// notification, a crash recovery, a message a worker posts, an imported exchange — with a new,
// empty or reused invocation id, in this process or another, is no wiring mistake; a runner
// without the plugin still is (the next test). Before, every agent-authored event of an
// invocation the plugin had not seen start was reported as plugin_missing.
func TestWritesOutsideARunAreNoWiringMistake(t *testing.T) {
	for name, newStore := range wiringStores(t) {
		t.Run(name, func(t *testing.T) {
			base := newStore()
			h, logs := wiringHooks(t, adkctx.Config{})
			m := &llmtest.Model{UsageScale: 1}
			rc, err := h.Wire(runner.Config{Agent: wiringAgent(t, h, m, false), SessionService: base})
			if err != nil {
				t.Fatal(err)
			}
			r := newRunner(t, rc)
			for i := range 3 {
				if err := turn(t, r, "s1", fmt.Sprint("question ", i)); err != nil {
					t.Fatal(err)
				}
			}
			finished := ""
			for _, e := range wiringEvents(t, base, "s1") {
				if e.Author == "assistant" {
					finished = e.InvocationID
					break
				}
			}
			if finished == "" {
				t.Fatal("no agent event stored")
			}

			other, otherLogs := wiringHooks(t, adkctx.Config{}) // another process over the same store
			otherRC, err := other.Wire(runner.Config{Agent: wiringAgent(t, other, m, false), SessionService: base})
			if err != nil {
				t.Fatal(err)
			}
			writes := []struct {
				name       string
				sessions   session.Service
				invocation string
				author     string
			}{
				{"a notification, new invocation id", rc.SessionService, "notify-1", "assistant"},
				{"a worker's message, no invocation id", rc.SessionService, "", "assistant"},
				{"a crash recovery, the finished invocation's id", rc.SessionService, finished, "assistant"},
				{"an imported exchange: its user message", rc.SessionService, "import-1", "user"},
				{"an imported exchange: its answer", rc.SessionService, "import-1", "assistant"},
				{"another process: the finished invocation's id", otherRC.SessionService, finished, "assistant"},
				{"another process: a new invocation id", otherRC.SessionService, "notify-2", "assistant"},
			}
			for i, w := range writes {
				resp, err := w.sessions.Get(t.Context(), &session.GetRequest{AppName: wiringApp, UserID: "user", SessionID: "s1"})
				if err != nil {
					t.Fatal(err)
				}
				var role genai.Role = genai.RoleModel
				if w.author == "user" {
					role = genai.RoleUser
				}
				ev := &session.Event{ID: fmt.Sprint("app-event-", i), InvocationID: w.invocation, Author: w.author, Timestamp: time.Now(),
					LLMResponse: model.LLMResponse{Content: genai.NewContentFromText(w.name, role)}}
				if err := w.sessions.AppendEvent(t.Context(), resp.Session, ev); err != nil {
					t.Fatalf("%s: %v", w.name, err)
				}
			}
			if err := turn(t, r, "s1", "one more question"); err != nil {
				t.Fatal(err)
			}
			for hname, hh := range map[string]*hooks.Hooks{"this process": h, "another process": other} {
				if err := hh.Check(); err != nil {
					t.Errorf("%s: Check() = %v, want nil", hname, err)
				}
			}
			for _, l := range []*observer.ObservedLogs{logs, otherLogs} {
				if n := l.FilterLevelExact(zapcore.ErrorLevel).Len(); n != 0 {
					t.Errorf("%d error entries: %v", n, l.FilterLevelExact(zapcore.ErrorLevel).All())
				}
			}
		})
	}
}

// A runner over the wrapped service without adkctx's plugin is reported, whether or not its
// agent has adkctx's model callbacks: by its appends (the runner stores the user message, then
// the agent's events, and the plugin never saw the run start) or by its model calls.
func TestRunnerWithoutThePluginIsReported(t *testing.T) {
	for name, newStore := range wiringStores(t) {
		for _, callbacks := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/callbacks=%v", name, callbacks), func(t *testing.T) {
				h, logs := wiringHooks(t, adkctx.Config{})
				r := newRunner(t, runner.Config{Agent: wiringAgent(t, h, &llmtest.Model{}, callbacks), SessionService: h.SessionService(newStore())})
				for range 2 {
					if err := turn(t, r, "s1", "hello"); err != nil {
						t.Fatal(err)
					}
				}
				if got := problems(t, h.Check()); !slices.Equal(got, []string{"plugin_missing"}) {
					t.Errorf("Check() problems = %v, want [plugin_missing]", got)
				}
				if n := logs.FilterLevelExact(zapcore.ErrorLevel).FilterField(zap.String("problem", "plugin_missing")).Len(); n != 1 {
					t.Errorf("%d plugin_missing entries logged, want 1", n)
				}
			})
		}
	}
}

// With compaction configured, a model call or a run through a Hooks that was never wired (no
// Wire, no SessionService) is reported once as not_wired, by Check, Close and the log, whatever
// the path: the agent's callbacks alone, or the plugin registered by hand over the store itself
// (whose runs are refused with that error). Without compaction the callbacks alone are a
// documented way to use adkctx: nothing is reported. Before, the callbacks alone were reported as
// plugin_missing (whose fix, registering the plugin, leaves the store unwrapped) and the plugin
// as view_missing, never as the Hooks not being wired.
func TestNeverWiredIsLoud(t *testing.T) {
	cases := []struct {
		name              string
		callbacks, plugin bool
		compactionOff     bool
		refused           bool // the run fails with the wiring error
		want              []string
	}{
		{name: "agent callbacks", callbacks: true, want: []string{"not_wired"}},
		{name: "plugin by hand", plugin: true, refused: true, want: []string{"not_wired"}},
		{name: "plugin and agent callbacks", callbacks: true, plugin: true, refused: true, want: []string{"not_wired"}},
		{name: "agent callbacks, compaction off", callbacks: true, compactionOff: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			cfg := adkctx.Config{Logger: zap.New(core), Compaction: &compaction.Config{}}
			if c.compactionOff {
				cfg.Compaction = nil
			}
			h, err := hooks.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rc := runner.Config{Agent: wiringAgent(t, h, &llmtest.Model{}, c.callbacks), SessionService: session.InMemoryService()}
			if c.plugin {
				p, err := h.Plugin()
				if err != nil {
					t.Fatal(err)
				}
				rc.PluginConfig = runner.PluginConfig{Plugins: []*plugin.Plugin{p}}
			}
			r := newRunner(t, rc)
			for range 3 {
				err := turn(t, r, "s1", "hello")
				var w *adkctx.WiringError
				switch {
				case c.refused && (!errors.As(err, &w) || w.Problem != "not_wired"):
					t.Fatalf("run: %v, want the not_wired *adkctx.WiringError", err)
				case !c.refused && err != nil:
					t.Fatal(err)
				}
			}
			for name, err := range map[string]error{"Check": h.Check(), "Close": h.Close(context.Background())} {
				if got := problems(t, err); !slices.Equal(got, c.want) {
					t.Errorf("%s() problems = %v, want %v", name, got, c.want)
				}
			}
			logged := logs.FilterLevelExact(zapcore.ErrorLevel)
			if logged.Len() != len(c.want) || len(c.want) > 0 && logged.FilterField(zap.String("problem", c.want[0])).Len() != 1 {
				t.Errorf("error entries %v, want one per problem %v", logged.All(), c.want)
			}
		})
	}
}

// A runner given the store itself while the Hooks holds its wrapper (the plugin from Wire's
// config, the service not): adk-go's runner stores the user message through the store, the
// plugin's BeforeRun sees a session not read through the wrapper, the model reads every event,
// and a compaction's marker stored meanwhile (here mid-invocation, on the token trigger) makes
// adk-go's database service refuse the runner's next append as a stale session. Before, that
// error was what the user got back from Run; now the first run is refused with view_missing,
// which says what to do, and no compaction touches the session.
func TestWrongStoreIsExplained(t *testing.T) {
	for name, newStore := range wiringStores(t) {
		t.Run(name, func(t *testing.T) {
			base := newStore()
			h, _ := wiringHooks(t, adkctx.Config{
				Models:     []budget.ModelInfo{{Name: "small-model", ContextWindow: 8000, MaxOutputTokens: 500}},
				Compaction: &compaction.Config{Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}},
			})
			m := &llmtest.Model{ModelName: "small-model", UsageScale: 1}
			for i := range 30 {
				m.Script = append(m.Script, llmtest.Call(&genai.FunctionCall{Name: "build", Args: map[string]any{"target": fmt.Sprint(i)}}))
			}
			a := wiringAgent(t, h, m, false, buildTool(t, strings.Repeat("step output line with some detail\n", 90)))
			rc, err := h.Wire(runner.Config{Agent: a, SessionService: base})
			if err != nil {
				t.Fatal(err)
			}
			r := newRunner(t, runner.Config{Agent: a, SessionService: base, PluginConfig: rc.PluginConfig})
			var first error
			for i := 0; i < 3 && first == nil; i++ {
				first = turn(t, r, "s1", "build all thirty targets")
			}
			var w *adkctx.WiringError
			if !errors.As(first, &w) || w.Problem != "view_missing" || !strings.Contains(w.Message, "Hooks.Wire") {
				t.Fatalf("the first error of the runs: %v; want the view_missing *adkctx.WiringError naming the fix", first)
			}
			if m.Calls() != 0 {
				t.Errorf("the model was called %d times by a refused run", m.Calls())
			}
			waitIdle(t, h)
			if slices.ContainsFunc(wiringEvents(t, base, "s1"), isMarker) {
				t.Error("a compaction stored a marker in a session served by a refused runner")
			}
			if got := problems(t, h.Check()); !slices.Equal(got, []string{"view_missing"}) {
				t.Errorf("Check() problems = %v, want [view_missing]", got)
			}
		})
	}
}

// storedService is a session service the Usage tests run against, opened per test.
type storedService struct {
	name string
	open func(t *testing.T) session.Service
}

// storedServices are adk-go's in-memory service and its database service over SQLite.
func storedServices() []storedService {
	return []storedService{
		{"in-memory", func(*testing.T) session.Service { return session.InMemoryService() }},
		{"sqlite", func(t *testing.T) session.Service { return sqlitetest.Open(t, sqlitetest.TempDSN(t)).Sessions }},
	}
}

// Usage says what the session's stored model calls say, in any process wired to its store: a
// Hooks of another process (another replica, or this one restarted) reads the session the first
// time it is asked, as a run's start does, and reports the same accounting as the Hooks that
// served it, before serving a run itself. A Hooks never wired knows nothing (Known false,
// TurnsRemaining -1), nor does one asked for a session without a model call, or for one not
// stored (the read's failure logged at warn level, without the session's content). Before, another process reported nothing until its
// first run of the session.
func TestUsageSaysWhatItKnows(t *testing.T) {
	for _, tc := range storedServices() {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.open(t)
			h, logs := wiringHooks(t, adkctx.Config{})
			if u := h.Usage(wiringApp, "user", "s1"); u.Known || u.TurnsRemaining != -1 || u.Turns != 0 {
				t.Errorf("Usage of a Hooks never wired = %+v; want Known false", u)
			}
			m := &llmtest.Model{UsageScale: 1}
			rc, err := h.Wire(runner.Config{Agent: wiringAgent(t, h, m, false), SessionService: base})
			if err != nil {
				t.Fatal(err)
			}
			if err := turn(t, newRunner(t, rc), "s1", "hello"); err != nil {
				t.Fatal(err)
			}
			served := h.Usage(wiringApp, "user", "s1")
			if !served.Known || served.Turns != 1 || served.ModelCalls != 1 || served.Total.Prompt <= 0 {
				t.Errorf("Usage after a run = %+v; want Known with 1 turn and 1 call", served)
			}
			if u := h.Usage(wiringApp, "user", "never-stored"); u.Known {
				t.Errorf("Usage of a session never stored = %+v; want Known false", u)
			}
			if got := logs.FilterMessage("usage not read").FilterField(zap.String("session_id", "never-stored")).Len(); got != 1 {
				t.Errorf("%d warnings of the failed read, want 1", got)
			}

			other, _ := wiringHooks(t, adkctx.Config{})
			otherRC, err := other.Wire(runner.Config{Agent: wiringAgent(t, other, m, false), SessionService: base})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := base.Create(t.Context(), &session.CreateRequest{AppName: wiringApp, UserID: "user", SessionID: "no-calls"}); err != nil {
				t.Fatal(err)
			}
			if u := other.Usage(wiringApp, "user", "no-calls"); u.Known || u.TurnsRemaining != -1 {
				t.Errorf("Usage of a stored session without a model call = %+v; want Known false", u)
			}
			restored := other.Usage(wiringApp, "user", "s1")
			if diff := cmp.Diff(served, restored); diff != "" {
				t.Errorf("Usage in another process before it served the session (-served +restored):\n%s", diff)
			}
			if err := turn(t, newRunner(t, otherRC), "s1", "hello again"); err != nil {
				t.Fatal(err)
			}
			if u := other.Usage(wiringApp, "user", "s1"); !u.Known || u.Turns != 2 || u.ModelCalls != 2 {
				t.Errorf("Usage in another process after its first run = %+v; want Known with the session's 2 turns and calls", u)
			}
		})
	}
}

// Usage of a session this process does not know reads it. A run of the session that this
// process starts while that read is on its way makes the accounting the process's own: the
// read, older than the run, changes none of it, and the run's calls stay counted in what Usage
// reports and in the call records stored (which any other process restores from).
func TestUsageReadOvertakenByARun(t *testing.T) {
	for _, tc := range storedServices() {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.open(t)
			first, _ := wiringHooks(t, adkctx.Config{})
			rc, err := first.Wire(runner.Config{Agent: wiringAgent(t, first, &llmtest.Model{UsageScale: 1}, false), SessionService: base})
			if err != nil {
				t.Fatal(err)
			}
			if err := turn(t, newRunner(t, rc), "s1", "hello"); err != nil {
				t.Fatal(err)
			}

			// The run's first call asks for a tool; its second returns once the Usage
			// started before the run has returned.
			held := &heldGet{Service: base, read: make(chan struct{}), release: make(chan struct{})}
			var usage sync.WaitGroup
			m := &llmtest.Model{UsageScale: 1, Script: []llmtest.Step{
				func(*model.LLMRequest) (*genai.Content, error) {
					return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "build", Args: map[string]any{"target": "app"}}}}}, nil
				},
				func(*model.LLMRequest) (*genai.Content, error) {
					close(held.release)
					usage.Wait()
					return genai.NewContentFromText("built", genai.RoleModel), nil
				},
			}}
			h, _ := wiringHooks(t, adkctx.Config{})
			hrc, err := h.Wire(runner.Config{Agent: wiringAgent(t, h, m, false, buildTool(t, "ok")), SessionService: held})
			if err != nil {
				t.Fatal(err)
			}
			held.armed.Store(true)
			usage.Go(func() {
				if u := h.Usage(wiringApp, "user", "s1"); !u.Known {
					t.Errorf("Usage read nothing: %+v", u)
				}
			})
			<-held.read
			if err := turn(t, newRunner(t, hrc), "s1", "build it"); err != nil {
				t.Fatal(err)
			}
			if got := h.Usage(wiringApp, "user", "s1"); got.Turns != 2 || got.ModelCalls != 3 {
				t.Errorf("Usage after the run = %+v; want 2 turns and 3 calls", got)
			}
			other, _ := wiringHooks(t, adkctx.Config{})
			if _, err := other.Wire(runner.Config{Agent: wiringAgent(t, other, m, false), SessionService: base}); err != nil {
				t.Fatal(err)
			}
			if restored := other.Usage(wiringApp, "user", "s1"); restored.Turns != 2 || restored.ModelCalls != 3 {
				t.Errorf("Usage restored by another process = %+v; want 2 turns and 3 calls", restored)
			}
			var seqs []float64
			for _, ev := range wiringEvents(t, base, "s1") {
				if rec, ok := ev.CustomMetadata["_adkctx_call"].(map[string]any); ok {
					seqs = append(seqs, rec["call_seq"].(float64))
				}
			}
			if diff := cmp.Diff([]float64{1, 2, 3}, seqs); diff != "" {
				t.Errorf("call_seq of the stored calls (-want +got):\n%s", diff)
			}
		})
	}
}

// heldGet is a session service whose Get, once armed, reads the session and then waits for
// release before it returns what it read: a read that a run overtakes.
type heldGet struct {
	session.Service
	armed   atomic.Bool
	read    chan struct{} // closed when the held Get has read
	release chan struct{}
}

func (s *heldGet) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	resp, err := s.Service.Get(ctx, req)
	if s.armed.CompareAndSwap(true, false) {
		close(s.read)
		<-s.release
	}
	return resp, err
}

// adk-go's database service without adkctx's session index is reported once per Hooks — one
// warning naming sessiondb.CreateIndex, and session_index_missing from Check — however many
// runners are wired; with the index, on another service, or when the database cannot be asked,
// nothing is reported. (PostgreSQL: hooks/internal/pgtest.)
func TestSessionIndexWarning(t *testing.T) {
	cases := []struct {
		name string
		open func(t *testing.T) session.Service
		want []string
	}{
		{"sqlite with the index", func(t *testing.T) session.Service { return sqlitetest.Open(t, sqlitetest.TempDSN(t)).Sessions }, nil},
		{"sqlite without the index", func(t *testing.T) session.Service {
			store := sqlitetest.Open(t, sqlitetest.TempDSN(t))
			if err := store.DB.Exec("DROP INDEX IF EXISTS " + sessiondb.IndexName).Error; err != nil {
				t.Fatal(err)
			}
			return store.Sessions
		}, []string{"session_index_missing"}},
		{"sqlite that cannot be asked", func(t *testing.T) session.Service {
			store := sqlitetest.Open(t, sqlitetest.TempDSN(t))
			if err := store.DB.Exec("DROP INDEX IF EXISTS " + sessiondb.IndexName).Error; err != nil {
				t.Fatal(err)
			}
			store.Close()
			return store.Sessions
		}, nil},
		{"in-memory", func(*testing.T) session.Service { return session.InMemoryService() }, nil},
	}
	for _, c := range cases {
		for _, compactionOn := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/compaction=%v", c.name, compactionOn), func(t *testing.T) {
				core, logs := observer.New(zapcore.DebugLevel)
				cfg := adkctx.Config{Logger: zap.New(core)}
				if compactionOn {
					cfg.Compaction = &compaction.Config{}
				}
				h, err := hooks.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				base := c.open(t)
				for range 2 {
					if _, err := h.Wire(runner.Config{AppName: wiringApp, Agent: wiringAgent(t, h, &llmtest.Model{}, false), SessionService: base}); err != nil {
						t.Fatal(err)
					}
				}
				h.SessionService(base)
				if got := problems(t, h.Check()); !slices.Equal(got, c.want) {
					t.Errorf("Check() problems = %v, want %v", got, c.want)
				}
				warned := logs.FilterField(zap.String("problem", "session_index_missing"))
				switch {
				case c.want == nil && warned.Len() != 0:
					t.Errorf("warned: %v", warned.All())
				case c.want != nil && (warned.Len() != 1 || warned.All()[0].Level != zapcore.WarnLevel ||
					!strings.Contains(warned.All()[0].Message, "sessiondb.CreateIndex")):
					t.Errorf("warnings %v, want one at warn level naming sessiondb.CreateIndex", warned.All())
				}
				if err := h.Close(context.Background()); !slices.Equal(problems(t, err), c.want) {
					t.Errorf("Close() = %v, want %v", err, c.want)
				}
			})
		}
	}
}

// Recall tools need an artifact service, and it must be able to serve: Wire refuses a runner
// without one once RecallTools gave the tools out (a typed error saying what to do), and one
// whose tables were never migrated (hooks/dbartifact); a runner wired by hand whose model is
// given the tools is reported by Check. Before, Wire accepted both, and the tools failed when the
// model called them, the second with SQLite's "SQL logic error" alone.
func TestRecallToolsNeedAWorkingArtifactService(t *testing.T) {
	store := sqlitetest.Open(t, sqlitetest.TempDSN(t))
	h, _ := wiringHooks(t, adkctx.Config{})
	tools, err := h.RecallTools()
	if err != nil {
		t.Fatal(err)
	}
	a := wiringAgent(t, h, &llmtest.Model{}, false, tools...)

	_, err = h.Wire(runner.Config{AppName: wiringApp, Agent: a, SessionService: store.Sessions})
	var w *adkctx.WiringError
	if !errors.As(err, &w) || w.Problem != "recall_without_artifacts" || !strings.Contains(w.Message, "ArtifactService") {
		t.Errorf("Wire without an artifact service: %v, want the recall_without_artifacts *adkctx.WiringError", err)
	}

	artifacts := dbartifact.NewService(store.DB, dbartifact.Config{})
	_, err = h.Wire(runner.Config{AppName: wiringApp, Agent: a, SessionService: store.Sessions, ArtifactService: artifacts})
	var nm *dbartifact.NotMigratedError
	if !errors.As(err, &nm) || !strings.Contains(err.Error(), "Migrate") {
		t.Errorf("Wire with a dbartifact service not migrated: %v, want a *dbartifact.NotMigratedError", err)
	}
	if err := dbartifact.Migrate(t.Context(), store.DB); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Wire(runner.Config{AppName: wiringApp, Agent: a, SessionService: store.Sessions, ArtifactService: artifacts}); err != nil {
		t.Errorf("Wire after Migrate: %v", err)
	}
	if err := h.Check(); err != nil {
		t.Errorf("Check() = %v, want nil", err)
	}

	// By hand: the plugin and the wrapper, no Wire, so no artifact service.
	byHand, _ := wiringHooks(t, adkctx.Config{})
	handTools, err := byHand.RecallTools()
	if err != nil {
		t.Fatal(err)
	}
	p, err := byHand.Plugin()
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, runner.Config{Agent: wiringAgent(t, byHand, &llmtest.Model{}, false, handTools...),
		SessionService: byHand.SessionService(session.InMemoryService()), PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{p}}})
	if err := turn(t, r, "s1", "hello"); err != nil {
		t.Fatal(err)
	}
	if got := problems(t, byHand.Check()); !slices.Equal(got, []string{"recall_without_artifacts"}) {
		t.Errorf("Check() after a model call given the tools without an artifact service: %v, want [recall_without_artifacts]", got)
	}
}

// Every refusal of Wire is an *adkctx.WiringError whose Problem names it, so an application
// matches it with errors.As, not by its text; a refusal caused by another error still unwraps
// to it (a dbartifact service whose tables were never migrated). Before, only
// recall_without_artifacts was typed.
func TestWireRefusalsAreTyped(t *testing.T) {
	newHooks := func(t *testing.T) *hooks.Hooks { h, _ := wiringHooks(t, adkctx.Config{}); return h }
	agentOf := func(t *testing.T, h *hooks.Hooks) agent.Agent { return wiringAgent(t, h, &llmtest.Model{}, false) }
	tests := []struct {
		name    string
		problem string
		// wire makes h refuse a runner.Config, returning Wire's error.
		wire func(t *testing.T, h *hooks.Hooks) error
		// also, when set, is another error the refusal unwraps to.
		also func(error) bool
	}{
		{"no session service", "session_service_missing", func(t *testing.T, h *hooks.Hooks) error {
			_, err := h.Wire(runner.Config{Agent: agentOf(t, h)})
			return err
		}, nil},
		{"no agent", "agent_missing", func(t *testing.T, h *hooks.Hooks) error {
			_, err := h.Wire(runner.Config{SessionService: session.InMemoryService()})
			return err
		}, nil},
		{"already wired", "already_wired", func(t *testing.T, h *hooks.Hooks) error {
			rc, err := h.Wire(runner.Config{Agent: agentOf(t, h), SessionService: session.InMemoryService()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.Wire(rc)
			return err
		}, nil},
		{"second store", "second_store", func(t *testing.T, h *hooks.Hooks) error {
			if _, err := h.Wire(runner.Config{Agent: agentOf(t, h), SessionService: session.InMemoryService()}); err != nil {
				t.Fatal(err)
			}
			_, err := h.Wire(runner.Config{Agent: agentOf(t, h), SessionService: session.InMemoryService()})
			return err
		}, nil},
		{"second artifact service", "second_artifact_service", func(t *testing.T, h *hooks.Hooks) error {
			base := session.InMemoryService()
			if _, err := h.Wire(runner.Config{Agent: agentOf(t, h), SessionService: base, ArtifactService: artifact.InMemoryService()}); err != nil {
				t.Fatal(err)
			}
			_, err := h.Wire(runner.Config{Agent: agentOf(t, h), SessionService: base, ArtifactService: artifact.InMemoryService()})
			return err
		}, nil},
		{"artifact service not migrated", "artifact_service_not_ready", func(t *testing.T, h *hooks.Hooks) error {
			store := sqlitetest.Open(t, sqlitetest.TempDSN(t))
			_, err := h.Wire(runner.Config{Agent: agentOf(t, h), SessionService: store.Sessions,
				ArtifactService: dbartifact.NewService(store.DB, dbartifact.Config{})})
			return err
		}, func(err error) bool { var nm *dbartifact.NotMigratedError; return errors.As(err, &nm) }},
		{"recall tools without artifacts", "recall_without_artifacts", func(t *testing.T, h *hooks.Hooks) error {
			tools, err := h.RecallTools()
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.Wire(runner.Config{Agent: wiringAgent(t, h, &llmtest.Model{}, false, tools...), SessionService: session.InMemoryService()})
			return err
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.wire(t, newHooks(t))
			var w *adkctx.WiringError
			if !errors.As(err, &w) || w.Problem != tt.problem || w.Message == "" {
				t.Fatalf("Wire: %v (%T); want an *adkctx.WiringError, problem %s", err, err, tt.problem)
			}
			if tt.also != nil && !tt.also(err) {
				t.Errorf("Wire: %v does not unwrap to its cause", err)
			}
		})
	}
}

// Sessions served at once by one process over one SQLite file opened as the README and the
// quickstart open it (sqlitetest.DSN): every turn of every session is stored, with the tool
// outputs saved and compactions landing in the background. Before, with busy_timeout and WAL
// alone, adk-go's Create and AppendEvent (transactions that read, then write) failed with
// "database is locked (SQLITE_BUSY)" as soon as two sessions wrote together.
func TestConcurrentSessionsOnTheDocumentedSQLiteDSN(t *testing.T) {
	store := sqlitetest.Open(t, sqlitetest.DSN(filepath.Join(t.TempDir(), "sessions.db")))
	if err := dbartifact.Migrate(t.Context(), store.DB); err != nil {
		t.Fatal(err)
	}
	h, _ := wiringHooks(t, adkctx.Config{
		Models:     []budget.ModelInfo{{Name: "scripted-model", ContextWindow: 16_000, MaxOutputTokens: 1_000}},
		Compaction: &compaction.Config{Interval: 3},
		Truncation: truncate.Config{MaxBytes: 2 << 10},
	})
	read, err := llmtest.PathTool("read_file", func(path string) map[string]any {
		return map[string]any{"content": strings.Repeat("line of "+path+"\n", 300)}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each turn reads the file the user names, then answers.
	m := &llmtest.Model{Default: func(req *model.LLMRequest) (*genai.Content, error) {
		last := req.Contents[len(req.Contents)-1]
		if p := last.Parts[0]; p.Text != "" && last.Role == genai.RoleUser {
			return genai.NewContentFromFunctionCall("read_file", map[string]any{"path": strings.TrimPrefix(p.Text, "read ")}, genai.RoleModel), nil
		}
		return genai.NewContentFromText("read it", genai.RoleModel), nil
	}}
	rc, err := h.Wire(runner.Config{Agent: wiringAgent(t, h, m, false, read), SessionService: store.Sessions,
		ArtifactService: dbartifact.NewService(store.DB, dbartifact.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, rc)
	const sessions, turns = 4, 8
	errs := make([]error, sessions)
	var wg sync.WaitGroup
	for g := range sessions {
		wg.Go(func() {
			for i := range turns {
				if err := turn(t, r, fmt.Sprint("c", g), fmt.Sprintf("read g%d/f%d.go", g, i)); err != nil {
					errs[g] = fmt.Errorf("session c%d, turn %d: %w", g, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(t.Context()); err != nil { // waits for the compactions
		t.Fatal(err)
	}
	for g := range sessions {
		answers := 0
		for _, e := range wiringEvents(t, store.Sessions, fmt.Sprint("c", g)) {
			if e.Author == "assistant" && e.Content != nil && e.Content.Parts[0].Text == "read it" {
				answers++
			}
		}
		if answers != turns {
			t.Errorf("session c%d stored %d answers, want %d", g, answers, turns)
		}
	}
}
