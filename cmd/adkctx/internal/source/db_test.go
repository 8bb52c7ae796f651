package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glebarez/sqlite"
	"go.uber.org/goleak"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSQLiteIsOpenedReadOnly: a write through the replay's handle is refused by SQLite, with
// and without a write-ahead log beside the file.
func TestSQLiteIsOpenedReadOnly(t *testing.T) {
	for _, wal := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "s.db")
		w, err := gorm.Open(sqlite.Open(path), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if wal {
			w.Exec("PRAGMA journal_mode=WAL")
			w.Exec("PRAGMA wal_autocheckpoint=0")
		}
		if err := w.Exec("CREATE TABLE sessions (app_name TEXT, user_id TEXT, id TEXT)").Error; err != nil {
			t.Fatal(err)
		}
		w.Exec("INSERT INTO sessions VALUES ('a', 'u', 's1')")
		d, err := OpenSQLite(path)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := d.Keys(t.Context(), Filter{})
		if err != nil || len(keys) != 1 || keys[0].ID != "s1" {
			t.Errorf("wal %v: keys %v, %v (a row still in the log must be read)", wal, keys, err)
		}
		err = d.db.Exec("INSERT INTO sessions VALUES ('a', 'u', 's2')").Error
		if err == nil || !strings.Contains(err.Error(), "readonly") {
			t.Errorf("wal %v: a write through the replay's handle: %v, want a read-only refusal", wal, err)
		}
		d.Close()
		sqlDB, _ := w.DB()
		sqlDB.Close()
	}
}

func TestPostgresIsOpenedReadOnly(t *testing.T) {
	dsn := strings.TrimSpace(os.Getenv("ADKCTX_POSTGRES_DSN"))
	if dsn == "" {
		t.Skip(`PostgreSQL test skipped: $ADKCTX_POSTGRES_DSN is not set (export ADKCTX_POSTGRES_DSN="$(scripts/postgres.sh start)")`)
	}
	d, err := OpenPostgres(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	err = d.db.Exec("CREATE TABLE adkctx_replay_write_probe (x int)").Error
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a write through the replay's handle: %v, want a read-only refusal", err)
	}
}
