package hooks_test

// The recall figure (issue 22). The adk-go v2 glue runs the same figure
// (adk2/hooks/recall_figure_test.go is generated from this file).

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adkctx/adkctx/hooks/internal/sqlitetest"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/dbartifact"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/longrun"
	"github.com/adkctx/adkctx/hooks/internal/scenario"
)

// recallProcess is one process serving the recall session: its hooks and runner over the
// session's SQLite file.
type recallProcess struct {
	h      *hooks.Hooks
	runner *runner.Runner
	close  func()
}

// startRecallProcess opens the SQLite file at path (sessions and saved outputs) and wires a
// runner of m with the session's tools, and the recall tools when withTools.
func startRecallProcess(t *testing.T, path string, m model.LLM, withTools bool, logger *zap.Logger) *recallProcess {
	t.Helper()
	// WAL and synchronous=NORMAL: what a server would set, and fewer fsyncs for the figure.
	store := sqlitetest.Open(t, path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	sessions := store.Sessions
	artifacts := dbartifact.NewService(store.DB, dbartifact.Config{})
	if err := dbartifact.Migrate(context.Background(), store.DB); err != nil {
		t.Fatal(err)
	}
	h, err := hooks.New(adkctx.Config{Logger: logger,
		Models:     []budget.ModelInfo{{Name: m.Name(), ContextWindow: 1_048_576, MaxOutputTokens: 8_192}},
		Compaction: &compaction.Config{Interval: 5, Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}}}) // the cost policy: compacted every 5 turns
	if err != nil {
		t.Fatal(err)
	}
	tools, err := llmtest.RecallSessionTools()
	if err != nil {
		t.Fatal(err)
	}
	if withTools {
		recallTools, err := h.RecallTools()
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, recallTools...)
	}
	a, err := llmagent.New(llmagent.Config{Name: "coder", Model: m, Instruction: "You are a careful coding assistant.", Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: recallApp, Agent: a, SessionService: sessions, ArtifactService: artifacts, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &recallProcess{h: h, runner: r, close: func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
		store.Close() // the process ends: the next one opens the file again
	}}
}

// playRecall plays the recall session (200 invocations, a restart after the 100th: a new
// process on the same SQLite file), then, with questions, asks one question per fact, the
// newest fact first, and returns what the model measured.
func playRecall(t *testing.T, withTools, questions bool, logger *zap.Logger) scenario.RecallFigures {
	t.Helper()
	path := filepath.Join(t.TempDir(), "recall.db")
	m := llmtest.NewRecallScenario("recall-model")
	p := startRecallProcess(t, path, m, withTools, logger)
	send := func(text string) {
		for _, err := range p.runner.Run(context.Background(), "user", "s1", genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("%.40s: %v", text, err)
			}
		}
	}
	for i := range scenario.RecallInvocations {
		if i == scenario.RecallInvocations/2 {
			p.close()
			p = startRecallProcess(t, path, m, withTools, logger)
		}
		send(scenario.RecallMessage(i))
	}
	facts := scenario.RecallFacts()
	for n := len(facts) - 1; n >= 0 && questions; n-- {
		send(facts[n].Question(n))
	}
	p.close()
	return m.Figures()
}

