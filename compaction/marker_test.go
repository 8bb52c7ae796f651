package compaction

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"
)

func sampleMarker() *Marker {
	return &Marker{
		StartTimestamp:    Seconds(time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)),
		EndTimestamp:      Seconds(time.Date(2026, 1, 2, 3, 9, 5, 654321000, time.UTC)),
		CompactedContent:  &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "the summary"}}},
		FirstEventID:      "e1",
		LastEventID:       "e9",
		FirstInvocationID: "inv1",
		LastInvocationID:  "inv3",
		EdgeEventIDs:      []string{"e1", "e9"},
		ExcludedEventIDs:  []string{"e4"},
		EventCount:        8,
		OriginalTokens:    1200,
		CompactedTokens:   100,
		CompressionRatio:  12,
		Trigger:           TriggerTokens,
		Summarizer:        "extractive",
		Version:           MarkerVersion,
	}
}

func TestMarkerMapShape(t *testing.T) {
	m := sampleMarker()
	rec, err := m.Map()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"version":           1.0,
		"startTimestamp":    m.StartTimestamp,
		"endTimestamp":      m.EndTimestamp,
		"compactedContent":  map[string]any{"role": "user", "parts": []any{map[string]any{"text": "the summary"}}},
		"firstEventId":      "e1",
		"lastEventId":       "e9",
		"firstInvocationId": "inv1",
		"lastInvocationId":  "inv3",
		"edgeEventIds":      []any{"e1", "e9"},
		"excludedEventIds":  []any{"e4"},
		"eventCount":        8.0,
		"originalTokens":    1200.0,
		"compactedTokens":   100.0,
		"compressionRatio":  12.0,
		"trigger":           "tokens",
		"summarizer":        "extractive",
	}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("Map() (-want +got):\n%s", diff)
	}
	// 1:1 with adk-python's / adk-go v2's EventCompaction.
	wantEC := map[string]any{
		"startTimestamp":   m.StartTimestamp,
		"endTimestamp":     m.EndTimestamp,
		"compactedContent": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "the summary"}}},
	}
	if diff := cmp.Diff(wantEC, m.EventCompaction()); diff != "" {
		t.Errorf("EventCompaction() (-want +got):\n%s", diff)
	}
	if got := m.Start(); !got.Equal(time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)) {
		t.Errorf("Start() = %v", got)
	}
	if got := m.End(); !got.Equal(time.Date(2026, 1, 2, 3, 9, 5, 654321000, time.UTC)) {
		t.Errorf("End() = %v", got)
	}
}

