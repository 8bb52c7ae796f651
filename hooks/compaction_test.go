package hooks_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/adkctx/adkctx/hooks/internal/sqlitetest"
	"github.com/google/go-cmp/cmp"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/scenario"
	"github.com/adkctx/adkctx/processors/request"
)

// wired is an agent + runner wired with Hooks.Wire, as the README shows.
type wired struct {
	*stack
	base session.Service
}

func wireStack(t *testing.T, m model.LLM, cfg adkctx.Config, base session.Service, tools ...tool.Tool) *wired {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Logger = zap.New(core)
	h, err := hooks.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant.", Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: base, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	lm, _ := m.(*llmtest.Model)
	return &wired{stack: &stack{hooks: h, model: lm, runner: r, sessions: rc.SessionService, logs: logs}, base: base}
}

// sqliteService is adk-go's database service over an SQLite file, its connections closed when
// the test ends (adk-go's service has no Close).
func sqliteService(t *testing.T, path string) session.Service {
	t.Helper()
	return sqlitetest.Open(t, path).Sessions
}

func backends(t *testing.T) map[string]func() session.Service {
	return map[string]func() session.Service{
		"inmemory": session.InMemoryService,
		"sqlite":   func() session.Service { return sqliteService(t, filepath.Join(t.TempDir(), "sessions.db")) },
	}
}

// stored returns every stored event of a session, markers included, straight from svc.
func stored(t *testing.T, svc session.Service, sessionID string) []*session.Event {
	t.Helper()
	resp, err := svc.Get(t.Context(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Collect(resp.Session.Events().All())
}

func isMarker(e *session.Event) bool {
	return e.Content == nil && e.CustomMetadata[compaction.MetadataKey] != nil
}

func userTexts(req *model.LLMRequest) []string {
	var out []string
	for _, c := range req.Contents {
		if c.Role == genai.RoleUser && len(c.Parts) > 0 && c.Parts[0].Text != "" {
			out = append(out, c.Parts[0].Text)
		}
	}
	return out
}

func hasSummary(req *model.LLMRequest) bool {
	return slices.ContainsFunc(req.Contents, compaction.IsSummary)
}

// Every request after a compaction carries the summary, the previous user turn raw (not only
// quoted in the summary) and the new message; storage keeps every original event — on the
// in-memory and SQLite services, in the background (default) and synchronous modes.
func TestCompactionKeepsTheRawTail(t *testing.T) {
	for name, newBase := range backends(t) {
		for _, sync := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sync=%v", name, sync), func(t *testing.T) {
				m := &llmtest.Model{UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
					return genai.NewContentFromText("noted: "+strings.Repeat("detail ", 40), genai.RoleModel), nil
				}}
				cfg := adkctx.Config{Compaction: &compaction.Config{Interval: 3, Synchronous: sync, Summarizer: &compaction.ExtractiveSummarizer{}}}
				s := wireStack(t, m, cfg, newBase())
				const turns = 16
				for i := range turns {
					if err := s.send(t, "s1", fmt.Sprintf("turn-%d: look at module %d and tell me what it does", i, i)); err != nil {
						t.Fatalf("turn %d: %v", i, err)
					}
					if !sync {
						waitIdle(t, s.hooks)
					}
				}
				reqs := m.Requests()
				summarized := false
				for i, req := range reqs {
					texts := userTexts(req)
					if i > 0 && !slices.Contains(texts, fmt.Sprintf("turn-%d: look at module %d and tell me what it does", i-1, i-1)) {
						t.Errorf("request %d lacks the previous user turn raw: %q", i, texts)
					}
					summarized = summarized || hasSummary(req)
					if summarized && !hasSummary(req) {
						t.Errorf("request %d after the first compaction has no summary", i)
					}
				}
				if !summarized {
					t.Fatal("no request carried a summary")
				}
				markers, originals := 0, 0
				for _, e := range stored(t, s.base, "s1") {
					if isMarker(e) {
						markers++
					} else {
						originals++
					}
				}
				if originals != 2*turns || markers == 0 {
					t.Errorf("stored %d originals (want %d) and %d markers", originals, 2*turns, markers)
				}
				if n := len(s.logs.FilterMessage("compaction").FilterField(zap.String("outcome", "compacted")).All()); n != markers {
					t.Errorf("%d compaction log entries say compacted, %d markers stored", n, markers)
				}
			})
		}
	}
}

// waitIdle waits until no background compaction is scheduled or running.
func waitIdle(t *testing.T, h *hooks.Hooks) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if !hooks.WaitIdle(ctx, h) {
		t.Fatal("background compaction did not finish")
	}
}

// slowSummarizer takes its time — of a synctest bubble's clock, where a test runs in one — and
// may ignore its context. It counts the calls that started and the ones that finished.
type slowSummarizer struct {
	delay             time.Duration
	ignoreCtx         bool
	started, finished atomic.Int32
}

