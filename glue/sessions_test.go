package glue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
)

// memStore is a session store held in memory, as adk-go's database service behaves: a Get
// returns copies of the stored events (the query's part of them), an append through a read
// older than the session's last update is refused as stale.
type memStore struct {
	mu      sync.Mutex
	events  []compaction.Event
	updated time.Time
	gets    int
	read    int // events returned by Gets
	fail    error
}

// memEvent is the glue's own event in these tests: the converted event is its copy.
type memEvent struct{ ev compaction.Event }

func (m *memStore) Read(_ context.Context, _ Key, recent int, after time.Time) (Read, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	var out []compaction.Event
	for _, e := range m.events {
		if !after.IsZero() && e.Timestamp.Before(after) {
			continue
		}
		out = append(out, e)
	}
	if recent > 0 && len(out) > recent {
		out = out[len(out)-recent:]
	}
	m.gets++
	m.read += len(out)
	return &memRead{m: m, events: slices.Clone(out), updated: m.updated}, nil
}

// add stores events as another writer would (not through a read).
func (m *memStore) add(evs ...compaction.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range evs {
		if e.Timestamp.IsZero() {
			e.Timestamp = m.updated.Add(time.Second)
		}
		e.Source = &memEvent{e}
		m.events = append(m.events, e)
		m.updated = e.Timestamp
	}
}

func (m *memStore) take() (gets, read int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gets, read = m.gets, m.read
	m.gets, m.read = 0, 0
	return gets, read
}

type memRead struct {
	m       *memStore
	events  []compaction.Event
	updated time.Time
}

func (r *memRead) Events() []compaction.Event { return slices.Clone(r.events) }
func (r *memRead) Len() int                   { return len(r.events) }
func (r *memRead) LastUpdate() time.Time      { return r.updated }

func (r *memRead) Has(id string) bool {
	return slices.ContainsFunc(r.events, func(e compaction.Event) bool { return e.ID == id })
}

func (r *memRead) Append(_ context.Context, ev any, at time.Time) error {
	me, ok := ev.(*memEvent)
	if !ok {
		return fmt.Errorf("not a test event: %T", ev)
	}
	e := me.ev
	e.Timestamp = at
	return r.store(e)
}

func (r *memRead) AppendMarker(_ context.Context, inv string, at time.Time, md map[string]any) (compaction.Event, error) {
	e := compaction.Event{ID: fmt.Sprintf("marker-%d", at.UnixNano()), InvocationID: inv, Author: "user", Timestamp: at, Metadata: md}
	return e, r.store(e)
}

var errStale = errors.New("stale session: the session was updated after it was read")

func (r *memRead) store(e compaction.Event) error {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if r.m.updated.After(r.updated) {
		return errStale
	}
	e.Source = &memEvent{e}
	r.m.events = append(r.m.events, e)
	r.m.updated = e.Timestamp
	r.events = append(r.events, e)
	r.updated = e.Timestamp
	return nil
}

var t0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// turn returns invocation i: the user's message and the model's answer, a minute apart.
func turn(i int) []compaction.Event {
	at := t0.Add(time.Duration(i) * time.Minute)
	inv := fmt.Sprintf("inv-%d", i)
	return []compaction.Event{
		{ID: fmt.Sprintf("u%d", i), InvocationID: inv, Author: "user", Timestamp: at,
			Content: genai.NewContentFromText(fmt.Sprintf("question %d: %s", i, strings.Repeat("detail ", 40)), genai.RoleUser)},
		{ID: fmt.Sprintf("m%d", i), InvocationID: inv, Author: "agent", Timestamp: at.Add(time.Second), Final: true,
			Content: genai.NewContentFromText(fmt.Sprintf("answer %d: %s", i, strings.Repeat("reason ", 40)), genai.RoleModel)},
	}
}

