package compaction

import (
	"testing"

	"google.golang.org/adk/session"
	"google.golang.org/adk/session/sessiontestsuite"

	"github.com/adkctx/adkctx/internal/pgtest"
)

// The wrapper over adk-go's database service on PostgreSQL, where production sessions live,
// passes adk-go's conformance suite (the bare service's run is in internal/pgtest).
func TestServiceConformancePostgres(t *testing.T) {
	pgtest.ServerDSN(t)
	sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true},
		func(t *testing.T) session.Service { return NewService(pgtest.SessionService(t, pgtest.SQL(t)), nil) })
}