func (s *slowSummarizer) Summarize(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	s.started.Add(1)
	defer s.finished.Add(1)
	if s.ignoreCtx {
		time.Sleep(s.delay)
	} else {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return (&compaction.ExtractiveSummarizer{}).Summarize(ctx, in)
}

// A turn never waits for a background compaction: what the README's "what a turn waits after
// its final answer" claims, counted instead of timed. In a synctest bubble the clock moves only
// when every goroutine waits, so a turn that waited for the 2 s summarizer would see the clock
// move by 2 s and the summary finished. In the background mode (the default) every turn ends
// with the clock where it started and no summary finished, while one is running; the next turn
// uses the marker once it is stored. The synchronous mode is the control: there the turn that
// compacts waits the summarizer's 2 s, and the same count sees it.
func TestTurnNeverWaitsForTheSummarizer(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := &llmtest.Model{UsageScale: 1, Default: chatty}
				slow := &slowSummarizer{delay: 2 * time.Second}
				s := wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: sync, Summarizer: slow}}, session.InMemoryService())
				var longest time.Duration
				for i := range 6 {
					start := time.Now()
					finished := slow.finished.Load()
					if err := s.send(t, "s1", fmt.Sprintf("turn-%d: %s", i, strings.Repeat("context ", 30))); err != nil {
						t.Fatal(err)
					}
					waited := time.Since(start)
					longest = max(longest, waited)
					if done := slow.finished.Load() - finished; !sync && (waited != 0 || done != 0) {
						t.Errorf("turn %d waited %v of the bubble's clock while %d summaries finished; want 0 and 0", i, waited, done)
					}
				}
				if sync {
					if longest != slow.delay || slow.finished.Load() == 0 {
						t.Errorf("synchronous: the longest turn waited %v with %d summaries finished; want %v (the summarizer's time)", longest, slow.finished.Load(), slow.delay)
					}
					return
				}
				synctest.Wait() // the compactor's goroutine is in the summarizer now, if it was started at all
				if slow.started.Load() == 0 || slow.finished.Load() != 0 {
					t.Fatalf("%d summaries started, %d finished after the turns; want one running: the interleaving did not happen",
						slow.started.Load(), slow.finished.Load())
				}
				waitIdle(t, s.hooks)
				if !slices.ContainsFunc(stored(t, s.base, "s1"), isMarker) {
					t.Fatal("no marker stored by the background compaction")
				}
				if err := s.send(t, "s1", "after the compaction"); err != nil {
					t.Fatal(err)
				}
				if last := m.Requests()[len(m.Requests())-1]; !hasSummary(last) {
					t.Error("the turn after the background compaction has no summary")
				}
			})
		})
	}
}

// chatty answers every call with a paragraph, so sessions grow.
func chatty(*model.LLMRequest) (*genai.Content, error) {
	return genai.NewContentFromText("noted: "+strings.Repeat("detail ", 40), genai.RoleModel), nil
}

// A summarizer that ignores its context cannot hold a compaction past Timeout: the fallback is
// used and the session's compaction slot is released. In a synctest bubble the summarizer's
// hour and the minute of Timeout are the bubble's: the turn that compacts waits no longer than
// Timeout, counted on that clock, and the fallback's own work takes none of it.
func TestSummarizerIgnoringItsContextIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := &slowSummarizer{delay: time.Hour, ignoreCtx: true}
		const timeout = time.Minute
		s := wireStack(t, &llmtest.Model{UsageScale: 1}, adkctx.Config{Compaction: &compaction.Config{Interval: 2, Summarizer: slow, Timeout: timeout,
			Synchronous: true}}, session.InMemoryService())
		var longest time.Duration
		for i := range 5 {
			start := time.Now()
			if err := s.send(t, "s1", fmt.Sprintf("turn-%d: %s", i, strings.Repeat("context ", 40))); err != nil {
				t.Fatal(err)
			}
			longest = max(longest, time.Since(start))
		}
		fallback := s.logs.FilterMessage("compaction").FilterField(zap.Bool("fallback_used", true)).All()
		if len(fallback) == 0 {
			t.Fatal("no compaction used the fallback")
		}
		if got := fallback[0].ContextMap()["primary_error_kind"]; got != "timeout" {
			t.Errorf("primary_error_kind = %v, want timeout", got)
		}
		if started := slow.started.Load(); longest == 0 || longest > timeout || started == 0 || slow.finished.Load() != 0 {
			t.Errorf("the longest turn waited %v (Timeout %v); %d summarizer calls, %d finished; want a wait of at most Timeout, the calls still sleeping",
				longest, timeout, started, slow.finished.Load())
		}
		time.Sleep(slow.delay) // the abandoned calls wake and end (their summaries are discarded): none outlives the bubble
		synctest.Wait()
	})
}

// A token-triggered compaction in the middle of one long invocation keeps every request under
// the hard limit by the model's reported count, and the current user message raw.
func TestLongInvocationStaysBounded(t *testing.T) {
	const calls = 30
	m := &llmtest.Model{ModelName: "small-model", UsageScale: 1}
	for i := range calls {
		m.Script = append(m.Script, llmtest.Call(&genai.FunctionCall{Name: "build", Args: map[string]any{"target": fmt.Sprint(i)}}))
	}
	m.Script = append(m.Script, llmtest.Text("all targets built"))
	out := strings.Repeat("step output line with some detail\n", 90) // ~3 KB, under the truncation limit
	cfg := adkctx.Config{
		Models:     []budget.ModelInfo{{Name: "small-model", ContextWindow: 8000, MaxOutputTokens: 500}},
		Compaction: &compaction.Config{Summarizer: &compaction.ExtractiveSummarizer{}},
	}
	s := wireStack(t, m, cfg, session.InMemoryService(), buildTool(t, out))
	if err := s.send(t, "s1", "build all thirty targets"); err != nil {
		t.Fatalf("run: %v", err)
	}
	limits := s.hooks.Limits("small-model")
	reqs := m.Requests()
	if len(reqs) != calls+1 {
		t.Fatalf("model calls = %d, want %d", len(reqs), calls+1)
	}
	for i, r := range reqs {
		if n := budget.EstimateRequest(r.Contents, r.Config); n > limits.Hard {
			t.Errorf("call %d: %d tokens above the hard limit %d", i, n, limits.Hard)
		}
		if !slices.Contains(userTexts(r), "build all thirty targets") {
			t.Errorf("call %d lost the current user message", i)
		}
	}
	waitIdle(t, s.hooks)
	if !slices.ContainsFunc(stored(t, s.base, "s1"), isMarker) {
		t.Error("no mid-invocation compaction happened")
	}
}

