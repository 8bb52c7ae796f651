package hooks_test

// Storage for the scale benchmark: the cell's database, the sessions loaded into it, and the
// service wrapper that measures what each turn reads.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/hooks/internal/pgtest"
	"github.com/adkctx/adkctx/hooks/sessiondb"
)

// scaleDB is one cell's database: a handle for the index and copies, and a service that writes
// fast (SQLite without syncing) for loading.
type scaleDB struct {
	backend string
	db      *gorm.DB
	loader  session.Service
	// serve opens the service the arms measure, configured as an application would.
	serve func() (session.Service, error)
}

// openScaleDB creates the cell's empty database, migrated, with the session index.
func openScaleDB(tb testing.TB, backend string) *scaleDB {
	tb.Helper()
	quiet := &gorm.Config{Logger: gormlogger.Discard}
	// open returns a dialector on a connection pool closed when tb ends.
	var open func(load bool) gorm.Dialector
	switch backend {
	case "sqlite":
		path := filepath.Join(tb.TempDir(), "sessions.db")
		open = func(load bool) gorm.Dialector {
			dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
			if load {
				dsn += "&_pragma=synchronous(OFF)"
			}
			db, err := sql.Open(sqlite.DriverName, dsn)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { db.Close() })
			return &sqlite.Dialector{Conn: db}
		}
	default:
		dsn := pgtest.DSN(tb)
		open = func(bool) gorm.Dialector { return postgres.New(postgres.Config{Conn: pgtest.OpenSQL(tb, dsn)}) }
	}
	s := &scaleDB{backend: backend, serve: func() (session.Service, error) { return database.NewSessionService(open(false), quiet) }}
	var err error
	if s.loader, err = database.NewSessionService(open(true), quiet); err != nil {
		tb.Fatal(err)
	}
	if err := database.AutoMigrate(s.loader); err != nil {
		tb.Fatal(err)
	}
	if s.db, err = gorm.Open(open(true), quiet); err != nil {
		tb.Fatal(err)
	}
	if err := sessiondb.CreateIndex(tb.Context(), s.db, sessiondb.Config{}); err != nil {
		tb.Fatal(err)
	}
	return s
}

