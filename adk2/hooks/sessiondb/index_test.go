package sessiondb_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/database"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/adk2/hooks/sessiondb"
)

// The v2 copy is generated from the v1 package (hooks/sessiondb), whose tests cover SQLite and
// PostgreSQL; this one checks that adk-go v2's service, whose events table is the same, reads
// through the index.

// queryLog is a gorm logger that keeps the SQL statements run, values inlined.
type queryLog struct {
	mu   sync.Mutex
	sqls []string
}

func (l *queryLog) LogMode(gormlogger.LogLevel) gormlogger.Interface { return l }
func (l *queryLog) Info(context.Context, string, ...any)             {}
func (l *queryLog) Warn(context.Context, string, ...any)             {}
func (l *queryLog) Error(context.Context, string, ...any)            {}
func (l *queryLog) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	sql, _ := fc()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sqls = append(l.sqls, sql)
}

func (l *queryLog) eventQuery(t *testing.T) string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range slices.Backward(l.sqls) {
		if strings.Contains(q, "FROM `events`") && strings.Contains(q, "ORDER BY") {
			return q
		}
	}
	t.Fatalf("no event query among %d statements", len(l.sqls))
	return ""
}

func TestCreateIndexV2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	queries := &queryLog{}
	db, err := gorm.Open(sqlite.Open(path), &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	// adk-go's service cannot close its connections: it gets the pool the test closes.
	svc, err := database.NewSessionService(&sqlite.Dialector{Conn: pool}, &gorm.Config{Logger: queries})
	if err != nil {
		t.Fatal(err)
	}
	if err := database.AutoMigrate(svc); err != nil {
		t.Fatal(err)
	}
	created, err := svc.Create(t.Context(), &session.CreateRequest{AppName: "app", UserID: "u1", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ev := session.NewEvent(t.Context(), fmt.Sprint("inv-", i))
		ev.Author = "user"
		ev.Content = genai.NewContentFromText(fmt.Sprint("message ", i), genai.RoleUser)
		if err := svc.AppendEvent(t.Context(), created.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	planOf := func() string {
		resp, err := svc.Get(t.Context(), &session.GetRequest{AppName: "app", UserID: "u1", SessionID: "s1", NumRecentEvents: 2})
		if err != nil {
			t.Fatal(err)
		}
		if n := resp.Session.Events().Len(); n != 2 {
			t.Fatalf("%d events read, want 2", n)
		}
		rows, err := db.Raw("EXPLAIN QUERY PLAN " + queries.eventQuery(t)).Rows()
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var details []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			details = append(details, detail)
		}
		return strings.Join(details, "\n")
	}
	if p := planOf(); strings.Contains(p, sessiondb.IndexName) {
		t.Fatalf("the plan uses the index before it exists:\n%s", p)
	}
	for range 2 {
		if err := sessiondb.CreateIndex(t.Context(), db, sessiondb.Config{}); err != nil {
			t.Fatal(err)
		}
	}
	if p := planOf(); !strings.Contains(p, sessiondb.IndexName) {
		t.Errorf("adk-go v2's event query does not use %s:\n%s", sessiondb.IndexName, p)
	}
}
