package compactor_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	. "github.com/adkctx/adkctx/compaction"
	. "github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/history"
	"github.com/adkctx/adkctx/internal/fixtures"
)

// t0 is the time of the first event of every test stream.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// at returns t0 plus sec seconds.
func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// fromFixture is a fixture's event as this package's.
func fromFixture(f fixtures.Event) Event {
	return Event{ID: f.ID, InvocationID: f.InvocationID, Author: f.Author, Final: f.Final, Content: f.Content}
}

// fromFixtures converts fixture events.
func fromFixtures(fs []fixtures.Event) []Event {
	out := make([]Event, len(fs))
	for i, f := range fs {
		out[i] = fromFixture(f)
	}
	return out
}

// The events of the test streams, built by internal/fixtures.
func userEv(id, inv, text string) Event  { return fromFixture(fixtures.User(id, inv, text)) }
func modelEv(id, inv, text string) Event { return fromFixture(fixtures.Model(id, inv, text)) }
func turns(from, to int) []Event         { return fromFixtures(fixtures.Turns(from, to)) }

// stamp gives every event without a timestamp one second after the previous event.
func stamp(events ...Event) []Event {
	out := slices.Clone(events)
	last := t0.Add(-time.Second)
	for i := range out {
		if out[i].Timestamp.IsZero() {
			out[i].Timestamp = last.Add(time.Second)
		}
		last = out[i].Timestamp
	}
	return out
}

// memStore is an in-memory Store: the fake of adkctx's own Store interface. Load returns a copy of
// the stored events; Append stores a marker-only event with id "m1", "m2", ...
type memStore struct {
	mu     sync.Mutex
	events []Event
	next   int
	loads  int
	// appendErrs are returned by the next appends, in order (nil: success).
	appendErrs []error
	// beforeAppend runs (without the lock) before every append, e.g. to store a concurrent
	// writer's marker.
	beforeAppend func(s *memStore)
	// afterLoad runs (without the lock) after every successful load, with the number of loads
	// so far, e.g. to store a concurrent writer's marker between two loads.
	afterLoad func(s *memStore, loads int)
	// loadErr, when set, fails every load.
	loadErr error
	appends []appended
}

type appended struct {
	inv string
	ts  time.Time
}

func newStore(events ...Event) *memStore { return &memStore{events: stamp(events...)} }

// memSnap is one read of a memStore.
type memSnap struct {
	s      *memStore
	events []Event
}

func (m memSnap) Events() []Event { return m.events }

func (m memSnap) Changes(ctx context.Context) (history.Changes, error) {
	fresh, err := m.s.Read(ctx, sess, history.ForView)
	if err != nil {
		return history.Changes{}, err
	}
	return history.Since(m.events, fresh.Events()), nil
}

func (m memSnap) AppendMarker(ctx context.Context, inv string, ts time.Time, md map[string]any) (string, error) {
	return m.s.appendMarker(inv, ts, md)
}

func (s *memStore) Read(ctx context.Context, _ Session, _ history.Purpose) (Snapshot, error) {
	s.mu.Lock()
	s.loads++
	if s.loadErr != nil {
		s.mu.Unlock()
		return nil, s.loadErr
	}
	events, loads, after := slices.Clone(s.events), s.loads, s.afterLoad
	s.mu.Unlock()
	if after != nil {
		after(s, loads)
	}
	return memSnap{s: s, events: events}, nil
}

func (s *memStore) appendMarker(inv string, ts time.Time, md map[string]any) (string, error) {
	if f := s.beforeAppend; f != nil {
		f(s)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.appendErrs) > 0 {
		err := s.appendErrs[0]
		s.appendErrs = s.appendErrs[1:]
		if err != nil {
			return "", err
		}
	}
	if n := len(s.events); n > 0 && !ts.After(s.events[n-1].Timestamp) {
		ts = s.events[n-1].Timestamp.Add(time.Microsecond) // as the glue stamps it
	}
	s.next++
	id := fmt.Sprintf("m%d", s.next)
	s.events = append(s.events, Event{ID: id, InvocationID: inv, Author: "user", Timestamp: ts, Metadata: md})
	s.appends = append(s.appends, appended{inv: inv, ts: ts})
	return id, nil
}

// add appends events to the store (stamped after the last stored event).
func (s *memStore) add(events ...Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := t0.Add(-time.Second)
	if n := len(s.events); n > 0 {
		last = s.events[n-1].Timestamp
	}
	for _, e := range events {
		if e.Timestamp.IsZero() {
			e.Timestamp = last.Add(time.Second)
		}
		last = e.Timestamp
		s.events = append(s.events, e)
	}
}

func (s *memStore) snapshot() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// recorder is a Summarizer fake returning a fixed short text and keeping its inputs.
type recorder struct {
	mu     sync.Mutex
	text   string
	inputs []SummaryInput
}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) Summarize(_ context.Context, in SummaryInput) (*Summary, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inputs = append(r.inputs, in)
	text := r.text
	if text == "" {
		text = fmt.Sprintf("summary %d", len(r.inputs))
	}
	return &Summary{Content: genai.NewContentFromText(text, genai.RoleUser)}, nil
}

// funcSummarizer adapts a function to Summarizer.
type funcSummarizer struct {
	name string
	f    func(ctx context.Context, in SummaryInput) (*Summary, error)
}

func (s *funcSummarizer) Name() string { return s.name }
func (s *funcSummarizer) Summarize(ctx context.Context, in SummaryInput) (*Summary, error) {
	return s.f(ctx, in)
}

// reports collects the attempts a Compactor reports.
type reports struct {
	mu  sync.Mutex
	all []Attempt
}

func (r *reports) add(a Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, a)
}

func (r *reports) outcomes() []Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Outcome
	for _, a := range r.all {
		out = append(out, a.Outcome)
	}
	return out
}

func (r *reports) lastAttempt(t testing.TB) Attempt {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.all) == 0 {
		t.Fatal("no attempt reported")
	}
	return r.all[len(r.all)-1]
}

// newCompactor returns a compactor over store with cfg, reporting to a new reports.
func newCompactor(t testing.TB, cfg Config, store Store) (*Compactor, *reports) {
	t.Helper()
	rep := &reports{}
	c, err := New(cfg, Deps{Store: store, Report: rep.add})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, rep
}

var sess = Session{App: "app", User: "u", ID: "s1"}

// tokensOf is the estimated weight of events.
func tokensOf(events ...Event) int {
	n := 0
	for i := range events {
		n += budget.EstimateContent(events[i].Content)
	}
	return n
}
