package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine one of them started outlives it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// run opens the -db SQLite file with database.NewSessionService(sqlite.Open(...)) and
		// never closes it (adk-go's service has no Close): each run leaves database/sql's
		// connection opener behind. A leak of the example's code, reported; drop this option once
		// run opens the file with sql.Open and closes it, as the v1 example (example/setup.go) does.
		goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
	)
}
