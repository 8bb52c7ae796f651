package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// clerk is a scripted model for writing sessions: on a user message it looks the order up
// (one tool call), then answers with the order's id.
type clerk struct{}

func (clerk) Name() string { return "clerk" }

func (clerk) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		last := req.Contents[len(req.Contents)-1]
		var c *genai.Content
		if p := last.Parts[0]; p.FunctionResponse != nil {
			c = genai.NewContentFromText(fmt.Sprintf("Order %v is %v.", p.FunctionResponse.Response["order_id"], p.FunctionResponse.Response["status"]), genai.RoleModel)
		} else {
			id := strings.Fields(last.Parts[0].Text)[2]
			c = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "get_order", Args: map[string]any{"order_id": id}}}}}
		}
		yield(&model.LLMResponse{Content: c, FinishReason: genai.FinishReasonStop, TurnComplete: true}, nil)
	}
}

type orderArgs struct {
	OrderID string `json:"order_id"`
}

// writeSessions stores sessions through adk-go's runner and database service: per app and
// user one session of turns invocations (a call and an answer each).
func writeSessions(t *testing.T, svc session.Service, apps, users []string, turns int) {
	t.Helper()
	ctx := context.Background()
	get, err := functiontool.New(functiontool.Config{Name: "get_order", Description: "Get an order."}, func(_ agent.ToolContext, a orderArgs) (map[string]any, error) {
		return map[string]any{"order_id": a.OrderID, "status": "shipped", "items": []any{"ITEM-" + a.OrderID}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := llmagent.New(llmagent.Config{Name: "clerk", Model: clerk{}, Tools: []tool.Tool{get}})
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range apps {
		r, err := runner.New(runner.Config{AppName: app, Agent: ag, SessionService: svc})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range users {
			s, err := svc.Create(ctx, &session.CreateRequest{AppName: app, UserID: u, SessionID: "s-" + u})
			if err != nil {
				t.Fatal(err)
			}
			for i := range turns {
				msg := genai.NewContentFromText(fmt.Sprintf("Where is ORD-%s-%04d please?", u, 1000+i), genai.RoleUser)
				for _, err := range r.Run(ctx, u, s.Session.ID(), msg, agent.RunConfig{}) {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

type fileState struct {
	sum   [32]byte
	mtime time.Time
	names []string
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	entries, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return fileState{sum: sha256.Sum256(b), mtime: st.ModTime(), names: names}
}

// sqliteSessions opens adk-go's database session service on a new SQLite file at path, migrated.
func sqliteSessions(t *testing.T, path string) (*gorm.DB, session.Service) {
	t.Helper()
	db, err := gorm.Open(sqlite.Open(path), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	svc, err := database.NewSessionService(&sqlite.Dialector{DSN: path, Conn: sqlDB}, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := database.AutoMigrate(svc); err != nil {
		t.Fatal(err)
	}
	return db, svc
}

func TestReplaySQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	db, svc := sqliteSessions(t, path)
	writeSessions(t, svc, []string{"shop", "support"}, []string{"u2", "u1"}, 3)
	closeGorm(t, db)
	before := stateOf(t, path)

	code, out, errs := runCmd(t, "replay", "-json", "-window", "8192", "-sqlite", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := decodeReport(t, out)
	var ids []string
	for _, s := range r.Sessions {
		ids = append(ids, fmt.Sprintf("%s %s %d turns %d steps", s.ID, s.Format, s.Turns, s.Steps))
	}
	want := []string{
		"shop/u1/s-u1 adk-session 3 turns 6 steps", "shop/u2/s-u2 adk-session 3 turns 6 steps",
		"support/u1/s-u1 adk-session 3 turns 6 steps", "support/u2/s-u2 adk-session 3 turns 6 steps",
	}
	if !slices.Equal(ids, want) {
		t.Errorf("sessions:\n%s\nwant:\n%s", strings.Join(ids, "\n"), strings.Join(want, "\n"))
	}
	// Each answer names the order the call looked up: a reference to the user's message.
	if r.Totals[0]["user_facts"] == 0 || r.Totals[0]["prompt_tokens_adkctx"] == 0 {
		t.Errorf("totals %v", r.Totals[0])
	}

	code, out, errs = runCmd(t, "replay", "-json", "-sqlite", path, "-app", "support", "-user", "u2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if r := decodeReport(t, out); len(r.Sessions) != 1 || r.Sessions[0].ID != "support/u2/s-u2" {
		t.Errorf("filtered: %+v", r.Sessions)
	}
	after := stateOf(t, path)
	if after.sum != before.sum || !after.mtime.Equal(before.mtime) || !slices.Equal(after.names, before.names) {
		t.Errorf("the database changed: before %x %v %v, after %x %v %v", before.sum[:6], before.mtime, before.names, after.sum[:6], after.mtime, after.names)
	}
}

// TestReplayADKPythonSQLite: a session database adk-python's service wrote (the same tables,
// but each event's actions a Python pickle and its content in snake_case), which adk-go's
// service refuses whole, is read from its events: the same turns, steps and figures as the
// database adk-go wrote, with a note that the actions were left out.
func TestReplayADKPythonSQLite(t *testing.T) {
	write := func(path string, python bool) {
		db, svc := sqliteSessions(t, path)
		writeSessions(t, svc, []string{"shop"}, []string{"u1"}, 3)
		if python {
			// pickle protocol 5 of an EventActions, as adk-python stores it
			for _, q := range []string{
				`UPDATE events SET actions = X'80059577010000000000008C1F676F6F676C652E61646B2E6576656E74732E6576656E745F616374696F6E73'`,
				`UPDATE events SET content = replace(replace(content, '"functionCall"', '"function_call"'), '"functionResponse"', '"function_response"')`,
			} {
				if err := db.Exec(q).Error; err != nil {
					t.Fatal(err)
				}
			}
			var snake int64
			db.Raw(`SELECT count(*) FROM events WHERE content LIKE '%"function_call"%'`).Scan(&snake)
			if snake == 0 {
				t.Fatal("no snake_case content written: the test tests nothing")
			}
		}
		closeGorm(t, db)
	}
	dir := t.TempDir()
	goDB, pyDB := filepath.Join(dir, "go.db"), filepath.Join(dir, "python.db")
	write(goDB, false)
	write(pyDB, true)
	report := func(path string) jsonReport {
		code, out, errs := runCmd(t, "replay", "-json", "-window", "8192", "-sqlite", path)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", path, code, errs)
		}
		return decodeReport(t, out)
	}
	want, got := report(goDB), report(pyDB)
	if len(got.Sessions) != 1 || len(want.Sessions) != 1 {
		t.Fatalf("sessions: %d from adk-python's database, %d from adk-go's", len(got.Sessions), len(want.Sessions))
	}
	g, w := got.Sessions[0], want.Sessions[0]
	if g.ID != w.ID || g.Format != w.Format || g.Turns != w.Turns || g.Steps != w.Steps || g.Steps == 0 {
		t.Errorf("adk-python's database: %s %s %d turns %d steps; adk-go's: %s %s %d turns %d steps", g.ID, g.Format, g.Turns, g.Steps, w.ID, w.Format, w.Turns, w.Steps)
	}
	if fmt.Sprint(g.Configs) != fmt.Sprint(w.Configs) {
		t.Errorf("figures differ:\nadk-python's database %v\nadk-go's %v", g.Configs, w.Configs)
	}
	if len(g.Notes) != 1 || !strings.Contains(g.Notes[0], "actions are Python pickles") {
		t.Errorf("notes %q, want one saying the pickled actions were left out", g.Notes)
	}
}

func closeGorm(t *testing.T, db *gorm.DB) {
	t.Helper()
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReplayPostgres runs against the server $ADKCTX_POSTGRES_DSN names (scripts/postgres.sh
// start gives one), in a database of its own.
func TestReplayPostgres(t *testing.T) {
	server := strings.TrimSpace(os.Getenv("ADKCTX_POSTGRES_DSN"))
	if server == "" {
		t.Skip(`PostgreSQL test skipped: $ADKCTX_POSTGRES_DSN is not set (export ADKCTX_POSTGRES_DSN="$(scripts/postgres.sh start)")`)
	}
	name := fmt.Sprintf("adkctx_replay_%d", time.Now().UnixNano())
	admin, err := gorm.Open(postgres.Open(server), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		closeGorm(t, admin)
	})
	dsn := server + " dbname=" + name
	if u, err := url.Parse(server); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		dsn = u.String()
	}
	db, err := gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	svc, err := database.NewSessionService(postgres.New(postgres.Config{Conn: sqlDB}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := database.AutoMigrate(svc); err != nil {
		t.Fatal(err)
	}
	writeSessions(t, svc, []string{"shop"}, []string{"u1", "u2"}, 2)
	var events int64
	db.Table("events").Count(&events)

	code, out, errs := runCmd(t, "replay", "-json", "-postgres", dsn)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := decodeReport(t, out)
	if len(r.Sessions) != 2 || r.Sessions[0].ID != "shop/u1/s-u1" || r.Sessions[1].Steps != 4 {
		t.Errorf("sessions %+v", r.Sessions)
	}
	var after int64
	db.Table("events").Count(&after)
	if after != events {
		t.Errorf("events %d → %d", events, after)
	}
	closeGorm(t, db)
}
