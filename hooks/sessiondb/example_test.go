package sessiondb_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/session/database"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/hooks/sessiondb"
)

// The session index is created once when the application starts: after adk-go's migration,
// before the service serves, through a gorm handle on the service's connections (adk-go's
// service cannot close its own: given the application's, they close with the application).
func ExampleCreateIndex() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	quiet := &gorm.Config{Logger: gormlogger.Discard}
	db, err := gorm.Open(sqlite.Open(filepath.Join(dir, "sessions.db")), quiet)
	if err != nil {
		log.Fatal(err)
	}
	conns, err := db.DB()
	if err != nil {
		log.Fatal(err)
	}
	defer conns.Close()

	sessions, err := database.NewSessionService(sqlite.Dialector{Conn: conns}, quiet)
	if err != nil {
		log.Fatal(err)
	}
	if err := database.AutoMigrate(sessions); err != nil {
		log.Fatal(err)
	}
	if err := sessiondb.CreateIndex(context.Background(), db, sessiondb.Config{}); err != nil {
		log.Fatal(err)
	}
	// ... runner.Config{SessionService: sessions, ...}
	fmt.Println("index", sessiondb.IndexName, "ready")
	// Output: index adkctx_events_session_time ready
}

// A deployment check, before serving: CheckIndex says whether the index is in place (it creates
// nothing), and each error says what to do.
func ExampleCheckIndex() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	quiet := &gorm.Config{Logger: gormlogger.Discard}
	db, err := gorm.Open(sqlite.Open(filepath.Join(dir, "sessions.db")), quiet)
	if err != nil {
		log.Fatal(err)
	}
	conns, err := db.DB()
	if err != nil {
		log.Fatal(err)
	}
	defer conns.Close()
	explain := func(err error) string {
		var conflict *sessiondb.ConflictError
		var dialect *sessiondb.DialectError
		switch {
		case err == nil:
			return "ready"
		case errors.Is(err, sessiondb.ErrNoTable):
			return "run database.AutoMigrate first"
		case errors.Is(err, sessiondb.ErrNoIndex):
			return "run sessiondb.CreateIndex"
		case errors.Is(err, sessiondb.ErrInTransaction):
			return "pass a handle outside a transaction"
		case errors.As(err, &conflict):
			return "another index is named " + sessiondb.IndexName + " on " + conflict.Table
		case errors.As(err, &dialect):
			return dialect.Dialect + " is not supported"
		}
		return err.Error()
	}
	ctx := context.Background()
	fmt.Println("empty database:", explain(sessiondb.CheckIndex(ctx, db)))

	sessions, err := database.NewSessionService(sqlite.Dialector{Conn: conns}, quiet)
	if err != nil {
		log.Fatal(err)
	}
	if err := database.AutoMigrate(sessions); err != nil {
		log.Fatal(err)
	}
	fmt.Println("migrated:", explain(sessiondb.CheckIndex(ctx, db)))
	if err := sessiondb.CreateIndex(ctx, db, sessiondb.Config{}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("indexed:", explain(sessiondb.CheckIndex(ctx, db)))
	// Output:
	// empty database: run database.AutoMigrate first
	// migrated: run sessiondb.CreateIndex
	// indexed: ready
}