// Both wiring mistakes are caught: compaction configured without the plugin, and the plugin
// without the session wrapper (its runs refused with the error), each with one error-level log
// entry. (More in wiring_test.go.)
func TestWiringMistakesAreLoud(t *testing.T) {
	t.Run("no plugin", func(t *testing.T) {
		core, logs := observer.New(zapcore.DebugLevel)
		h, err := hooks.New(adkctx.Config{Logger: zap.New(core), Compaction: &compaction.Config{}})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: &llmtest.Model{},
			BeforeModelCallbacks: []llmagent.BeforeModelCallback{h.BeforeModel()}})
		r, _ := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: h.SessionService(session.InMemoryService()), AutoCreateSession: true})
		s := &stack{runner: r}
		for range 3 {
			if err := s.send(t, "s1", "hello"); err != nil {
				t.Fatal(err)
			}
		}
		if got := logs.FilterLevelExact(zapcore.ErrorLevel).FilterField(zap.String("problem", "plugin_missing")).Len(); got != 1 {
			t.Errorf("%d plugin_missing errors logged, want 1", got)
		}
	})
	t.Run("no session wrapper", func(t *testing.T) {
		core, logs := observer.New(zapcore.DebugLevel)
		h, err := hooks.New(adkctx.Config{Logger: zap.New(core), Compaction: &compaction.Config{}})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := h.Plugin()
		a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: &llmtest.Model{}})
		base := session.InMemoryService()
		h.SessionService(base) // the Hooks holds the wrapper; the runner is given the store itself
		r, _ := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: base, AutoCreateSession: true,
			PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{p}}})
		s := &stack{runner: r}
		for range 3 {
			var w *adkctx.WiringError
			if err := s.send(t, "s1", "hello"); !errors.As(err, &w) || w.Problem != "view_missing" {
				t.Fatalf("run: %v, want the view_missing *adkctx.WiringError", err)
			}
		}
		if got := logs.FilterLevelExact(zapcore.ErrorLevel).FilterField(zap.String("problem", "view_missing")).Len(); got != 1 {
			t.Errorf("%d view_missing errors logged, want 1", got)
		}
	})
	t.Run("Wire refuses", func(t *testing.T) {
		h, _ := hooks.New(adkctx.Config{Compaction: &compaction.Config{}})
		a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: &llmtest.Model{}})
		if _, err := h.Wire(runner.Config{AppName: appName, Agent: a}); err == nil {
			t.Error("Wire accepted a config without a session service")
		}
		rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: session.InMemoryService()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Wire(rc); err == nil {
			t.Error("Wire accepted an already wired config")
		}
	})
	t.Run("without a logger Check and Close return the mistake", func(t *testing.T) {
		h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{}}) // no Logger
		if err != nil {
			t.Fatal(err)
		}
		a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: &llmtest.Model{},
			BeforeModelCallbacks: []llmagent.BeforeModelCallback{h.BeforeModel()}})
		r, _ := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: h.SessionService(session.InMemoryService()), AutoCreateSession: true})
		if err := (&stack{runner: r}).send(t, "s1", "hello"); err != nil {
			t.Fatal(err)
		}
		for name, err := range map[string]error{"Check": h.Check(), "Close": h.Close(context.Background())} {
			var w *adkctx.WiringError
			if !errors.As(err, &w) || w.Problem != "plugin_missing" {
				t.Errorf("%s() = %v, want a *adkctx.WiringError plugin_missing", name, err)
			}
		}
	})
	t.Run("one Hooks holds one store", func(t *testing.T) {
		h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{}})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(context.Background())
		a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: &llmtest.Model{}})
		first, second := session.InMemoryService(), session.InMemoryService()
		rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: first})
		if err != nil {
			t.Fatal(err)
		}
		// A second runner over the same store (its wrapper, or the store itself) is fine.
		for _, svc := range []session.Service{rc.SessionService, first} {
			if _, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: svc}); err != nil {
				t.Errorf("Wire refused a second runner over the same store: %v", err)
			}
		}
		if err := h.Check(); err != nil {
			t.Errorf("runners over one store: Check() = %v, want nil", err)
		}
		if _, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: second}); err == nil {
			t.Error("Wire accepted a second, different store")
		}
		if got := h.SessionService(second); got != second {
			t.Error("SessionService wrapped a second, different store")
		}
		var w *adkctx.WiringError
		if err := h.Check(); !errors.As(err, &w) || w.Problem != "second_store" {
			t.Errorf("after SessionService(another store): Check() = %v, want second_store", err)
		}
	})
	t.Run("correct wiring logs no error", func(t *testing.T) {
		s := wireStack(t, &llmtest.Model{}, adkctx.Config{Compaction: &compaction.Config{}}, session.InMemoryService())
		for range 3 {
			if err := s.send(t, "s1", "hello"); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.logs.FilterLevelExact(zapcore.ErrorLevel).Len(); n != 0 {
			t.Errorf("%d error entries with correct wiring: %v", n, s.logs.FilterLevelExact(zapcore.ErrorLevel).All())
		}
	})
}

