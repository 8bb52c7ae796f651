package hooks_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/adk2/hooks"
	"github.com/adkctx/adkctx/adk2/internal/llmtest"
	"github.com/adkctx/adkctx/adk2/internal/longrun"
	"github.com/adkctx/adkctx/adk2/internal/scenario"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/processors/truncate"
)

type scenarioRun struct {
	figures    scenario.Figures
	soft, hard int
	base       session.Service
}

// modelName is the session's model.
const modelName = "scenario-model"

// runScenario plays the scripted session through a v2 runner and llmagent with the given window,
// with or without adkctx (wired with Wire, extractive summarizer, synchronous compaction so the
// figures do not depend on timing) — as the v1 figure test does.
func runScenario(tb testing.TB, window int, withAdkctx bool) scenarioRun {
	return runSession(tb, figureRun{window: window, invocations: scenario.Invocations, adkctx: withAdkctx})
}

// figureRun is one run of a figure session (as in the v1 figure tests).
type figureRun struct {
	session     scenario.Session // what the user says; zero: scenario.Default()
	window      int
	invocations int
	adkctx      bool
	// summarizer writes the summaries on the session's model (nil: extractive), its prompts
	// recorded beside the session's (scenario.Figures.Aside*).
	summarizer *scenario.SummarizerModel
	// resultBytes bounds each tool result (adkctx.Config.Truncation.MaxBytes); 0: the default,
	// 10 KiB.
	resultBytes int
	noFallback  bool // compaction.Config.NoFallback
}

