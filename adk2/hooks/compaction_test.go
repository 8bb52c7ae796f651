package hooks_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/adk2/hooks"
	"github.com/adkctx/adkctx/adk2/internal/llmtest"
	"github.com/adkctx/adkctx/adk2/internal/scenario"
	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/processors/request"
)

// Every request after a compaction carries the summary, the previous user turn raw and the new
// message; storage keeps every original event — on the in-memory and SQLite services, in the
// background (default) and synchronous modes.
func TestCompactionKeepsTheRawTail(t *testing.T) {
	for name, newBase := range backends(t) {
		for _, sync := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sync=%v", name, sync), func(t *testing.T) {
				m := &llmtest.Model{UsageScale: 1, Default: chatty}
				cfg := adkctx.Config{Compaction: &compaction.Config{Interval: 3, Synchronous: sync, Summarizer: &compaction.ExtractiveSummarizer{}}}
				s := wireStack(t, m, cfg, newBase(), nil)
				const turns = 16
				for i := range turns {
					if err := s.send(t, "s1", fmt.Sprintf("turn-%d: look at module %d and tell me what it does", i, i)); err != nil {
						t.Fatalf("turn %d: %v", i, err)
					}
					if !sync {
						waitIdle(t, s.hooks)
					}
				}
				summarized := false
				for i, req := range m.Requests() {
					if prev := fmt.Sprintf("turn-%d: look at module %d and tell me what it does", i-1, i-1); i > 0 && !slices.Contains(userTexts(req), prev) {
						t.Errorf("request %d lacks the previous user turn raw: %q", i, userTexts(req))
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
				if n := s.logs.FilterMessage("compaction").FilterField(zap.String("outcome", "compacted")).Len(); n != markers {
					t.Errorf("%d compaction log entries say compacted, %d markers stored", n, markers)
				}
			})
		}
	}
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
				s := wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: sync, Summarizer: slow}}, session.InMemoryService(), nil)
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
				if last := m.Requests()[m.Calls()-1]; !hasSummary(last) {
					t.Error("the turn after the background compaction has no summary")
				}
			})
		})
	}
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
			Synchronous: true}}, session.InMemoryService(), nil)
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
// the hard limit, and the current user message raw.
func TestLongInvocationStaysBounded(t *testing.T) {
	const calls = 30
	m := &llmtest.Model{ModelName: "small-model", UsageScale: 1}
	for i := range calls {
		m.Script = append(m.Script, llmtest.Call(&genai.FunctionCall{Name: "build", Args: map[string]any{"target": fmt.Sprint(i)}}))
	}
	m.Script = append(m.Script, llmtest.Text("all targets built"))
	cfg := adkctx.Config{
		Models:     []budget.ModelInfo{{Name: "small-model", ContextWindow: 8000, MaxOutputTokens: 500}},
		Compaction: &compaction.Config{Summarizer: &compaction.ExtractiveSummarizer{}},
	}
	s := wireStack(t, m, cfg, session.InMemoryService(), nil, buildTool(t, strings.Repeat("step output line with some detail\n", 90)))
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

// Both wiring mistakes are caught — compaction without the plugin, the plugin without the
// session wrapper (its runs refused with the error) — each with one error-level entry; Wire
// refuses what it cannot wire; correct wiring logs no error. (More in wiring_test.go.)
func TestWiringMistakesAreLoud(t *testing.T) {
	hello := func(t *testing.T, r *runner.Runner, refused string) {
		for range 3 {
			err := run(t, r, "s1", genai.NewContentFromText("hello", genai.RoleUser))
			var w *adkctx.WiringError
			switch {
			case refused == "" && err != nil:
				t.Fatal(err)
			case refused != "" && (!errors.As(err, &w) || w.Problem != refused):
				t.Fatalf("run: %v, want the %s *adkctx.WiringError", err, refused)
			}
		}
	}
	for _, tc := range []struct {
		name, problem string
		refused       bool
		rc            func(h *hooks.Hooks) runner.Config
	}{
		{"no plugin", "plugin_missing", false, func(h *hooks.Hooks) runner.Config {
			a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: &llmtest.Model{}, BeforeModelCallbacks: []llmagent.BeforeModelCallback{h.BeforeModel()}})
			return runner.Config{AppName: appName, Agent: a, SessionService: h.SessionService(session.InMemoryService()), AutoCreateSession: true}
		}},
		{"no session wrapper", "view_missing", true, func(h *hooks.Hooks) runner.Config {
			p, _ := h.Plugin()
			a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: &llmtest.Model{}})
			base := session.InMemoryService()
			h.SessionService(base) // the Hooks holds the wrapper; the runner is given the store itself
			return runner.Config{AppName: appName, Agent: a, SessionService: base, AutoCreateSession: true,
				PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{p}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			h, err := hooks.New(adkctx.Config{Logger: zap.New(core), Compaction: &compaction.Config{}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := runner.New(tc.rc(h))
			if err != nil {
				t.Fatal(err)
			}
			refused := ""
			if tc.refused {
				refused = tc.problem
			}
			hello(t, r, refused)
			if got := logs.FilterLevelExact(zapcore.ErrorLevel).FilterField(zap.String("problem", tc.problem)).Len(); got != 1 {
				t.Errorf("%d %s errors logged, want 1", got, tc.problem)
			}
		})
	}
	t.Run("Wire refuses", func(t *testing.T) {
		h, _ := newHooks(t, adkctx.Config{Compaction: &compaction.Config{}})
		a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: &llmtest.Model{}})
		if _, err := h.Wire(runner.Config{AppName: appName, Agent: a}); err == nil {
			t.Error("Wire accepted a config without a session service")
		}
		if _, err := h.Wire(runner.Config{AppName: appName, SessionService: session.InMemoryService()}); err == nil {
			t.Error("Wire accepted a config without an agent")
		}
		rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: session.InMemoryService()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Wire(rc); err == nil {
			t.Error("Wire accepted an already wired config")
		}
	})
	t.Run("correct wiring logs no error", func(t *testing.T) {
		s := wireStack(t, &llmtest.Model{}, adkctx.Config{Compaction: &compaction.Config{}}, session.InMemoryService(), nil)
		hello(t, s.runner, "")
		if n := s.logs.FilterLevelExact(zapcore.ErrorLevel).Len(); n != 0 {
			t.Errorf("%d error entries with correct wiring: %v", n, s.logs.FilterLevelExact(zapcore.ErrorLevel).All())
		}
	})
}