// newMachine returns an engine with compaction (a small raw tail, no sliding window) and its
// machine over a new store holding turns 0..n-1.
func newMachine(t *testing.T, n int) (*Engine, *Sessions, *memStore) {
	t.Helper()
	e, err := New(adkctx.Config{Compaction: &compaction.Config{Synchronous: true, RetainRecentInvocations: 1, RetainRecentTokens: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	st := &memStore{}
	for i := range n {
		st.add(turn(i)...)
	}
	s, err := e.Sessions(st)
	if err != nil {
		t.Fatal(err)
	}
	return e, s, st
}

var key = Key{App: "app", User: "user", ID: "s1"}

func ids(shown []Shown) []string {
	var out []string
	for _, sh := range shown {
		switch {
		case sh.Summary != nil:
			out = append(out, "S")
		case sh.Event != nil:
			out = append(out, sh.Event.ID)
		default:
			out = append(out, "notice")
		}
	}
	return out
}

// One value shows one state: a compaction that lands after it was read changes neither its
// model's view nor people's; an append through it takes the compaction in; a later Get sees it
// at once.
func TestViewKeepsOneStateUntilItChanges(t *testing.T) {
	e, s, st := newMachine(t, 6)
	ctx := context.Background()
	v, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	model, people := ids(v.Model()), ids(v.People())
	if len(model) != 12 || !slices.Equal(model, people) {
		t.Fatalf("before a compaction: model %v, people %v; want the 12 stored events in both", model, people)
	}
	m, err := e.Compact(ctx, key)
	if err != nil || m == nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	if got := ids(v.Model()); !slices.Equal(got, model) {
		t.Errorf("the model's view changed after a compaction landed: %v, want %v", got, model)
	}
	if got := ids(v.People()); !slices.Equal(got, people) {
		t.Errorf("people's view changed after a compaction landed: %v, want %v", got, people)
	}
	later, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(later.Model()); len(got) == 0 || got[0] != "S" || len(got) >= len(model) {
		t.Errorf("a later Get shows %v: want the summary first and fewer events", got)
	}

	// An append through the value is a change of it: it takes the compaction in.
	next := turn(6)[0]
	next.Source = &memEvent{next}
	if err := s.Append(ctx, v, next, ""); err != nil {
		t.Fatalf("Append through a read older than the compaction: %v", err)
	}
	if got := ids(v.Model()); len(got) == 0 || got[0] != "S" || got[len(got)-1] != "u6" {
		t.Errorf("after an append the value shows %v: want the summary first and the appended event last", got)
	}
	if n := len(st.events); st.events[n-1].ID != "u6" || !st.events[n-1].Timestamp.After(st.events[n-2].Timestamp) {
		t.Errorf("the appended event is stored as %+v, after %v: want it stamped after the newest", st.events[n-1].ID, st.events[n-2].Timestamp)
	}
}

// An append refused because adkctx's own marker was stored since the read is retried through a
// fresh read; one refused because another writer's event was stored is returned.
func TestAppendRetriesPastOwnMarkersOnly(t *testing.T) {
	e, s, st := newMachine(t, 6)
	ctx := context.Background()
	v, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := e.Compact(ctx, key); err != nil || m == nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	ev := turn(6)[0]
	ev.Source = &memEvent{ev}
	if err := s.Append(ctx, v, ev, ""); err != nil {
		t.Errorf("an append past adkctx's own marker: %v", err)
	}
	st.add(compaction.Event{ID: "other", InvocationID: "x", Author: "agent", Content: genai.NewContentFromText("posted", genai.RoleModel)})
	ev2 := turn(6)[1]
	ev2.Source = &memEvent{ev2}
	if err := s.Append(ctx, v, ev2, ""); err == nil || !strings.Contains(err.Error(), "another writer") {
		t.Errorf("an append past another writer's event = %v, want it refused", err)
	}
}

// A session is read from where its view starts: after a compaction, a Get reads the marker and
// the raw tail (and the margin), not the whole session.
func TestGetReadsWhatTheViewNeeds(t *testing.T) {
	e, s, st := newMachine(t, 40)
	ctx := context.Background()
	if _, err := s.Get(ctx, key); err != nil { // a first read: no marker to say how far back
		t.Fatal(err)
	}
	if m, err := e.Compact(ctx, key); err != nil || m == nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	st.take()
	v, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	shows := len(v.Model())
	gets, read := st.take()
	if read > 2*shows+8 {
		t.Errorf("a Get read %d events in %d reads for a view of %d", read, gets, shows)
	}
	if pp := v.People(); len(pp) != 81 || pp[80].Author != noticeAuthor {
		t.Errorf("people read %d events, want the 80 stored and the marker's notice last", len(pp))
	}
}

// People read every stored event in order, each marker as a notice saying what the model reads
// from there on; a whole read that fails shows the events at hand after a notice saying so.
func TestPeopleSeeEveryEvent(t *testing.T) {
	e, s, st := newMachine(t, 6)
	ctx := context.Background()
	if m, err := e.Compact(ctx, key); err != nil || m == nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	v, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	people := v.People()
	if len(people) != 13 {
		t.Fatalf("people read %d events, want 13 (12 and the marker's notice)", len(people))
	}
	notice := people[12]
	if notice.Author != noticeAuthor || notice.Event == nil || !strings.HasPrefix(textOf(notice.Content), "[adkctx] Compaction 1 (manual)") {
		t.Errorf("the marker is shown as %q by %q", textOf(notice.Content), notice.Author)
	}

	st.mu.Lock()
	st.fail = errors.New("database is locked")
	st.mu.Unlock()
	v2, err := s.Get(ctx, key)
	if err == nil {
		t.Fatalf("a Get of a failing store = %v", ids(v2.Model()))
	}
	st.mu.Lock()
	st.fail = nil
	st.mu.Unlock()
	v3, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	st.fail = errors.New("database is locked")
	st.mu.Unlock()
	got := v3.People()
	if len(got) == 0 || got[0].Event != nil || got[0].Author != noticeAuthor || !strings.Contains(textOf(got[0].Content), "could not be read") {
		t.Fatalf("a people read that failed starts with %v, want a notice saying so", ids(got))
	}
}
