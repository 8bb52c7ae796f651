package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/google/uuid"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

// demoScript is the scripted session: questions about the demo repository that make the agent
// list, read and search, with large outputs (a CI log, vendored sources, 300 golden files).
var demoScript = []string{
	"What are the rules for working in this directory?",
	"List the files here so I can get my bearings.",
	"Read `README.md` and tell me what the service does.",
	"Open `logs/ci-build.log` — why did the nightly build fail?",
	"Read `invoice_test.go` and `invoice.go`.",
	"Search for `RoundHalfEven` everywhere.",
	"Read `vendor/acme.example/money/money.go`.",
	"Search for `TODO` so we know what is left to do.",
	"Read `tax.go` and `config/billing.yaml` — do the rates match?",
	"Search for `invoice_id` in `testdata/`.",
	"Summarize what we know so far.",
	"Read `handlers.go`.",
	"Search for `request_id`.",
	"List `migrations/`.",
	"Read `migrations/002_ledger.sql`.",
	"Search for `FAIL` in `logs/`.",
	"Read `internal/ledger/ledger.go`.",
	"Search for `FIXME`.",
	"Read `vendor/acme.example/money/rate.go`.",
	"Search for `func` in `vendor/`.",
	"Read `logs/ci-build.log` again — what failed just before the end?",
	"List `testdata/golden/`.",
	"Read `testdata/golden/invoice_042.json`.",
	"Search for `eu-west`.",
	"Recap the failing test and where the rounding happens.",
	"Read `Makefile`.",
	"Search for `errors.Is`.",
	"Read `vendor/modules.txt`.",
	"Search for `half_even`.",
	"List all the files again.",
	"Read `invoice.go` once more.",
	"Search for `MulRate`.",
	"Search for `warning` in `logs/ci-build.log`.",
	"Read `config/billing.yaml`.",
	"Search for `ErrUnknownRegion`.",
	"What are the rules again for migrations and tests?",
	"Search for `Balance`.",
	"Read `vendor/acme.example/money/format.go`.",
	"Search for `ledger_entries`.",
	"Summarize the session: what is broken and what should we change first?",
}

// script returns the first n messages of the demo script (repeating it past its end).
func script(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = demoScript[i%len(demoScript)]
	}
	return out
}

// TurnFigures are one user turn's figures, with and without adkctx.
type TurnFigures struct {
	Turn                  int `json:"turn"`
	PromptTokensWith      int `json:"prompt_tokens_with"`
	PromptTokensWithout   int `json:"prompt_tokens_without"`
	LargestRequestWith    int `json:"largest_request_with"`
	LargestRequestWithout int `json:"largest_request_without"`
	ModelCallsWith        int `json:"model_calls_with"`
	ModelCallsWithout     int `json:"model_calls_without"`
}