// An LLMSummarizer on the agent's own model (hooks.SummarizerModel) sends the agent's last
// request cut after what the summary covers, with the instruction appended: the same system
// instruction, tools and contents, so a provider's prompt cache serves it.
func TestSummarizerOnTheAgentsModel(t *testing.T) {
	var prefixPrompts, transcriptPrompts int
	var last *model.LLMRequest              // the agent's last request
	var summaryRequests []*model.LLMRequest // the shared-prefix ones
	var mu sync.Mutex
	m := &llmtest.Model{UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
		mu.Lock()
		defer mu.Unlock()
		text := llmtest.AllText(req)
		switch {
		case strings.Contains(text, "Write a summary of the whole conversation above"):
			prefixPrompts++
			summaryRequests = append(summaryRequests, req)
			if p := scenario.RequestExtensionProblem(&request.LLMRequest{Model: last.Model, Contents: last.Contents, Config: last.Config},
				&request.LLMRequest{Model: req.Model, Contents: req.Contents, Config: req.Config}); p != "" {
				t.Errorf("summary prompt %d: %s", prefixPrompts, p)
			}
			return genai.NewContentFromText("Goal: keep going. Decisions: none.", genai.RoleModel), nil
		case strings.Contains(text, "You are maintaining the working memory"):
			transcriptPrompts++
			return genai.NewContentFromText("Goal: keep going. Decisions: none.", genai.RoleModel), nil
		}
		last = &model.LLMRequest{Model: req.Model, Contents: slices.Clone(req.Contents), Config: req.Config}
		turn := userTexts(req)
		return genai.NewContentFromText("noted "+strings.Fields(turn[len(turn)-1])[0]+" "+strings.Repeat("detail ", 40), genai.RoleModel), nil
	}}
	s := wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true,
		Summarizer: &compaction.LLMSummarizer{Model: hooks.SummarizerModel(m)}}}, session.InMemoryService())
	for i := range 6 {
		if err := s.send(t, "s1", fmt.Sprintf("turn-%d: %s", i, strings.Repeat("context ", 40))); err != nil {
			t.Fatal(err)
		}
	}
	if prefixPrompts == 0 || transcriptPrompts != 0 {
		t.Fatalf("the agent's model wrote %d summaries from the shared prefix and %d from a transcript, want some and none", prefixPrompts, transcriptPrompts)
	}
	entries := s.logs.FilterMessage("compaction").FilterField(zap.String("outcome", "compacted")).All()
	if len(entries) == 0 || entries[0].ContextMap()["summarizer"] != "llm:"+m.Name() || entries[0].ContextMap()["summarizer_shared_prefix"] != true {
		t.Errorf("compactions: %v", entries)
	}
	// Each prompt stops exactly at what its marker covers: its last content before the
	// instruction is the marker's last covered event.
	var events []compaction.Event
	for _, e := range stored(t, s.base, "s1") {
		events = append(events, compaction.Event{ID: e.ID, Content: e.Content, Metadata: e.CustomMetadata})
	}
	var prompts [][]*genai.Content
	for _, r := range summaryRequests {
		prompts = append(prompts, r.Contents)
	}
	for _, p := range scenario.EndProblems(events, prompts) {
		t.Error(p)
	}
}

// staleOnce is a database service that refuses the first append of a running turn as stale
// although nothing was stored since its session was read: what adk-go's Get produces when a
// marker is committed between its read of the session's update time and its read of the events.
type staleOnce struct {
	session.Service
	armed, refused atomic.Bool
}

func (s *staleOnce) AppendEvent(ctx context.Context, sess session.Session, ev *session.Event) error {
	if !ev.Partial && s.armed.Load() && s.refused.CompareAndSwap(false, true) {
		return errors.New("stale session error: last update time from request (2026-11-23T15:10:38.213317Z) is older than in database (2026-11-23T15:10:38.225401Z)")
	}
	return s.Service.AppendEvent(ctx, sess, ev)
}

// A stale refusal with no foreign event in the session is retried through a fresh handle: the
// turn succeeds and the event is stored once. Before, only a refusal after which a new marker
// could be seen was retried, and this race (one turn in about 40 of
// TestBackgroundMarkerNeverFailsARunningTurn) failed the turn.
func TestStaleRefusalWithNothingNewIsRetried(t *testing.T) {
	base := &staleOnce{Service: sqliteService(t, filepath.Join(t.TempDir(), "sessions.db"))}
	m := &llmtest.Model{ModelName: "small-model"}
	s := wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true}}, base)
	if err := s.send(t, "s1", "first"); err != nil {
		t.Fatal(err)
	}
	base.armed.Store(true)
	if err := s.send(t, "s1", "second"); err != nil {
		t.Fatalf("turn refused once as stale: %v", err)
	}
	if !base.refused.Load() {
		t.Fatal("no append was refused")
	}
	seen := 0
	for _, e := range stored(t, base.Service, "s1") {
		if e.Content != nil && e.Author == "user" && len(e.Content.Parts) == 1 && e.Content.Parts[0].Text == "second" {
			seen++
		}
	}
	if seen != 1 {
		t.Errorf("the refused user message is stored %d times, want 1", seen)
	}
}

