package hooks_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/longrun"
	"github.com/adkctx/adkctx/hooks/internal/scenario"
	"github.com/adkctx/adkctx/processors/truncate"
)

type scenarioRun struct {
	figures scenario.Figures
	// afterAnswer is, per turn, the time between the final answer and the end of runner.Run:
	// what a server streaming the turn waits before it can close the response.
	afterAnswer []time.Duration
	soft, hard  int
	base        session.Service
	hooks       *hooks.Hooks
}

// modelName is the session's model.
const modelName = "scenario-model"

// runScenario plays the scripted session on a model with the given window, with or without
// adkctx (wired as the README shows, extractive summarizer, synchronous compaction so figures do
// not depend on timing). The model reports PromptTokenCount = our estimate of the request.
func runScenario(tb testing.TB, window, invocations int, withAdkctx bool) scenarioRun {
	return runScenarioWith(tb, window, invocations, withAdkctx, compaction.Config{Synchronous: true})
}

// runScenarioWith runs the session with compaction configured as cc (extractive summarizer
// unless cc names one; a scenario.SummarizerModel records its prompts beside the session's).
func runScenarioWith(tb testing.TB, window, invocations int, withAdkctx bool, cc compaction.Config) scenarioRun {
	return runSession(tb, figureRun{window: window, invocations: invocations, adkctx: withAdkctx, cc: cc})
}

// costPolicy is compaction.Config.Interval of every figure row but the default-policy ones: the
// sliding window these figures were first measured with (the default before issue 28), which
// compacts every 5 invocations whatever room the window has left.
const costPolicy = 5

// figureRun is one run of a figure session.
type figureRun struct {
	// defaultPolicy runs compaction as configured (cc.Interval 0: only when the window needs it)
	// instead of the cost policy.
	defaultPolicy bool
	session       scenario.Session // what the user says; zero: scenario.Default()
	window        int
	invocations   int
	adkctx        bool
	cc            compaction.Config
	// resultBytes bounds each tool result (adkctx.Config.Truncation.MaxBytes); 0: the default,
	// 10 KiB.
	resultBytes int
}

