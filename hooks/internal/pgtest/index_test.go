package pgtest_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/runner"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/pgtest"
	"github.com/adkctx/adkctx/hooks/sessiondb"
)

// On PostgreSQL as on SQLite (hooks' TestSessionIndexWarning): adk-go's database service without
// adkctx's session index is reported once, by one warning naming sessiondb.CreateIndex and by
// Check; with the index nothing is reported, before and after a turn through the runner.
func TestSessionIndexWarning(t *testing.T) {
	for _, withIndex := range []bool{true, false} {
		name := "without the index"
		if withIndex {
			name = "with the index"
		}
		t.Run(name, func(t *testing.T) {
			db := pgtest.SQL(t)
			svc := pgtest.SessionService(t, db) // creates the index
			if !withIndex {
				if _, err := db.ExecContext(t.Context(), "DROP INDEX "+sessiondb.IndexName); err != nil {
					t.Fatal(err)
				}
			}
			core, logs := observer.New(zapcore.DebugLevel)
			h, err := hooks.New(adkctx.Config{Logger: zap.New(core), Compaction: &compaction.Config{Synchronous: true}})
			if err != nil {
				t.Fatal(err)
			}
			a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: &llmtest.Model{}})
			if err != nil {
				t.Fatal(err)
			}
			rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: svc, AutoCreateSession: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: svc}); err != nil {
				t.Fatal(err)
			}
			r, err := runner.New(rc)
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range r.Run(t.Context(), userID, "s1", genai.NewContentFromText("hello", genai.RoleUser), agent.RunConfig{}) {
				if err != nil {
					t.Fatal(err)
				}
			}
			err = h.Close(context.Background())
			var w *adkctx.WiringError
			warned := logs.FilterField(zap.String("problem", "session_index_missing"))
			if withIndex {
				if err != nil || warned.Len() != 0 {
					t.Errorf("with the index: Close() = %v, warnings %v", err, warned.All())
				}
				return
			}
			if !errors.As(err, &w) || w.Problem != "session_index_missing" {
				t.Errorf("Close() = %v, want session_index_missing", err)
			}
			if warned.Len() != 1 || warned.All()[0].Level != zapcore.WarnLevel {
				t.Errorf("warnings %v, want one at warn level", warned.All())
			}
		})
	}
}