// runSession plays the session fr names through a v2 runner and llmagent.
func runSession(tb testing.TB, fr figureRun) scenarioRun {
	info := budget.ModelInfo{Name: modelName, ContextWindow: fr.window, MaxOutputTokens: 8_192}
	limits := budget.LimitsFor(budget.NewRegistry(info), info.Name, budget.LimitConfig{})
	m := llmtest.NewScenarioWith(info.Name, scenario.Recorder{Soft: limits.Soft, Session: fr.session, ResultBytes: fr.resultBytes})
	s := fr.session
	if s.Message == nil {
		s = scenario.Default()
	}
	tools, err := llmtest.ScenarioToolsFor(s)
	if err != nil {
		tb.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "coder", Model: m, Instruction: "You are a careful coding assistant.", Tools: tools})
	if err != nil {
		tb.Fatal(err)
	}
	out := scenarioRun{soft: limits.Soft, hard: limits.Hard, base: session.InMemoryService()}
	rc := runner.Config{AppName: appName, Agent: a, SessionService: out.base, AutoCreateSession: true}
	var h *hooks.Hooks
	if fr.adkctx {
		var sum compaction.Summarizer = &compaction.ExtractiveSummarizer{}
		if fr.summarizer != nil {
			sum = &compaction.LLMSummarizer{Model: fr.summarizer.On(m.Model)}
		}
		if h, err = hooks.New(adkctx.Config{Models: []budget.ModelInfo{info}, Truncation: truncate.Config{MaxBytes: fr.resultBytes},
			// The cost policy (compaction every 5 turns) the v1 figures measure beside the default.
			Compaction: &compaction.Config{Interval: 5, Synchronous: true, NoFallback: fr.noFallback, Summarizer: sum}}); err != nil {
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
	for i := range fr.invocations {
		if err := run(tb, r, "s1", genai.NewContentFromText(s.Message(i), genai.RoleUser)); err != nil {
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

// The continuity, cache and cost figures of the v1 glue (hooks.TestFigureContinuity), reproduced
// through an adk-go v2 runner: 200 invocations with a 1M, a 32K and an 8K window (tool results
// cut at 2 KiB there), extractive and LLM summarizer on the agent's model; the same properties
// (scenario.Figures.Problems), no summary prompt a transcript, the session with its summaries
// within the same bounds, and the final summary's ledger exact. The LLM summarizer's rows at 1M
// and 32K run on the session whose checklist reads and test runs differ only in their middle too
// (scenario.Rereads, issue 26).
func TestFigureContinuity(t *testing.T) {
	if testing.Short() {
		t.Skip("figure run skipped in -short mode; run: go test -run TestFigure ./hooks/")
	}
	longrun.Test(t)
	quick := scenario.Quick()
	played := []bool{false} // the sessions without adkctx the rows compare with: rereads too unless quick
	if !quick {
		played = append(played, true)
	}
	without := withoutAdkctxRuns(t, played...)
	for _, rereads := range []bool{false, true} {
		for _, window := range []int{1_048_576, 32_768, 8_192} {
			for _, llm := range []bool{false, true} {
				if rereads && (!llm || window == 8_192) { // at 8K, two of its turns do not fit beside the summary
					continue
				}
				if quick && (rereads || window != 32_768) {
					continue
				}
				fr := figureRun{window: window, invocations: scenario.Invocations, adkctx: true}
				name := fmt.Sprint(window)
				if rereads {
					fr.session, name = scenario.Rereads(), "rereads/"+name
				}
				if llm {
					fr.summarizer, name = scenario.NewSummarizerModel(modelName), name+"/llm-summarizer"
				}
				if window == 8_192 {
					fr.resultBytes = 2 << 10
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel() // each run is self-contained; both cores halve make test's figures
					with, without := runSession(t, fr), without[rereads]
					f := with.figures
					t.Logf("with adkctx: %s", f)
					t.Logf("without: %s", without.figures)
					t.Logf("%s", f.Against(without.figures))
					limit := with.soft
					if fr.resultBytes > 0 {
						limit = with.hard
					}
					for _, p := range f.Problems(without.figures, limit, window == 1_048_576 && !llm) {
						t.Error(p)
					}
					if llm {
						total := 100 * (f.Effective + f.AsideEffective) / without.figures.Effective
						t.Logf("summarizer: %d calls (%d transcripts), %d prompt tokens, effective %.0f; the session with them: %.2f%% of without",
							f.AsideRequests, f.AsideTranscripts, f.AsidePrompt, f.AsideEffective, total)
						checkSummaryCost(t, f, total, window, rereads)
					}
					checkLedger(t, with.base)
				})
			}
		}
	}
}

// checkSummaryCost checks what summaries on the agent's model cost, as the v1 figure test does:
// within scenario.MaxEffectiveWithSummariesPct (scenario.MaxEffectivePct on the Default session
// at a window that never needs a trim).
func checkSummaryCost(t *testing.T, f scenario.Figures, total float64, window int, rereads bool) {
	t.Helper()
	bound := scenario.MaxEffectiveWithSummariesPct
	if window == 1_048_576 && !rereads {
		bound = scenario.MaxEffectivePct
	}
	if f.AsideRequests == 0 || f.AsideTranscripts > 0 {
		t.Errorf("%d of %d summary prompts are transcripts, want none (and some prompts)", f.AsideTranscripts, f.AsideRequests)
	}
	if f.AsideEffective > 0.2*float64(f.AsidePrompt) || total > bound {
		t.Errorf("summaries cost %.0f of their %d prompt tokens, the session %.2f%% of without; want ≤ 20%% and ≤ %.1f%%",
			f.AsideEffective, f.AsidePrompt, total, bound)
	}
}

// The instruction-phrasing figure of the v1 glue (hooks.TestFigureInstructionPhrasings) through
// an adk-go v2 runner: standing rules in other languages and phrasings, none with the English
// words the ledger once looked for, in a session whose user text fits
// compaction.UserTextTokens, are in every request after the turn that gave them, at a 1M and a
// 32K window, with the extractive summarizer and the LLM one (scenario.SummarizerModel on the
// agent's model, which quotes no rule: a rule in its summary comes from the ledger's facts).
func TestFigureInstructionPhrasings(t *testing.T) {
	if testing.Short() {
		t.Skip("figure run skipped in -short mode; run: go test -run TestFigure ./hooks/")
	}
	longrun.Test(t)
	s := scenario.Phrasings()
	userTokens := 0
	for i := range scenario.PhrasingTurns {
		userTokens += budget.EstimateText(s.Message(i))
	}
	if userTokens > compaction.UserTextTokens {
		t.Fatalf("the session's user text is %d tokens, over the budget (%d): the figure is about sessions within it", userTokens, compaction.UserTextTokens)
	}
	for _, window := range []int{1_048_576, 32_768} {
		for _, summarizer := range []string{"extractive", "llm"} {
			if scenario.Quick() && window != 32_768 {
				continue
			}
			t.Run(fmt.Sprintf("%d/%s", window, summarizer), func(t *testing.T) {
				fr := figureRun{session: s, window: window, invocations: scenario.PhrasingTurns, adkctx: true, noFallback: true}
				if summarizer == "llm" {
					fr.summarizer = scenario.NewSummarizerModel(modelName)
				}
				f := runSession(t, fr).figures
				t.Logf("user text %d tokens; %s; rules present %d of %d times (in the summary %d)",
					userTokens, f, f.InstructionsKept, f.InstructionsChecked, f.InstructionsInSummary)
				if f.InstructionsKept != f.InstructionsChecked || f.InstructionsChecked == 0 {
					t.Errorf("rules present %d of %d times, want all", f.InstructionsKept, f.InstructionsChecked)
				}
				if 2*f.InstructionsInSummary < f.InstructionsChecked || f.SummaryPresent != f.SummaryChecked {
					t.Errorf("rules in the summary %d of %d times, summary in %d of %d requests after the first",
						f.InstructionsInSummary, f.InstructionsChecked, f.SummaryPresent, f.SummaryChecked)
				}
				if f.PreviousTurnRaw != f.PreviousTurnChecked {
					t.Errorf("previous turn raw in %d of %d requests", f.PreviousTurnRaw, f.PreviousTurnChecked)
				}
			})
		}
	}
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
	ledger, ok := scenario.WholeLedger(events, markerID)
	if !ok {
		t.Fatalf("the live marker %q does not resolve", markerID)
	}
	if p := scenario.LedgerProblem(hidden, ledger); p != "" {
		t.Error(p)
	}
}

// withoutAdkctxRuns plays the sessions without adkctx a figure compares with (the plain one;
// rereads true: scenario.Rereads) at once, in subtests, and returns them.
func withoutAdkctxRuns(t *testing.T, rereads ...bool) map[bool]scenarioRun {
	t.Run("without-adkctx", func(t *testing.T) {
		for _, r := range rereads {
			t.Run(map[bool]string{false: "default", true: "rereads"}[r], func(t *testing.T) {
				t.Parallel()
				withoutAdkctx(t, r)
			})
		}
	})
	runs := map[bool]scenarioRun{}
	for _, r := range rereads {
		runs[r] = withoutAdkctx(t, r) // played above unless -run left those subtests out
	}
	return runs
}

// withoutAdkctx plays a session without adkctx (the plain one, or scenario.Rereads) once per
// test binary: the model sees the same requests whatever its window, so every figure compares
// with the same run. They are the longest runs of the figures (their requests grow to 2.6M
// tokens): playing each once saves make test minutes.
func withoutAdkctx(t *testing.T, rereads bool) scenarioRun {
	w := &withoutRuns[0]
	if rereads {
		w = &withoutRuns[1]
	}
	w.once.Do(func() {
		var run scenarioRun
		if rereads {
			run = runSession(t, figureRun{session: scenario.Rereads(), window: 1_048_576, invocations: scenario.Invocations})
		} else {
			run = runScenario(t, 1_048_576, false)
		}
		w.run = &run
	})
	if w.run == nil {
		t.Fatal("the session without adkctx did not play (see the first figure's failure)")
	}
	return *w.run
}

// withoutRuns holds the runs withoutAdkctx played: the plain session's, then the rereads'.
var withoutRuns [2]struct {
	once sync.Once
	run  *scenarioRun
}
