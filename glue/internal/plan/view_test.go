package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/genai"

	. "github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/record"
)

// rec is an event carrying record (and no content).
func rec(id string, record any) Event {
	return Event{ID: id, Author: "user", Metadata: map[string]any{MetadataKey: record}}
}

// ev is a plain user event.
func ev(id string) Event { return userEv(id, "i-"+id, "text of "+id) }

// inScope puts e in scope.
func inScope(scope string, e Event) Event {
	e.Scope = scope
	return e
}

// withTS gives e the timestamp at(sec).
func withTS(sec int, e Event) Event {
	e.Timestamp = at(sec)
	return e
}

func TestView(t *testing.T) {
	badRecord := map[string]any{"startTimestamp": 5.0, "endTimestamp": 1.0, "eventCount": 1.0}
	cases := []struct {
		name  string
		build func(t *testing.T) []Event
		want  []string
		warns int // warnings logged
	}{
		{
			name:  "empty",
			build: func(*testing.T) []Event { return nil },
			want:  []string{},
		},
		{
			name:  "no markers",
			build: func(*testing.T) []Event { return stamp(ev("e1"), ev("e2")) },
			want:  []string{"e1", "e2"},
		},
		{
			name: "one marker: summary in place of the first covered event",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), ev("e2"), ev("e3"), mustMarkerEvent(t, "m1", v2(1, "", "one", "e1", "e2")))
			},
			want: []string{"S(m1:one)", "e3"},
		},
		{
			name: "covered events need not be contiguous: the summary comes first",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), ev("e2"), ev("e3"), ev("e4"), mustMarkerEvent(t, "m1", v2(1, "", "one", "e2", "e4")))
			},
			want: []string{"S(m1:one)", "e1", "e3"},
		},
		{
			name: "a chain covers what every marker in it lists",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "m1", v2(1, "", "one", "e1")),
					ev("e3"), ev("e4"), mustMarkerEvent(t, "m2", v2(2, "m1", "two", "e2", "e3")), ev("e5"))
			},
			want: []string{"S(m2:two)", "e4", "e5"},
		},
		{
			name: "a three-marker chain",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), mustMarkerEvent(t, "m1", v2(1, "", "one", "e1")), ev("e2"),
					mustMarkerEvent(t, "m2", v2(2, "m1", "two", "e2")), ev("e3"),
					mustMarkerEvent(t, "m3", v2(3, "m2", "three", "e3")), ev("e4"))
			},
			want: []string{"S(m3:three)", "e4"},
		},
		{
			name: "highest seq wins, not the latest position",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), ev("e2"), ev("e3"), mustMarkerEvent(t, "m2", v2(2, "m1", "two", "e2")),
					mustMarkerEvent(t, "m1", v2(1, "", "one", "e1")))
			},
			want: []string{"S(m2:two)", "e3"},
		},
		{
			name: "an older marker alone hides nothing once a newer one wins without it in its chain",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "m1", v2(1, "", "one", "e1")),
					mustMarkerEvent(t, "m2", v2(2, "gone", "two", "e2")))
			},
			want: []string{"S(m2:two)", "e1"},
		},
		{
			name: "a broken link ends the chain: older events show raw",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "m1", v2(1, "", "one", "e1")), ev("e3"),
					mustMarkerEvent(t, "m2", v2(2, "m1", "two", "e2")),
					mustMarkerEvent(t, "m3", v2(3, "missing", "three", "e3")))
			},
			want: []string{"S(m3:three)", "e1", "e2"},
		},
		{
			name: "a link to an invalid record ends the chain",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), ev("e2"), rec("m1", badRecord), mustMarkerEvent(t, "m2", v2(2, "m1", "two", "e2")))
			},
			want:  []string{"S(m2:two)", "e1"},
			warns: 1,
		},
		{
			name: "a cycle in the chain ends",
			build: func(t *testing.T) []Event {
				m1 := v2(1, "m2", "one", "e1") // seq 1 with a previous: valid, and a cycle
				return stamp(ev("e1"), ev("e2"), ev("e3"), mustMarkerEvent(t, "m1", m1),
					mustMarkerEvent(t, "m2", v2(2, "m1", "two", "e2")))
			},
			want: []string{"S(m2:two)", "e3"},
		},
		{
			name: "lagging replica: an event stored late with an old timestamp is not hidden unless listed",
			build: func(t *testing.T) []Event {
				return []Event{withTS(10, ev("e1")), withTS(20, ev("e2")), withTS(30, ev("e3")),
					withTS(31, mustMarkerEvent(t, "m1", v2(1, "", "one", "e1", "e2", "e3"))),
					withTS(15, ev("late")), withTS(40, ev("e4"))}
			},
			want: []string{"S(m1:one)", "late", "e4"},
		},
		{
			name: "position never decides: a marker stored before the events it lists still covers them",
			build: func(t *testing.T) []Event {
				return stamp(mustMarkerEvent(t, "m1", v2(1, "", "one", "e1")), ev("e1"), ev("e2"))
			},
			want: []string{"S(m1:one)", "e2"},
		},
		{
			name: "no covered event in the read (its newest part): the summary stays, first",
			build: func(t *testing.T) []Event {
				return stamp(ev("e5"), ev("e6"), mustMarkerEvent(t, "m1", v2(1, "", "one", "e1", "e2")), ev("e7"))
			},
			want: []string{"S(m1:one)", "e5", "e6", "e7"},
		},
		{
			name: "marker-only events never appear, valid or not",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), rec("bad", badRecord), rec("junk", 42), ev("e2"))
			},
			want:  []string{"e1", "e2"},
			warns: 2,
		},
		{
			name: "an invalid record hides nothing",
			build: func(t *testing.T) []Event {
				inv, err := v2(1, "", "x", "e1", "e3").Metadata()
				if err != nil {
					t.Fatal(err)
				}
				bad := maps.Clone(inv[MetadataKey].(map[string]any))
				bad["startTimestamp"] = "soon" // does not decode
				return stamp(ev("e1"), ev("e2"), ev("e3"), rec("bad", bad), rec("bad2", `{"eventIds":["e1"]}`))
			},
			want:  []string{"e1", "e2", "e3"},
			warns: 2,
		},
		{
			name: "an event with content and an invalid record shows its content",
			build: func(t *testing.T) []Event {
				e := ev("both")
				e.Metadata = map[string]any{MetadataKey: badRecord}
				return stamp(ev("e1"), e, ev("e2"))
			},
			want:  []string{"e1", "both", "e2"},
			warns: 1,
		},
		{
			name: "an event with content and a valid record shows its content and its record counts",
			build: func(t *testing.T) []Event {
				e := ev("both")
				md, err := v2(1, "", "one", "e1").Metadata()
				if err != nil {
					t.Fatal(err)
				}
				e.Metadata = md
				return stamp(ev("e1"), e, ev("e2"))
			},
			want: []string{"S(both:one)", "both", "e2"},
		},
		{
			name: "marker-only events are never covered, even when listed",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), mustMarkerEvent(t, "m1", v2(1, "", "one", "e1")),
					mustMarkerEvent(t, "m2", v2(2, "m1", "two", "m1", "e2")), ev("e2"))
			},
			want: []string{"S(m2:two)"},
		},
		{
			name: "an empty id is never covered",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), ev(""), mustMarkerEvent(t, "m1", v2(1, "", "one", "", "e1")))
			},
			want: []string{"S(m1:one)", ""},
		},
		{
			name: "equal seq: the marker covering more events wins",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "big", v2(1, "", "big", "e1", "e2")),
					mustMarkerEvent(t, "small", v2(1, "", "small", "e1")))
			},
			want: []string{"S(big:big)"},
		},
		{
			name: "equal seq and count: the later marker wins",
			build: func(t *testing.T) []Event {
				return stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "a", v2(1, "", "a", "e1")),
					mustMarkerEvent(t, "b", v2(1, "", "b", "e2")))
			},
			want: []string{"S(b:b)", "e1"},
		},
		{
			name: "scopes are independent: each has its winner and one summary",
			build: func(t *testing.T) []Event {
				ma := v2(1, "", "scope a", "a1", "x")
				ma.Scope = "a"
				mb := v2(3, "none", "scope b", "b1")
				mb.Scope = "b"
				return stamp(ev("x"), inScope("a", ev("a1")), inScope("b", ev("b1")), inScope("a", ev("a2")),
					mustMarkerEvent(t, "ma", ma), mustMarkerEvent(t, "mroot", v2(1, "", "root", "x", "a2")),
					mustMarkerEvent(t, "mb", mb))
			},
			// "x" is in scope "": ma (scope a) does not hide it; mroot (scope "") does not hide
			// a2 (scope a).
			want: []string{"S(mroot:root)", "S(ma:scope a)", "S(mb:scope b)", "a2"},
		},
		{
			name: "a chain does not cross scopes",
			build: func(t *testing.T) []Event {
				ma := v2(1, "", "scope a", "e1")
				ma.Scope = "a"
				return stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "ma", ma),
					mustMarkerEvent(t, "m2", v2(2, "ma", "two", "e2")))
			},
			want: []string{"S(m2:two)", "e1", "S(ma:scope a)"},
		},
		{
			name: "the summary header is not doubled and thoughts are left out",
			build: func(t *testing.T) []Event {
				m := v2(1, "", "x", "e1")
				m.CompactedContent = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
					{Text: "thinking...", Thought: true}, {Text: SummaryHeader + "\nalready headed"}}}
				return stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "m1", m))
			},
			want: []string{"S(m1:already headed)", "e2"},
		},
		{
			name: "a record of another version hides nothing",
			build: func(t *testing.T) []Event {
				var events []Event
				for _, version := range []int{0, 1, 3} {
					m := v2(1, "", "x", "e1")
					m.Version = version
					md, err := json.Marshal(m)
					if err != nil {
						t.Fatal(err)
					}
					events = append(events, rec(fmt.Sprint("v", version), string(md)))
				}
				return stamp(append([]Event{ev("e1"), ev("e2")}, events...)...)
			},
			want:  []string{"e1", "e2"},
			warns: 3,
		},
		{
			name: "a record naming its own event hides nothing, not even that event",
			build: func(t *testing.T) []Event {
				e := ev("self")
				md, err := v2(1, "", "x", "e1").Metadata()
				if err != nil {
					t.Fatal(err)
				}
				md[MetadataKey].(map[string]any)["eventIds"] = []any{"e1", "self"}
				e.Metadata = md
				return stamp(ev("e1"), e, ev("e2"))
			},
			want:  []string{"e1", "self", "e2"},
			warns: 1,
		},
		{
			name: "the oldest covered event outside the read: the summary comes first",
			build: func(t *testing.T) []Event {
				m := v2(2, "m1", "two", "e3")
				m.FirstEventID = "e1" // covered by m1, which the read does not hold
				return stamp(ev("pend"), ev("e3"), ev("e4"), ev("e5"), mustMarkerEvent(t, "m2", m), ev("e6"))
			},
			want: []string{"S(m2:two)", "pend", "e4", "e5", "e6"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			events := tc.build(t)
			before := fmt.Sprint(dbRoundTripEvents(t, events))
			core, logs := observer.New(zapcore.WarnLevel)
			got := describe(events, NewViewer(zap.New(core)).View(events))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("View (-want +got):\n%s", diff)
			}
			if n := logs.FilterMessage("compaction: ignoring marker").Len(); n != tc.warns || logs.Len() != tc.warns {
				t.Errorf("logged %d warnings (%d entries), want %d: %v", n, logs.Len(), tc.warns, logs.All())
			}
			if after := fmt.Sprint(dbRoundTripEvents(t, events)); after != before {
				t.Error("View mutated its input")
			}
		})
	}
}

