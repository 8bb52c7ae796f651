package sessiondb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"gorm.io/gorm"

	"github.com/adkctx/adkctx/glue"
)

// IndexName is the name of the index CreateIndex creates.
const IndexName = "adkctx_events_session_time"

// eventsTable is adk-go's events table (session/database, storageEvent.TableName).
const eventsTable = "events"

// indexColumns are the columns of the index: the session's key, then the time adk-go's query
// orders and bounds by.
var indexColumns = []string{"app_name", "user_id", "session_id", "timestamp"}

// Defaults of Config.
const (
	defaultPollInterval = 200 * time.Millisecond
	// maxAttempts bounds how often CreateIndex reads the index's state and acts on it (an
	// invalid index takes two: look again and drop, then build) before it gives up on an index
	// another process keeps dropping.
	maxAttempts = 8
)

// Config configures CreateIndex. The zero value is ready to use.
type Config struct {
	// Logger receives an Info entry when CreateIndex builds the index, waits for another
	// process's build or looks again at an invalid index, and a Warn entry when it rebuilds an
	// invalid one. Default: no logs.
	Logger *zap.Logger
	// PollInterval is how often CreateIndex checks an index another process is building
	// (PostgreSQL), how long it waits before it looks again at an invalid index no build is
	// working on, and how often it tries again while another connection holds SQLite's write
	// lock past the connection's busy timeout. Default 200 ms.
	PollInterval time.Duration
}

// ErrNoTable is returned when the database holds no events table: database.AutoMigrate must run
// first.
var ErrNoTable = errors.New("sessiondb: adk-go's events table does not exist: run database.AutoMigrate on the session service first")

// ErrNoIndex is CheckIndex's error when the session index is not in place: create it with
// CreateIndex.
var ErrNoIndex = errors.New("sessiondb: the session index " + IndexName + " does not exist: every read of a session scans " +
	"the whole events table; create it with sessiondb.CreateIndex")

// ErrInTransaction is returned for a PostgreSQL handle inside a transaction: the index is built
// CONCURRENTLY, which PostgreSQL runs only outside one.
var ErrInTransaction = errors.New("sessiondb: CREATE INDEX CONCURRENTLY cannot run inside a transaction: pass a *gorm.DB that is not in one")

// DialectError is returned for a database other than SQLite and PostgreSQL.
type DialectError struct {
	Dialect string // gorm's name of the database's dialect
}

func (e *DialectError) Error() string {
	return fmt.Sprintf("sessiondb: the %q dialect is not supported (only sqlite and postgres)", e.Dialect)
}

// ConflictError is returned when an index named IndexName exists but is not the session index:
// on another table or on other columns. CreateIndex leaves it alone.
type ConflictError struct {
	Table   string   // the table it indexes
	Columns []string // its columns, in order
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("sessiondb: an index %s already exists on %s (%s), not on %s (%s): drop or rename it",
		IndexName, e.Table, strings.Join(e.Columns, ", "), eventsTable, strings.Join(indexColumns, ", "))
}

// CreateIndex creates the session index of adk-go's database session service, IndexName on
// events (app_name, user_id, session_id, timestamp), in the database db is a handle on, unless it
// exists already. On PostgreSQL it is built CONCURRENTLY (db must not be inside a transaction),
// waiting for another process's build of it, rebuilding an invalid one an interrupted build left.
// Canceling ctx stops a build; on PostgreSQL the next call cleans up and builds again.
func CreateIndex(ctx context.Context, db *gorm.DB, cfg Config) error {
	if db == nil {
		return errors.New("sessiondb: CreateIndex needs a *gorm.DB")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = defaultPollInterval
	}
	switch dialect := db.Dialector.Name(); dialect {
	case "sqlite":
		return createSQLiteWhenFree(ctx, db.WithContext(ctx), cfg)
	case "postgres":
		if _, inTx := db.Statement.ConnPool.(gorm.TxCommitter); inTx {
			return ErrInTransaction
		}
		return createPostgres(ctx, db.WithContext(ctx), cfg)
	default:
		return &DialectError{Dialect: dialect}
	}
}