// runSession plays the session fr names (see runScenarioWith).
func runSession(tb testing.TB, fr figureRun) scenarioRun {
	info := budget.ModelInfo{Name: modelName, ContextWindow: fr.window, MaxOutputTokens: 8_192}
	limits := budget.LimitsFor(budget.NewRegistry(info), modelName, budget.LimitConfig{})
	m := llmtest.NewScenarioWith(modelName, scenario.Recorder{Soft: limits.Soft, Session: fr.session, ResultBytes: fr.resultBytes})
	s, cc, withAdkctx := fr.session, fr.cc, fr.adkctx
	if cc.Interval == 0 && !fr.defaultPolicy {
		cc.Interval = costPolicy
	}
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
	run := scenarioRun{soft: limits.Soft, hard: limits.Hard, base: session.InMemoryService()}
	rc := runner.Config{AppName: appName, Agent: a, SessionService: run.base, AutoCreateSession: true}
	if withAdkctx {
		switch l, _ := cc.Summarizer.(*compaction.LLMSummarizer); {
		case cc.Summarizer == nil:
			cc.Summarizer = &compaction.ExtractiveSummarizer{}
		case l != nil:
			if sm, ok := l.Model.(*scenario.SummarizerModel); ok { // measured beside the session
				bound := *l
				bound.Model = sm.On(m.Model)
				cc.Summarizer = &bound
			}
		}
		run.hooks, err = hooks.New(adkctx.Config{
			Models:     []budget.ModelInfo{info},
			Truncation: truncate.Config{MaxBytes: fr.resultBytes},
			Compaction: &cc,
		})
		if err != nil {
			tb.Fatal(err)
		}
		if rc, err = run.hooks.Wire(rc); err != nil {
			tb.Fatal(err)
		}
	}
	r, err := runner.New(rc)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range fr.invocations {
		var last time.Time
		for _, err := range r.Run(tb.Context(), "user", "s1", genai.NewContentFromText(s.Message(i), genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				tb.Fatalf("turn %d: %v", i, err)
			}
			last = time.Now()
		}
		// What the turn waits for after its final answer: AfterRun's compaction, if any.
		run.afterAnswer = append(run.afterAnswer, time.Since(last))
	}
	if run.hooks != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := run.hooks.Close(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	run.figures = m.Figures()
	return run
}

// The continuity figure (issue 8), the cache figure (issue 12) and the cost figure (issue 19):
// 200 invocations with a 1M, a 32K and an 8K window. Every request keeps the previous turn raw
// with its tool results whole, every planted instruction, and the summary once there is one; the
// final summary's ledger counts every covered tool call exactly; cumulative prompt tokens stay
// ≤ 15% of the same session without adkctx; on the 1M window the prompt-cache figures hold
// (scenario.Figures.Problems). With the LLM summarizer on the agent's model, every summary prompt
// extends a request the cache holds (no transcript), and the session with its summaries costs
// ≤ 4.5% of the session without adkctx at every window (≤ 3.6% at 1M). The cache model is
// scenario's: a prefix may come from any of the 8 requests sent before.
//
// The same with the LLM summarizer at 1M and 32K on the session whose checklist reads and test
// runs differ only in their middle (scenario.Rereads, issue 26): each summary prompt is a request
// the agent sent, so the cache serves it, and the session with its summaries costs ≤ 4.5% of the
// same session without adkctx. With a content print that looked at a text's length and edges,
// the summarizer was sent prompts no request held: the cache served 38% of their tokens at 1M
// and 81% at 32K (98.9% and 97.1% now), and the check that ≤ 20% of them are billed failed. (At 8K, a turn of that session — file,
// listing, checklist and test run — and the one before it do not fit beside the summary.)
//
// At 8K, tool results are cut at 2 KiB: at the default 10 KiB a turn's file and listing (up to
// 6,600 tokens) do not fit under the 7,004-token hard limit beside the summary, the budget drops
// the turn's first call, and the scripted model, which no longer sees it, calls it again
// forever. Two turns and the summary may pass the soft limit (5,161) there: the largest request
// is held to the hard limit instead.
func TestFigureContinuity(t *testing.T) {
	if testing.Short() {
		t.Skip("figure run skipped in -short mode; run: cd hooks && go test -run TestFigure .")
	}
	longrun.Test(t)
	played := []bool{false} // the sessions without adkctx the rows compare with: rereads too unless quick
	if !scenario.Quick() {
		played = append(played, true)
	}
	without := withoutAdkctxRuns(t, played...)
	llm := func(model string) compaction.Config {
		return compaction.Config{Synchronous: true, Summarizer: &compaction.LLMSummarizer{Model: scenario.NewSummarizerModel(model)}}
	}
	cases := []struct {
		name        string
		window      int
		cc          compaction.Config
		resultBytes int  // tool results cut to (0: the default)
		cache       bool // the cache targets apply
		rereads     bool // scenario.Rereads
		// defaultPolicy: the default compaction policy (no sliding window) instead of the cost
		// policy: continuity is checked, the cost logged beside the cost policy's.
		defaultPolicy bool
	}{
		{"1048576/default-policy", 1_048_576, compaction.Config{Synchronous: true}, 0, false, false, true},
		{"32768/default-policy", 32_768, compaction.Config{Synchronous: true}, 0, false, false, true},
		{"8192/default-policy", 8_192, compaction.Config{Synchronous: true}, 2 << 10, false, false, true},
		{"1048576", 1_048_576, compaction.Config{Synchronous: true}, 0, true, false, false},
		{"32768", 32_768, compaction.Config{Synchronous: true}, 0, false, false, false},
		{"8192", 8_192, compaction.Config{Synchronous: true}, 2 << 10, false, false, false},
		// What the excerpts save, measured: the same session with every retained tool result whole
		// (the cache bounds do not hold; continuity does).
		{"1048576/results-whole", 1_048_576, compaction.Config{Synchronous: true, RetainedToolResultBytes: -1}, 0, false, false, false},
		// What an LLM summarizer adds: its prompts, recorded beside the session's (Figures.Aside*).
		// On the agent's model they extend a request the agent sent, so the cache serves most of
		// them; on another model they are transcripts, billed in full. The session's own cache
		// bounds are not checked here; continuity is.
		{"1048576/llm-summarizer", 1_048_576, llm(modelName), 0, false, false, false},
		{"32768/llm-summarizer", 32_768, llm(modelName), 0, false, false, false},
		{"8192/llm-summarizer", 8_192, llm(modelName), 2 << 10, false, false, false},
		{"1048576/llm-summarizer-other-model", 1_048_576, llm("other-model"), 0, false, false, false},
		{"rereads/1048576/llm-summarizer", 1_048_576, llm(modelName), 0, false, true, false},
		{"rereads/32768/llm-summarizer", 32_768, llm(modelName), 0, false, true, false},
	}
	for _, tc := range cases {
		if scenario.Quick() && (tc.window != 32_768 || tc.rereads) {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each run is self-contained; both cores halve make test's figures
			fr := figureRun{window: tc.window, invocations: scenario.Invocations, adkctx: true, cc: tc.cc, resultBytes: tc.resultBytes,
				defaultPolicy: tc.defaultPolicy}
			if tc.rereads {
				fr.session = scenario.Rereads()
			}
			with, without := runSession(t, fr), without[tc.rereads]
			t.Logf("with adkctx: %s", with.figures)
			t.Logf("without: %s", without.figures)
			t.Logf("%s", with.figures.Against(without.figures))
			if f := with.figures; f.AsideRequests > 0 {
				total := 100 * (f.Effective + f.AsideEffective) / without.figures.Effective
				t.Logf("summarizer: %d calls (%d transcripts), %d prompt tokens, effective %.0f; the session with them: %.2f%% of without",
					f.AsideRequests, f.AsideTranscripts, f.AsidePrompt, f.AsideEffective, total)
				if tc.cc.Summarizer.(*compaction.LLMSummarizer).Model.Name() == modelName {
					checkSummaryCost(t, f, total, summaryCostBound(tc.window, tc.rereads))
				}
			}
			limit := with.soft
			if tc.resultBytes > 0 {
				limit = with.hard
			}
			problems := with.figures.Problems(without.figures, limit, tc.cache)
			if tc.defaultPolicy {
				problems = with.figures.ContinuityProblems(limit)
			}
			for _, p := range problems {
				t.Error(p)
			}
			checkLedger(t, with.base)
		})
	}
}

