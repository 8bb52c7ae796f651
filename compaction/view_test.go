package compaction

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

var viewT0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// ts returns viewT0 + sec seconds.
func ts(sec float64) time.Time {
	return viewT0.Add(time.Duration(sec * float64(time.Second)))
}

// tev builds a text event.
func tev(id string, sec float64, author, text string) *session.Event {
	role := genai.RoleModel
	if author == "user" {
		role = genai.RoleUser
	}
	return &session.Event{
		ID:           id,
		Timestamp:    ts(sec),
		InvocationID: "inv-" + id,
		Author:       author,
		LLMResponse: model.LLMResponse{Content: &genai.Content{
			Role: role, Parts: []*genai.Part{{Text: text}},
		}},
	}
}

// ev builds a model text event whose text is "text of <id>".
func ev(id string, sec float64) *session.Event {
	return tev(id, sec, "agent", "text of "+id)
}

// markerOver builds a marker event with id markerID at time sec covering
// stream[from..to] (SetRange), excluding the given ids.
func markerOver(t testing.TB, markerID string, sec float64, stream []*session.Event, from, to int, summary string, exclude ...string) *session.Event {
	t.Helper()
	m := &Marker{
		CompactedContent: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: summary}}},
		Trigger:          TriggerInvocations,
		Summarizer:       "test",
	}
	ex := map[string]bool{}
	for _, id := range exclude {
		ex[id] = true
	}
	if m.SetRange(stream, from, to, func(e *session.Event) bool { return ex[e.ID] }) == 0 {
		t.Fatalf("marker %s covers nothing", markerID)
	}
	e := NewMarkerEvent(m, "inv-"+markerID, ts(sec))
	if e == nil {
		t.Fatalf("NewMarkerEvent(%s) = nil", markerID)
	}
	e.ID = markerID
	return e
}

// rawMarker builds a marker event from a hand-written record.
func rawMarker(id string, sec float64, record any) *session.Event {
	return &session.Event{
		ID: id, Timestamp: ts(sec), Author: "user", InvocationID: "inv-" + id,
		LLMResponse: model.LLMResponse{CustomMetadata: map[string]any{MetadataKey: record}},
	}
}

// describe renders a view as ids; summaries as "S(<marker id>)".
func describe(events []*session.Event) []string {
	out := make([]string, 0, len(events))
	for _, e := range events {
		if IsSummaryEvent(e) {
			out = append(out, "S("+strings.TrimPrefix(e.ID, summaryIDPrefix)+")")
			continue
		}
		out = append(out, e.ID)
	}
	return out
}

func dump(t testing.TB, events []*session.Event) string {
	t.Helper()
	b, err := json.Marshal(events)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// appendM appends marker events built over the stream so far.
type step func(t testing.TB, stream []*session.Event) *session.Event

func build(t testing.TB, steps ...any) []*session.Event {
	t.Helper()
	var stream []*session.Event
	for _, s := range steps {
		switch s := s.(type) {
		case *session.Event:
			stream = append(stream, s)
		case step:
			stream = append(stream, s(t, stream))
		default:
			t.Fatalf("bad step %T", s)
		}
	}
	return stream
}

func over(markerID string, sec float64, fromID, toID string, exclude ...string) step {
	return func(t testing.TB, stream []*session.Event) *session.Event {
		from, to := -1, -1
		for i, e := range stream {
			if e.ID == fromID {
				from = i
			}
			if e.ID == toID {
				to = i
			}
		}
		if from < 0 || to < 0 {
			t.Fatalf("over(%s): %s or %s not in stream", markerID, fromID, toID)
		}
		return markerOver(t, markerID, sec, stream, from, to, "summary "+markerID, exclude...)
	}
}

func fcall(id string, sec float64, names ...string) *session.Event {
	e := &session.Event{ID: id, Timestamp: ts(sec), InvocationID: "inv", Author: "agent",
		LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel}}}
	for _, n := range names {
		e.Content.Parts = append(e.Content.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: "call-" + n, Name: n}})
	}
	return e
}