// An LLMSummarizer on the agent's model (hooks.SummarizerModel), whatever the root: an llmagent,
// a workflow or a sequential agent over it. A prompt that shares the agent's prefix extends the
// agent's last request byte for byte.
func TestSummarizerOnTheAgentsModel(t *testing.T) {
	for _, tc := range []struct {
		name         string
		root         func(t *testing.T, a agent.Agent) agent.Agent
		sharedPrefix bool // the summaries are written from the agent's own conversation
	}{
		{"llmagent", func(_ *testing.T, a agent.Agent) agent.Agent { return a }, true},
		// A workflow node's requests show only the current turn: the summary's events are not
		// in them, so the summarizer sends a transcript.
		{"workflow", func(t *testing.T, a agent.Agent) agent.Agent { return workflowRoot(t, a) }, false},
		{"sequential", func(t *testing.T, a agent.Agent) agent.Agent { return sequentialRoot(t, a) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prompts counter
			var mu sync.Mutex
			var last *model.LLMRequest              // the agent's last request
			var summaryRequests []*model.LLMRequest // the shared-prefix ones
			m := &llmtest.Model{UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
				mu.Lock()
				defer mu.Unlock()
				switch text := llmtest.AllText(req); {
				case strings.Contains(text, "Write a summary of the whole conversation above"):
					prompts.add("summary")
					summaryRequests = append(summaryRequests, req)
					if p := scenario.RequestExtensionProblem(&request.LLMRequest{Model: last.Model, Contents: last.Contents, Config: last.Config},
						&request.LLMRequest{Model: req.Model, Contents: req.Contents, Config: req.Config}); p != "" {
						t.Errorf("summary prompt: %s", p)
					}
					return genai.NewContentFromText("Goal: keep going. Decisions: none.", genai.RoleModel), nil
				case strings.Contains(text, "You are maintaining the working memory"):
					prompts.add("summary")
					return genai.NewContentFromText("Goal: keep going. Decisions: none.", genai.RoleModel), nil
				}
				last = &model.LLMRequest{Model: req.Model, Contents: slices.Clone(req.Contents), Config: req.Config}
				turn := userTexts(req)
				return genai.NewContentFromText("noted "+strings.Fields(turn[len(turn)-1])[0]+" "+strings.Repeat("detail ", 40), genai.RoleModel), nil
			}}
			a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant."})
			if err != nil {
				t.Fatal(err)
			}
			base := session.InMemoryService()
			s := wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true,
				Summarizer: &compaction.LLMSummarizer{Model: hooks.SummarizerModel(m)}}}, base, tc.root(t, a))
			for i := range 6 {
				if err := s.send(t, "s1", fmt.Sprintf("turn-%d: %s", i, strings.Repeat("context ", 40))); err != nil {
					t.Fatal(err)
				}
			}
			if prompts.get("summary") == 0 {
				t.Fatal("the agent's model never wrote a summary")
			}
			entries := s.logs.FilterMessage("compaction").FilterField(zap.String("outcome", "compacted")).All()
			if len(entries) == 0 || entries[0].ContextMap()["summarizer"] != "llm:"+m.Name() {
				t.Errorf("compactions: %v", entries)
			}
			if want := map[bool]int{true: prompts.get("summary"), false: 0}[tc.sharedPrefix]; len(summaryRequests) != want {
				t.Errorf("%d of %d summaries from the shared prefix, want %d", len(summaryRequests), prompts.get("summary"), want)
			}
			promptsEndAtMarkers(t, stored(t, base, "s1"), summaryRequests)
		})
	}
}

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
	s := wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 2, Summarizer: gate}}, base, nil)
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

