package dbartifact_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/hooks/dbartifact"
)

// The artifact service lives in the sessions' database: its tables are created once when the
// application starts (Migrate); before that, every call says so by type, and so do hooks' Wire
// and Check. Pass it to hooks' Wire as runner.Config.ArtifactService: the tool outputs adkctx
// truncates are saved whole in it, in chunks the recall tools read a page at a time.
func ExampleNewService() {
	dir, err := os.MkdirTemp("", "artifacts")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := gorm.Open(sqlite.Open(filepath.Join(dir, "sessions.db")), &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		log.Fatal(err)
	}
	if conns, err := db.DB(); err == nil {
		defer conns.Close()
	}
	ctx := context.Background()
	artifacts := dbartifact.NewService(db, dbartifact.Config{})

	var notMigrated *dbartifact.NotMigratedError
	_, err = artifacts.List(ctx, &artifact.ListRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if errors.As(err, &notMigrated) {
		fmt.Println("missing:", notMigrated.Tables)
	}
	if err := dbartifact.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}

	// ... runner.Config{ArtifactService: artifacts, ...}; what adkctx saves, and any artifact:
	saved, err := artifacts.Save(ctx, &artifact.SaveRequest{AppName: "app", UserID: "u", SessionID: "s1",
		FileName: "report.txt", Part: genai.NewPartFromText("all 412 tests pass\n")})
	if err != nil {
		log.Fatal(err)
	}
	loaded, err := artifacts.Load(ctx, &artifact.LoadRequest{AppName: "app", UserID: "u", SessionID: "s1", FileName: "report.txt"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("version %d: %q\n", saved.Version, loaded.Part.Text)
	// Output:
	// missing: [adkctx_artifact_versions adkctx_artifact_chunks]
	// version 1: "all 412 tests pass\n"
}
