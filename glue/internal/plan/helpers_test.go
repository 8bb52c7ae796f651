package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"

	. "github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/internal/record"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
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

// The events of the test streams, built by internal/fixtures (for this package's tests and for
// the other package that reads compaction's events the same way).
func userEv(id, inv, text string) Event  { return fromFixture(fixtures.User(id, inv, text)) }
func modelEv(id, inv, text string) Event { return fromFixture(fixtures.Model(id, inv, text)) }
func callEv(id, inv, callID, name string, args map[string]any) Event {
	return fromFixture(fixtures.Call(id, inv, callID, name, args))
}
func callsEv(id, inv string, calls ...*genai.FunctionCall) Event {
	return fromFixture(fixtures.Calls(id, inv, calls...))
}
func respEv(id, inv, callID, name string, resp map[string]any) Event {
	return fromFixture(fixtures.Response(id, inv, callID, name, resp))
}
func codingInvocation(k int) []Event { return fromFixtures(fixtures.CodingInvocation(k)) }
func shellEvents(inv string, task string, steps []fixtures.ShellStep) []Event {
	return fromFixtures(fixtures.ShellEvents(inv, task, steps))
}
func serviceEvents(user []string, calls []fixtures.ServiceCall) []Event {
	return fromFixtures(fixtures.ServiceEvents(user, calls))
}
func turn(inv string) []Event    { return fromFixtures(fixtures.Turn(inv)) }
func turns(from, to int) []Event { return fromFixtures(fixtures.Turns(from, to)) }
func toolTurn(inv, tool, path string) []Event {
	return fromFixtures(fixtures.ToolTurn(inv, tool, path))
}

// clientRespEv is a response the client (author "user") sends to a long-running or confirmation
// call.
func clientRespEv(id, inv, callID, name string, resp map[string]any) Event {
	e := respEv(id, inv, callID, name, resp)
	e.Author = "user"
	return e
}

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

