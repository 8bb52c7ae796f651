package sessiondb_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"google.golang.org/genai"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"
	"gorm.io/gorm/utils/tests"

	"github.com/adkctx/adkctx/hooks/internal/pgtest"
	"github.com/adkctx/adkctx/hooks/sessiondb"
)

// queryLog is a gorm logger that keeps the SQL statements run (values inlined, as gorm logs
// them): what adk-go's service really asks the database.
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

// eventQuery returns the newest query of the events table with an ORDER BY: the events of a Get.
func (l *queryLog) eventQuery(t *testing.T) string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range slices.Backward(l.sqls) {
		if strings.Contains(strings.ReplaceAll(q, "`", `"`), `FROM "events"`) && strings.Contains(q, "ORDER BY") {
			return q
		}
	}
	t.Fatalf("no event query among %d statements", len(l.sqls))
	return ""
}

// backend is a database adk-go's service runs on.
type backend struct {
	// open returns the migrated service and a second handle on its database, and the log of
	// the service's statements.
	open func(t testing.TB) (session.Service, *gorm.DB, *queryLog)
	// filler is a statement storing $1 events of another session (to make the table large).
	filler string
	// explain prefixes a query to get its plan.
	explain string
	// rawDB returns a fresh database without adk-go's tables.
	rawDB func(t *testing.T) *gorm.DB
}

func quiet() *gorm.Config { return &gorm.Config{Logger: gormlogger.Discard} }

func backends() map[string]backend {
	return map[string]backend{
		"sqlite": {
			open: func(t testing.TB) (session.Service, *gorm.DB, *queryLog) {
				path := filepath.Join(t.TempDir(), "sessions.db")
				return openService(t, sqlite.Open(path), sqlite.Open(path))
			},
			filler: `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
				INSERT INTO events (id, app_name, user_id, session_id, timestamp)
				SELECT 'filler-' || n, 'app', 'other', 'filler', datetime('2025-01-01', '+' || n || ' seconds') FROM g`,
			explain: "EXPLAIN QUERY PLAN ",
			rawDB: func(t *testing.T) *gorm.DB {
				return openGorm(t, sqlite.Open(filepath.Join(t.TempDir(), "empty.db")))
			},
		},
		"postgres": {
			open: func(t testing.TB) (session.Service, *gorm.DB, *queryLog) {
				dsn := pgtest.DSN(t)
				return openService(t, postgres.Open(dsn), postgres.Open(dsn))
			},
			filler: `INSERT INTO events (id, app_name, user_id, session_id, "timestamp")
				SELECT 'filler-' || g, 'app', 'other', 'filler', timestamptz '2025-01-01' + g * interval '1 second'
				FROM generate_series(1, ?) AS g`,
			explain: "EXPLAIN ",
			rawDB: func(t *testing.T) *gorm.DB {
				return openGorm(t, postgres.Open(pgtest.DSN(t)))
			},
		},
	}
}

func openService(t testing.TB, forService, forIndex gorm.Dialector) (session.Service, *gorm.DB, *queryLog) {
	t.Helper()
	queries := &queryLog{}
	// adk-go's service cannot close its connections: it gets a pool the test closes.
	pool, err := openGorm(t, forService).DB()
	if err != nil {
		t.Fatal(err)
	}
	var overPool gorm.Dialector
	switch forService.Name() {
	case "sqlite":
		overPool = &sqlite.Dialector{Conn: pool}
	case "postgres":
		overPool = postgres.New(postgres.Config{Conn: pool})
	default:
		t.Fatalf("no dialector over a pool for %s", forService.Name())
	}
	svc, err := database.NewSessionService(overPool, &gorm.Config{Logger: queries})
	if err != nil {
		t.Fatal(err)
	}
	if err := database.AutoMigrate(svc); err != nil {
		t.Fatal(err)
	}
	return svc, openGorm(t, forIndex), queries
}

func openGorm(t testing.TB, d gorm.Dialector) *gorm.DB {
	t.Helper()
	db, err := gorm.Open(d, quiet())
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlDB.Close() })
	return db
}

