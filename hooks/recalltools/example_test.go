package recalltools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/agent/llmagent"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/hooks/dbartifact"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/recalltools"
)

// Saved outputs in the sessions' SQLite database, and the recall tools added to an agent in one
// line. Pass the same artifact service to runner.Config (or to hooks' Wire), so that the outputs
// adkctx truncates are saved where the tools read them.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "recall-example")
	defer os.RemoveAll(dir)
	db, err := gorm.Open(sqlite.Open(filepath.Join(dir, "sessions.db")+"?_pragma=busy_timeout(10000)"),
		&gorm.Config{Logger: gormlogger.Default.LogMode(gormlogger.Silent)})
	if err != nil {
		panic(err)
	}
	if conns, err := db.DB(); err == nil {
		defer conns.Close()
	}
	artifacts := dbartifact.NewService(db, dbartifact.Config{})
	if err := artifacts.Migrate(context.Background()); err != nil {
		panic(err)
	}

	tools, err := recalltools.New(recalltools.Config{Artifacts: artifacts})
	if err != nil {
		panic(err)
	}
	agent, err := llmagent.New(llmagent.Config{
		Name:  "coder",
		Model: &llmtest.Model{}, // your model
		Tools: tools,            // append(yourTools, tools...)
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(agent.Name())
	for _, t := range tools {
		fmt.Println(t.Name())
	}
	// Output:
	// coder
	// read_saved_output
	// search_saved_outputs
	// search_history
	// read_turn
}