func TestReadMarkerShapes(t *testing.T) {
	m := sampleMarker()
	rec, err := m.Map()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(rec)
	for name, v := range map[string]any{
		"map":             rec,
		"*Marker":         m,
		"Marker":          *m,
		"json.RawMessage": json.RawMessage(raw),
		"[]byte":          raw,
		"string":          string(raw),
	} {
		t.Run(name, func(t *testing.T) {
			e := rawMarker("M", 1, v)
			if !IsCompactionEvent(e) {
				t.Fatal("IsCompactionEvent = false")
			}
			got, err := ReadMarker(e)
			if err != nil {
				t.Fatalf("ReadMarker: %v", err)
			}
			if diff := cmp.Diff(m, got); diff != "" {
				t.Errorf("ReadMarker (-want +got):\n%s", diff)
			}
			// The result shares nothing with the event.
			got.CompactedContent.Parts[0].Text = "changed"
			got.EdgeEventIDs[0] = "changed"
			again, _ := ReadMarker(e)
			if diff := cmp.Diff(m, again); diff != "" {
				t.Errorf("ReadMarker result aliases the event (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadMarkerErrors(t *testing.T) {
	good := func() map[string]any {
		rec, err := sampleMarker().Map()
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	set := func(k string, v any) map[string]any { r := good(); r[k] = v; return r }
	del := func(k string) map[string]any { r := good(); delete(r, k); return r }
	tests := map[string]any{
		"int":                 42,
		"slice":               []any{1, 2},
		"nil *Marker":         (*Marker)(nil),
		"bad json string":     "{",
		"json null":           "null",
		"inverted":            set("endTimestamp", 1.0),
		"missing start":       del("startTimestamp"),
		"missing end":         del("endTimestamp"),
		"zero start":          set("startTimestamp", 0.0),
		"negative start":      set("startTimestamp", -5.0),
		"start as string":     set("startTimestamp", "1700000000"),
		"missing first id":    del("firstEventId"),
		"missing last id":     set("lastEventId", ""),
		"id as number":        set("firstEventId", 3.0),
		"missing eventCount":  del("eventCount"),
		"zero eventCount":     set("eventCount", 0.0),
		"fractional count":    set("eventCount", 2.5),
		"missing content":     del("compactedContent"),
		"content is a string": set("compactedContent", "summary"),
		"content no parts":    set("compactedContent", map[string]any{"role": "user", "parts": []any{}}),
		"content only blank":  set("compactedContent", map[string]any{"parts": []any{map[string]any{"text": "  "}}}),
		"content only thought": set("compactedContent", map[string]any{"parts": []any{
			map[string]any{"text": "hmm", "thought": true}}}),
		"edge ids not a list": set("edgeEventIds", "e1"),
		"negative version":    set("version", -1.0),
		"unencodable value":   map[string]any{"startTimestamp": math.NaN()},
		"channel in map":      map[string]any{"x": make(chan int)},
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ReadMarker(rawMarker("bad-"+name, 1, v))
			var ime *InvalidMarkerError
			if !errors.As(err, &ime) {
				t.Fatalf("ReadMarker error = %v, want *InvalidMarkerError", err)
			}
			if ime.EventID != "bad-"+name || ime.Reason == "" {
				t.Errorf("error fields: %+v", ime)
			}
		})
	}

	t.Run("no marker", func(t *testing.T) {
		for _, e := range []*session.Event{nil, ev("e1", 1), rawMarker("nil-record", 1, nil)} {
			if IsCompactionEvent(e) {
				t.Errorf("IsCompactionEvent(%v) = true", e)
			}
			if _, err := ReadMarker(e); !errors.Is(err, ErrNoMarker) {
				t.Errorf("ReadMarker error = %v, want ErrNoMarker", err)
			}
		}
	})

	t.Run("Validate", func(t *testing.T) {
		var nilM *Marker
		if err := nilM.Validate(); err == nil {
			t.Error("nil marker validates")
		}
		if err := sampleMarker().Validate(); err != nil {
			t.Errorf("sample marker: %v", err)
		}
		bad := sampleMarker()
		bad.EndTimestamp = bad.StartTimestamp - 1
		var ime *InvalidMarkerError
		if err := bad.Validate(); !errors.As(err, &ime) {
			t.Errorf("inverted marker: %v", err)
		}
	})

	t.Run("NaN marker is not written", func(t *testing.T) {
		m := sampleMarker()
		m.StartTimestamp = math.NaN()
		if e := NewMarkerEvent(m, "inv", time.Now()); e != nil {
			t.Errorf("NewMarkerEvent(NaN) = %v, want nil", e)
		}
		if e := NewMarkerEvent(nil, "inv", time.Now()); e != nil {
			t.Errorf("NewMarkerEvent(nil) = %v, want nil", e)
		}
	})
}

func TestNewMarkerEvent(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 10, time.UTC)
	m := sampleMarker()
	e1 := NewMarkerEvent(m, "inv-x", now)
	e2 := NewMarkerEvent(m, "inv-x", now)
	if e1.ID == "" || e1.ID == e2.ID {
		t.Errorf("ids %q %q: want distinct non-empty", e1.ID, e2.ID)
	}
	if e1.Content != nil || e1.Author != "user" || e1.InvocationID != "inv-x" || !e1.Timestamp.Equal(now) {
		t.Errorf("marker event: content %v author %q inv %q ts %v", e1.Content, e1.Author, e1.InvocationID, e1.Timestamp)
	}
	if _, ok := e1.CustomMetadata[MetadataKey].(map[string]any); !ok {
		t.Errorf("record type %T, want map[string]any", e1.CustomMetadata[MetadataKey])
	}
	got, err := ReadMarker(e1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// Mutating the marker afterwards does not change the event.
	m.CompactedContent.Parts[0].Text = "other"
	if got2, _ := ReadMarker(e1); got2.CompactedContent.Parts[0].Text != "the summary" {
		t.Errorf("event aliases the marker")
	}
}

func TestSetRange(t *testing.T) {
	stream := []*session.Event{
		ev("a", 1), ev("b", 2), fcall("p", 2, "approve"), ev("c", 2),
		rawMarker("old", 2.5, 42), ev("d", 1.5), ev("e", 3), ev("f", 3), ev("g", 4),
	}
	m := &Marker{}
	n := m.SetRange(stream, 1, 7, func(e *session.Event) bool { return e.ID == "p" })
	want := &Marker{
		StartTimestamp: Seconds(ts(1.5)), EndTimestamp: Seconds(ts(3)),
		FirstEventID: "b", LastEventID: "f", FirstInvocationID: "inv-b", LastInvocationID: "inv-f",
		EdgeEventIDs: []string{"d", "e", "f"}, ExcludedEventIDs: []string{"p"}, EventCount: 5,
	}
	if n != 5 {
		t.Errorf("SetRange = %d, want 5", n)
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("SetRange (-want +got):\n%s", diff)
	}
	// The view covers exactly b, c, d, e, f (not p; a and g outside).
	m.CompactedContent = genai.NewContentFromText("s", genai.RoleUser)
	mev := NewMarkerEvent(m, "inv", ts(5))
	mev.ID = "M"
	got := describe(View(append(stream[:len(stream):len(stream)], mev), nil))
	if diff := cmp.Diff([]string{"a", "S(M)", "p", "g"}, got); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	// Empty and clamped ranges.
	if n := (&Marker{}).SetRange(stream, 4, 4, nil); n != 0 {
		t.Errorf("range of one marker covers %d", n)
	}
	if n := (&Marker{}).SetRange(stream, -3, 100, nil); n != 8 {
		t.Errorf("clamped range covers %d, want 8", n)
	}
}

// newSQLite opens (or reopens) a database session service over path.
func newSQLite(t testing.TB, path string) session.Service {
	t.Helper()
	svc, err := database.NewSessionService(sqlite.Open(path), &gorm.Config{Logger: gormlogger.Default.LogMode(gormlogger.Silent)})
	if err != nil {
		t.Fatalf("NewSessionService: %v", err)
	}
	if err := database.AutoMigrate(svc); err != nil {
		t.Fatalf("AutoMigrate: %v", err)
	}
	return svc
}

// TestMarkerRoundTrip writes events and markers through real session
// services, reads them back, and checks the markers parse and the view is
// the one computed before storage (and after a restart for SQLite).
func TestMarkerRoundTrip(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "s.db")
	backends := []struct {
		name   string
		svc    session.Service
		reopen func() session.Service
	}{
		{name: "inmemory", svc: session.InMemoryService()},
		{name: "sqlite", svc: newSQLite(t, dbPath), reopen: func() session.Service { return newSQLite(t, dbPath) }},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			created, err := b.svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			sess := created.Session
			base := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
			var local []*session.Event
			add := func(e *session.Event) {
				t.Helper()
				if err := b.svc.AppendEvent(ctx, sess, e); err != nil {
					t.Fatalf("AppendEvent: %v", err)
				}
				local = append(local, e)
			}
			// Nanosecond timestamps and ties: the database truncates to µs.
			for i, spec := range []struct {
				id string
				ns int
			}{{"e1", 1_000_000_123}, {"e2", 2_000_000_999}, {"e3", 2_000_000_001}, {"e4", 3_000_000_500}, {"e5", 4_000_000_000}} {
				e := tev(spec.id, 0, []string{"user", "agent"}[i%2], "text of "+spec.id)
				e.Timestamp = base.Add(time.Duration(spec.ns))
				add(e)
			}
			at := func(e *session.Event, sec int) *session.Event {
				e.Timestamp = base.Add(time.Duration(sec) * time.Second)
				return e
			}
			add(at(markerOver(t, "M1", 0, local, 0, 1, "first summary"), 5))
			add(at(tev("e6", 0, "user", "text of e6"), 6))
			add(at(markerOver(t, "M2", 0, local, 0, 3, "rolled summary"), 7))
			add(at(tev("e7", 0, "agent", "text of e7"), 8))

			wantView := describe(View(local, nil))
			if diff := cmp.Diff([]string{"S(M2)", "e5", "e6", "e7"}, wantView); diff != "" {
				t.Fatalf("local view (-want +got):\n%s", diff)
			}
			wantMarkers := map[string]*Marker{}
			for _, e := range local {
				if IsCompactionEvent(e) {
					m, err := ReadMarker(e)
					if err != nil {
						t.Fatal(err)
					}
					wantMarkers[e.ID] = m
				}
			}

			check := func(t *testing.T, svc session.Service) {
				got, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
				if err != nil {
					t.Fatal(err)
				}
				stored := RawEvents(got.Session)
				if len(stored) != len(local) {
					t.Fatalf("stored %d events, want %d", len(stored), len(local))
				}
				for _, e := range stored {
					if !IsCompactionEvent(e) {
						continue
					}
					m, err := ReadMarker(e)
					if err != nil {
						t.Fatalf("ReadMarker(%s) after round trip: %v (record %T)", e.ID, err, e.CustomMetadata[MetadataKey])
					}
					if diff := cmp.Diff(wantMarkers[e.ID], m); diff != "" {
						t.Errorf("marker %s after round trip (-want +got):\n%s", e.ID, diff)
					}
				}
				if diff := cmp.Diff(wantView, describe(View(stored, nil))); diff != "" {
					t.Errorf("view after round trip (-want +got):\n%s", diff)
				}
				// Through the wrapper.
				wrapped, err := NewService(svc, nil).Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
				if err != nil {
					t.Fatal(err)
				}
				var viaWrapper []*session.Event
				for e := range wrapped.Session.Events().All() {
					viaWrapper = append(viaWrapper, e)
				}
				if diff := cmp.Diff(wantView, describe(viaWrapper)); diff != "" {
					t.Errorf("wrapper view (-want +got):\n%s", diff)
				}
				// The summary text survives the round trip.
				if txt := viaWrapper[0].Content.Parts[0].Text; txt != SummaryHeader+"\nrolled summary" {
					t.Errorf("summary text = %q", txt)
				}
			}
			t.Run("get", func(t *testing.T) { check(t, b.svc) })
			if b.reopen != nil {
				t.Run("restart", func(t *testing.T) { check(t, b.reopen()) })
			}
		})
	}
}

func TestSetMarker(t *testing.T) {
	shared := map[string]any{"other": "x"}
	e := &session.Event{ID: "ev"}
	e.CustomMetadata = shared
	if err := SetMarker(e, sampleMarker()); err != nil {
		t.Fatal(err)
	}
	if _, ok := shared[MetadataKey]; ok {
		t.Error("SetMarker mutated the shared metadata map")
	}
	if e.CustomMetadata["other"] != "x" {
		t.Error("SetMarker dropped other metadata")
	}
	got, err := ReadMarker(e)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sampleMarker(), got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	bad := sampleMarker()
	bad.CompactedContent = nil
	var ime *InvalidMarkerError
	if err := SetMarker(&session.Event{}, bad); !errors.As(err, &ime) {
		t.Errorf("SetMarker(invalid) = %v", err)
	}
	if err := SetMarker(nil, sampleMarker()); !errors.As(err, &ime) {
		t.Errorf("SetMarker(nil event) = %v", err)
	}
}