// Calibration and accounting live in the stored events: a second process (a second Hooks over
// the same SQLite file) that never saw the session makes the same budget decision.
func TestAnotherProcessMakesTheSameDecision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	newModel := func() *llmtest.Model { return &llmtest.Model{ModelName: "small-model", UsageScale: 1.3} }
	cfg := adkctx.Config{Models: []budget.ModelInfo{{Name: "small-model", ContextWindow: 32_000, MaxOutputTokens: 1_000}}}
	first := wireStack(t, newModel(), cfg, sqliteService(t, path), nil)
	for i := range 5 {
		if err := first.send(t, "s1", fmt.Sprintf("turn-%d: %s", i, strings.Repeat("a fairly long question ", 60))); err != nil {
			t.Fatal(err)
		}
	}
	second := wireStack(t, newModel(), cfg, sqliteService(t, path), nil)
	if err := second.send(t, "s1", "the same next question"); err != nil {
		t.Fatal(err)
	}
	last := func(s *stack) map[string]any { d := s.budgetDecisions(); return d[len(d)-1].ContextMap() }
	got, want := last(second), last(first)
	if got["calibration_factor"] != want["calibration_factor"] || got["call_seq"].(int64) != want["call_seq"].(int64)+1 {
		t.Errorf("fresh process decided %v, serving process %v", got, want)
	}
	a, b := first.hooks.Usage(appName, "user", "s1"), second.hooks.Usage(appName, "user", "s1")
	if a.Turns+1 != b.Turns || a.ModelCalls+1 != b.ModelCalls {
		t.Errorf("accounting not rebuilt: first process %+v, second %+v", a, b)
	}
}

// AGENTS.md text reaches every model call after the agent's own instruction; the working
// directory can come from session state, so one process serves two repositories.
func TestInstructionsPerSessionWorkDir(t *testing.T) {
	repoA, repoB := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(repoA, ".git", "HEAD"), "ref: refs/heads/main")
	writeFile(t, filepath.Join(repoB, ".git", "HEAD"), "ref: refs/heads/main")
	writeFile(t, filepath.Join(repoA, "AGENTS.md"), "Repo A: run `make test`; templates look like {name}.")
	writeFile(t, filepath.Join(repoB, "svc", "AGENTS.md"), "Repo B service: never edit generated files.")
	m := &llmtest.Model{}
	s := newStack(t, m, stackOptions{cfg: adkctx.Config{Instructions: &adkctx.InstructionsConfig{
		WorkDir: repoA, WorkDirStateKey: "work_dir", Discovery: agentsmd.Config{NoGlobal: true},
	}}})
	if _, err := s.sessions.Create(t.Context(), &session.CreateRequest{AppName: appName, UserID: "user", SessionID: "b",
		State: map[string]any{"work_dir": filepath.Join(repoB, "svc")}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := s.send(t, id, "hello"); err != nil {
			t.Fatal(err)
		}
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
		t.Error("AGENTS.md text comes before the agent's own instruction")
	}
	if f := s.budgetDecisions()[0].ContextMap(); f["instruction_bytes"].(int64) == 0 {
		t.Errorf("the budget decision does not count the instructions: %v", f)
	}
}

// promptsEndAtMarkers checks that each shared-prefix summary prompt (in order) stops exactly at
// what its marker covers (scenario.EndProblems).
func promptsEndAtMarkers(t *testing.T, stored []*session.Event, prompts []*model.LLMRequest) {
	t.Helper()
	var events []compaction.Event
	for _, e := range stored {
		events = append(events, compaction.Event{ID: e.ID, Content: e.Content, Metadata: e.CustomMetadata})
	}
	var contents [][]*genai.Content
	for _, r := range prompts {
		contents = append(contents, r.Contents)
	}
	for _, p := range scenario.EndProblems(events, contents) {
		t.Error(p)
	}
}