// DemoReport is everything -demo prints; -report json prints it as is (keys are stable).
// "with" is the run with adkctx, "without" the same script replayed with no adkctx at all.
// Token figures are the prompt tokens the model reported (usage metadata on its events).
type DemoReport struct {
	Model         string `json:"model"`          // model name
	Offline       bool   `json:"offline"`        // the deterministic offline model was used
	Turns         int    `json:"turns"`          // scripted user turns
	ContextWindow int    `json:"context_window"` // the model's window, tokens
	SoftLimit     int    `json:"soft_limit"`     // adkctx's soft limit: compaction due above it
	HardLimit     int    `json:"hard_limit"`     // adkctx's hard limit: never sent above it

	PromptTokensWith    int     `json:"prompt_tokens_with"`    // sum over every model call
	PromptTokensWithout int     `json:"prompt_tokens_without"` // sum over every model call
	ReductionPercent    float64 `json:"reduction_percent"`     // 100 × (1 − with/without)
	ModelCallsWith      int     `json:"model_calls_with"`
	ModelCallsWithout   int     `json:"model_calls_without"`

	LargestRequestWith        int `json:"largest_request_with"` // largest single model call
	LargestRequestWithout     int `json:"largest_request_without"`
	RequestsOverSoftWith      int `json:"requests_over_soft_with"` // model calls above soft_limit
	RequestsOverSoftWithout   int `json:"requests_over_soft_without"`
	RequestsOverWindowWith    int `json:"requests_over_window_with"` // model calls above context_window
	RequestsOverWindowWithout int `json:"requests_over_window_without"`

	Compactions          int            `json:"compactions"`            // compaction markers in storage
	CompactionsByTrigger map[string]int `json:"compactions_by_trigger"` // invocations / tokens / manual
	OutputsTruncated     int            `json:"outputs_truncated"`      // "tool output truncated" log entries
	TruncatedBytes       int            `json:"truncated_bytes"`        // bytes those truncations left out
	FullOutputsSaved     int            `json:"full_outputs_saved"`     // truncated results whose full text is an artifact
	LargeOutputsWithout  int            `json:"large_outputs_without"`  // tool results over 10 KiB sent whole without adkctx
	BudgetDecisions      int            `json:"budget_decisions"`       // "budget decision" log entries (one per model call)
	RequestsTrimmed      int            `json:"requests_trimmed"`       // decisions with action "trimmed"

	EventsStored      int `json:"events_stored"`      // events in SQLite for the session, markers included
	EventsYielded     int `json:"events_yielded"`     // non-partial events the runner yielded (all stored)
	InstructionFiles  int `json:"instruction_files"`  // AGENTS.md files merged into the system instruction
	InstructionsBytes int `json:"instructions_bytes"` // size of the merged text

	SessionID    string        `json:"session_id"`
	WorkDir      string        `json:"work_dir"`      // where the tools worked (a temp dir for the demo repository)
	DBPath       string        `json:"db_path"`       // the SQLite file
	DBTemporary  bool          `json:"db_temporary"`  // the SQLite file is removed at exit (no -db)
	LogPath      string        `json:"log_path"`      // the zap JSON-lines log
	LogTemporary bool          `json:"log_temporary"` // the log is removed at exit (no -log)
	PerTurn      []TurnFigures `json:"per_turn"`
}

// runStats are one run's figures.
type runStats struct {
	turns    []TurnFigures // only the "With" fields are filled, whichever run it was
	calls    []int         // prompt tokens of every model call
	eventIDs []string      // ids of the events the runner yielded
}

const userID = "developer"

// demo runs -demo: the script with adkctx, then without, and prints the report. Compaction runs
// synchronously here (on the turn that triggers it) so that the figures are the same on every
// run; applications keep the default, in the background.
func (a *app) demo(ctx context.Context, o options, keySet bool, stdout, stderr io.Writer, env func(string) string) error {
	if o.report == "text" {
		fmt.Fprintf(stdout, "adkctx demo with the OFFLINE model %q: deterministic, no network,\na %s-token context window.\n",
			a.choice.llm.Name(), thousands(offlineWindow))
		about := a.workDir
		if o.dir == "" {
			about = "the demo repository (" + demoWorkDir + " of a small monorepo)"
		}
		fmt.Fprintf(stdout, "%d scripted turns about %s,\nplayed twice: with adkctx (SQLite sessions) and without (in-memory sessions, no adkctx).\n",
			o.turns, about)
		if keySet {
			fmt.Fprintln(stdout, "(An API key is set, but -demo always uses the offline model so that both runs\nsee the same answers; run without -demo to talk to Gemini.)")
		}
	}
	var logOffset int64
	if st, err := os.Stat(a.logPath); err == nil {
		logOffset = st.Size()
	}
	rep, err := a.runDemo(ctx, o.turns, newProgress(stderr), logOffset)
	if err != nil {
		return err
	}
	rep.DBTemporary, rep.LogTemporary = a.tempDB, a.tempLog
	if o.report == "json" {
		err = writeJSON(stdout, rep)
	} else {
		writeText(stdout, rep, terminalWidth(env))
	}
	if err != nil || a.metrics == nil {
		return err
	}
	// Keep serving the metrics for a person (or Prometheus) to scrape.
	fmt.Fprintf(stderr, "serving adkctx metrics at %s until interrupted (Ctrl-C)\n", a.metrics.URL)
	<-ctx.Done()
	return nil
}

