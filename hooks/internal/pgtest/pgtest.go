package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, as gorm's postgres driver uses
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/hooks/sessiondb"
)

// EnvDSN names the environment variable holding the DSN of the test server; its role must be
// allowed to create databases.
const EnvDSN = "ADKCTX_POSTGRES_DSN"

// ServerDSN returns the DSN in $ADKCTX_POSTGRES_DSN, or skips t when it is unset.
func ServerDSN(t testing.TB) string {
	t.Helper()
	dsn := strings.TrimSpace(os.Getenv(EnvDSN))
	if dsn == "" {
		t.Skipf("PostgreSQL test skipped: $%s is not set; to run it: export %s=\"$(scripts/postgres.sh start)\" (scripts/postgres.sh stop removes the server)", EnvDSN, EnvDSN)
	}
	return dsn
}

// DSN creates an empty database for t alone and returns its DSN; the database is dropped when t
// ends. It skips t when $ADKCTX_POSTGRES_DSN is unset.
func DSN(t testing.TB) string {
	t.Helper()
	server := ServerDSN(t)
	name := databaseName(t.Name())
	dsn, err := withDatabase(server, name)
	if err != nil {
		t.Fatalf("pgtest: $%s: %v", EnvDSN, err)
	}
	// t.Context is canceled before cleanups run; the drop needs a live context.
	ctx := context.WithoutCancel(t.Context())
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("pgtest: connecting to $%s: %v", EnvDSN, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: CREATE DATABASE %s: %v", name, err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("pgtest: dropping %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		// FORCE ends any connection the test left open. A backend the server starts on its own
		// (autovacuum) can still be entering the database: try again briefly before failing.
		drop := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"
		for attempt := 1; ; attempt++ {
			_, err := conn.Exec(ctx, drop)
			if err == nil {
				return
			}
			if attempt == 10 {
				t.Errorf("pgtest: DROP DATABASE %s: %v", name, err)
				return
			}
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
		}
	})
	return dsn
}

// SQL opens a database/sql handle on a fresh database (see [DSN] and [OpenSQL]).
func SQL(t testing.TB) *sql.DB {
	t.Helper()
	return OpenSQL(t, DSN(t))
}

// OpenSQL opens a database/sql handle on dsn with the pgx driver, the one gorm's PostgreSQL
// dialector uses; it is closed when t ends.
func OpenSQL(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("pgtest: sql.Open: %v", err)
	}
	// Bounded, so parallel tests stay well under the server's max_connections.
	db.SetMaxOpenConns(4)
	t.Cleanup(func() { db.Close() })
	if err := db.PingContext(t.Context()); err != nil {
		t.Fatalf("pgtest: ping: %v", err)
	}
	return db
}

// Open returns a gorm handle on a fresh database.
func Open(t testing.TB) *gorm.DB {
	t.Helper()
	db, err := gorm.Open(postgres.New(postgres.Config{Conn: SQL(t)}), GormConfig())
	if err != nil {
		t.Fatalf("pgtest: gorm.Open: %v", err)
	}
	return db
}

// SessionService returns adk-go's database session service (session/database, through gorm's
// PostgreSQL dialector) on db, migrated, with adkctx's session index (sessiondb.CreateIndex). Pass [SQL](t) for a fresh database; pass the same db to
// read what the service stored.
func SessionService(t testing.TB, db *sql.DB) session.Service {
	t.Helper()
	svc, err := database.NewSessionService(postgres.New(postgres.Config{Conn: db}), GormConfig())
	if err != nil {
		t.Fatalf("pgtest: NewSessionService: %v", err)
	}
	if err := database.AutoMigrate(svc); err != nil {
		t.Fatalf("pgtest: AutoMigrate: %v", err)
	}
	gdb, err := gorm.Open(postgres.New(postgres.Config{Conn: db}), GormConfig())
	if err != nil {
		t.Fatalf("pgtest: gorm.Open: %v", err)
	}
	// As the README asks of every application.
	if err := sessiondb.CreateIndex(t.Context(), gdb, sessiondb.Config{}); err != nil {
		t.Fatalf("pgtest: CreateIndex: %v", err)
	}
	return svc
}

// GormConfig is the gorm configuration the helpers use: gorm's own logger silenced (tests
// assert on errors, not on gorm's log lines).
func GormConfig() *gorm.Config {
	return &gorm.Config{Logger: gormlogger.Default.LogMode(gormlogger.Silent)}
}

// databaseName is unique per call and readable in pg_stat_activity: a prefix of the test name
// and random hex, within PostgreSQL's 63-byte identifier limit.
func databaseName(testName string) string {
	var b strings.Builder
	b.WriteString("adkctx_")
	for _, r := range strings.ToLower(testName) {
		if b.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:]) // crypto/rand.Read never fails
	b.WriteByte('_')
	b.WriteString(hex.EncodeToString(rnd[:]))
	return b.String()
}

// withDatabase returns dsn with its database replaced by name; dsn is a URL
// (postgres://…) or libpq's keyword=value form.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			// Not err itself: it quotes the URL, password included.
			return "", errors.New("the DSN is not a valid URL")
		}
		u.Path = "/" + name
		u.RawPath = ""
		return u.String(), nil
	}
	// In the keyword form a later keyword wins.
	return dsn + " dbname=" + name, nil
}
