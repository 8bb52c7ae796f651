package source

import (
	"bytes"
	"context"
	"encoding/json"
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
				s, ok, rerr := d.pickled(ctx, k, id)
				switch {
				case rerr != nil:
					err = rerr
				case ok:
					if !yield(Item{Session: s, Source: id}) {
						return
					}
					continue
				}
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

// pickled reads a session adk-python's database service stored, which adk-go's cannot: it keeps
// an event's actions as a Python pickle, not JSON. The events are read from the table directly,
// their contents (genai JSON, snake_case) converted as adk-python's session dump is, their actions
// left out (state changes, agent transfers, adk-python's compaction). ok is false when the
// session's events hold no pickled actions (adk-go's error stands).
func (d *DB) pickled(ctx context.Context, k key, id string) (*trajectory.Session, bool, error) {
	var rows []struct {
		ID           string
		InvocationID *string
		Author       *string
		Branch       *string
		Content      *string
		Partial      *bool
		Actions      []byte
	}
	err := d.db.WithContext(ctx).Table("events").
		Select("id, invocation_id, author, branch, content, partial, actions").
		Where("app_name = ? AND user_id = ? AND session_id = ?", k.App, k.User, k.ID).
		Order("timestamp, id").Scan(&rows).Error
	if err != nil {
		return nil, false, nil
	}
	pickles := 0
	events := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		if len(r.Actions) > 0 && r.Actions[0] == 0x80 { // pickle protocol 2 and later
			pickles++
		}
		ev := map[string]any{"id": r.ID, "invocation_id": r.InvocationID, "author": r.Author, "branch": r.Branch, "partial": r.Partial}
		if r.Content != nil && *r.Content != "" && *r.Content != "null" {
			ev["content"] = json.RawMessage(*r.Content)
		}
		events = append(events, ev)
	}
	if pickles == 0 {
		return nil, false, nil
	}
	doc, err := json.Marshal(map[string]any{"id": k.ID, "app_name": k.App, "user_id": k.User, "events": events})
	if err != nil {
		return nil, false, fmt.Errorf("%s: %s: %w", d.name, id, err)
	}
	for s, err := range trajectory.Read(d.name+" "+id, bytes.NewReader(doc)) {
		if err != nil {
			return nil, false, err
		}
		s.ID, s.Format = id, trajectory.ADKSession
		s.Notes = append(s.Notes, fmt.Sprintf("stored by adk-python's database service: its %d events' actions are Python pickles, left out (state changes, agent transfers); the contents are read", pickles))
		return s, true, nil
	}
	return nil, false, nil
}
