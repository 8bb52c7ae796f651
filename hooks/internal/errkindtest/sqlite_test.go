package errkindtest_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glebarez/sqlite" // the gorm dialector; it registers the "sqlite" database/sql driver
	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/glue"
)

// noWait makes a locked database fail at once with SQLITE_BUSY instead of retrying.
const noWait = "?_pragma=busy_timeout(0)"

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+noWait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func sqliteExec(t *testing.T, ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string) {
	t.Helper()
	if _, err := db.ExecContext(ctx, query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// holdWriteLock takes the database's write lock on a connection of its own until the test ends.
func holdWriteLock(t *testing.T, path string) {
	t.Helper()
	conn, err := openDB(t, path).Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sqliteExec(t, t.Context(), conn, "BEGIN IMMEDIATE")
	t.Cleanup(func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
	})
}

// SQLite errors produced for real with the project's driver.
func TestSQLiteErrors(t *testing.T) {
	const secret = "row-secret-8812"
	ctx := t.Context()
	tests := []struct {
		name    string
		provoke func(t *testing.T, path string) error
		want    classified
	}{
		{
			name: "busy: another connection holds the write lock",
			provoke: func(t *testing.T, path string) error {
				sqliteExec(t, ctx, openDB(t, path), "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
				holdWriteLock(t, path)
				_, err := openDB(t, path).ExecContext(ctx, "INSERT INTO t (v) VALUES ('"+secret+"')")
				return err
			},
			want: classified{"busy", "SQLite code 5 (*sqlite.Error)"},
		},
		{
			name: "busy: adk-go's database session service, over gorm",
			provoke: func(t *testing.T, path string) error {
				svc, err := database.NewSessionService(&sqlite.Dialector{Conn: openDB(t, path)}, &gorm.Config{Logger: gormlogger.Default.LogMode(gormlogger.Silent)})
				if err != nil {
					t.Fatal(err)
				}
				if err := database.AutoMigrate(svc); err != nil {
					t.Fatal(err)
				}
				holdWriteLock(t, path)
				_, err = svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: secret})
				return err
			},
			want: classified{"busy", "SQLite code 5 (*sqlite.Error)"},
		},
		{
			name: "locked: a table in use by the same connection",
			provoke: func(t *testing.T, path string) error {
				conn, err := openDB(t, path).Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				sqliteExec(t, ctx, conn, "CREATE TABLE t (v TEXT)")
				sqliteExec(t, ctx, conn, "INSERT INTO t VALUES ('a'), ('b')")
				rows, err := conn.QueryContext(ctx, "SELECT v FROM t")
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				rows.Next() // the statement stays active on the table
				_, err = conn.ExecContext(ctx, "DROP TABLE t")
				return err
			},
			want: classified{"busy", "SQLite code 6 (*sqlite.Error)"},
		},
		{
			// The driver's message quotes the CHECK expression, literal included.
			name: "constraint: the message quotes nothing",
			provoke: func(t *testing.T, path string) error {
				db := openDB(t, path)
				sqliteExec(t, ctx, db, "CREATE TABLE t (v TEXT CHECK (v <> '"+secret+"'))")
				_, err := db.ExecContext(ctx, "INSERT INTO t VALUES ('"+secret+"')")
				return err
			},
			want: classified{"storage", "SQLite code 275 (*sqlite.Error)"},
		},
		{
			name: "not a database",
			provoke: func(t *testing.T, path string) error {
				if err := os.WriteFile(path, []byte(strings.Repeat(secret+" is not a database file. ", 64)), 0o600); err != nil {
					t.Fatal(err)
				}
				_, err := openDB(t, path).ExecContext(ctx, "SELECT count(*) FROM sqlite_master")
				return err
			},
			want: classified{"storage", "SQLite code 26 (*sqlite.Error)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.provoke(t, filepath.Join(t.TempDir(), "test.db"))
			if err == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tt.want, of(err)); diff != "" {
				t.Errorf("Of(%v) (-want +got):\n%s", err, diff)
			}
		})
	}
}

// adk-go's database service refuses an append through a session read before the session's last
// update: a conflict.
func TestStaleSessionIsConflict(t *testing.T) {
	ctx := t.Context()
	db := openDB(t, filepath.Join(t.TempDir(), "s.db"))
	svc, err := database.NewSessionService(&sqlite.Dialector{Conn: db}, &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := database.AutoMigrate(svc); err != nil {
		t.Fatal(err)
	}
	key := &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}
	if _, err := svc.Create(ctx, &session.CreateRequest{AppName: key.AppName, UserID: key.UserID, SessionID: key.SessionID}); err != nil {
		t.Fatal(err)
	}
	var handles []session.Session
	for range 2 {
		resp, err := svc.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, resp.Session)
	}
	if err := svc.AppendEvent(ctx, handles[0], session.NewEventWithContext(ctx, "inv-1")); err != nil {
		t.Fatal(err)
	}
	err = svc.AppendEvent(ctx, handles[1], session.NewEventWithContext(ctx, "inv-2"))
	kind, msg := glue.ErrorKind(err)
	if diff := cmp.Diff([]string{string("conflict"), "stale session: the session was written after it was read"}, []string{string(kind), msg}); diff != "" {
		t.Errorf("Of(%v) (-want +got):\n%s", err, diff)
	}
}