// CheckIndex reports whether the session index is in place in the database db is a handle on,
// reading only the catalog (two or three small queries): nil when it is (on PostgreSQL, also
// while another process builds it); ErrNoIndex, wrapped, when it is not (on PostgreSQL, also when
// an interrupted build left it invalid); a *ConflictError when an index of that name indexes
// something else; ErrNoTable, a *DialectError, or the error of asking the database otherwise.
// adkctx's hooks call it when they are wired over adk-go's database session service, and warn
// when the index is missing.
func CheckIndex(ctx context.Context, db *gorm.DB) error {
	if db == nil {
		return errors.New("sessiondb: CheckIndex needs a *gorm.DB")
	}
	switch dialect := db.Dialector.Name(); dialect {
	case "sqlite":
		db = db.WithContext(ctx)
		if err := sqliteHasEvents(db); err != nil {
			return err
		}
		table, columns, err := sqliteIndex(db)
		switch {
		case err != nil:
			return err
		case table == "":
			return ErrNoIndex
		}
		return check(table, columns)
	case "postgres":
		st, err := readPGIndex(db.WithContext(ctx))
		switch {
		case err != nil:
			return err
		case !st.exists:
			return ErrNoIndex
		case !st.index:
			return fmt.Errorf("%w (%s exists and is not an index: rename it)", ErrNoIndex, st.name)
		}
		if err := check(st.table, st.columns); err != nil {
			return err
		}
		if !st.valid && !st.building {
			return fmt.Errorf("%w (an interrupted build left it invalid: CreateIndex builds it again)", ErrNoIndex)
		}
		return nil
	default:
		return &DialectError{Dialect: dialect}
	}
}

// createStatement is the statement that creates the index; concurrently for PostgreSQL.
func createStatement(concurrently bool) string {
	quoted := make([]string, len(indexColumns))
	for i, c := range indexColumns {
		quoted[i] = `"` + c + `"`
	}
	how := ""
	if concurrently {
		how = "CONCURRENTLY "
	}
	return fmt.Sprintf(`CREATE INDEX %sIF NOT EXISTS "%s" ON "%s" (%s)`, how, IndexName, eventsTable, strings.Join(quoted, ", "))
}

// check returns a ConflictError unless an index on table with columns is the session index.
func check(table string, columns []string) error {
	if table != eventsTable || !slices.Equal(columns, indexColumns) {
		return &ConflictError{Table: table, Columns: columns}
	}
	return nil
}

// createSQLiteWhenFree creates the index on SQLite, trying again every cfg.PollInterval while the
// database answers that it is locked (processes starting together each create the index; one
// holds the write lock meanwhile), until ctx is done.
func createSQLiteWhenFree(ctx context.Context, db *gorm.DB, cfg Config) error {
	for {
		err := createSQLite(db, cfg.Logger)
		if kind, _ := glue.ErrorKind(err); err == nil || kind != "busy" {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up: %w)", err, context.Cause(ctx))
		case <-time.After(cfg.PollInterval):
		}
	}
}

func createSQLite(db *gorm.DB, log *zap.Logger) error {
	if err := sqliteHasEvents(db); err != nil {
		return err
	}
	table, columns, err := sqliteIndex(db)
	if err != nil {
		return err
	}
	if table != "" {
		return check(table, columns)
	}
	start := time.Now()
	if err := db.Exec(createStatement(false)).Error; err != nil {
		return fmt.Errorf("sessiondb: creating %s: %w", IndexName, err)
	}
	log.Info("session index created", zap.String("index", IndexName), zap.String("dialect", "sqlite"),
		zap.Int64("duration_ms", time.Since(start).Milliseconds()))
	// Another process may have created an index of that name in between.
	if table, columns, err = sqliteIndex(db); err != nil {
		return err
	}
	return check(table, columns)
}

// sqliteHasEvents returns ErrNoTable when the database holds no events table.
func sqliteHasEvents(db *gorm.DB) error {
	var tables int64
	if err := db.Raw("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", eventsTable).Scan(&tables).Error; err != nil {
		return fmt.Errorf("sessiondb: looking for the events table: %w", err)
	}
	if tables == 0 {
		return ErrNoTable
	}
	return nil
}

// sqliteIndex returns the table and columns of the index named IndexName ("" when none).
func sqliteIndex(db *gorm.DB) (table string, columns []string, err error) {
	var tables []string
	if err := db.Raw("SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = ?", IndexName).Scan(&tables).Error; err != nil {
		return "", nil, fmt.Errorf("sessiondb: looking for %s: %w", IndexName, err)
	}
	if len(tables) == 0 {
		return "", nil, nil
	}
	if err := db.Raw("SELECT name FROM pragma_index_info(?) ORDER BY seqno", IndexName).Scan(&columns).Error; err != nil {
		return "", nil, fmt.Errorf("sessiondb: reading the columns of %s: %w", IndexName, err)
	}
	return tables[0], columns, nil
}
