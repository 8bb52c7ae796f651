package dbartifact_test

// The databases the tests run on, per adk-go version (adk2's copy has no PostgreSQL driver).

import (
	"testing"

	"gorm.io/gorm"

	"github.com/adkctx/adkctx/hooks/internal/pgtest"
)

// databases opens a fresh database per kind: SQLite in a temp file always, PostgreSQL when
// $ADKCTX_POSTGRES_DSN is set.
var databases = []struct {
	name string
	open func(t testing.TB) *gorm.DB
}{
	{"sqlite", openSQLite},
	{"postgres", pgtest.Open},
}