// appendRecord is one append to a session store: the event, the outcome.
type appendRecord struct {
	id, invocation, text string
	marker               bool
	err                  error
}

// recordingStore is a session service that records every append in order and closes
// markerStored once a marker is stored: a test sees the interleaving of a turn's appends and a
// background compaction's, and can hold a turn until the marker is in.
type recordingStore struct {
	session.Service
	markerStored chan struct{}
	once         sync.Once

	mu      sync.Mutex
	appends []appendRecord
}

func newRecordingStore(base session.Service) *recordingStore {
	return &recordingStore{Service: base, markerStored: make(chan struct{})}
}

func (s *recordingStore) AppendEvent(ctx context.Context, sess session.Session, ev *session.Event) error {
	err := s.Service.AppendEvent(ctx, sess, ev)
	if ev.Partial {
		return err
	}
	r := appendRecord{id: ev.ID, invocation: ev.InvocationID, marker: isMarker(ev), err: err}
	if ev.Content != nil && len(ev.Content.Parts) > 0 {
		r.text = ev.Content.Parts[0].Text
	}
	s.mu.Lock()
	s.appends = append(s.appends, r)
	s.mu.Unlock()
	if err == nil && r.marker {
		s.once.Do(func() { close(s.markerStored) })
	}
	return err
}

func (s *recordingStore) records() []appendRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.appends)
}

// gatedSummarizer summarizes once release is closed; started receives once per call.
type gatedSummarizer struct {
	release chan struct{}
	started chan struct{}
}

func newGatedSummarizer() *gatedSummarizer {
	return &gatedSummarizer{release: make(chan struct{}), started: make(chan struct{}, 16)}
}

func (g *gatedSummarizer) Summarize(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	g.started <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return (&compaction.ExtractiveSummarizer{}).Summarize(ctx, in)
}

// hangGuard bounds the waits of the tests that hold a goroutine until another reaches a point:
// a liveness guard that fires only when that point is never reached, not a timing assertion.
const hangGuard = 30 * time.Second

// A marker appended in the background while an invocation is running makes the runner's
// database handle stale; the wrapper appends through a fresh handle, so the turn succeeds. The
// interleaving is injected, not hoped for: a background compaction is held in its summarizer
// until the fifth turn's model call, which releases it and waits until its marker is stored.
// The store's record then shows the marker stored between the turn's first append and its
// answer's, that answer refused as stale once, and appended again through a fresh read — once.
func TestBackgroundMarkerNeverFailsARunningTurn(t *testing.T) {
	base := newRecordingStore(sqliteService(t, filepath.Join(t.TempDir(), "sessions.db")))
	gate := newGatedSummarizer()
	free := sync.OnceFunc(func() { close(gate.release) })
	defer free()
	const held = 4 // the turn during which the marker is stored
	m := &llmtest.Model{ModelName: "small-model", UsageScale: 1, Default: chatty}
	for range held {
		m.Script = append(m.Script, chatty)
	}
	m.Script = append(m.Script, func(req *model.LLMRequest) (*genai.Content, error) {
		free()
		select {
		case <-base.markerStored:
		case <-time.After(hangGuard):
			return nil, errors.New("the background compaction never stored its marker")
		}
		return chatty(req)
	})
	s := wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 2, Summarizer: gate}}, base)
	for i := range held + 2 {
		if err := s.send(t, "s1", fmt.Sprintf("turn-%d: %s", i, strings.Repeat("context ", 30))); err != nil {
			t.Fatalf("turn %d failed: %v", i, err)
		}
		if i == held-1 { // the sliding window is due: its compaction must be held in the summarizer now
			select {
			case <-gate.started:
			case <-time.After(hangGuard):
				t.Fatalf("no compaction started after turn %d", i)
			}
		}
	}
	waitIdle(t, s.hooks)
	assertMarkerRefusedTheTurnOnce(t, base.records(), fmt.Sprintf("turn-%d: ", held))
}

// assertMarkerRefusedTheTurnOnce checks, in a store's appends, that a marker was stored while
// the invocation whose user message starts with prefix ran (after its message, before its
// answer), that the answer was refused as stale once, and that it was then stored once.
func assertMarkerRefusedTheTurnOnce(t *testing.T, records []appendRecord, prefix string) {
	t.Helper()
	user := slices.IndexFunc(records, func(r appendRecord) bool { return r.err == nil && strings.HasPrefix(r.text, prefix) })
	if user < 0 {
		t.Fatalf("the user message %q... was never stored", prefix)
	}
	inv := records[user].invocation
	marker := slices.IndexFunc(records, func(r appendRecord) bool { return r.err == nil && r.marker })
	refused := slices.IndexFunc(records, func(r appendRecord) bool { return r.err != nil && r.invocation == inv && !r.marker })
	if marker < user || refused < marker {
		t.Fatalf("appends (user message %d, marker %d, refusal %d): the marker was not stored while the turn ran, or no append of the turn was refused after it",
			user, marker, refused)
	}
	if !strings.Contains(records[refused].err.Error(), "stale session") {
		t.Errorf("the turn's append was refused with %v, want adk-go's stale session error", records[refused].err)
	}
	id, stored := records[refused].id, 0
	for _, r := range records[refused+1:] {
		if r.id == id && r.err == nil {
			stored++
		}
	}
	if stored != 1 {
		t.Errorf("the refused event %s was stored %d times after the refusal, want 1", id, stored)
	}
}

