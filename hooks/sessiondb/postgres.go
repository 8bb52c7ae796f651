package sessiondb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
	"gorm.io/gorm"
)

// pgIndex is what PostgreSQL's catalog says of the relation named IndexName in the events
// table's schema.
type pgIndex struct {
	exists   bool   // a relation of that name exists
	index    bool   // it is an index
	name     string // schema-qualified, quoted
	table    string
	columns  []string
	valid    bool // usable by queries (an interrupted concurrent build leaves it invalid)
	building bool // a CREATE INDEX of it is running
}

// pgIndexQuery reads pgIndex; $1 is IndexName, $2 the events table.
const pgIndexQuery = `
SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname),
       i.indexrelid IS NOT NULL,
       coalesce(t.relname::text, ''),
       coalesce((SELECT string_agg(a.attname::text, ',' ORDER BY k.n)
                   FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
                   JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum), ''),
       coalesce(i.indisvalid, false),
       EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = c.oid)
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_index i ON i.indexrelid = c.oid
  LEFT JOIN pg_class t ON t.oid = i.indrelid
 WHERE c.relname = $1
   AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass($2))`

func readPGIndex(db *gorm.DB) (pgIndex, error) {
	var tables int64
	if err := db.Raw("SELECT count(*) FROM pg_class WHERE oid = to_regclass(?)", eventsTable).Scan(&tables).Error; err != nil {
		return pgIndex{}, fmt.Errorf("sessiondb: looking for the events table: %w", err)
	}
	if tables == 0 {
		return pgIndex{}, ErrNoTable
	}
	var st pgIndex
	var columns string
	err := db.Raw(pgIndexQuery, IndexName, eventsTable).Row().Scan(&st.name, &st.index, &st.table, &columns, &st.valid, &st.building)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return pgIndex{}, nil
	case err != nil:
		return pgIndex{}, fmt.Errorf("sessiondb: looking for %s: %w", IndexName, err)
	}
	st.exists = true
	if columns != "" {
		st.columns = strings.Split(columns, ",")
	}
	return st, nil
}

// createPostgres builds the index concurrently until the catalog shows it valid: it waits for
// another process's build and rebuilds an invalid index no build is working on.
func createPostgres(ctx context.Context, db *gorm.DB, cfg Config) error {
	log := cfg.Logger.With(zap.String("index", IndexName), zap.String("dialect", "postgres"))
	var lastErr error // the last build of this process that failed
	for range maxAttempts {
		st, err := readPGIndex(db)
		switch {
		case err != nil:
			return err
		case st.exists && !st.index:
			return fmt.Errorf("sessiondb: %s exists and is not an index: rename it", st.name)
		case st.exists:
			if err := check(st.table, st.columns); err != nil {
				return err
			}
		}
		switch {
		case st.valid:
			return nil
		case st.building:
			log.Info("session index being built by another process: waiting for it")
			if err := waitForBuild(ctx, db, cfg.PollInterval, log); err != nil {
				return err
			}
		case st.exists:
			if err := dropAbandoned(ctx, db, st, cfg.PollInterval, log); err != nil {
				return err
			}
		default:
			start := time.Now()
			if err := db.Exec(createStatement(true)).Error; err != nil {
				// Another process may have started the same build first: the next round sees it.
				if again, rerr := readPGIndex(db); rerr != nil || !again.exists {
					return fmt.Errorf("sessiondb: creating %s: %w", IndexName, err)
				}
				lastErr = err
				continue
			}
			log.Info("session index created", zap.Bool("concurrently", true), zap.Int64("duration_ms", time.Since(start).Milliseconds()))
		}
	}
	if lastErr != nil {
		return fmt.Errorf("sessiondb: %s is still not valid after %d attempts; the last build failed: %w", IndexName, maxAttempts, lastErr)
	}
	return fmt.Errorf("sessiondb: %s is still not valid after %d attempts (is another process dropping it?)", IndexName, maxAttempts)
}

// abandoned reports an index no build is working on and queries cannot use.
func (st pgIndex) abandoned() bool { return st.exists && !st.valid && !st.building }

// dropAbandoned drops st, an abandoned index: left by an interrupted CREATE INDEX CONCURRENTLY,
// or so it seems for a moment after a build ends, since PostgreSQL ends a build's progress row
// before the commit that marks the index valid. It looks again a poll interval later and drops
// the index only if it is still abandoned; a drop that meets that commit anyway fails ("tuple
// concurrently updated"), and the index read again then decides. Nil: the caller reads the
// catalog again.
func dropAbandoned(ctx context.Context, db *gorm.DB, st pgIndex, every time.Duration, log *zap.Logger) error {
	log.Info("session index invalid with no build: looking again", zap.Int64("poll_ms", every.Milliseconds()))
	select {
	case <-ctx.Done():
		return fmt.Errorf("sessiondb: waiting to look at the invalid %s again: %w", IndexName, ctx.Err())
	case <-time.After(every):
	}
	if again, err := readPGIndex(db); err != nil || !again.abandoned() {
		return err
	}
	log.Warn("session index invalid: rebuilding it")
	if err := db.Exec("DROP INDEX CONCURRENTLY IF EXISTS " + st.name).Error; err != nil {
		if again, rerr := readPGIndex(db); rerr != nil || again.abandoned() {
			return fmt.Errorf("sessiondb: dropping the invalid %s: %w", IndexName, err)
		}
		log.Info("session index changed while it was dropped: reading it again")
	}
	return nil
}

// waitForBuild polls until no build of the index is running.
func waitForBuild(ctx context.Context, db *gorm.DB, every time.Duration, log *zap.Logger) error {
	start := time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("sessiondb: waiting for another process's build of %s: %w", IndexName, ctx.Err())
		case <-tick.C:
		}
		st, err := readPGIndex(db)
		if err != nil {
			return err
		}
		if !st.building {
			log.Info("session index built by another process", zap.Int64("waited_ms", time.Since(start).Milliseconds()),
				zap.Bool("valid", st.valid))
			return nil
		}
	}
}
