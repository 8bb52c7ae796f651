// Command quickstart is adkctx wired into an adk-go agent, complete: sessions and the tool
// outputs adkctx saves whole in one SQLite file (adk-go's database service, adkctx's session
// index and artifact service), the recall tools, compaction, a zap log, and every error checked,
// Close's included. The README's "Add it to your agent" is an excerpt of this file.
//
//	cd example && go run ./quickstart                 # offline: a scripted model, no key, no network
//	GOOGLE_API_KEY=... go run ./quickstart "Run the tests and tell me what failed."
//
// Each argument is one user turn (default: three about a failing test run); the log (JSON lines)
// goes to stderr. With GOOGLE_API_KEY or GEMINI_API_KEY set the agent runs on Gemini and the
// same model writes the summaries; without, on the offline model of offline.go. Ctrl-C and
// SIGTERM stop it cleanly: compactions under way finish and the database is closed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/glebarez/sqlite"
	"go.uber.org/zap"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/dbartifact"
	"github.com/adkctx/adkctx/hooks/sessiondb"
)

const (
	appName = "quickstart"
	userID  = "developer"
)

// defaultTurns are the user turns when none is given.
var defaultTurns = []string{
	"Run the tests and tell me what failed.",
	"Show me the log around that failure.",
	"Thanks, that is all.",
}

func main() {
	// SIGTERM (a service manager's or a container's stop) ends the program as Ctrl-C does.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		fmt.Fprintln(os.Stderr, "quickstart: interrupted")
		os.Exit(130)
	default:
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) (err error) {
	flags := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dbPath := flags.String("db", filepath.Join(os.TempDir(), "adkctx-quickstart.db"), "SQLite file for sessions and saved tool outputs")
	modelName := flags.String("model", "gemini-2.5-flash", "Gemini model, used when GOOGLE_API_KEY or GEMINI_API_KEY is set")
	if err := flags.Parse(args); err != nil {
		return err
	}
	turns := flags.Args()
	if len(turns) == 0 {
		turns = defaultTurns
	}

	logger, err := zap.NewProduction() // JSON lines on stderr: budget decisions, truncations, compactions
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }() // stderr may refuse fsync: nothing to report

	// One SQLite file holds the sessions (adk-go's database service) and the tool outputs
	// adkctx saves whole (dbartifact), over one connection pool closed last. gorm stays quiet:
	// its default logger prints "record not found" whenever a session is looked up first.
	// _txlock=immediate: adk-go creates a session and appends an event in a transaction that
	// reads, then writes; begun immediate it waits for another session's writer (busy_timeout)
	// instead of failing at once with SQLITE_BUSY when two sessions write together.
	quiet := &gorm.Config{Logger: gormlogger.Discard}
	db, err := gorm.Open(sqlite.Open(*dbPath+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"), quiet)
	if err != nil {
		return err
	}
	pool, err := db.DB()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, pool.Close()) }() // the last connection merges the WAL into the file
	sessions, err := database.NewSessionService(&sqlite.Dialector{Conn: pool}, quiet)
	if err != nil {
		return err
	}
	if err := database.AutoMigrate(sessions); err != nil {
		return err
	}
	// Without the index every read of a session scans every stored event.
	if err := sessiondb.CreateIndex(ctx, db, sessiondb.Config{Logger: logger}); err != nil {
		return err
	}
	artifacts := dbartifact.NewService(db, dbartifact.Config{})
	if err := dbartifact.Migrate(ctx, db); err != nil {
		return err
	}

	agentModel, models, err := chooseModel(ctx, *modelName, getenv)
	if err != nil {
		return err
	}
	// Summaries by the agent's own model, its prompt cache shared; the offline model writes
	// none, so it gets the extractive summarizer (no model, deterministic), also the fallback.
	var summarizer compaction.Summarizer = &compaction.LLMSummarizer{Model: hooks.SummarizerModel(agentModel)}
	if agentModel.Name() == offlineModelName {
		summarizer = &compaction.ExtractiveSummarizer{}
	}

	h, err := hooks.New(adkctx.Config{
		Logger:       logger,                                     // nil: no logs
		Models:       models,                                     // windows of models adkctx does not know
		Instructions: &adkctx.InstructionsConfig{},               // AGENTS.md files, project root down to the working directory; nil: off
		Compaction:   &compaction.Config{Summarizer: summarizer}, // nil: off
	})
	if err != nil {
		return err // every invalid field, as joined *adkctx.ConfigError values
	}
	defer func() {
		// Close lets background compactions finish (with a context of its own: ctx may be
		// cancelled by now) and returns wiring mistakes.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = errors.Join(err, h.Close(ctx))
	}()

	// The recall tools read back what requests left out: saved outputs, summarized turns.
	recallTools, err := h.RecallTools()
	if err != nil {
		return err
	}
	runTests, err := newRunTestsTool()
	if err != nil {
		return err
	}
	assistant, err := llmagent.New(llmagent.Config{
		Name:        "assistant",
		Model:       agentModel,
		Instruction: "You are a coding assistant. Run the tests when asked; read saved outputs to answer about them.",
		Tools:       append([]tool.Tool{runTests}, recallTools...),
	})
	if err != nil {
		return err
	}
	rc, err := h.Wire(runner.Config{
		AppName:           appName,
		Agent:             assistant,
		SessionService:    sessions,  // adkctx wraps it: the model sees the compacted view
		ArtifactService:   artifacts, // full tool outputs are kept here
		AutoCreateSession: true,
	})
	if err != nil {
		return err
	}
	r, err := runner.New(rc)
	if err != nil {
		return err
	}

	sessionID := "quickstart-" + time.Now().UTC().Format("20060102-150405.000")
	fmt.Fprintf(stdout, "model %s, session %s in %s\n", agentModel.Name(), sessionID, *dbPath)
	for _, text := range turns {
		fmt.Fprintf(stdout, "\nuser: %s\n", text)
		for ev, err := range r.Run(ctx, userID, sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				return err
			}
			printEvent(stdout, ev)
		}
	}

	u := h.Usage(appName, userID, sessionID)
	fmt.Fprintf(stdout, "\n%d turns, %d model calls, %d prompt tokens in all (the last request: %d; soft limit %d)\n",
		u.Turns, u.ModelCalls, u.Total.Prompt, u.Last.Prompt, u.Soft)
	saved, err := artifacts.List(ctx, &artifact.ListRequest{AppName: appName, UserID: userID, SessionID: sessionID})
	if err != nil {
		return err
	}
	for _, name := range saved.FileNames {
		fmt.Fprintf(stdout, "saved whole in %s: %s\n", *dbPath, name)
	}
	return nil
}