// Calibration and accounting live in the stored events: replicas behind a load balancer that
// is not sticky (here: two Hooks over one SQLite file, serving turns alternately) make, turn by
// turn, the same budget decisions as one process serving the whole session.
func TestAlternatingProcessesMakeTheSameDecisions(t *testing.T) {
	newModel := func() *llmtest.Model { return &llmtest.Model{ModelName: "small-model", UsageScale: 1.3} }
	cfg := adkctx.Config{
		Models:     []budget.ModelInfo{{Name: "small-model", ContextWindow: 16_000, MaxOutputTokens: 1_000}},
		Compaction: &compaction.Config{Interval: 3, Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}},
	}
	shared := filepath.Join(t.TempDir(), "shared.db")
	a := wireStack(t, newModel(), cfg, sqliteService(t, shared))
	b := wireStack(t, newModel(), cfg, sqliteService(t, shared))
	single := wireStack(t, newModel(), cfg, sqliteService(t, filepath.Join(t.TempDir(), "single.db")))
	decision := func(s *wired) map[string]any {
		d := s.budgetDecisions()
		return d[len(d)-1].ContextMap()
	}
	keys := []string{"call_seq", "estimated_tokens", "predicted_tokens", "safety_margin", "calibration_factor", "action", "turns_dropped", "summary_present"}
	for i := range 16 {
		msg := fmt.Sprintf("turn-%d: %s", i, strings.Repeat("a fairly long question ", 40+i*7))
		served := a
		if i%2 == 1 {
			served = b
		}
		if err := served.send(t, "s1", msg); err != nil {
			t.Fatal(err)
		}
		if err := single.send(t, "s1", msg); err != nil {
			t.Fatal(err)
		}
		got, want := decision(served), decision(single)
		for _, k := range keys {
			if got[k] != want[k] {
				t.Errorf("turn %d: %s = %v from the alternating replicas, %v from one process", i, k, got[k], want[k])
			}
		}
	}
	ra, rs := b.hooks.Usage(appName, "user", "s1"), single.hooks.Usage(appName, "user", "s1")
	if ra.Turns != rs.Turns || ra.ModelCalls != rs.ModelCalls || ra.Total != rs.Total {
		t.Errorf("accounting: replica %+v, one process %+v", ra, rs)
	}
}