// concat joins lists.
func concat[T any](lists ...[]T) []T {
	var out []T
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// mustMarkerEvent returns the marker-only event storing m (id id), as the compactor appends it.
func mustMarkerEvent(t testing.TB, id string, m *Marker) Event {
	t.Helper()
	md, err := m.Metadata()
	if err != nil {
		t.Fatalf("%s.Metadata(): %v", id, err)
	}
	return Event{ID: id, Author: "user", Metadata: md}
}

// v2 returns a valid version 2 marker covering ids, rolling up previous (seq 1 when "").
func v2(seq int, previous string, summary string, ids ...string) *Marker {
	return &Marker{
		Version: record.Version, Seq: seq, Previous: previous, EventIDs: ids,
		StartTimestamp: record.Seconds(t0), EndTimestamp: record.Seconds(at(1000)),
		CompactedContent: genai.NewContentFromText(summary, genai.RoleUser),
		EventCount:       max(len(ids), 1) + seq - 1,
		FirstEventID:     first(ids), LastEventID: last(ids),
		Trigger: TriggerManual, Summarizer: "test",
	}
}

func first(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

func last(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// describe renders a view as ids, a summary as "S(<marker id>:<summary text without header>)".
func describe(events []Event, items []Item) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		if it.Summary == nil {
			out = append(out, events[it.Index].ID)
			continue
		}
		text := strings.TrimPrefix(textOf(it.Summary), SummaryHeader+"\n")
		out = append(out, "S("+it.MarkerID+":"+text+")")
	}
	return out
}

// ids returns the ids of events.
func ids(events []Event) []string {
	out := make([]string, len(events))
	for i := range events {
		out[i] = events[i].ID
	}
	return out
}

// memStore is an in-memory session: Load returns a copy of the stored events; Append stores a
// marker-only event with id "m1", "m2", ...
type memStore struct {
	mu      sync.Mutex
	events  []Event
	next    int
	appends []appended
}

type appended struct {
	inv string
	ts  time.Time
}

func newStore(events ...Event) *memStore { return &memStore{events: stamp(events...)} }

func (s *memStore) load() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// appendMarker stores a marker event with metadata md after the newest stored event.
func (s *memStore) appendMarker(inv string, md map[string]any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := t0
	if n := len(s.events); n > 0 {
		ts = s.events[n-1].Timestamp.Add(time.Microsecond)
	}
	s.next++
	id := fmt.Sprintf("m%d", s.next)
	s.events = append(s.events, Event{ID: id, InvocationID: inv, Author: "user", Timestamp: ts, Metadata: md})
	s.appends = append(s.appends, appended{inv: inv, ts: ts})
	return id
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

func (s *memStore) snapshot() []Event { return s.load() }

// view returns the store's current view, described.
func (s *memStore) view(t testing.TB) []string {
	t.Helper()
	ev := s.snapshot()
	return describe(ev, NewViewer(nil).View(ev))
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

func (r *recorder) last(t testing.TB) SummaryInput {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.inputs) == 0 {
		t.Fatal("the summarizer was not called")
	}
	return r.inputs[len(r.inputs)-1]
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

// Outcome is how a test compaction ended.
type Outcome string

// The outcomes.
const (
	OutcomeCompacted Outcome = "compacted"
	OutcomeNothing   Outcome = "nothing_to_do"
	OutcomeFailed    Outcome = "failed"
)

// Attempt is what a test compaction reports: Prepare's result and the outcome.
type Attempt struct {
	Result
	Outcome Outcome
}

// reports collects the attempts of a testCompactor.
type reports struct {
	mu  sync.Mutex
	all []Attempt
}

func (r *reports) add(a Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, a)
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

// compactOnce stores events and runs one compaction of them for r, with cfg and a summarizer
// writing "S"; it returns the store, the marker, the attempt and the error.
func compactOnce(t testing.TB, cfg Config, events []Event, r Selection) (*memStore, *Marker, Attempt, error) {
	t.Helper()
	store := newStore(events...)
	cfg.Summarizer = &recorder{text: "S"}
	c, rep := newCompactor(t, cfg, store)
	m, err := c.Compact(context.Background(), r)
	return store, m, rep.lastAttempt(t), err
}

// testCompactor runs Prepare over a memStore and appends its marker, inline: what the hooks'
// scheduler does, without the scheduling.
type testCompactor struct {
	t     testing.TB
	cfg   Config
	store *memStore
	rep   *reports
	now   time.Time
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newCompactor returns a testCompactor over store with cfg (validated), reporting to a new
// reports.
func newCompactor(t testing.TB, cfg Config, store *memStore) (*testCompactor, *reports) {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	rep := &reports{}
	return &testCompactor{t: t, cfg: cfg, store: store, rep: rep}, rep
}

// Compact prepares a compaction of the store's events for r (at the compactor's now, when r
// names no time) and stores its marker.
func (c *testCompactor) Compact(ctx context.Context, r Selection) (*Marker, error) {
	if r.Now.IsZero() {
		r.Now = c.now
	}
	res := Prepare(ctx, c.cfg, nil, c.store.load(), r)
	a := Attempt{Result: res}
	switch {
	case res.Err != nil:
		a.Outcome = OutcomeFailed
	case res.Marker == nil:
		a.Outcome = OutcomeNothing
	default:
		a.Outcome = OutcomeCompacted
		id := c.store.appendMarker(r.Invocation, res.Metadata)
		// What is stored resolves to what was prepared: the whole ledger (the record may hold
		// only what it adds) and the summary.
		ledger, summary, ok := NewViewer(nil).Resolve(c.store.load(), id)
		if !ok {
			c.t.Fatalf("marker %s does not resolve from the stored events", id)
		}
		if diff := cmp.Diff(res.Ledger, ledger, cmpopts.EquateEmpty(), cmp.AllowUnexported(Ledger{}, LedgerDelta{})); diff != "" {
			c.t.Fatalf("marker %s resolves to another ledger than it was prepared with (-prepared +resolved):\n%s", id, diff)
		}
		if a, b := mustJSON(c.t, res.Ledger), mustJSON(c.t, ledger); a != b {
			c.t.Fatalf("marker %s resolves to another ledger than it was prepared with, byte for byte:\n%s\n%s", id, a, b)
		}
		if textOf(summary) != textOf(res.Summary) {
			c.t.Fatalf("marker %s resolves to another summary than it was prepared with:\n%s\n---\n%s", id, textOf(res.Summary), textOf(summary))
		}
		// The marker returned is self-contained: its whole ledger, and the summary a view shows.
		whole := *res.Marker
		whole.Ledger, whole.LedgerDelta, whole.LedgerFrom = ledger, nil, 0
		whole.CompactedContent, whole.SummaryLedger = summary, ""
		res.Marker = &whole
	}
	c.rep.add(a)
	return res.Marker, res.Err
}

// fakeModel is a Model fake: it yields its replies (or err) and keeps the requests.
type fakeModel struct {
	name    string
	replies []*response.LLMResponse
	err     error
	// block, when set, makes GenerateContent wait for it to close, ignoring its context.
	block chan struct{}

	mu   sync.Mutex
	reqs []*request.LLMRequest
}

func (m *fakeModel) Name() string {
	if m.name == "" {
		return "gemini-2.5-flash"
	}
	return m.name
}

func (m *fakeModel) GenerateContent(_ context.Context, req *request.LLMRequest) iter.Seq2[*response.LLMResponse, error] {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return func(yield func(*response.LLMResponse, error) bool) {
		if m.block != nil {
			<-m.block
		}
		if m.err != nil {
			yield(nil, m.err)
			return
		}
		for _, r := range m.replies {
			if !yield(r, nil) {
				return
			}
		}
	}
}

func reply(text string, fr genai.FinishReason) *response.LLMResponse {
	return &response.LLMResponse{Content: genai.NewContentFromText(text, genai.RoleModel), FinishReason: fr}
}

// summaryInput is a small input: a goal, a tool call with its response, an answer.
func summaryInput() SummaryInput {
	events := concat(toolTurn("i1", "read_file", "cmd/main.go"))
	return SummaryInput{Events: events, Ledger: (*Ledger)(nil).Apply(NewLedgerDelta(events, 1))}
}

// toolCounts counts the tool calls among events (what an exact ledger's Tools must say).
func toolCounts(events []Event) map[string]int {
	tools := map[string]int{}
	for _, e := range events {
		if e.Content == nil {
			continue
		}
		for _, p := range e.Content.Parts {
			if p != nil && p.FunctionCall != nil {
				tools[p.FunctionCall.Name]++
			}
		}
	}
	return tools
}

// coveredEvents returns the events the live marker of scope "" hides.
func coveredEvents(events []Event) []Event {
	p := NewViewer(nil).plan(events)
	var out []Event
	for i := range events {
		if p.covered[i] {
			out = append(out, events[i])
		}
	}
	return out
}