// runDemo plays the script with adkctx (SQLite store) and without (in-memory store, no adkctx),
// and gathers the report.
func (a *app) runDemo(ctx context.Context, turns int, p *progress, logOffset int64) (_ *DemoReport, err error) {
	msgs := script(turns)
	sessionID := fmt.Sprintf("demo-%s", newID())

	// With adkctx.
	var cl cleanups
	setup := a.setup
	setup.Synchronous = true
	h, rc, err := a.wire(setup, &cl)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cl.run()) }()
	r, err := runner.New(rc)
	if err != nil {
		return nil, err
	}
	if _, err := a.store.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: sessionID}); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	with, err := playScript(ctx, r, sessionID, msgs, "with adkctx", p)
	if err != nil {
		return nil, fmt.Errorf("run with adkctx: %w", err)
	}

	without, large, err := a.runWithout(ctx, sessionID, msgs, p)
	if err != nil {
		return nil, err
	}

	limits := h.Limits(a.choice.llm.Name())
	rep := &DemoReport{
		Model: a.choice.llm.Name(), Offline: a.choice.offline, Turns: len(msgs),
		ContextWindow: limits.Window, SoftLimit: limits.Soft, HardLimit: limits.Hard,
		LargeOutputsWithout:  large,
		CompactionsByTrigger: map[string]int{},
		SessionID:            sessionID, WorkDir: a.workDir, DBPath: a.dbPath, LogPath: a.logPath,
		EventsYielded: len(with.eventIDs),
	}
	rep.addTurns(with, without)
	rep.RequestsOverSoftWith = with.over(limits.Soft)
	rep.RequestsOverSoftWithout = without.over(limits.Soft)
	rep.RequestsOverWindowWith = with.over(limits.Window)
	rep.RequestsOverWindowWithout = without.over(limits.Window)

	// What storage holds: every event, plus the compaction markers.
	stored, err := storedEvents(ctx, a.store, sessionID)
	if err != nil {
		return nil, fmt.Errorf("read the stored session: %w", err)
	}
	for _, ev := range stored {
		rep.EventsStored++
		if m := readMarker(ev); m != nil {
			rep.Compactions++
			rep.CompactionsByTrigger[string(m.Trigger)]++
		}
	}
	if merged, err := h.Instructions(context.Background(), ""); err == nil {
		rep.InstructionFiles, rep.InstructionsBytes = len(merged.Sources), merged.Bytes
	}
	if err := countLog(a.logPath, logOffset, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// runWithout plays msgs without adkctx: the same script, the same model, a plain in-memory
// store, no plugin. It also counts the tool outputs over the truncation limit that session
// stored.
func (a *app) runWithout(ctx context.Context, sessionID string, msgs []string, p *progress) (runStats, int, error) {
	plain := a.setup
	plain.Sessions = session.InMemoryService()
	pr, err := newPlainAgent(plain)
	if err != nil {
		return runStats{}, 0, err
	}
	if _, err := plain.Sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: sessionID}); err != nil {
		return runStats{}, 0, err
	}
	without, err := playScript(ctx, pr, sessionID, msgs, "without adkctx", p)
	if err != nil {
		return runStats{}, 0, fmt.Errorf("run without adkctx: %w", err)
	}
	large, err := countLargeOutputs(ctx, plain.Sessions, sessionID)
	return without, large, err
}

