package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/sessiontestsuite"

	"github.com/adkctx/adkctx/hooks/internal/pgtest"
)

// adk-go's own conformance suite passes on its database service over PostgreSQL.
func TestDatabaseServiceConformance(t *testing.T) {
	pgtest.ServerDSN(t)
	sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true},
		func(t *testing.T) session.Service { return pgtest.SessionService(t, pgtest.SQL(t)) })
}

// Each helper call gets a database of its own, gone once its test ends.
func TestDSNIsolatedAndDropped(t *testing.T) {
	server := pgtest.ServerDSN(t)
	var names []string
	t.Run("two", func(t *testing.T) {
		a := pgtest.SQL(t)
		g := pgtest.Open(t)
		b, err := g.DB()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.ExecContext(t.Context(), "CREATE TABLE only_in_a (x int)"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := b.QueryRowContext(t.Context(), "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("a table created in one test database is visible in another")
		}
		var na, nb string
		if err := a.QueryRowContext(t.Context(), "SELECT current_database()").Scan(&na); err != nil {
			t.Fatal(err)
		}
		if err := b.QueryRowContext(t.Context(), "SELECT current_database()").Scan(&nb); err != nil {
			t.Fatal(err)
		}
		if na == nb {
			t.Fatalf("both handles are on %s", na)
		}
		names = append(names, na, nb)
	})
	if len(names) != 2 {
		t.Fatalf("got %d database names, want 2", len(names))
	}
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, name := range names {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if exists {
			t.Errorf("database %s still exists after its test ended", name)
		}
	}
}

// Without the variable the helpers skip, naming the variable and the script.
func TestSkipsWithoutDSN(t *testing.T) {
	t.Setenv(pgtest.EnvDSN, "")
	os.Unsetenv(pgtest.EnvDSN)
	var skipped, reached bool
	t.Run("inner", func(t *testing.T) {
		t.Cleanup(func() { skipped = t.Skipped() })
		pgtest.DSN(t)
		reached = true
	})
	if !skipped || reached {
		t.Errorf("DSN without $%s: skipped %v, returned %v; want a skip", pgtest.EnvDSN, skipped, reached)
	}
}