func observed() (sessiondb.Config, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.InfoLevel)
	return sessiondb.Config{Logger: zap.New(core), PollInterval: 20 * time.Millisecond}, logs
}

// storeSession stores 20,000 small events of another session through db, then a session of n
// events through svc, and returns the session's event ids.
func storeSession(t testing.TB, svc session.Service, db *gorm.DB, b backend, n int) []string {
	t.Helper()
	fill(t, svc, db, b.filler, 20_000)
	return appendEvents(t, svc, n)
}

// fill stores rows events of the session app/other/filler with the statement filler.
func fill(t testing.TB, svc session.Service, db *gorm.DB, filler string, rows int) {
	t.Helper()
	if _, err := svc.Create(t.Context(), &session.CreateRequest{AppName: "app", UserID: "other", SessionID: "filler"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(filler, rows).Error; err != nil {
		t.Fatal(err)
	}
	if db.Dialector.Name() == "postgres" {
		if err := db.Exec("ANALYZE events").Error; err != nil {
			t.Fatal(err)
		}
	}
}

// appendEvents stores the session app/u1/s1 with n events, a minute apart, through svc and
// returns their ids.
func appendEvents(t testing.TB, svc session.Service, n int) []string {
	t.Helper()
	created, err := svc.Create(t.Context(), &session.CreateRequest{AppName: "app", UserID: "u1", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var ids []string
	for i := range n {
		ev := session.NewEventWithContext(t.Context(), fmt.Sprint("inv-", i))
		ev.Author, ev.Timestamp = "user", start.Add(time.Duration(i)*time.Minute)
		ev.Content = genai.NewContentFromText(fmt.Sprint("message ", i), genai.RoleUser)
		if err := svc.AppendEvent(t.Context(), created.Session, ev); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ev.ID)
	}
	return ids
}

// plan returns the plan of query, one line per step.
func plan(t *testing.T, db *gorm.DB, b backend, query string) string {
	t.Helper()
	rows, err := db.Raw(b.explain + query).Rows()
	if err != nil {
		t.Fatalf("%s%s: %v", b.explain, query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprint(vals[len(vals)-1])) // SQLite's detail, PostgreSQL's line
	}
	return strings.Join(lines, "\n")
}

// indexColumns reads the columns of sessiondb.IndexName on events from the catalog.
func indexColumns(t *testing.T, db *gorm.DB) []string {
	t.Helper()
	var cols []string
	var err error
	switch db.Dialector.Name() {
	case "sqlite":
		err = db.Raw(`SELECT ii.name FROM sqlite_master m, pragma_index_info(m.name) ii
			WHERE m.type = 'index' AND m.name = ? AND m.tbl_name = 'events' ORDER BY ii.seqno`, sessiondb.IndexName).Scan(&cols).Error
	default:
		err = db.Raw(`SELECT a.attname FROM pg_index i
			JOIN pg_class c ON c.oid = i.indexrelid
			JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n) ON true
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
			WHERE c.relname = ? AND i.indrelid = 'events'::regclass AND i.indisvalid ORDER BY k.n`, sessiondb.IndexName).Scan(&cols).Error
	}
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// The index exists afterwards, on the session and the time; calling CreateIndex again changes
// nothing; the queries adk-go's service makes for a Get — whole, NumRecentEvents, After — use it
// where they scanned the table before; the service reads what it stored.
func TestCreateIndex(t *testing.T) {
	for name, b := range backends() {
		t.Run(name, func(t *testing.T) {
			svc, db, queries := b.open(t)
			ids := storeSession(t, svc, db, b, 5)
			get := func(req session.GetRequest) (query string, got []string) {
				req.AppName, req.UserID, req.SessionID = "app", "u1", "s1"
				resp, err := svc.Get(t.Context(), &req)
				if err != nil {
					t.Fatal(err)
				}
				for e := range resp.Session.Events().All() {
					got = append(got, e.ID)
				}
				return queries.eventQuery(t), got
			}
			gets := map[string]session.GetRequest{
				"whole":  {},
				"recent": {NumRecentEvents: 3},
				"after":  {After: time.Date(2026, 3, 1, 9, 2, 0, 0, time.UTC)},
			}
			for shape, req := range gets {
				q, _ := get(req)
				if p := plan(t, db, b, q); strings.Contains(p, sessiondb.IndexName) {
					t.Fatalf("%s: the plan uses %s before it was created:\n%s", shape, sessiondb.IndexName, p)
				}
			}

			cfg, logs := observed()
			for range 2 {
				if err := sessiondb.CreateIndex(t.Context(), db, cfg); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff([]string{"app_name", "user_id", "session_id", "timestamp"}, indexColumns(t, db)); diff != "" {
				t.Errorf("index columns (-want +got):\n%s", diff)
			}
			if n := logs.FilterMessage("session index created").Len(); n != 1 {
				t.Errorf("%d entries %q for two calls, want 1", n, "session index created")
			}
			want := map[string][]string{"whole": ids, "recent": ids[2:], "after": ids[2:]}
			for shape, req := range gets {
				q, got := get(req)
				if p := plan(t, db, b, q); !strings.Contains(p, sessiondb.IndexName) {
					t.Errorf("%s: the plan of %s does not use %s:\n%s", shape, q, sessiondb.IndexName, p)
				}
				if diff := cmp.Diff(want[shape], got); diff != "" {
					t.Errorf("%s: events read (-want +got):\n%s", shape, diff)
				}
			}
		})
	}
}

// Processes starting together each create the index: every call succeeds, one index results.
func TestCreateIndexConcurrently(t *testing.T) {
	for name, b := range backends() {
		t.Run(name, func(t *testing.T) {
			svc, db, _ := b.open(t)
			storeSession(t, svc, db, b, 3)
			cfg, logs := observed()
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Go(func() { errs[i] = sessiondb.CreateIndex(t.Context(), db, cfg) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if got := indexColumns(t, db); len(got) != 4 {
				t.Errorf("index columns %v", got)
			}
			if n := logs.FilterMessage("session index created").Len(); n < 1 {
				t.Errorf("no process logged the creation")
			}
		})
	}
}

// Another connection holding SQLite's write lock past the busy timeout delays CreateIndex; it
// does not fail it: CreateIndex tries again until the lock is free, or gives up with the
// database's error when its context ends first.
func TestCreateIndexWaitsForSQLiteWriteLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	svc, holder, _ := openService(t, sqlite.Open(path), sqlite.Open(path))
	storeSession(t, svc, holder, backends()["sqlite"], 3)
	// No busy timeout: a locked database answers SQLITE_BUSY at once.
	locked := &failures{}
	db, err := gorm.Open(sqlite.Open(path+"?_pragma=busy_timeout(0)"), &gorm.Config{Logger: locked})
	if err != nil {
		t.Fatal(err)
	}
	if sqlDB, err := db.DB(); err == nil {
		t.Cleanup(func() { sqlDB.Close() })
	}
	tx := holder.Begin()
	defer tx.Rollback()
	if err := tx.Exec("INSERT INTO events (id, app_name, user_id, session_id, timestamp) VALUES ('lock', 'a', 'u', 's', datetime('now'))").Error; err != nil {
		t.Fatal(err)
	}
	cfg, _ := observed()
	// refusedOnce waits until CreateIndex found the database locked once more than refused times.
	refusedOnce := func(refused int, done <-chan error) {
		t.Helper()
		for locked.count() == refused {
			select {
			case err := <-done:
				t.Fatalf("CreateIndex returned %v while another connection held the write lock", err)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}

	// Canceled while it waits to try again, it gives up with the database's error.
	ctx, cancel := context.WithCancel(t.Context())
	waiting := cfg
	waiting.PollInterval = time.Hour
	done := make(chan error, 1)
	go func() { done <- sessiondb.CreateIndex(ctx, db, waiting) }()
	refusedOnce(0, done)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("CreateIndex canceled while the database stays locked: %v; want the database's error and the cancellation", err)
	}

	// Once the lock is released, it creates the index.
	refused := locked.count()
	go func() { done <- sessiondb.CreateIndex(t.Context(), db, cfg) }()
	refusedOnce(refused, done)
	if err := tx.Rollback().Error; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("CreateIndex after the lock was released: %v", err)
	}
	if got := indexColumns(t, db); len(got) != 4 {
		t.Errorf("index columns %v", got)
	}
}

// failures is a gorm logger that counts the statements SQLite refused as locked.
type failures struct {
	mu sync.Mutex
	n  int
}

func (f *failures) LogMode(gormlogger.LogLevel) gormlogger.Interface { return f }
func (f *failures) Info(context.Context, string, ...any)             {}
func (f *failures) Warn(context.Context, string, ...any)             {}
func (f *failures) Error(context.Context, string, ...any)            {}
func (f *failures) Trace(_ context.Context, _ time.Time, _ func() (string, int64), err error) {
	if err != nil && strings.Contains(err.Error(), "SQLITE_BUSY") {
		f.mu.Lock()
		f.n++
		f.mu.Unlock()
	}
}

func (f *failures) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// Bad input gets a typed error and changes nothing.
func TestCreateIndexErrors(t *testing.T) {
	for name, b := range backends() {
		t.Run(name+"/no table", func(t *testing.T) {
			if err := sessiondb.CreateIndex(t.Context(), b.rawDB(t), sessiondb.Config{}); !errors.Is(err, sessiondb.ErrNoTable) {
				t.Errorf("got %v, want ErrNoTable", err)
			}
		})
		t.Run(name+"/conflict", func(t *testing.T) {
			_, db, _ := b.open(t)
			if err := db.Exec(fmt.Sprintf(`CREATE INDEX "%s" ON sessions (update_time)`, sessiondb.IndexName)).Error; err != nil {
				t.Fatal(err)
			}
			err := sessiondb.CreateIndex(t.Context(), db, sessiondb.Config{})
			var conflict *sessiondb.ConflictError
			if !errors.As(err, &conflict) {
				t.Fatalf("got %v, want a *ConflictError", err)
			}
			if diff := cmp.Diff(&sessiondb.ConflictError{Table: "sessions", Columns: []string{"update_time"}}, conflict); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("dialect", func(t *testing.T) {
		db, err := gorm.Open(tests.DummyDialector{}, quiet())
		if err != nil {
			t.Fatal(err)
		}
		var de *sessiondb.DialectError
		if err := sessiondb.CreateIndex(t.Context(), db, sessiondb.Config{}); !errors.As(err, &de) || de.Dialect != "dummy" {
			t.Errorf("got %v, want a *DialectError for dummy", err)
		}
	})
	t.Run("nil", func(t *testing.T) {
		if err := sessiondb.CreateIndex(t.Context(), nil, sessiondb.Config{}); err == nil {
			t.Error("no error for a nil *gorm.DB")
		}
	})
	t.Run("postgres/transaction", func(t *testing.T) {
		_, db, _ := backends()["postgres"].open(t)
		tx := db.Begin()
		defer tx.Rollback()
		if err := sessiondb.CreateIndex(t.Context(), tx, sessiondb.Config{}); !errors.Is(err, sessiondb.ErrInTransaction) {
			t.Errorf("got %v, want ErrInTransaction", err)
		}
	})
}

// waitFor polls cond every 10 ms and fails t when it is still false after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// withInvalidIndex opens a PostgreSQL database with a stored session and an invalid index of the
// session index's name, as an interrupted concurrent build leaves it: a unique build of the same
// columns fails half way on two events stamped alike (ids twin-1 and twin-2).
func withInvalidIndex(t *testing.T) *gorm.DB {
	t.Helper()
	b := backends()["postgres"]
	svc, db, _ := b.open(t)
	storeSession(t, svc, db, b, 3)
	if err := db.Exec(`INSERT INTO events (id, app_name, user_id, session_id, "timestamp")
		SELECT 'twin-' || g, 'app', 'other', 'filler', timestamptz '2024-01-01' FROM generate_series(1, 2) AS g`).Error; err != nil {
		t.Fatal(err)
	}
	err := db.Exec(fmt.Sprintf(`CREATE UNIQUE INDEX CONCURRENTLY "%s" ON events (app_name, user_id, session_id, "timestamp")`, sessiondb.IndexName)).Error
	if err == nil {
		t.Fatal("the unique build succeeded: no invalid index to start from")
	}
	if got := indexColumns(t, db); len(got) != 0 {
		t.Fatalf("the failed build left a valid index on %v", got)
	}
	return db
}

// An interrupted concurrent build leaves an invalid index of that name, which queries never use
// and IF NOT EXISTS would keep: CreateIndex drops it and builds it again.
func TestCreateIndexRebuildsAnInvalidIndex(t *testing.T) {
	db := withInvalidIndex(t)
	cfg, logs := observed()
	if err := sessiondb.CreateIndex(t.Context(), db, cfg); err != nil {
		t.Fatal(err)
	}
	if got := indexColumns(t, db); len(got) != 4 {
		t.Errorf("valid index columns after CreateIndex: %v", got)
	}
	if logs.FilterMessage("session index invalid: rebuilding it").Len() != 1 {
		t.Errorf("the rebuild was not logged: %v", logs.All())
	}
}

// PostgreSQL ends a build's progress row before the transaction that marks the index valid
// commits: in that window a second process finds the index invalid with no build, and dropping it
// then fails ("tuple concurrently updated"). CreateIndex looks again a poll interval later before
// it drops an invalid index. The window is held open here by a REINDEX that has marked the index
// valid in a transaction not yet committed.
func TestCreateIndexLooksAgainBeforeDroppingAnInvalidIndex(t *testing.T) {
	db := withInvalidIndex(t)
	if err := db.Exec(`DELETE FROM events WHERE id LIKE 'twin-%'`).Error; err != nil {
		t.Fatal(err)
	}
	build := db.Begin()
	defer build.Rollback()
	if err := build.Exec(fmt.Sprintf(`REINDEX INDEX "%s"`, sessiondb.IndexName)).Error; err != nil {
		t.Fatal(err)
	}
	cfg, logs := observed()
	cfg.PollInterval = 2 * time.Second // the commit below lands within it
	done := make(chan error, 1)
	go func() { done <- sessiondb.CreateIndex(t.Context(), db, cfg) }()
	waitFor(t, "CreateIndex to look again", func() bool {
		return logs.FilterMessage("session index invalid with no build: looking again").Len() > 0
	})
	if err := build.Commit().Error; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := indexColumns(t, db); len(got) != 4 {
		t.Errorf("valid index columns: %v", got)
	}
	if n := logs.FilterMessage("session index invalid: rebuilding it").Len() + logs.FilterMessage("session index created").Len(); n != 0 {
		t.Errorf("the index the REINDEX made valid was rebuilt: %v", logs.All())
	}
}

// A process that finds another one's build running waits for it, and does not build again.
func TestCreateIndexWaitsForAnotherBuild(t *testing.T) {
	b := backends()["postgres"]
	svc, db, _ := b.open(t)
	storeSession(t, svc, db, b, 3)
	// An open transaction that wrote to events holds the first build in its wait for writers,
	// after the index is in the catalog.
	writer := db.Begin()
	defer writer.Rollback()
	if err := writer.Exec(`INSERT INTO events (id, app_name, user_id, session_id, "timestamp")
		VALUES ('late', 'app', 'other', 'filler', now())`).Error; err != nil {
		t.Fatal(err)
	}
	firstCfg, firstLogs := observed()
	first := make(chan error, 1)
	go func() { first <- sessiondb.CreateIndex(t.Context(), db, firstCfg) }()
	waitFor(t, "the first build to show in pg_stat_progress_create_index", func() bool {
		var building int64
		if err := db.Raw(`SELECT count(*) FROM pg_stat_progress_create_index p JOIN pg_class c ON c.oid = p.index_relid
			WHERE c.relname = ?`, sessiondb.IndexName).Scan(&building).Error; err != nil {
			t.Fatal(err)
		}
		return building > 0
	})
	secondCfg, secondLogs := observed()
	second := make(chan error, 1)
	go func() { second <- sessiondb.CreateIndex(t.Context(), db, secondCfg) }()
	// The writer commits only once the second call has found the build running.
	waitFor(t, "the second call to find the build running", func() bool {
		return secondLogs.FilterMessage("session index being built by another process: waiting for it").Len() > 0
	})
	if err := writer.Commit().Error; err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(<-first, <-second); err != nil {
		t.Fatal(err)
	}
	if got := indexColumns(t, db); len(got) != 4 {
		t.Errorf("valid index columns: %v", got)
	}
	if firstLogs.FilterMessage("session index created").Len() != 1 {
		t.Errorf("first: %v", firstLogs.All())
	}
	if secondLogs.FilterMessage("session index built by another process").Len() != 1 || secondLogs.FilterMessage("session index created").Len() != 0 {
		t.Errorf("second: %v", secondLogs.All())
	}
}

// CheckIndex tells an index in place from a missing one, on both databases, reading only the
// catalog: no table, no index, the index, an index of that name on something else, and (on
// PostgreSQL) the invalid index an interrupted build leaves.
func TestCheckIndex(t *testing.T) {
	for name, b := range backends() {
		t.Run(name, func(t *testing.T) {
			if err := sessiondb.CheckIndex(t.Context(), b.rawDB(t)); !errors.Is(err, sessiondb.ErrNoTable) {
				t.Errorf("no events table: got %v, want ErrNoTable", err)
			}
			svc, db, _ := b.open(t)
			storeSession(t, svc, db, b, 3)
			if err := sessiondb.CheckIndex(t.Context(), db); !errors.Is(err, sessiondb.ErrNoIndex) {
				t.Errorf("without the index: got %v, want ErrNoIndex", err)
			}
			if err := sessiondb.CreateIndex(t.Context(), db, sessiondb.Config{}); err != nil {
				t.Fatal(err)
			}
			if err := sessiondb.CheckIndex(t.Context(), db); err != nil {
				t.Errorf("with the index: %v", err)
			}

			_, other, _ := b.open(t)
			if err := other.Exec(fmt.Sprintf(`CREATE INDEX "%s" ON sessions (update_time)`, sessiondb.IndexName)).Error; err != nil {
				t.Fatal(err)
			}
			var conflict *sessiondb.ConflictError
			if err := sessiondb.CheckIndex(t.Context(), other); !errors.As(err, &conflict) {
				t.Errorf("an index of that name on sessions: got %v, want a *ConflictError", err)
			}
		})
	}
	t.Run("postgres/invalid", func(t *testing.T) {
		b := backends()["postgres"]
		svc, db, _ := b.open(t)
		storeSession(t, svc, db, b, 3)
		if err := db.Exec(`INSERT INTO events (id, app_name, user_id, session_id, "timestamp")
			SELECT 'twin-' || g, 'app', 'other', 'filler', timestamptz '2024-01-01' FROM generate_series(1, 2) AS g`).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(fmt.Sprintf(`CREATE UNIQUE INDEX CONCURRENTLY "%s" ON events (app_name, user_id, session_id, "timestamp")`,
			sessiondb.IndexName)).Error; err == nil {
			t.Fatal("the unique build succeeded: no invalid index to check")
		}
		if err := sessiondb.CheckIndex(t.Context(), db); !errors.Is(err, sessiondb.ErrNoIndex) {
			t.Errorf("an invalid index: got %v, want ErrNoIndex", err)
		}
	})
	t.Run("dialect", func(t *testing.T) {
		db, err := gorm.Open(tests.DummyDialector{}, quiet())
		if err != nil {
			t.Fatal(err)
		}
		var de *sessiondb.DialectError
		if err := sessiondb.CheckIndex(t.Context(), db); !errors.As(err, &de) {
			t.Errorf("got %v, want a *DialectError", err)
		}
	})
}