func fresp(id string, sec float64, names ...string) *session.Event {
	e := &session.Event{ID: id, Timestamp: ts(sec), InvocationID: "inv", Author: "agent",
		LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser}}}
	for _, n := range names {
		e.Content.Parts = append(e.Content.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
			ID: "call-" + n, Name: n, Response: map[string]any{"ok": true}}})
	}
	return e
}

func TestView(t *testing.T) {
	// validRecord returns a valid record map covering ids first..last.
	validRecord := func(start, end float64, first, last string) map[string]any {
		m := &Marker{
			StartTimestamp: Seconds(ts(start)), EndTimestamp: Seconds(ts(end)),
			CompactedContent: &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "secret summary words"}}},
			FirstEventID:     first, LastEventID: last, EventCount: 2,
		}
		rec, err := m.Map()
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	with := func(rec map[string]any, key string, v any) map[string]any {
		rec[key] = v
		return rec
	}
	without := func(rec map[string]any, key string) map[string]any {
		delete(rec, key)
		return rec
	}

	tests := []struct {
		name        string
		stream      []any
		want        []string
		wantWarns   int
		wantSummary map[string]string // marker id → expected summary text
	}{
		{
			name:   "no markers",
			stream: []any{ev("e1", 1), ev("e2", 2), ev("e3", 3)},
			want:   []string{"e1", "e2", "e3"},
		},
		{
			name:   "empty",
			stream: nil,
			want:   []string{},
		},
		{
			name:        "one marker",
			stream:      []any{ev("e1", 1), ev("e2", 2), ev("e3", 3), ev("e4", 4), ev("e5", 5), over("M", 6, "e1", "e3")},
			want:        []string{"S(M)", "e4", "e5"},
			wantSummary: map[string]string{"M": SummaryHeader + "\nsummary M"},
		},
		{
			name: "two disjoint markers",
			stream: []any{ev("e1", 1), ev("e2", 2), over("M1", 2.5, "e1", "e2"),
				ev("e3", 3), ev("e4", 4), over("M2", 4.5, "e3", "e4"), ev("e5", 5)},
			want: []string{"S(M1)", "S(M2)", "e5"},
		},
		{
			name: "overlap: newest wins, older keeps what it alone covers",
			stream: []any{ev("e1", 1), ev("e2", 2), ev("e3", 3), ev("e4", 4), ev("e5", 5),
				over("M1", 6, "e1", "e3"), over("M2", 7, "e2", "e4")},
			want: []string{"S(M1)", "S(M2)", "e5"},
		},
		{
			name: "overlap: newer marker inside an older one wins its events",
			stream: []any{ev("e1", 1), ev("e2", 2), ev("e3", 3), ev("e4", 4),
				over("M1", 5, "e1", "e4"), over("M2", 6, "e2", "e3"), ev("e5", 7)},
			// M1 keeps e1 and e4 (emitted at e1), M2 wins e2, e3.
			want: []string{"S(M1)", "S(M2)", "e5"},
		},
		{
			name: "overlap: newer marker emitted at the first event it wins",
			stream: []any{ev("e1", 1), ev("e2", 2), ev("e3", 3), ev("e4", 4),
				over("M1", 5, "e2", "e4"), over("M2", 6, "e1", "e2")},
			// M2 wins e1, e2; M1 keeps e3, e4.
			want: []string{"S(M2)", "S(M1)"},
		},
		{
			name: "rolled-up marker subsumes the older one",
			stream: []any{ev("e1", 1), ev("e2", 2), over("M1", 2.5, "e1", "e2"),
				ev("e3", 3), ev("e4", 4), over("M2", 4.5, "e1", "e3"), ev("e5", 5)},
			want: []string{"S(M2)", "e4", "e5"},
		},
		{
			name: "marker appended late: events after it stay, even with timestamps inside its range",
			stream: []any{ev("e1", 1), ev("e2", 2), ev("e3", 3),
				ev("late-before", 1.5), // positioned after the range, timestamp inside it
				over("M", 4, "e1", "e3"),
				ev("late-after", 2.5), // appended after the marker, timestamp inside its range
				ev("e4", 5)},
			want: []string{"S(M)", "late-before", "late-after", "e4"},
		},
		{
			name: "marker before its range hides nothing",
			stream: []any{ev("e1", 1), rawMarker("M", 1.5, validRecord(2, 3, "e2", "e3")),
				ev("e2", 2), ev("e3", 3)},
			want:      []string{"e1", "e2", "e3"},
			wantWarns: 1,
		},
		{
			name:   "equal timestamps at the end edge: uncovered event sharing the end timestamp stays",
			stream: []any{ev("e1", 1), ev("e2", 2), over("M", 2, "e1", "e2"), ev("e3", 2), ev("e4", 3)},
			want:   []string{"S(M)", "e3", "e4"},
		},
		{
			name:   "equal timestamps at the start edge: event before the range with the start timestamp stays",
			stream: []any{ev("e0", 1), ev("e1", 1), ev("e2", 1), ev("e3", 2), over("M", 3, "e1", "e2"), ev("e4", 3)},
			want:   []string{"e0", "S(M)", "e3", "e4"},
		},
		{
			name:   "all events share one timestamp",
			stream: []any{ev("a", 1), ev("b", 1), ev("c", 1), ev("d", 1), over("M", 1, "b", "c"), ev("e", 1)},
			want:   []string{"a", "S(M)", "d", "e"},
		},
		{
			name: "uncovered event at the edge timestamp positioned inside the range (hand-written record) stays",
			stream: []any{ev("e1", 1), ev("x", 1), ev("e2", 2), ev("e3", 3),
				rawMarker("M", 4, with(validRecord(1, 3, "e1", "e3"), "edgeEventIds", []any{"e1", "e3"}))},
			want: []string{"S(M)", "x"},
		},
		{
			name: "parallel function calls stay paired; tie at the end edge kept",
			stream: []any{tev("u1", 1, "user", "q1"), fcall("c1", 2, "a", "b"), fresp("r1", 3, "a", "b"),
				tev("a1", 4, "agent", "answer"),
				over("M", 5, "u1", "a1"),
				tev("u2", 6, "user", "q2"), fcall("c2", 7, "a", "b"), fresp("r2", 7, "a", "b"), tev("a2", 7, "agent", "done")},
			want: []string{"S(M)", "u2", "c2", "r2", "a2"},
		},
		{
			name: "parallel calls at one timestamp: marker through the response, next event same timestamp stays",
			stream: []any{tev("u1", 1, "user", "q1"), fcall("c1", 2, "a", "b"), fresp("ra", 2, "a"), fresp("rb", 2, "b"),
				tev("a1", 2, "agent", "answer"), over("M", 3, "u1", "rb")},
			want: []string{"S(M)", "a1"},
		},
		{
			name: "excluded pending call stays raw after the summary",
			stream: []any{ev("e1", 1), fcall("pending", 2, "approve"), ev("e2", 3), ev("e3", 4),
				over("M", 5, "e1", "e3", "pending"), ev("e4", 6)},
			want: []string{"S(M)", "pending", "e4"},
		},
		{
			name: "roll-up keeps an excluded pending call",
			stream: []any{ev("e1", 1), fcall("pending", 2, "approve"), ev("e2", 3), over("M1", 3.5, "e1", "e2", "pending"),
				ev("e3", 4), over("M2", 5, "e1", "e3", "pending")},
			want: []string{"S(M2)", "pending"},
		},
		{
			name: "summary header is not doubled",
			stream: []any{ev("e1", 1), ev("e2", 2), rawMarker("M", 3, func() map[string]any {
				rec := validRecord(1, 2, "e1", "e2")
				rec["compactedContent"] = map[string]any{"role": "user", "parts": []any{map[string]any{"text": SummaryHeader + "\nalready"}}}
				return rec
			}())},
			want:        []string{"S(M)"},
			wantSummary: map[string]string{"M": SummaryHeader + "\nalready"},
		},
		{
			name: "corrupt markers hide nothing",
			stream: []any{ev("e1", 1), ev("e2", 2), ev("e3", 3),
				rawMarker("bad-type", 4, 42),
				rawMarker("bad-string", 4, "{not json"),
				rawMarker("inverted", 4, validRecord(3, 1, "e1", "e3")),
				rawMarker("no-content", 4, without(validRecord(1, 3, "e1", "e3"), "compactedContent")),
				rawMarker("empty-content", 4, with(validRecord(1, 3, "e1", "e3"), "compactedContent", map[string]any{"role": "user"})),
				rawMarker("no-ids", 4, without(validRecord(1, 3, "e1", "e3"), "firstEventId")),
				rawMarker("empty-range", 4, with(validRecord(1, 3, "e1", "e3"), "eventCount", 0.0)),
				rawMarker("bad-field-type", 4, with(validRecord(1, 3, "e1", "e3"), "startTimestamp", "yesterday")),
				rawMarker("first-after-last", 4, validRecord(1, 3, "e3", "e1")),
				ev("e4", 5)},
			want:      []string{"e1", "e2", "e3", "e4"},
			wantWarns: 9,
		},
		{
			name: "a corrupt marker next to a valid one",
			stream: []any{ev("e1", 1), ev("e2", 2), rawMarker("bad", 2.5, validRecord(2, 1, "e1", "e2")),
				over("M", 3, "e1", "e2"), ev("e3", 4)},
			want:      []string{"S(M)", "e3"},
			wantWarns: 1,
		},
		{
			name: "record as *Marker, Marker value and JSON string",
			stream: []any{ev("e1", 1), ev("e2", 2), ev("e3", 3),
				rawMarker("M1", 3.1, &Marker{StartTimestamp: Seconds(ts(1)), EndTimestamp: Seconds(ts(1)), FirstEventID: "e1", LastEventID: "e1", EventCount: 1,
					CompactedContent: genai.NewContentFromText("one", genai.RoleUser)}),
				rawMarker("M2", 3.2, Marker{StartTimestamp: Seconds(ts(2)), EndTimestamp: Seconds(ts(2)), FirstEventID: "e2", LastEventID: "e2", EventCount: 1,
					CompactedContent: genai.NewContentFromText("two", genai.RoleUser)}),
				rawMarker("M3", 3.3, func() string {
					b, _ := json.Marshal(validRecord(3, 3, "e3", "e3"))
					return string(b)
				}())},
			want: []string{"S(M1)", "S(M2)", "S(M3)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stream := build(t, tc.stream...)
			before := dump(t, stream)
			core, logs := observer.New(zapcore.DebugLevel)
			got, stats := ViewWithStats(stream, zap.New(core))
			if diff := cmp.Diff(tc.want, describe(got)); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
			if after := dump(t, stream); after != before {
				t.Errorf("View mutated its input")
			}
			warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
			if len(warns) != tc.wantWarns || stats.Invalid != tc.wantWarns {
				t.Errorf("warnings = %d, stats.Invalid = %d, want %d", len(warns), stats.Invalid, tc.wantWarns)
			}
			for _, w := range warns {
				if _, ok := w.ContextMap()["event_id"]; !ok {
					t.Errorf("warning without event_id: %v", w.ContextMap())
				}
				if s := fmtEntry(w); strings.Contains(s, "secret") || strings.Contains(s, "text of") {
					t.Errorf("warning leaks conversation text: %s", s)
				}
			}
			for mid, text := range tc.wantSummary {
				found := false
				for _, e := range got {
					if e.ID == summaryIDPrefix+mid {
						found = true
						if diff := cmp.Diff(text, e.Content.Parts[0].Text); diff != "" {
							t.Errorf("summary %s text (-want +got):\n%s", mid, diff)
						}
					}
				}
				if !found {
					t.Errorf("summary of %s not in view", mid)
				}
			}
			// Summaries: authored by the user, role user, placed at the first
			// replaced event's timestamp and invocation; each at most once.
			seen := map[string]bool{}
			for _, e := range got {
				if IsCompactionEvent(e) {
					t.Errorf("marker %s in view", e.ID)
				}
				if !IsSummaryEvent(e) {
					continue
				}
				if seen[e.ID] {
					t.Errorf("summary %s emitted twice", e.ID)
				}
				seen[e.ID] = true
				if e.Author != "user" || e.Content.Role != genai.RoleUser || !strings.HasPrefix(e.Content.Parts[0].Text, SummaryHeader) {
					t.Errorf("summary %s: author %q role %q text %q", e.ID, e.Author, e.Content.Role, e.Content.Parts[0].Text)
				}
				if e.UsageMetadata != nil {
					t.Errorf("summary %s carries usage metadata", e.ID)
				}
			}
			if stats.Summaries != len(seen) {
				t.Errorf("stats.Summaries = %d, want %d", stats.Summaries, len(seen))
			}
		})
	}
}

