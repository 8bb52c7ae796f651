// Package sqlitetest opens SQLite files for tests the way an application opens them for adk-go:
// adk-go's database session service (session/database) and a gorm handle sharing one connection
// pool, which the test closes (adk-go's service and gorm's DB have no Close of their own, and a
// pool left open is a goroutine goleak reports).
package sqlitetest

import (
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/hooks/sessiondb"
)

// Store is an SQLite file opened for a test.
type Store struct {
	Pool     *sql.DB         // the one connection pool
	Sessions session.Service // adk-go's database service on Pool, its tables migrated
	DB       *gorm.DB        // a gorm handle on Pool: artifacts, the session index, direct reads

	closeOnce sync.Once
}

// DSN is the data source name the README and the quickstart give applications for the SQLite
// file at path: writers wait for each other (busy_timeout), readers do not wait for writers
// (WAL), and every transaction takes the write lock when it begins (_txlock=immediate), so a
// transaction that reads and then writes waits for another writer instead of failing at once
// with SQLITE_BUSY (the busy timeout cannot help a read lock that must become a write lock).
func DSN(path string) string {
	return path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"
}

// TempDSN names a fresh file in tb's temporary directory, with a busy timeout so that writers
// sharing it wait for each other instead of failing.
func TempDSN(tb testing.TB) string {
	return filepath.Join(tb.TempDir(), "sessions.db") + "?_pragma=busy_timeout(10000)"
}

// Open opens the SQLite file dsn names (a path, optionally with "?_pragma=…" parameters),
// migrates adk-go's session tables, creates adkctx's session index (sessiondb.CreateIndex) and
// closes the pool when tb ends (or at [Store.Close]).
func Open(tb testing.TB, dsn string) *Store {
	tb.Helper()
	pool, err := sql.Open(sqlite.DriverName, dsn)
	if err != nil {
		tb.Fatalf("sqlitetest: %v", err)
	}
	s := &Store{Pool: pool}
	tb.Cleanup(s.Close)
	quiet := &gorm.Config{Logger: gormlogger.Discard}
	if s.Sessions, err = database.NewSessionService(&sqlite.Dialector{Conn: pool}, quiet); err != nil {
		tb.Fatalf("sqlitetest: NewSessionService: %v", err)
	}
	if err := database.AutoMigrate(s.Sessions); err != nil {
		tb.Fatalf("sqlitetest: AutoMigrate: %v", err)
	}
	if s.DB, err = gorm.Open(&sqlite.Dialector{Conn: pool}, quiet); err != nil {
		tb.Fatalf("sqlitetest: gorm.Open: %v", err)
	}
	// As the README asks of every application; a test of the index's absence drops it.
	if err := sessiondb.CreateIndex(tb.Context(), s.DB, sessiondb.Config{}); err != nil {
		tb.Fatalf("sqlitetest: CreateIndex: %v", err)
	}
	return s
}

// Close closes the pool now, for a process that ends before its test does; later calls do
// nothing.
func (s *Store) Close() {
	s.closeOnce.Do(func() { s.Pool.Close() })
}
