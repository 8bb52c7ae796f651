package sessiondb_test

import (
	"context"
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
// before the service serves, through a second gorm handle on the same database.
func ExampleCreateIndex() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sessions.db")
	quiet := &gorm.Config{Logger: gormlogger.Discard}

	sessions, err := database.NewSessionService(sqlite.Open(path), quiet)
	if err != nil {
		log.Fatal(err)
	}
	if err := database.AutoMigrate(sessions); err != nil {
		log.Fatal(err)
	}
	db, err := gorm.Open(sqlite.Open(path), quiet)
	if err != nil {
		log.Fatal(err)
	}
	if err := sessiondb.CreateIndex(context.Background(), db, sessiondb.Config{}); err != nil {
		log.Fatal(err)
	}
	if sqlDB, err := db.DB(); err == nil {
		sqlDB.Close() // the service keeps its own connections
	}
	// ... runner.Config{SessionService: sessions, ...}
	fmt.Println("index", sessiondb.IndexName, "ready")
	// Output: index adkctx_events_session_time ready
}
