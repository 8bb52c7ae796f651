// Command v1writer writes a session with adkctx under adk-go v1 to a SQLite file and prints the
// compacted view adk-go v1 reads of it, as JSON: the v2 module's upgrade test opens the same file
// with adkctx under adk-go v2 and compares. adk-go v1 and v2 cannot share one build (v1.7.0
// needs go.opentelemetry.io/otel/log v0.21.0, v2.2.0 predates its API), so v1 runs here, in the
// v1 glue's module and a process of its own.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/sessiondb"
)

// Shown is one event of a view: its id, whether it is a summary, its text.
type Shown struct {
	ID      string `json:"id"`
	Summary bool   `json:"summary"`
	Text    string `json:"text"`
}

func main() {
	db := flag.String("db", "", "SQLite file to write")
	app := flag.String("app", "upgrade", "app name")
	turns := flag.Int("turns", 9, "user turns")
	flag.Parse()
	if err := write(*db, *app, *turns); err != nil {
		log.Fatal(err)
	}
}

func write(path, app string, turns int) error {
	ctx := context.Background()
	base, err := database.NewSessionService(sqlite.Open(path), &gorm.Config{Logger: gormlogger.Default.LogMode(gormlogger.Silent)})
	if err != nil {
		return err
	}
	if err := database.AutoMigrate(base); err != nil {
		return err
	}
	gdb, err := gorm.Open(sqlite.Open(path), &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		return err
	}
	if err := sessiondb.CreateIndex(ctx, gdb, sessiondb.Config{}); err != nil {
		return err
	}
	h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{Interval: 2, RetainRecentInvocations: 2, Synchronous: true,
		Summarizer: &compaction.ExtractiveSummarizer{}}})
	if err != nil {
		return err
	}
	m := &llmtest.Model{UsageScale: 1, Default: func(*model.LLMRequest) (*genai.Content, error) {
		return genai.NewContentFromText("noted: "+strings.Repeat("detail ", 40), genai.RoleModel), nil
	}}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant."})
	if err != nil {
		return err
	}
	rc, err := h.Wire(runner.Config{AppName: app, Agent: a, SessionService: base, AutoCreateSession: true})
	if err != nil {
		return err
	}
	r, err := runner.New(rc)
	if err != nil {
		return err
	}
	for i := range turns {
		msg := genai.NewContentFromText(fmt.Sprintf("turn-%d: look at module %d", i, i), genai.RoleUser)
		for _, err := range r.Run(ctx, "user", "s1", msg, agent.RunConfig{}) {
			if err != nil {
				return err
			}
		}
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := h.Close(cctx); err != nil {
		return err
	}
	resp, err := rc.SessionService.Get(ctx, &session.GetRequest{AppName: app, UserID: "user", SessionID: "s1"})
	if err != nil {
		return err
	}
	var view []Shown
	for _, e := range hooks.ModelView(resp.Session) {
		s := Shown{ID: e.ID}
		_, s.Summary = e.CustomMetadata[compaction.SummaryMetadataKey]
		if e.Content != nil && len(e.Content.Parts) > 0 {
			s.Text = e.Content.Parts[0].Text
		}
		view = append(view, s)
	}
	return json.NewEncoder(os.Stdout).Encode(view)
}