// AGENTS.md text reaches every model call after the agent's own instruction; the working
// directory can come from session state, so one process serves two repositories.
func TestInstructionsPerSessionWorkDir(t *testing.T) {
	repoA, repoB := t.TempDir(), t.TempDir()
	for _, r := range []string{repoA, repoB} {
		if err := os.Mkdir(filepath.Join(r, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(repoA, "AGENTS.md"), "Repo A: run `make test`; templates look like {name}.")
	writeFile(t, filepath.Join(repoB, "svc", "AGENTS.md"), "Repo B service: never edit generated files.")
	m := &llmtest.Model{}
	cfg := adkctx.Config{Instructions: &adkctx.InstructionsConfig{
		WorkDir:         repoA,
		WorkDirStateKey: "work_dir",
		Discovery:       agentsmd.Config{NoGlobal: true},
	}}
	s := newStack(t, m, stackOptions{cfg: cfg})
	if _, err := s.sessions.Create(t.Context(), &session.CreateRequest{AppName: appName, UserID: "user", SessionID: "b",
		State: map[string]any{"work_dir": filepath.Join(repoB, "svc")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.send(t, "a", "hello"); err != nil {
		t.Fatal(err)
	}
	if err := s.send(t, "b", "hello"); err != nil {
		t.Fatal(err)
	}
	sys := func(i int) string {
		var b strings.Builder
		for _, p := range m.Requests()[i].Config.SystemInstruction.Parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	a, b := sys(0), sys(1)
	if !strings.Contains(a, "Repo A: run `make test`; templates look like {name}.") || strings.Contains(a, "Repo B") {
		t.Errorf("session a system instruction:\n%s", a)
	}
	if !strings.Contains(b, "Repo B service") || strings.Contains(b, "Repo A") {
		t.Errorf("session b system instruction:\n%s", b)
	}
	if strings.Index(a, "careful assistant") > strings.Index(a, "Repo A") {
		t.Errorf("AGENTS.md text comes before the agent's own instruction")
	}
	if f := s.budgetDecisions()[0].ContextMap(); f["instruction_bytes"].(int64) == 0 {
		t.Errorf("budget decision does not count the instructions: %v", f)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// After a compaction, the tool results of the invocations it left raw reach the model as
// excerpts (head and tail, the call paired), except the newest one's (the previous turn) and the
// new ones, which stay whole; the session keeps every result whole — through adk-go's runner, on
// the in-memory and SQLite services.
func TestRetainedToolResultsAreExcerpted(t *testing.T) {
	for name, newBase := range backends(t) {
		t.Run(name, func(t *testing.T) {
			m := &llmtest.Model{UsageScale: 1, Default: toolThenAnswer}
			cfg := adkctx.Config{Compaction: &compaction.Config{Interval: 3, Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}}}
			s := wireStack(t, m, cfg, newBase(), dumpTool(t))
			for i := range 5 {
				if err := s.send(t, "s1", fmt.Sprintf("turn-%d: dump a.txt", i)); err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
			}
			// The compaction after turn 4 kept turns 3 and 4 raw; turn 5's requests show turn 3's
			// result as an excerpt, turn 4's (the previous turn) and its own whole.
			if err := s.send(t, "s1", "turn-5: dump a.txt"); err != nil {
				t.Fatal(err)
			}
			reqs := m.Requests()
			first, second := reqs[len(reqs)-2], reqs[len(reqs)-1]
			sizes := func(req *model.LLMRequest) []int {
				var out []int
				for _, c := range req.Contents {
					for _, p := range c.Parts {
						if fr := p.FunctionResponse; fr != nil {
							text, _ := fr.Response["content"].(string)
							out = append(out, len(text))
						}
					}
				}
				return out
			}
			if !hasSummary(first) {
				t.Fatal("no summary in the request after the compaction")
			}
			compacted := s.logs.FilterMessage("compaction").FilterField(zap.String("outcome", "compacted")).All()
			if len(compacted) != 1 || intField(compacted[0], "results_excerpted") != 1 {
				t.Errorf("compaction log entries %v, want one with results_excerpted 1", compacted)
			}
			got := sizes(second)
			if len(got) != 3 || got[0] > 1024 || got[1] < 8_000 || got[2] < 8_000 {
				t.Errorf("result sizes in the request = %v, want an excerpt of ≤ 1024 bytes, then the previous turn's and the new result whole", got)
			}
			for _, e := range stored(t, s.base, "s1") {
				if e.Content == nil {
					continue
				}
				for _, p := range e.Content.Parts {
					if fr := p.FunctionResponse; fr != nil && len(fr.Response["content"].(string)) < 8_000 {
						t.Errorf("stored result of %s cut to %d bytes", e.InvocationID, len(fr.Response["content"].(string)))
					}
				}
			}
		})
	}
}

// A manual compaction cancelled by its caller (before it starts or while it runs) is no failure
// of the session: it is logged as canceled, at info level, and the automatic compactions of the
// next turns run. Before, it was logged as failed with consecutive_failures 1, and every
// compaction of the next 30 s (doubling) was skipped as backoff, so the hard limit trimmed turns
// that no summary covered.
func TestCancelledManualCompactionStartsNoBackoff(t *testing.T) {
	for _, when := range []string{"before", "during"} {
		t.Run(when, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			// The summarizer ends the caller's context while it writes the summary, and fails
			// as a summarizer that honours its context does.
			summarizer := funcSummarizer(func(sctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
				if when == "during" {
					cancel()
				}
				if err := sctx.Err(); err != nil {
					return nil, err
				}
				return (&compaction.ExtractiveSummarizer{}).Summarize(sctx, in)
			})
			w := wireStack(t, &llmtest.Model{}, adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true,
				Summarizer: summarizer, NoFallback: true, Backoff: time.Hour}}, sqliteService(t, filepath.Join(t.TempDir(), "s.db")))
			for i := range 6 {
				if err := w.send(t, "s1", fmt.Sprint("question ", i)); err != nil {
					t.Fatal(err)
				}
			}
			if when == "before" {
				cancel()
			}
			if _, err := w.hooks.Compact(ctx, appName, "user", "s1"); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled Compact: %v, want context.Canceled", err)
			}
			cancel()
			before := w.logs.FilterMessage("compaction").Len()
			for i := range 4 {
				if err := w.send(t, "s1", fmt.Sprint("later question ", i)); err != nil {
					t.Fatal(err)
				}
			}
			all := w.logs.FilterMessage("compaction").All()
			manual := all[before-1].ContextMap()
			if manual["trigger"] != "manual" || manual["outcome"] != "canceled" || all[before-1].Level != zapcore.InfoLevel ||
				manual["consecutive_failures"] != int64(0) {
				t.Errorf("the cancelled compaction is logged at %v: %v; want info, outcome canceled, 0 consecutive failures", all[before-1].Level, manual)
			}
			var later []string
			for _, e := range all[before:] {
				if o := e.ContextMap()["outcome"].(string); o != "nothing_to_do" {
					later = append(later, o)
				}
			}
			// Four turns at an interval of 2: two compactions, neither skipped.
			if diff := cmp.Diff([]string{"compacted", "compacted"}, later); diff != "" {
				t.Errorf("the compactions of the later turns (-want +got):\n%s", diff)
			}
		})
	}
}

// funcSummarizer adapts a function to compaction.Summarizer.
type funcSummarizer func(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error)

func (funcSummarizer) Name() string { return "func" }
func (f funcSummarizer) Summarize(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	return f(ctx, in)
}

// turnGate is a summarizer held until the test opens the gate: a background compaction that
// is still summarizing when the rest of its turn runs, whatever the machine's speed.
type turnGate struct {
	mu sync.Mutex
	ch chan struct{}
}

// hold makes the summaries that start from now on wait for open.
func (g *turnGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ch = make(chan struct{})
}

// open lets the held summaries, and the ones that start until the next hold, run.
func (g *turnGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.ch)
}

func (g *turnGate) Summarize(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return (&compaction.ExtractiveSummarizer{}).Summarize(ctx, in)
}

type readArgs struct {
	Path string `json:"path"`
}

// readsFiles answers "read PATH" with a call of read_file and a tool result with a one-line text.
func readsFiles(req *model.LLMRequest) (*genai.Content, error) {
	last := req.Contents[len(req.Contents)-1]
	for _, p := range last.Parts {
		if p.FunctionResponse != nil {
			return genai.NewContentFromText("Read "+p.FunctionResponse.Name+"; done with it.", genai.RoleModel), nil
		}
	}
	if path, ok := strings.CutPrefix(last.Parts[0].Text, "read "); ok {
		return genai.NewContentFromFunctionCall("read_file", map[string]any{"path": path}, genai.RoleModel), nil
	}
	return genai.NewContentFromText("ok", genai.RoleModel), nil
}

// One token trigger gives one compaction, in the background mode as in the synchronous one.
// A background compaction still summarizing when its invocation's next request is built (from
// the view before its summary, so over the soft limit) and its answer is stored must not queue a
// second compaction for them: the projections that schedule it do not know what the running one
// takes out, and the second marker, stored right after the first, costs a summary and a prompt
// cache break for nothing. The summaries are held until each turn ends, so every compaction is
// still running when its turn goes on. A second compaction is right only when the request built
// after the first is still over the soft limit: so every request built after a marker is under
// it.
func TestOneTokenTriggerOneCompaction(t *testing.T) {
	for name, newBase := range backends(t) {
		for _, synchronous := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sync=%v", name, synchronous), func(t *testing.T) {
				gate := &turnGate{}
				read, err := functiontool.New(functiontool.Config{Name: "read_file", Description: "Reads a file."},
					func(_ agent.ToolContext, a readArgs) (map[string]any, error) {
						var b strings.Builder
						for i := range 400 {
							fmt.Fprintf(&b, "%s:%d: line %d of %s with some words in it\n", a.Path, i+1, i+1, a.Path)
						}
						return map[string]any{"content": b.String()}, nil
					})
				if err != nil {
					t.Fatal(err)
				}
				m := &llmtest.Model{ModelName: "model-16k", UsageScale: 0.75, Default: readsFiles}
				cfg := adkctx.Config{
					Models:     []budget.ModelInfo{{Name: "model-16k", ContextWindow: 16_000, MaxOutputTokens: 1_000}},
					Compaction: &compaction.Config{Synchronous: synchronous, Summarizer: gate},
				}
				base := newBase()
				s := wireStack(t, m, cfg, base, read)
				// ran counts the token compactions attempted: a trigger that joined a running one
				// (coalesced) runs after it, and is counted then.
				ran := func() int {
					return len(s.logs.FilterMessage("compaction").Filter(func(e observer.LoggedEntry) bool {
						f := e.ContextMap()
						return f["trigger"] == string(compaction.TriggerTokens) && f["outcome"] != "coalesced"
					}).All())
				}
				markers, triggered, attempts := 0, 0, 0
				for i := range 12 {
					gate.hold()
					if synchronous {
						gate.open() // an inline summary held would hold its turn
					}
					calls := m.Calls()
					if err := s.send(t, "s1", fmt.Sprintf("read pkg/file%03d.go", i)); err != nil {
						t.Fatalf("turn %d: %v", i, err)
					}
					if !synchronous {
						gate.open()
					}
					waitIdle(t, s.hooks)
					n := len(slices.DeleteFunc(stored(t, base, "s1"), func(e *session.Event) bool { return !isMarker(e) }))
					if n-markers > 1 {
						t.Errorf("turn %d (model calls %d–%d) stored %d markers; want at most 1 per trigger", i, calls+1, m.Calls(), n-markers)
					}
					if a := ran(); a-attempts > 1 {
						t.Errorf("turn %d (model calls %d–%d) attempted %d token compactions; want at most 1 per trigger", i, calls+1, m.Calls(), a-attempts)
					}
					attempts = ran()
					if n > markers {
						triggered++
					}
					markers = n
				}
				if triggered < 3 {
					t.Fatalf("%d turns compacted; want at least 3: the workload does not reach the soft limit", triggered)
				}
				// The first request built from each new summary is under the soft limit. Requests
				// and budget decisions are one per model call, in the same order.
				decisions := s.budgetDecisions()
				var summary string
				summaries := 0
				for i, req := range m.Requests() {
					j := slices.IndexFunc(req.Contents, compaction.IsSummary)
					if j < 0 || req.Contents[j].Parts[0].Text == summary {
						continue
					}
					summary = req.Contents[j].Parts[0].Text
					summaries++
					f := decisions[i].ContextMap()
					if f["predicted_tokens"].(int64) > f["soft_limit"].(int64) {
						t.Errorf("call %d, the first built from a new summary, is predicted at %d tokens, over the soft limit %d",
							i+1, f["predicted_tokens"], f["soft_limit"])
					}
				}
				if summaries == 0 {
					t.Fatal("no request was built from a summary")
				}
			})
		}
	}
}
