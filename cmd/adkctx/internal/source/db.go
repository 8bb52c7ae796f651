package source

import (
	"context"
	"fmt"
	"iter"
	"net/url"
	"os"
	"strings"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
)

// Filter picks stored sessions; an empty field matches all.
type Filter struct {
	App, User, Session string
}

// DB is adk-go's database session service on a database opened read-only.
type DB struct {
	name string
	db   *gorm.DB
	svc  session.Service
}

// OpenSQLite opens an adk-go SQLite session database read-only: SQLite's mode=ro, and
// immutable=1 (no locks, no journal read) when no write-ahead log is beside the file — with one,
// mode=ro alone, so events still in the log are read too. The file is never written.
func OpenSQLite(path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	q := url.Values{"mode": {"ro"}}
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() == 0 {
		q.Set("immutable", "1")
	}
	q.Add("_pragma", "busy_timeout(10000)")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	return open("sqlite "+path, sqlite.Open(dsn), func(c gorm.ConnPool) gorm.Dialector { return &sqlite.Dialector{DSN: dsn, Conn: c} })
}

// OpenPostgres opens an adk-go PostgreSQL session database with every transaction read-only
// (default_transaction_read_only=on on each connection).
func OpenPostgres(dsn string) (*DB, error) {
	ro := dsn
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, fmt.Errorf("postgres DSN: %w", err)
		}
		q := u.Query()
		q.Set("default_transaction_read_only", "on")
		u.RawQuery = q.Encode()
		ro = u.String()
	} else {
		ro = strings.TrimSpace(dsn) + " default_transaction_read_only=on"
	}
	name := "postgres"
	if u, err := url.Parse(dsn); err == nil && u.Host != "" {
		name = "postgres " + u.Host + u.Path
	}
	return open(name, postgres.Open(ro), func(c gorm.ConnPool) gorm.Dialector { return postgres.New(postgres.Config{Conn: c}) })
}

// open opens the database, then adk-go's service on the same connections.
func open(name string, d gorm.Dialector, same func(gorm.ConnPool) gorm.Dialector) (*DB, error) {
	db, err := gorm.Open(d, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	svc, err := database.NewSessionService(same(sqlDB), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &DB{name: name, db: db, svc: svc}, nil
}

// Close closes the connections.
func (d *DB) Close() error {
	sqlDB, err := d.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

type key struct{ App, User, ID string }

// Keys lists the sessions f picks, ordered by app, user and id. (adk-go's service lists the
// sessions of one app; the apps are read from its sessions table.)
func (d *DB) Keys(ctx context.Context, f Filter) ([]key, error) {
	q := d.db.WithContext(ctx).Table("sessions").Select("app_name, user_id, id")
	if f.App != "" {
		q = q.Where("app_name = ?", f.App)
	}
	if f.User != "" {
		q = q.Where("user_id = ?", f.User)
	}
	if f.Session != "" {
		q = q.Where("id = ?", f.Session)
	}
	var rows []struct {
		AppName string
		UserID  string
		ID      string
	}
	if err := q.Order("app_name, user_id, id").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("%s: listing sessions: %w", d.name, err)
	}
	out := make([]key, len(rows))
	for i, r := range rows {
		out[i] = key{r.AppName, r.UserID, r.ID}
	}
	return out, nil
}

// Sessions reads the sessions f picks through adk-go's service, one at a time.
func (d *DB) Sessions(ctx context.Context, f Filter) (int, iter.Seq[Item]) {
	keys, err := d.Keys(ctx, f)
	if err != nil {
		return 0, func(yield func(Item) bool) { yield(Item{Source: d.name, Err: err}) }
	}
	return len(keys), func(yield func(Item) bool) {
		for _, k := range keys {
			id := k.App + "/" + k.User + "/" + k.ID
			resp, err := d.svc.Get(ctx, &session.GetRequest{AppName: k.App, UserID: k.User, SessionID: k.ID})
			if err != nil {
				if !yield(Item{Source: id, Err: fmt.Errorf("%s: %s: %w", d.name, id, err)}) {
					return
				}
				continue
			}
			evs := make([]*session.Event, 0, resp.Session.Events().Len())
			for ev := range resp.Session.Events().All() {
				evs = append(evs, ev)
			}
			s, err := trajectory.FromEvents(d.name, id, evs)
			if !yield(Item{Session: s, Source: id, Err: err}) {
				return
			}
		}
	}
}