// chooseModel returns Gemini when an API key is set, the offline model otherwise, with the
// context windows adkctx needs for a model it does not know.
func chooseModel(ctx context.Context, name string, getenv func(string) string) (model.LLM, []budget.ModelInfo, error) {
	key := getenv("GOOGLE_API_KEY")
	if key == "" {
		key = getenv("GEMINI_API_KEY")
	}
	if key == "" {
		return offlineModel{}, []budget.ModelInfo{{Name: offlineModelName, ContextWindow: 32_768, MaxOutputTokens: 4_096}}, nil
	}
	llm, err := gemini.NewModel(ctx, name, &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI})
	return llm, nil, err
}

// printEvent prints what a person follows of an event: answers, tool calls and results.
func printEvent(w io.Writer, ev *session.Event) {
	if ev.Content == nil || ev.Partial {
		return
	}
	for _, p := range ev.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			fmt.Fprintf(w, "  call   %s %v\n", p.FunctionCall.Name, p.FunctionCall.Args)
		case p.FunctionResponse != nil:
			result, _ := json.Marshal(p.FunctionResponse.Response)
			fmt.Fprintf(w, "  result %s: %d bytes\n", p.FunctionResponse.Name, len(result))
		case p.Text != "" && !p.Thought:
			fmt.Fprintf(w, "%s: %s\n", ev.Author, strings.TrimSpace(p.Text))
		}
	}
}
