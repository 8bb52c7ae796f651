package dbartifact_test

// The databases the tests run on, per adk-go version: the v2 module has no PostgreSQL driver
// (the storage code is the v1 glue's, run on PostgreSQL there).

import (
	"testing"

	"gorm.io/gorm"
)

// databases opens a fresh database per kind: SQLite in a temp file.
var databases = []struct {
	name string
	open func(t testing.TB) *gorm.DB
}{
	{"sqlite", openSQLite},
}