// dbRoundTripEvents renders events for a mutation check.
func dbRoundTripEvents(t *testing.T, events []Event) string {
	t.Helper()
	b, err := json.Marshal(events)
	if err != nil {
		// Some records (channels, NaN) do not marshal: compare their %v instead.
		return fmt.Sprintf("%#v", events)
	}
	return string(b)
}

// The warning names the event and the reason, never the record's content.
func TestViewWarningFields(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	events := stamp(ev("e1"), rec("bad", map[string]any{"version": 2.0, "startTimestamp": 1.0, "endTimestamp": 2.0, "summarizer": "secret"}))
	NewViewer(zap.New(core)).View(events)
	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("logged %d entries, want 1", len(entries))
	}
	got := entries[0].ContextMap()
	want := map[string]any{"event_id": "bad", "position": int64(1), "reason": "no eventIds and no excerptedEventIds"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warning fields (-want +got):\n%s", diff)
	}
}

// The summary item's content: role user, header first, parts copied (the marker's content is
// never aliased, so a caller editing the view cannot change the parsed marker).
func TestViewSummaryContent(t *testing.T) {
	events := stamp(ev("e1"), mustMarkerEvent(t, "m1", v2(1, "", "the summary", "e1")))
	v := NewViewer(nil)
	items := v.View(events)
	if len(items) != 1 || items[0].Summary == nil {
		t.Fatalf("View = %+v, want one summary", items)
	}
	it := items[0]
	want := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: SummaryHeader + "\nthe summary"}}}
	if diff := cmp.Diff(want, it.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if it.Index != 0 || it.MarkerID != "m1" {
		t.Errorf("summary item = %+v, want index 0, marker m1", it)
	}
	if !IsSummary(it.Summary) {
		t.Error("IsSummary(summary) = false")
	}
	it.Summary.Parts[0].Text = "edited"
	again := v.View(events)
	if got := textOf(again[0].Summary); got != SummaryHeader+"\nthe summary" {
		t.Errorf("after editing a view, the next view shows %q", got)
	}
	if summaryEventID("m1") != "compaction-summary-m1" {
		t.Errorf("summaryEventID = %q", summaryEventID("m1"))
	}
}

