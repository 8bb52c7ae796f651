// Command example runs a coding agent built on adk-go v2 with adkctx, offline by default: a
// scripted model plays a long coding session (read a file, list a folder, run the tests,
// answer) against a model window small enough that it must compact, and the program prints
// what the model was sent. With GOOGLE_API_KEY (or GEMINI_API_KEY) set and -online, Gemini
// plays the model instead, on the same tools.
//
//	go run ./example                       # 60 turns, 32K window, in-memory sessions
//	go run ./example -turns 200 -db s.db   # sessions in SQLite (run again: the session goes on)
//	go run ./example -online -turns 5      # Gemini
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/model/gemini"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/database"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/adk2/hooks"
	"github.com/adkctx/adkctx/adk2/hooks/sessiondb"
	"github.com/adkctx/adkctx/adk2/internal/llmtest"
	"github.com/adkctx/adkctx/adk2/internal/scenario"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Getenv)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

type options struct {
	turns, window int
	db, model     string
	online        bool
}

func run(ctx context.Context, args []string, out io.Writer, getenv func(string) string) (err error) {
	var o options
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.IntVar(&o.turns, "turns", 60, "user turns to play (at most the session's 200)")
	fs.IntVar(&o.window, "window", 32_768, "the offline model's context window, in tokens")
	fs.StringVar(&o.db, "db", "", "SQLite file for sessions (default: in memory)")
	fs.BoolVar(&o.online, "online", false, "use Gemini (GOOGLE_API_KEY or GEMINI_API_KEY)")
	fs.StringVar(&o.model, "model", "gemini-2.5-flash", "Gemini model, with -online")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.turns = min(max(o.turns, 1), scenario.Invocations)

	llm, models, err := newModel(ctx, o, getenv)
	if err != nil {
		return err
	}
	sessions := session.InMemoryService()
	if o.db != "" {
		// Opened here so that it is closed on return: adk-go's database service has no Close.
		db, err := sql.Open(sqlite.DriverName, o.db+"?_pragma=busy_timeout(10000)&_txlock=immediate")
		if err != nil {
			return err
		}
		defer db.Close()
		if sessions, err = database.NewSessionService(&sqlite.Dialector{Conn: db}, &gorm.Config{Logger: gormlogger.Default.LogMode(gormlogger.Silent)}); err != nil {
			return err
		}
		if err := database.AutoMigrate(sessions); err != nil {
			return err
		}
		if err := createIndex(ctx, db); err != nil {
			return err
		}
	}
	// The whole integration: one Config, one Wire. The offline model answers at once, so
	// compaction runs synchronously to keep the printout the same on every run; an application
	// keeps the default, in the background beside the conversation.
	h, err := hooks.New(adkctx.Config{Models: models, Compaction: &compaction.Config{Synchronous: !o.online}})
	if err != nil {
		return err
	}
	defer func() {
		// Close lets background compactions finish and returns the wiring mistakes it found.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, h.Close(cctx))
	}()
	tools, err := llmtest.ScenarioTools()
	if err != nil {
		return err
	}
	a, err := llmagent.New(llmagent.Config{Name: "coder", Model: llm, Instruction: "You are a careful coding assistant.", Tools: tools})
	if err != nil {
		return err
	}
	rc, err := h.Wire(runner.Config{AppName: "adkctx-example", Agent: a, SessionService: sessions, AutoCreateSession: true})
	if err != nil {
		return err
	}
	r, err := runner.New(rc)
	if err != nil {
		return err
	}

	limits := h.Limits(llm.Name())
	fmt.Fprintf(out, "model %s: window %d tokens, soft limit %d, hard limit %d\n", llm.Name(), limits.Window, limits.Soft, limits.Hard)
	for i := range o.turns {
		msg := genai.NewContentFromText(scenario.UserMessage(i), genai.RoleUser)
		for _, err := range r.Run(ctx, "user", "session-1", msg, agent.RunConfig{}) {
			if err != nil {
				return fmt.Errorf("turn %d: %w", i, err)
			}
		}
		if rep := h.Usage("adkctx-example", "user", "session-1"); (i+1)%10 == 0 || i == o.turns-1 {
			fmt.Fprintf(out, "turn %3d: last request %6d prompt tokens, %d model calls so far, %s\n", i+1, rep.Last.Prompt, rep.ModelCalls, markers(ctx, sessions))
		}
	}
	return nil
}

// markers describes the compactions stored in the session.
func markers(ctx context.Context, sessions session.Service) string {
	resp, err := sessions.Get(ctx, &session.GetRequest{AppName: "adkctx-example", UserID: "user", SessionID: "session-1"})
	if err != nil {
		return err.Error()
	}
	n, covered := 0, 0
	for e := range resp.Session.Events().All() {
		if m, err := compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata}); err == nil && m != nil {
			n, covered = n+1, m.Invocations
		}
	}
	return fmt.Sprintf("%d compactions (the summary covers %d turns)", n, covered)
}

// newModel returns Gemini with -online, else the scripted model of the session with the given
// window.
func newModel(ctx context.Context, o options, getenv func(string) string) (model.LLM, []budget.ModelInfo, error) {
	if o.online {
		key := getenv("GOOGLE_API_KEY")
		if key == "" {
			key = getenv("GEMINI_API_KEY")
		}
		if key == "" {
			return nil, nil, errors.New("-online needs GOOGLE_API_KEY or GEMINI_API_KEY")
		}
		m, err := gemini.NewModel(ctx, o.model, &genai.ClientConfig{APIKey: key})
		return m, nil, err
	}
	m := llmtest.NewScenario("offline-coder", 0)
	return m, []budget.ModelInfo{{Name: m.Name(), ContextWindow: o.window, MaxOutputTokens: 8_192}}, nil
}

// createIndex creates adkctx's session index in the SQLite database db: without it every read of
// a session scans the events table.
func createIndex(ctx context.Context, db *sql.DB) error {
	gdb, err := gorm.Open(&sqlite.Dialector{Conn: db}, &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		return err
	}
	return sessiondb.CreateIndex(ctx, gdb, sessiondb.Config{})
}