func fmtEntry(e observer.LoggedEntry) string {
	b, _ := json.Marshal(e.ContextMap())
	return e.Message + string(b)
}

func TestViewSummaryPlacement(t *testing.T) {
	e1, e2, e3 := ev("e1", 1), ev("e2", 2), ev("e3", 3)
	e1.InvocationID, e2.InvocationID = "first-inv", "second-inv"
	stream := build(t, e1, e2, e3, over("M", 4, "e1", "e2"))
	got := View(stream, nil)
	if len(got) != 2 {
		t.Fatalf("view = %v", describe(got))
	}
	s := got[0]
	if !s.Timestamp.Equal(e1.Timestamp) || s.InvocationID != "first-inv" {
		t.Errorf("summary at %v / %q, want e1's %v / %q", s.Timestamp, s.InvocationID, e1.Timestamp, "first-inv")
	}
	if s.ID != summaryIDPrefix+"M" {
		t.Errorf("summary id = %q", s.ID)
	}
	// Deterministic: a second view yields an equal summary event.
	again := View(stream, nil)
	if diff := cmp.Diff(dump(t, got), dump(t, again)); diff != "" {
		t.Errorf("views differ:\n%s", diff)
	}
	if got[1] != e3 {
		t.Errorf("uncovered event not returned as the same pointer")
	}
}

