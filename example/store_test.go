package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/adkctx/adkctx/hooks/sessiondb"
)

// The example's store reads sessions through adkctx's session index, in a new database file and
// in one opened again.
func TestStoreHasTheSessionIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	for range 2 {
		st, err := openStore(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		var table string
		err = st.db.QueryRow("SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = ?", sessiondb.IndexName).Scan(&table)
		if err != nil || table != "events" {
			t.Errorf("index %s: on %q, %v", sessiondb.IndexName, table, err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