func TestIsSummary(t *testing.T) {
	cases := []struct {
		c    *genai.Content
		want bool
	}{
		{nil, false},
		{genai.NewContentFromText(SummaryHeader+"\nx", genai.RoleUser), true},
		{genai.NewContentFromText(SummaryHeader+"\nx", genai.RoleModel), false},
		{genai.NewContentFromText("x "+SummaryHeader, genai.RoleUser), false},
		{&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{nil, {Text: ""}, {Text: SummaryHeader}}}, true},
		{&genai.Content{Role: genai.RoleUser}, false},
	}
	for i, tc := range cases {
		if got := IsSummary(tc.c); got != tc.want {
			t.Errorf("case %d: IsSummary = %v, want %v", i, got, tc.want)
		}
	}
}

// One Viewer serves many sessions: each view reads its own records, even when two sessions hold
// marker events with the same id.
func TestViewerCacheIsPerRecord(t *testing.T) {
	v := NewViewer(nil)
	a := stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "m1", v2(1, "", "session a", "e1")))
	b := stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "m1", v2(1, "", "session b", "e2")))
	raw := func(events []Event) []Event { // the same records as JSON text
		out := append([]Event(nil), events...)
		b, _ := json.Marshal(out[2].Metadata[MetadataKey])
		out[2].Metadata = map[string]any{MetadataKey: json.RawMessage(b)}
		return out
	}
	// Records equal in every field but the summary text, or the middle of the id list.
	c1 := v2(1, "", "session c", "e1", "e2", "e3")
	c2 := v2(1, "", "session c, other text", "e1", "e2", "e3")
	c3 := v2(1, "", "session c", "e1", "e3")
	c3.EventCount = 3
	c := stamp(ev("e1"), ev("e2"), ev("e3"), ev("e4"), mustMarkerEvent(t, "m1", c1))
	cText := stamp(ev("e1"), ev("e2"), ev("e3"), ev("e4"), mustMarkerEvent(t, "m1", c2))
	cIDs := stamp(ev("e1"), ev("e2"), ev("e3"), ev("e4"), mustMarkerEvent(t, "m1", c3))
	for _, round := range []string{"first", "cached"} {
		for _, tc := range []struct {
			name   string
			events []Event
			want   []string
		}{
			{"a", a, []string{"S(m1:session a)", "e2"}},
			{"b", b, []string{"S(m1:session b)", "e1"}},
			{"a as json.RawMessage", raw(a), []string{"S(m1:session a)", "e2"}},
			{"b as json.RawMessage", raw(b), []string{"S(m1:session b)", "e1"}},
			{"c", c, []string{"S(m1:session c)", "e4"}},
			{"c with another summary", cText, []string{"S(m1:session c, other text)", "e4"}},
			{"c with other ids", cIDs, []string{"S(m1:session c)", "e2", "e4"}},
		} {
			if diff := cmp.Diff(tc.want, describe(tc.events, v.View(tc.events))); diff != "" {
				t.Errorf("%s view of %s (-want +got):\n%s", round, tc.name, diff)
			}
		}
	}
}