func TestViewTimestampFallback(t *testing.T) {
	// Full stream: e1(1) e2(2) e3(2) e4(3) M(covers e1..e2) e5(4).
	full := build(t, ev("e1", 1), ev("e2", 2), ev("e3", 2), ev("e4", 3), over("M", 3.5, "e1", "e2"), ev("e5", 4))
	tests := []struct {
		name  string
		slice []*session.Event
		want  []string
	}{
		{"full", full, []string{"S(M)", "e3", "e4", "e5"}},
		{"first id missing", full[1:], []string{"S(M)", "e3", "e4", "e5"}},
		{"both ids missing: tie at the end stays", full[2:], []string{"e3", "e4", "e5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, describe(View(tc.slice, nil))); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
		})
	}

	// Unsorted timestamps with missing ids: linear fallback, same result.
	m := markerOver(t, "M", 10, []*session.Event{ev("a", 5), ev("b", 6), ev("c", 7)}, 0, 2, "sum")
	unsorted := []*session.Event{ev("b", 6), ev("z", 1), ev("c", 7), ev("y", 9), m}
	if diff := cmp.Diff([]string{"S(M)", "z", "y"}, describe(View(unsorted, nil))); diff != "" {
		t.Errorf("unsorted (-want +got):\n%s", diff)
	}
}

func TestViewNilEntriesAndLogger(t *testing.T) {
	stream := build(t, ev("e1", 1), ev("e2", 2), over("M", 3, "e1", "e1"))
	stream = append([]*session.Event{nil}, stream...)
	stream = append(stream, nil)
	if diff := cmp.Diff([]string{"S(M)", "e2"}, describe(View(stream, nil))); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
}