// addTurns adds the per-turn figures of the two runs to the report, and their totals.
func (rep *DemoReport) addTurns(with, without runStats) {
	for i := range with.turns {
		w, wo := with.turns[i], without.turns[i]
		rep.PerTurn = append(rep.PerTurn, TurnFigures{
			Turn:             i + 1,
			PromptTokensWith: w.PromptTokensWith, PromptTokensWithout: wo.PromptTokensWith,
			LargestRequestWith: w.LargestRequestWith, LargestRequestWithout: wo.LargestRequestWith,
			ModelCallsWith: w.ModelCallsWith, ModelCallsWithout: wo.ModelCallsWith,
		})
		rep.PromptTokensWith += w.PromptTokensWith
		rep.PromptTokensWithout += wo.PromptTokensWith
		rep.ModelCallsWith += w.ModelCallsWith
		rep.ModelCallsWithout += wo.ModelCallsWith
		rep.LargestRequestWith = max(rep.LargestRequestWith, w.LargestRequestWith)
		rep.LargestRequestWithout = max(rep.LargestRequestWithout, wo.LargestRequestWith)
	}
	if rep.PromptTokensWithout > 0 {
		rep.ReductionPercent = round1(100 * (1 - float64(rep.PromptTokensWith)/float64(rep.PromptTokensWithout)))
	}
}

// over counts the model calls whose prompt was above limit.
func (s runStats) over(limit int) int {
	n := 0
	for _, c := range s.calls {
		if c > limit {
			n++
		}
	}
	return n
}

// playScript sends each message through the runner and records the prompt tokens the model
// reported (usage metadata on the model's events), per turn. Only the "With" fields of the
// returned turns are filled.
func playScript(ctx context.Context, r *runner.Runner, sessionID string, msgs []string, label string, p *progress) (runStats, error) {
	var st runStats
	for i, msg := range msgs {
		stop := p.start(fmt.Sprintf("%s: turn %d/%d", label, i+1, len(msgs)))
		t := TurnFigures{Turn: i + 1}
		var runErr error
		for ev, err := range r.Run(ctx, userID, sessionID, genai.NewContentFromText(msg, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				runErr = err
				break
			}
			if ev == nil || ev.Partial {
				continue
			}
			st.eventIDs = append(st.eventIDs, ev.ID)
			if ev.UsageMetadata != nil && ev.Author == agentName {
				prompt := int(ev.UsageMetadata.PromptTokenCount)
				t.ModelCallsWith++
				t.PromptTokensWith += prompt
				t.LargestRequestWith = max(t.LargestRequestWith, prompt)
				st.calls = append(st.calls, prompt)
			}
		}
		stop()
		if runErr != nil {
			return st, fmt.Errorf("turn %d: %w", i+1, runErr)
		}
		st.turns = append(st.turns, t)
	}
	return st, nil
}

// newID returns a short random id.
func newID() string { return uuid.NewString()[:8] }

func round1(f float64) float64 { return math.Round(f*10) / 10 }

// countLargeOutputs counts the tool results stored whole in the plain run that are above adkctx's
// default truncation limit (10 KiB).
func countLargeOutputs(ctx context.Context, svc session.Service, sessionID string) (int, error) {
	resp, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sessionID})
	if err != nil {
		return 0, err
	}
	n := 0
	for ev := range resp.Session.Events().All() {
		if ev.Content == nil {
			continue
		}
		for _, part := range ev.Content.Parts {
			if part == nil || part.FunctionResponse == nil {
				continue
			}
			if b, err := json.Marshal(part.FunctionResponse.Response); err == nil && len(b) > 10<<10 {
				n++
			}
		}
	}
	return n, nil
}

// countLog reads the zap JSON-lines log written since offset and counts adkctx's entries: budget
// decisions (and the trimmed ones) and truncated tool outputs.
func countLog(path string, offset int64, rep *DemoReport) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read the log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return fmt.Errorf("read the log: %w", err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var e struct {
			Msg           string   `json:"msg"`
			Action        string   `json:"action"`
			OriginalBytes int      `json:"original_bytes"`
			KeptBytes     int      `json:"kept_bytes"`
			Artifacts     []string `json:"artifacts"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch e.Msg {
		case "budget decision":
			rep.BudgetDecisions++
			if e.Action == "trimmed" {
				rep.RequestsTrimmed++
			}
		case "tool output truncated":
			rep.OutputsTruncated++
			rep.TruncatedBytes += max(e.OriginalBytes-e.KeptBytes, 0)
			if len(e.Artifacts) > 0 {
				rep.FullOutputsSaved++
			}
		}
	}
	return sc.Err()
}
