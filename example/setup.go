package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/glebarez/sqlite"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/dbartifact"
	"github.com/adkctx/adkctx/hooks/sessiondb"
)

// usageError is a bad flag or argument: reported in one line, exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// store is adk-go's database session service over one SQLite file, with the connection pool
// the example closes itself: adk-go's service has no Close, and an SQLite file left open keeps
// its data in the -wal file. The saved tool outputs live in the same file (hooks/dbartifact),
// so they survive a restart with the sessions.
type store struct {
	session.Service
	artifacts artifact.Service
	db        *sql.DB
}

// Close closes the database: the last connection checkpoints the write-ahead log into the file
// and removes the -wal file.
func (s *store) Close() error { return s.db.Close() }

// openStore opens (creating if needed) the SQLite session store at path, with adkctx's session
// index (sessiondb): without it, every read of a session scans every stored event.
func openStore(ctx context.Context, path string) (*store, error) {
	lower := strings.ToLower(path)
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		return nil, usagef("-db %s: this example ships only the SQLite driver; build it with gorm's postgres driver "+
			"(gorm.io/driver/postgres: database.NewSessionService(postgres.Open(dsn))), as the README shows", redactDSN(path))
	}
	if strings.Contains(path, "://") {
		return nil, usagef("-db %s: not a file path (only SQLite files are supported here)", redactDSN(path))
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, usagef("-db %s: directory %s does not exist", path, dir)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, usagef("-db %s: not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, usagef("-db %s: cannot open for reading and writing: %v", path, unwrapPathError(err))
	}
	_ = f.Close()
	db, err := sql.Open(sqlite.DriverName, path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		return nil, usagef("-db %s: %v", path, oneLine(err))
	}
	quiet := &gorm.Config{Logger: gormlogger.Discard}
	svc, err := database.NewSessionService(&sqlite.Dialector{Conn: db}, quiet)
	if err == nil {
		err = database.AutoMigrate(svc)
	}
	if err == nil {
		err = createIndex(ctx, db, quiet)
	}
	var artifacts artifact.Service
	if err == nil {
		artifacts, err = openArtifacts(db)
	}
	if err != nil {
		_ = db.Close()
		return nil, usagef("-db %s: not a usable SQLite database: %v", path, oneLine(err))
	}
	return &store{Service: svc, artifacts: artifacts, db: db}, nil
}

// openArtifacts returns the artifact service on the sessions' database: the full tool outputs
// adkctx saves, and what the recall tools read.
func openArtifacts(db *sql.DB) (artifact.Service, error) {
	gdb, err := gorm.Open(&sqlite.Dialector{Conn: db}, &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		return nil, err
	}
	artifacts := dbartifact.NewService(gdb, dbartifact.Config{})
	return artifacts, dbartifact.Migrate(context.Background(), gdb)
}

// createIndex creates the session index through the store's own connections.
func createIndex(ctx context.Context, db *sql.DB, cfg *gorm.Config) error {
	gdb, err := gorm.Open(&sqlite.Dialector{Conn: db}, cfg)
	if err != nil {
		return err
	}
	return sessiondb.CreateIndex(ctx, gdb, sessiondb.Config{})
}

// sqliteFiles are the files SQLite keeps for the database at path.
func sqliteFiles(path string) []string {
	return []string{path, path + "-wal", path + "-shm", path + "-journal"}
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// redactDSN drops the password from a URL-shaped DSN before it is printed.
func redactDSN(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	scheme := strings.Index(dsn, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return dsn
	}
	cred := dsn[scheme+3 : at]
	if i := strings.IndexByte(cred, ':'); i >= 0 {
		return dsn[:scheme+3] + cred[:i] + ":***" + dsn[at:]
	}
	return dsn
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// openLog returns a zap logger writing JSON lines to path (appending), and an idempotent close
// function.
func openLog(path string) (*zap.Logger, func() error, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, usagef("-log %s: %v", path, unwrapPathError(err))
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "ts"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(f), zapcore.DebugLevel))
	var once sync.Once
	var closeErr error
	return logger, func() error {
		once.Do(func() { _ = logger.Sync(); closeErr = f.Close() })
		return closeErr
	}, nil
}

// modelChoice is the model and summarizer the program runs with.
type modelChoice struct {
	llm     model.LLM
	offline bool
	// summarizer is the extractive one offline; with Gemini, an LLMSummarizer on the agent's
	// own model (its prompt cache serves the summaries), with the extractive one as fallback.
	summarizer compaction.Summarizer
	models     []budget.ModelInfo // registry overrides (the offline model's window)
}

// apiKey returns the Gemini API key from the environment, if any.
func apiKey(env func(string) string) string {
	if k := env("GOOGLE_API_KEY"); k != "" {
		return k
	}
	return env("GEMINI_API_KEY")
}

// chooseModel returns adk-go's Gemini model when a key is set (and not forced offline), the
// offline model otherwise. GOOGLE_GEMINI_BASE_URL, which the genai client honours, is read
// through env too, so tests can point the example at a local fake of the Gemini API.
func chooseModel(ctx context.Context, name, key string, forceOffline bool, env func(string) string) (modelChoice, error) {
	if key == "" || forceOffline {
		return offlineChoice(), nil
	}
	if err := checkKnownModel(name); err != nil {
		return modelChoice{}, err
	}
	cfg := &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI}
	cfg.HTTPOptions.BaseURL = env("GOOGLE_GEMINI_BASE_URL")
	llm, err := gemini.NewModel(ctx, name, cfg)
	if err != nil {
		return modelChoice{}, usagef("-model %s: %v", name, oneLine(err))
	}
	return modelChoice{llm: llm, summarizer: &compaction.LLMSummarizer{Model: hooks.SummarizerModel(llm)}}, nil
}

// checkKnownModel fails for a model whose context window adkctx does not know.
func checkKnownModel(name string) error {
	if strings.TrimSpace(name) == "" {
		return usagef("-model is empty")
	}
	if _, known := budget.NewRegistry().Lookup(name); !known {
		return usagef("-model %s: unknown model (adkctx's registry has no context window for it; try gemini-2.5-flash or gemini-2.5-pro)", name)
	}
	return nil
}

func offlineChoice() modelChoice {
	return modelChoice{
		llm:        offlineModel{},
		offline:    true,
		summarizer: &compaction.ExtractiveSummarizer{},
		models:     []budget.ModelInfo{{Name: offlineModelName, ContextWindow: offlineWindow, MaxOutputTokens: offlineMaxOutput}},
	}
}