// TestFigureRecall: a 200-invocation session with 64 planted facts of four kinds (an id in the
// middle of a 60 KB log cut at the truncation limit, a setting in a small result of a turn a
// summary covers, an error string, a value the user mentioned once), on SQLite with a restart
// after 100 invocations; then one question per fact. The scripted agent answers from its request
// when the fact is there, else searches with the recall tools for an exact word of the question:
// every fact is reached with at most two calls. The same session without the tools shows what
// they cost on every request (their declarations) and what the request alone still holds.
func TestFigureRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("figure run skipped in -short mode; run: cd hooks && go test -run TestFigureRecall -v .")
	}
	longrun.Test(t)
	if scenario.Quick() {
		t.Skip("the quick figures ($ADKCTX_FIGURES=quick) leave the recall figure out")
	}
	core, logs := observer.New(zap.DebugLevel)
	// The two sessions are independent (a database each): played at once.
	var with, without scenario.RecallFigures
	t.Run("play", func(t *testing.T) {
		t.Run("with-tools", func(t *testing.T) {
			t.Parallel()
			with = playRecall(t, true, true, zap.New(core))
		})
		t.Run("without-tools", func(t *testing.T) {
			t.Parallel()
			without = playRecall(t, false, false, zap.NewNop())
		})
	})
	if t.Failed() {
		return
	}
	sw := with.Summary()
	t.Logf("with the recall tools: %s", sw)
	t.Logf("session (%d requests): %d prompt tokens with the tools, %d without (+%.2f%%); their declarations: %d tokens, on %d requests (%d tokens in all); largest request %d / %d",
		with.SessionRequests, with.SessionPrompt, without.SessionPrompt,
		100*float64(with.SessionPrompt-without.SessionPrompt)/float64(without.SessionPrompt), with.DeclarationTokens,
		with.DeclaringRequests, with.DeclaredTokens, with.SessionLargest, without.SessionLargest)
	t.Logf("questions: %d requests, %d prompt tokens", with.QuestionRequests, with.QuestionPrompt)

	facts := scenario.RecallFacts()
	if len(facts) < 60 || sw.Facts != len(facts) {
		t.Fatalf("%d facts planted, %d answered; want at least 60, each answered once", len(facts), sw.Facts)
	}
	if sw.NotReached != 0 {
		t.Errorf("%d facts not reached with ≤ 2 recall calls, want 0", sw.NotReached)
		for _, o := range with.Outcomes {
			if !o.Reached {
				t.Logf("not reached: %+v", o)
			}
		}
	}
	if sw.InRequest == len(facts) || sw.OneCall+sw.TwoCalls == 0 {
		t.Errorf("%d facts in the request, %d reached with the tools: the figure shows nothing", sw.InRequest, sw.OneCall+sw.TwoCalls)
	}
	for _, c := range with.Calls {
		if c.ResultBytes > 8<<10 || c.BytesRead > 8<<20 {
			t.Errorf("a %s result of %d bytes, %d read: over the bounds (8 KiB, 8 MiB)", c.Tool, c.ResultBytes, c.BytesRead)
		}
	}
	if with.SessionRequests != without.SessionRequests || with.DeclarationTokens == 0 {
		t.Errorf("%d session requests with the tools, %d without; declarations %d tokens", with.SessionRequests, without.SessionRequests, with.DeclarationTokens)
	}
	// The first requests have nothing to recall (no output cut, no summary): they declare none.
	if with.DeclaringRequests == with.SessionRequests {
		t.Errorf("every one of the %d session requests declares the recall tools, the first ones included", with.SessionRequests)
	}
	// The tools cost their declarations on the requests that declare them and a few longer notes,
	// nothing else.
	if extra := with.SessionPrompt - without.SessionPrompt; extra < with.DeclaredTokens || extra > with.DeclaredTokens+maxNotesTokens*with.SessionRequests {
		t.Errorf("the tools add %d tokens to the session; want their declarations (%d) plus at most %d a request for the notes", extra, with.DeclaredTokens, maxNotesTokens)
	}
	for _, e := range logs.All() {
		text := fmt.Sprint(e.Message, e.ContextMap())
		for _, f := range facts {
			if strings.Contains(text, f.Value) || strings.Contains(text, f.Key) {
				t.Fatalf("a log entry holds a fact or a query (%s): %s", f.Key, text)
			}
		}
	}
}

// maxNotesTokens bounds what the longer notes add to a request of the recall session, on
// average: the truncation notes naming the tool, the excerpts' notes naming their saved results,
// the summary's line.
const maxNotesTokens = 150
