package hooks_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/sessiontestsuite"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
)

// The wrapper is a conforming adk-go v2 session.Service: adk-go's own suite passes over it, on
// the in-memory and the database (SQLite) services.
func TestSessionServiceConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		base func(t *testing.T) session.Service
	}{
		{"inmemory", func(*testing.T) session.Service { return session.InMemoryService() }},
		{"sqlite", func(t *testing.T) session.Service { return sqliteService(t, filepath.Join(t.TempDir(), "sessions.db")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true}, func(t *testing.T) session.Service {
				h, _ := newHooks(t, adkctx.Config{Compaction: &compaction.Config{}})
				svc := h.SessionService(tc.base(t))
				if got := fmt.Sprintf("%T", svc); got == fmt.Sprintf("%T", tc.base(t)) {
					t.Fatalf("SessionService returned the base service %s, not the wrapper", got)
				}
				return svc
			})
		})
	}
}