// copySession copies session from, row for row, to session to; without markers (event rows
// without content), what adk-go alone would have stored of the same conversation.
func (s *scaleDB) copySession(from, to string, withoutMarkers bool) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		for _, table := range []string{"sessions", "events"} {
			cols, err := tx.Migrator().ColumnTypes(table)
			if err != nil {
				return err
			}
			key := map[string]string{"sessions": "id", "events": "session_id"}[table]
			var names, values []string
			for _, c := range cols {
				names = append(names, `"`+c.Name()+`"`)
				values = append(values, map[bool]string{true: "?", false: `"` + c.Name() + `"`}[c.Name() == key])
			}
			q := fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM %s WHERE app_name = ? AND user_id = ? AND %s = ?`,
				table, strings.Join(names, ", "), strings.Join(values, ", "), table, key)
			if table == "events" && withoutMarkers {
				q += " AND content IS NOT NULL"
			}
			if err := tx.Exec(q, to, scaleApp, scaleUser, from).Error; err != nil {
				return fmt.Errorf("copying %s: %w", table, err)
			}
		}
		return nil
	})
}

// count returns the events stored for session id.
func (s *scaleDB) count(id string) (n int64, err error) {
	err = s.db.Table("events").Where("app_name = ? AND user_id = ? AND session_id = ?", scaleApp, scaleUser, id).Count(&n).Error
	return n, err
}

// scaleReads is what the Gets of one turn read from storage.
type scaleReads struct {
	gets, whole int
	events      int
	bytes       int64
	getTime     time.Duration
}

func (r *scaleReads) add(o scaleReads) {
	r.gets += o.gets
	r.whole += o.whole
	r.events += o.events
	r.bytes += o.bytes
	r.getTime += o.getTime
}

// readSite is one kind of Get: who asked (the innermost adkctx or adk-go function on the stack)
// and how (whole, recent N, after a time).
type readSite struct{ caller, query string }

// scaleStore is the service the arms run on: it measures every Get — time, events, the bytes
// adk-go stores for them — per turn and per read site.
type scaleStore struct {
	session.Service
	sizes *eventSizes
	// uncounted makes Gets go unmeasured (the benchmark's own reads).
	uncounted atomic.Bool

	mu    sync.Mutex
	turn  scaleReads
	sites map[readSite]*scaleReads
}

func newScaleStore(base session.Service, sizes *eventSizes) *scaleStore {
	return &scaleStore{Service: base, sizes: sizes, sites: map[readSite]*scaleReads{}}
}

func (s *scaleStore) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	start := time.Now()
	resp, err := s.Service.Get(ctx, req)
	took := time.Since(start)
	if err != nil || resp == nil || resp.Session == nil || s.uncounted.Load() {
		return resp, err
	}
	r := scaleReads{gets: 1, getTime: took}
	for e := range resp.Session.Events().All() {
		r.events++
		r.bytes += int64(s.sizes.of(e))
	}
	site := readSite{caller: caller(), query: "whole"}
	switch {
	case req.NumRecentEvents > 0:
		site.query = fmt.Sprintf("recent %d", req.NumRecentEvents)
	case !req.After.IsZero():
		site.query = "after"
	default:
		r.whole = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turn.add(r)
	if s.sites[site] == nil {
		s.sites[site] = &scaleReads{}
	}
	s.sites[site].add(r)
	return resp, nil
}

// take returns the reads since the last take.
func (s *scaleStore) take() scaleReads {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.turn
	s.turn = scaleReads{}
	return r
}

// takeSites returns the reads per site since the last call.
func (s *scaleStore) takeSites() map[readSite]scaleReads {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[readSite]scaleReads{}
	for k, v := range s.sites {
		out[k] = *v
	}
	clear(s.sites)
	return out
}

// caller names the innermost function of adkctx's glue or of adk-go that called Get.
func caller() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		name := f.Function
		if strings.HasPrefix(name, "github.com/adkctx/adkctx/") && !strings.Contains(name, "hooks_test.") ||
			strings.HasPrefix(name, "google.golang.org/adk/") {
			return name[strings.LastIndex(name, "/")+1:]
		}
		if !more {
			return "?"
		}
	}
}

// eventSizes knows the bytes adk-go's database service stores for each event: the JSON of its
// content, actions and metadata, and its ids.
type eventSizes struct {
	mu    sync.Mutex
	bytes map[string]int
}

func (s *eventSizes) of(e *session.Event) int {
	s.mu.Lock()
	n, ok := s.bytes[e.ID]
	s.mu.Unlock()
	if ok {
		return n
	}
	n = storedBytes(e)
	s.mu.Lock()
	s.bytes[e.ID] = n
	s.mu.Unlock()
	return n
}

func newEventSizes(events []*session.Event) *eventSizes {
	s := &eventSizes{bytes: make(map[string]int, len(events))}
	for _, e := range events {
		s.bytes[e.ID] = storedBytes(e)
	}
	return s
}

// storedBytes is what adk-go's database service stores for e (createStorageEvent): ids, and
// content, actions and metadata as JSON.
func storedBytes(e *session.Event) int {
	n := len(e.ID) + len(e.InvocationID) + len(e.Author) + len(e.Branch)
	for _, v := range []any{e.Content, e.Actions, e.GroundingMetadata, e.UsageMetadata, e.CitationMetadata} {
		if b, err := json.Marshal(v); err == nil && string(b) != "null" {
			n += len(b)
		}
	}
	if len(e.CustomMetadata) > 0 {
		if b, err := json.Marshal(e.CustomMetadata); err == nil {
			n += len(b)
		}
	}
	return n
}

// prefix returns the first n events of a session, continued to the end of the invocation the nth
// is part of (its marker included): the session as it was when it first held n events.
func prefix(events []*session.Event, n int) []*session.Event {
	n = min(n, len(events))
	for n > 0 && n < len(events) && events[n].InvocationID == events[n-1].InvocationID {
		n++
	}
	return events[:n:n]
}

// withoutMarkers returns events without adkctx's markers.
func withoutMarkers(events []*session.Event) []*session.Event {
	return slices.DeleteFunc(slices.Clone(events), isMarker)
}