// View is linear and never confused by many markers: 500 markers in one chain.
func TestViewLongChain(t *testing.T) {
	var events []Event
	prev := ""
	for k := 1; k <= 500; k++ {
		e := ev(fmt.Sprintf("e%d", k))
		events = append(events, e)
		id := fmt.Sprintf("m%d", k)
		events = append(events, mustMarkerEvent(t, id, v2(k, prev, "summary "+id, e.ID)))
		prev = id
	}
	events = append(events, ev("tail"))
	events = stamp(events...)
	got := describe(events, NewViewer(nil).View(events))
	if diff := cmp.Diff([]string{"S(m500:summary m500)", "tail"}, got); diff != "" {
		t.Errorf("View (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(got[0], "S(m500") {
		t.Error("the newest marker does not win")
	}
}

// Two scopes' summaries can take one place (an event with content carrying a marker record of
// one scope and covered by a marker of another): their order is the same in every view.
func TestViewSummaryOrderIsDeterministic(t *testing.T) {
	ma := v2(1, "", "scope a", "gone")
	ma.Scope = "a"
	x := inScope("b", ev("x"))
	md, err := ma.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	x.Metadata = md
	mb := v2(1, "", "scope b", "x")
	mb.Scope = "b"
	mc := v2(1, "", "scope c", "gone")
	mc.Scope = "c"
	events := stamp(x, mustMarkerEvent(t, "mb", mb), mustMarkerEvent(t, "mc", mc))
	want := describe(events, NewViewer(nil).View(events))
	for i := 0; i < 50; i++ {
		if diff := cmp.Diff(want, describe(events, NewViewer(nil).View(events))); diff != "" {
			t.Fatalf("view %d differs from the first (-first +now):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff([]string{"S(x:scope a)", "S(mb:scope b)", "S(mc:scope c)"}, want); diff != "" {
		t.Errorf("View (-want +got):\n%s", diff)
	}
}

// Between two compactions a view only grows at its end: events appended to a session (no new
// marker) never change what the view showed before them, so a request extends the previous one
// byte for byte (a provider's prompt cache keeps serving the prefix).
func TestViewPrefixStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 300; i++ {
		data := make([]byte, 120)
		for j := range data {
			data[j] = byte(rng.IntN(256))
		}
		events := fuzzSession(data)
		v := NewViewer(nil)
		before := v.View(events)
		grown := slices.Clone(events)
		for k := 0; k < 5; k++ {
			grown = append(grown, userEv(fmt.Sprintf("new%d", k), "inew", "a new message"))
		}
		after := v.View(grown)
		if len(after) != len(before)+5 {
			t.Fatalf("case %d: %d items after appending 5 events to %d", i, len(after), len(before))
		}
		if diff := cmp.Diff(before, after[:len(before)]); diff != "" {
			t.Fatalf("case %d: the view's prefix changed (-before +after):\n%s", i, diff)
		}
	}
}

// Whatever a summarizer wrote, the view's summary is recognized by IsSummary (what the budget
// pins): the header is added, or normalized when the text already starts with it after blanks.
func TestSummaryContentIsSummary(t *testing.T) {
	for _, text := range []string{"plain", SummaryHeader + "\nheaded", " \n" + SummaryHeader + "\nindented", "\t" + SummaryHeader} {
		m := v2(1, "", "x", "e1")
		m.CompactedContent = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1}}}, {Text: "thought", Thought: true}, {Text: text}}}
		events := stamp(ev("e1"), mustMarkerEvent(t, "m1", m))
		items := NewViewer(nil).View(events)
		if len(items) != 1 || !IsSummary(items[0].Summary) {
			t.Errorf("summary of %q: IsSummary = false: %+v", text, items[0].Summary)
		}
		if got := strings.Count(textOf(items[0].Summary), SummaryHeader); got != 1 {
			t.Errorf("summary of %q holds the header %d times", text, got)
		}
	}
}