// The instruction-phrasing figure (issue 19): a session whose user states standing rules in
// other languages (German, Japanese, Spanish, French, Russian, Chinese, Korean), as a style rule,
// as a question and as a condition, none with the English words the ledger once looked for,
// and whose user text fits compaction.UserTextTokens. Every rule is in every request after the
// turn that gave it, at a 1M and a 32K window, with the extractive summarizer and the LLM one
// (the default). The LLM summarizer is played by scenario.SummarizerModel on the agent's model:
// it writes the goal and the decisions its prompt holds and quotes no rule, so a rule in its
// summary comes from the ledger's facts appended to it.
func TestFigureInstructionPhrasings(t *testing.T) {
	if testing.Short() {
		t.Skip("figure run skipped in -short mode; run: cd hooks && go test -run TestFigure .")
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
				cc := compaction.Config{Synchronous: true, NoFallback: true}
				if summarizer == "llm" {
					cc.Summarizer = &compaction.LLMSummarizer{Model: scenario.NewSummarizerModel(modelName)}
				}
				f := runSession(t, figureRun{session: s, window: window, invocations: scenario.PhrasingTurns, adkctx: true, cc: cc}).figures
				t.Logf("user text %d tokens; %s; rules present %d of %d times (in the summary %d)",
					userTokens, f, f.InstructionsKept, f.InstructionsChecked, f.InstructionsInSummary)
				if f.InstructionsKept != f.InstructionsChecked || f.InstructionsChecked == 0 {
					t.Errorf("rules present %d of %d times, want all", f.InstructionsKept, f.InstructionsChecked)
				}
				// The rules outlive their raw turns: most presences are the summary's.
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

// The cadence figure: the same session compacted every θ invocations keeping R raw, θ from 2 to
// 8 and R 1 or 2. Continuity holds in every setting (Figures.Problems without the cache bounds);
// the log shows what each costs, how much of its prompt the previous request's prefix serves, and
// how many tokens are new in their request. Reuse rises with θ; the cost is lowest with R = 1 and
// small θ: no setting meets the cache bounds of the 1M case above together (README, "Cost and
// latency").
func TestFigureCadence(t *testing.T) {
	if testing.Short() {
		t.Skip("figure run skipped in -short mode; run: cd hooks && go test -run TestFigure .")
	}
	longrun.Test(t)
	without := withoutAdkctx(t, false)
	for _, interval := range []int{2, 3, 4, 5, 6, 8} {
		for _, retain := range []int{1, 2} {
			t.Run(fmt.Sprintf("θ=%d/R=%d", interval, retain), func(t *testing.T) {
				t.Parallel()
				cc := compaction.Config{Synchronous: true, Interval: interval, RetainRecentInvocations: retain}
				with := runScenarioWith(t, 1_048_576, scenario.Invocations, true, cc)
				f := with.figures
				t.Logf("θ=%d R=%d: %s; prefix reused %.1f%%, fresh %d", interval, retain, f.Against(without.figures), 100*float64(f.PrefixReused)/float64(f.Prompt), f.Fresh)
				for _, p := range f.Problems(without.figures, with.soft, false) {
					t.Errorf("θ=%d R=%d: %s", interval, retain, p)
				}
			})
		}
	}
}

// summaryCostBound is what the session with the summaries of an LLM summarizer on the agent's
// model may cost, in % of the session without adkctx: scenario.MaxEffectiveWithSummariesPct;
// scenario.MaxEffectivePct on the Default session at a window that never needs a trim.
func summaryCostBound(window int, rereads bool) float64 {
	if window == 1_048_576 && !rereads {
		return scenario.MaxEffectivePct
	}
	return scenario.MaxEffectiveWithSummariesPct
}

// checkSummaryCost checks what summaries on the agent's model cost, total being the session with
// them in % of the session without adkctx: every prompt extends a request the cache holds (none
// is a transcript, billed in full), the cache serves ≥ 80% of their tokens, and total is within
// bound (summaryCostBound).
func checkSummaryCost(t *testing.T, f scenario.Figures, total, bound float64) {
	t.Helper()
	if f.AsideTranscripts > 0 {
		t.Errorf("%d of %d summary prompts are transcripts, want none", f.AsideTranscripts, f.AsideRequests)
	}
	if f.AsideEffective > 0.2*float64(f.AsidePrompt) || total > bound {
		t.Errorf("summaries cost %.0f of their %d prompt tokens, the session %.2f%% of without; want ≤ 20%% and ≤ %.1f%%",
			f.AsideEffective, f.AsidePrompt, total, bound)
	}
}

// checkLedger compares the live summary's ledger with the tool calls its chain hides.
func checkLedger(t *testing.T, base session.Service) {
	t.Helper()
	viewer, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := viewer.SessionService(base).Get(t.Context(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	shown, markerID := map[string]bool{}, ""
	for _, e := range hooks.ModelView(resp.Session) {
		shown[e.ID] = true
		if id, ok := e.CustomMetadata[compaction.SummaryMetadataKey].(string); ok {
			markerID = id
		}
	}
	var hidden []*genai.Content
	var events []compaction.Event
	for _, e := range stored(t, base, "s1") {
		events = append(events, compaction.Event{ID: e.ID, Scope: "", Content: e.Content, Metadata: e.CustomMetadata})
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

// BenchmarkAddedLatency plays the 200-invocation session with a summarizer that takes 2 s and
// reports what a turn waits for after its final answer (runner.Run's iterator does not end
// before AfterRun returns): in the background mode (the default) and in the synchronous mode,
// where the turn that triggers a compaction waits for the summarizer.
// Run (in hooks/): go test -run '^$' -bench AddedLatency -benchtime 1x .
func BenchmarkAddedLatency(b *testing.B) {
	slow := &slowSummarizer{delay: 2 * time.Second}
	p := func(ts []time.Duration, q float64) float64 {
		s := slices.Sorted(slices.Values(ts))
		return float64(s[min(int(q*float64(len(s))), len(s)-1)].Microseconds()) / 1000
	}
	for b.Loop() {
		background := runScenarioWith(b, 1_048_576, scenario.Invocations, true, compaction.Config{Summarizer: slow})
		blocking := runScenarioWith(b, 1_048_576, 40, true, compaction.Config{Summarizer: slow, Synchronous: true})
		b.ReportMetric(p(background.afterAnswer, 0.5), "added_p50_ms")
		b.ReportMetric(p(background.afterAnswer, 0.99), "added_p99_ms")
		b.ReportMetric(p(blocking.afterAnswer, 0.99), "synchronous_p99_ms")
	}
}

// While a background compaction is pending, no request passes the hard limit by the model's
// count: the request waits for the compaction when it would, or is trimmed (summary pinned).
func TestHardLimitHoldsWhileACompactionIsPending(t *testing.T) {
	slow := &slowSummarizer{delay: 200 * time.Millisecond}
	run := runScenarioWith(t, 32_768, 40, true, compaction.Config{Summarizer: slow})
	f := run.figures
	if f.Largest > run.hard {
		t.Errorf("largest request %d tokens, over the hard limit %d", f.Largest, run.hard)
	}
	if f.PreviousTurnRaw != f.PreviousTurnChecked || f.SummaryPresent != f.SummaryChecked {
		t.Errorf("continuity lost while compactions were pending: previous turn raw %d/%d, summary %d/%d",
			f.PreviousTurnRaw, f.PreviousTurnChecked, f.SummaryPresent, f.SummaryChecked)
	}
	t.Logf("largest %d (soft %d, hard %d), over soft %d of %d", f.Largest, run.soft, run.hard, f.OverSoft, f.Requests)
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
			run = runScenario(t, 1_048_576, scenario.Invocations, false)
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
