package hooks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/adk2/hooks"
	"github.com/adkctx/adkctx/adk2/internal/llmtest"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/scenario"
)

type scenarioRun struct {
	figures scenario.Figures
	soft    int
	base    session.Service
}

// runScenario plays the scripted session through a v2 runner and llmagent with the given window,
// with or without adkctx (wired with Wire, extractive summarizer, synchronous compaction so the
// figures do not depend on timing) — as the v1 figure test does.
func runScenario(tb testing.TB, window int, withAdkctx bool) scenarioRun {
	return runScenarioWith(tb, window, withAdkctx, nil)
}

// runScenarioWith is runScenario with summaries written by summarizer on the session's model
// (nil: extractive), its prompts recorded beside the session's (scenario.Figures.Aside*).
func runScenarioWith(tb testing.TB, window int, withAdkctx bool, summarizer *scenario.SummarizerModel) scenarioRun {
	info := budget.ModelInfo{Name: "scenario-model", ContextWindow: window, MaxOutputTokens: 8_192}
	limits := budget.LimitsFor(budget.NewRegistry(info), info.Name, budget.LimitConfig{})
	m := llmtest.NewScenario(info.Name, limits.Soft)
	tools, err := llmtest.ScenarioTools()
	if err != nil {
		tb.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "coder", Model: m, Instruction: "You are a careful coding assistant.", Tools: tools})
	if err != nil {
		tb.Fatal(err)
	}
	out := scenarioRun{soft: limits.Soft, base: session.InMemoryService()}
	rc := runner.Config{AppName: appName, Agent: a, SessionService: out.base, AutoCreateSession: true}
	var h *hooks.Hooks
	if withAdkctx {
		var sum compaction.Summarizer = &compaction.ExtractiveSummarizer{}
		if summarizer != nil {
			sum = &compaction.LLMSummarizer{Model: summarizer.On(m.Model)}
		}
		if h, err = hooks.New(adkctx.Config{Models: []budget.ModelInfo{info},
			Compaction: &compaction.Config{Synchronous: true, Summarizer: sum}}); err != nil {
			tb.Fatal(err)
		}
		if rc, err = h.Wire(rc); err != nil {
			tb.Fatal(err)
		}
	}
	r, err := runner.New(rc)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range scenario.Invocations {
		if err := run(tb, r, "s1", genai.NewContentFromText(scenario.UserMessage(i), genai.RoleUser)); err != nil {
			tb.Fatalf("turn %d: %v", i, err)
		}
	}
	if h != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	out.figures = m.Figures()
	return out
}

// The continuity and cache figures of the v1 glue (hooks.TestFigureContinuity), reproduced
// through an adk-go v2 runner: 200 invocations with a 1M and a 32K window; the same properties
// (scenario.Figures.Problems) and the final summary's ledger exact.
func TestFigureContinuity(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("figure run skipped in -short and -race mode; run: go test -run TestFigure ./hooks/")
	}
	without := runScenario(t, 1_048_576, false)
	for _, window := range []int{1_048_576, 32_768} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			with := runScenario(t, window, true)
			t.Logf("with adkctx: %s", with.figures)
			t.Logf("without: %s", without.figures)
			t.Logf("%s", with.figures.Against(without.figures))
			for _, p := range with.figures.Problems(without.figures, with.soft, window == 1_048_576) {
				t.Error(p)
			}
			checkLedger(t, with.base)
		})
	}
	// With an LLM summarizer on the agent's model, its prompts extend the agent's last request
	// (the v1 figure test measures the same, against another model's transcripts).
	t.Run("1048576/llm-summarizer", func(t *testing.T) {
		with := runScenarioWith(t, 1_048_576, true, scenario.NewSummarizerModel("scenario-model"))
		f := with.figures
		total := 100 * (f.Effective + f.AsideEffective) / without.figures.Effective
		t.Logf("%s; summarizer: %d calls, %d prompt tokens, effective %.0f; the session with them: %.2f%% of without",
			f.Against(without.figures), f.AsideRequests, f.AsidePrompt, f.AsideEffective, total)
		for _, p := range f.Problems(without.figures, with.soft, false) {
			t.Error(p)
		}
		if f.AsideRequests == 0 || f.AsideEffective > 0.2*float64(f.AsidePrompt) || total > scenario.MaxEffectivePct {
			t.Errorf("summaries cost %.0f of their %d prompt tokens, the session %.2f%% of without; want ≤ 20%% and ≤ %.1f%%",
				f.AsideEffective, f.AsidePrompt, total, scenario.MaxEffectivePct)
		}
	})
}

// checkLedger compares the live summary's ledger with the tool calls its chain hides.
func checkLedger(t *testing.T, base session.Service) {
	t.Helper()
	viewer, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	shown, markerID := map[string]bool{}, ""
	resp, err := viewer.SessionService(base).Get(t.Context(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hooks.ModelView(resp.Session) {
		shown[e.ID] = true
		if id, ok := e.CustomMetadata[compaction.SummaryMetadataKey].(string); ok {
			markerID = id
		}
	}
	var hidden []*genai.Content
	var events []compaction.Event
	for _, e := range stored(t, base, "s1") {
		events = append(events, compaction.Event{ID: e.ID, Scope: e.IsolationScope, Content: e.Content, Metadata: e.CustomMetadata})
		if !shown[e.ID] && e.Content != nil {
			hidden = append(hidden, e.Content)
		}
	}
	// The live marker's whole ledger (it may store only what it adds to the one it rolls up).
	ledger, _, ok := compaction.NewViewer(nil).Resolve(events, markerID)
	if !ok {
		t.Fatalf("the live marker %q does not resolve", markerID)
	}
	if p := scenario.LedgerProblem(hidden, ledger); p != "" {
		t.Error(p)
	}
}