// A summary's event carries the time and invocation of the oldest covered event, from the
// record: every read of the session shows the same event, whatever it holds.
func TestViewSummaryTakesTheRecordsPlace(t *testing.T) {
	m := v2(2, "m1", "two", "e3")
	m.FirstEventID, m.FirstInvocationID, m.StartTimestamp = "e1", "i-e1", record.Seconds(at(1))
	whole := stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "m1", v2(1, "", "one", "e1", "e2")), ev("e3"), ev("e4"),
		mustMarkerEvent(t, "m2", m), ev("e5"))
	v := NewViewer(nil)
	for name, events := range map[string][]Event{"whole": whole, "newest part": whole[4:]} {
		items := v.View(events)
		if len(items) == 0 || items[0].Summary == nil {
			t.Fatalf("%s: no summary first: %v", name, describe(events, items))
		}
		if got := items[0]; !got.Timestamp.Equal(at(1)) || got.InvocationID != "i-e1" {
			t.Errorf("%s: summary at %v in %q, want %v in %q", name, got.Timestamp, got.InvocationID, at(1), "i-e1")
		}
		if diff := cmp.Diff([]string{"S(m2:two)", "e4", "e5"}, describe(events, items)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// The Viewer's caches are bounded by bytes as well as by count: markers with long summaries
// (sessions written by another summarizer, or by hand) fill them no further than the bound, and
// a view of a marker whose record or resolution was dropped is the same as before.
func TestViewerCachesBoundedByBytes(t *testing.T) {
	const bound = 64 << 10
	v := newViewer(nil, bound, bound)
	sessions := make([][]Event, 40)
	for i := range sessions {
		text := fmt.Sprintf("session %d: %s", i, strings.Repeat("a long summary line. ", 400)) // ~8 KB
		sessions[i] = stamp(ev("e1"), ev("e2"), mustMarkerEvent(t, "m1", v2(1, "", text, "e1")))
	}
	want := make([][]string, len(sessions))
	for round := range 2 {
		for i, events := range sessions {
			got := describe(events, v.View(events))
			if round == 0 {
				want[i] = got
				if len(got) != 2 || !strings.HasPrefix(got[0], fmt.Sprintf("S(m1:session %d: ", i)) {
					t.Fatalf("view of session %d: %.80q", i, got)
				}
			} else if diff := cmp.Diff(want[i], got); diff != "" {
				t.Fatalf("second view of session %d differs (-first +second):\n%s", i, diff)
			}
			if w := v.records.Weight(); w > bound {
				t.Fatalf("after session %d: %d bytes of records kept, bound %d", i, w, bound)
			}
			if w := v.resolved.Weight(); w > bound {
				t.Fatalf("after session %d: %d bytes of resolved markers kept, bound %d", i, w, bound)
			}
		}
	}
	if n := v.records.Len(); n == 0 || n >= len(sessions) {
		t.Errorf("%d records kept of %d: want some, not all", n, len(sessions))
	}
	if n := v.resolved.Len(); n == 0 || n >= len(sessions) {
		t.Errorf("%d resolved markers kept of %d: want some, not all", n, len(sessions))
	}
}
