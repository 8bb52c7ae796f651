package hooks_test

import (
	"path/filepath"
	"testing"

	"google.golang.org/adk/session"
	"google.golang.org/adk/session/sessiontestsuite"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/pgtest"
)

// adkctx's session wrapper passes adk-go's own conformance suite over the in-memory, SQLite and
// PostgreSQL services (the last one when a server is configured: see scripts/postgres.sh).
func TestSessionWrapperConformance(t *testing.T) {
	wrap := func(t *testing.T, base session.Service) session.Service {
		h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{}})
		if err != nil {
			t.Fatal(err)
		}
		return h.SessionService(base)
	}
	opts := sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true}
	t.Run("inmemory", func(t *testing.T) {
		sessiontestsuite.RunServiceTests(t, opts, func(t *testing.T) session.Service { return wrap(t, session.InMemoryService()) })
	})
	t.Run("sqlite", func(t *testing.T) {
		sessiontestsuite.RunServiceTests(t, opts, func(t *testing.T) session.Service {
			return wrap(t, sqliteService(t, filepath.Join(t.TempDir(), "sessions.db")))
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pgtest.ServerDSN(t)
		sessiontestsuite.RunServiceTests(t, opts, func(t *testing.T) session.Service {
			return wrap(t, pgtest.SessionService(t, pgtest.SQL(t)))
		})
	})
}
