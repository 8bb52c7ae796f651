package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	. "github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/record"
)

// bigToolTurn is an invocation reading a file of about 6 KB: user message, call, response, answer.
func bigToolTurn(inv string) []Event {
	file := fmt.Sprintf("// head of %s\n", inv) + strings.Repeat("func handler() { return process(ctx, req) }\n", 140) + fmt.Sprintf("// tail of %s\n", inv)
	return []Event{
		userEv(inv+"u", inv, "Read the file of request "+inv+"."),
		callEv(inv+"c", inv, inv+"-call", "read_file", map[string]any{"path": inv + ".go"}),
		respEv(inv+"r", inv, inv+"-call", "read_file", map[string]any{"content": file}),
		modelEv(inv+"m", inv, "It holds the handlers of request "+inv+"."),
	}
}

// The tool results of the completed invocations a compaction leaves raw are shown as excerpts
// until the next compaction; the running invocation's results, the other events and the
// storage stay whole.
func TestCompactionExcerptsRetainedToolResults(t *testing.T) {
	var events []Event
	for k := 1; k <= 6; k++ {
		events = append(events, bigToolTurn(fmt.Sprintf("i%d", k))...)
	}
	running := []Event{
		userEv("i7u", "i7", "Read one more."),
		callEv("i7c", "i7", "i7-call", "read_file", map[string]any{"path": "i7.go"}),
		respEv("i7r", "i7", "i7-call", "read_file", bigToolTurn("i7")[2].Content.Parts[0].FunctionResponse.Response),
	}
	cases := []struct {
		name         string
		cfg          Config
		events       []Event
		req          Selection
		wantExcerpts []string
		wantBytes    int
	}{
		// i5 and i6 stay raw; i6, the next request's previous turn, keeps its result whole.
		{"sliding window: the older retained invocation", Config{Interval: 3}, events,
			Selection{Trigger: TriggerInvocations, Invocation: "i6"}, []string{"i5r"}, defaultRetainedToolResultBytes},
		{"a larger excerpt", Config{Interval: 3, RetainedToolResultBytes: 2048}, events,
			Selection{Trigger: TriggerInvocations, Invocation: "i6"}, []string{"i5r"}, 2048},
		// Each invocation weighs about 2,000 tokens: i7, i6 and i5 fit in 7,500, i4 does not. i7
		// is running and i6 the newest completed one: only i5's result is cut.
		{"token trigger: the running and the newest invocation's results stay whole", Config{RetainRecentInvocations: 1, RetainRecentTokens: 7_500},
			append(append([]Event(nil), events...), running...), Selection{Trigger: TriggerTokens, Invocation: "i7", Live: true, TokenLimit: 20_000},
			[]string{"i5r"}, defaultRetainedToolResultBytes},
		// In the next three, i7 has not ended with the model's answer and i8, a whole turn, is
		// the newest: i6 to i8 stay raw, i6's result is cut, i7's stays whole.
		// A trigger that ran late, while i7 was running (its result not read yet).
		{"an invocation without its final answer keeps its results whole", Config{Interval: 3, RetainRecentInvocations: 3},
			after(events, running), Selection{Trigger: TriggerInvocations, Invocation: "i8"},
			[]string{"i6r"}, defaultRetainedToolResultBytes},
		// A result that skips the model's summarization (adk-go counts it as final): the model
		// never read it.
		{"a result the model never read stays whole", Config{Interval: 3, RetainRecentInvocations: 3},
			after(events, withFinal(running)), Selection{Trigger: TriggerInvocations, Invocation: "i8"},
			[]string{"i6r"}, defaultRetainedToolResultBytes},
		// State changes and workflow events without content after i7's result do not end it.
		{"bookkeeping after a result does not end the invocation", Config{Interval: 3, RetainRecentInvocations: 3},
			after(events, append(append([]Event(nil), running...), Event{ID: "i7s", InvocationID: "i7", Author: "agent", Final: true})),
			Selection{Trigger: TriggerInvocations, Invocation: "i8"},
			[]string{"i6r"}, defaultRetainedToolResultBytes},
		// i6's trigger ran late, while i7 was running (a manual compaction during a turn is
		// alike): i6 and i7 stay raw, and i6, the newest invocation the model answered and so the
		// next request's previous turn, keeps its result whole, as i7 does.
		{"a late trigger keeps the previous turn whole", Config{Interval: 3},
			append(append([]Event(nil), events...), running...), Selection{Trigger: TriggerInvocations, Invocation: "i6"},
			nil, 0},
		{"a manual compaction during a turn keeps the previous turn whole", Config{Interval: 3, RetainRecentTokens: 7_500},
			append(append([]Event(nil), events...), running...), Selection{Trigger: TriggerManual, Invocation: "i7", TokenLimit: 20_000},
			[]string{"i5r"}, defaultRetainedToolResultBytes},
		{"off", Config{Interval: 3, RetainedToolResultBytes: -1}, events,
			Selection{Trigger: TriggerInvocations, Invocation: "i6"}, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, m, a, err := compactOnce(t, tc.cfg, tc.events, tc.req)
			if err != nil || m == nil {
				t.Fatalf("Compact = %v, %v (%+v)", m, err, a)
			}
			if diff := cmp.Diff(tc.wantExcerpts, m.ExcerptedEventIDs); diff != "" {
				t.Errorf("excerpted ids (-want +got):\n%s", diff)
			}
			if m.ExcerptBytes != tc.wantBytes {
				t.Errorf("ExcerptBytes = %d, want %d", m.ExcerptBytes, tc.wantBytes)
			}

			stored := store.snapshot()
			before, _ := json.Marshal(stored)
			items := NewViewer(nil).View(stored)
			excerpted := map[string]bool{}
			for _, id := range tc.wantExcerpts {
				excerpted[id] = true
			}
			for _, it := range items {
				if it.Summary != nil {
					continue
				}
				e := stored[it.Index]
				if !excerpted[e.ID] {
					if it.Content != nil {
						t.Errorf("%s: shown with other content, want its own", e.ID)
					}
					continue
				}
				if it.Content == nil {
					t.Fatalf("%s: shown whole, want an excerpt", e.ID)
				}
				fr, orig := it.Content.Parts[0].FunctionResponse, e.Content.Parts[0].FunctionResponse
				if fr.ID != orig.ID || fr.Name != orig.Name || it.Content.Role != e.Content.Role {
					t.Errorf("%s: excerpt changed the pairing: %+v", e.ID, fr)
				}
				text, _ := json.Marshal(fr.Response)
				inv := strings.TrimSuffix(e.ID, "r")
				switch {
				case len(text) > m.ExcerptBytes+256:
					t.Errorf("%s: excerpt of %d bytes, want about %d", e.ID, len(text), m.ExcerptBytes)
				case !strings.Contains(string(text), "head of "+inv) || !strings.Contains(string(text), "tail of "+inv):
					t.Errorf("%s: excerpt lost the head or the tail: %s", e.ID, text)
				case !strings.Contains(string(text), "call the tool again"):
					t.Errorf("%s: excerpt does not say how to get the rest: %s", e.ID, text)
				}
			}
			if after, _ := json.Marshal(store.snapshot()); string(after) != string(before) {
				t.Error("the view changed the stored events")
			}
		})
	}
}

// An excerpt is byte-stable: two views of the same events show the same bytes (the cached
// prompt prefix survives until the next compaction).
func TestExcerptIsStable(t *testing.T) {
	var events []Event
	for k := 1; k <= 6; k++ {
		events = append(events, bigToolTurn(fmt.Sprintf("i%d", k))...)
	}
	store := newStore(events...)
	c, _ := newCompactor(t, Config{Interval: 3, Summarizer: &recorder{text: "S"}}, store)
	if m, err := c.Compact(context.Background(), Selection{Trigger: TriggerInvocations, Invocation: "i6"}); err != nil || m == nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	show := func(v *Viewer) string {
		var out []*genai.Content
		for _, it := range v.View(store.snapshot()) {
			out = append(out, it.Content)
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	if a, b := show(NewViewer(nil)), show(NewViewer(nil)); a != b {
		t.Errorf("two views differ:\n%s\n%s", a, b)
	}
}

// A record's excerpt size is used as it is when valid, raised to the smallest one the cutter
// bounds when below it, and ignored (results whole) when not positive — never a reason to drop
// the marker and its summary.
func TestExcerptSizeFromRecord(t *testing.T) {
	for _, tc := range []struct{ stored, want int }{{2048, 2048}, {100, record.MinExcerptBytes}, {0, 0}, {-5, 0}} {
		live := map[string]liveMarker{"": {m: &Marker{ExcerptedEventIDs: []string{"e1"}, ExcerptBytes: tc.stored}}}
		if got := excerptsOf(live)[""]["e1"]; got != tc.want {
			t.Errorf("stored %d: excerpt size %d, want %d", tc.stored, got, tc.want)
		}
	}
}

// withFinal returns a copy of events whose last one is marked final.
func withFinal(events []Event) []Event {
	out := append([]Event(nil), events...)
	out[len(out)-1].Final = true
	return out
}

// after returns events, then i7 (the events given), then i8, a whole turn.
func after(events, i7 []Event) []Event {
	out := append(append([]Event(nil), events...), i7...)
	return append(out, bigToolTurn("i8")...)
}

// loopSteps is one running invocation of a tool loop: the user's message, then steps reading
// files of about 6 KB (call and result), the last call still waiting for its result.
func loopSteps(inv string, steps int) []Event {
	out := []Event{userEv(inv+"u", inv, "Read the package, file by file.")}
	for s := 1; s <= steps; s++ {
		id := fmt.Sprintf("%s-%d", inv, s)
		file := fmt.Sprintf("// head of %s\n", id) + strings.Repeat("func handler() { return process(ctx, req) }\n", 140) + fmt.Sprintf("// tail of %s\n", id)
		out = append(out, callEv(id+"c", inv, id, "read_file", map[string]any{"path": id + ".go"}),
			respEv(id+"r", inv, id, "read_file", map[string]any{"content": file}))
	}
	return out
}

// Masking comes before summarizing: a token compaction inside a long tool loop shows older tool
// results as excerpts first, keeping the agent's own calls raw, and summarizes only the steps
// that do not fit even so. When excerpts alone bring the loop within the tail, the marker
// summarizes nothing (MasksOnly); the next compaction rolls it up.
func TestMaskBeforeSummarizing(t *testing.T) {
	const steps = 6 // each result weighs about 1,600 tokens, its excerpt about 300, the tail 4,900
	events := loopSteps("i1", steps)
	whole := tokensOf(events...)
	store := newStore(events...)
	c, _ := newCompactor(t, Config{RetainRecentTokens: whole / 2, Summarizer: &recorder{text: "S"}}, store)
	live := Selection{Trigger: TriggerTokens, Invocation: "i1", Live: true, TokenLimit: whole}
	m, err := c.Compact(context.Background(), live)
	if err != nil || m == nil {
		t.Fatalf("Compact = %v, %v: want a marker that masks", m, err)
	}
	if !m.MasksOnly() || m.Seq != 1 || m.EventCount != 0 || m.CompactedContent != nil {
		t.Fatalf("marker = seq %d, %d events covered, ids %v, summary %v: want one that only masks", m.Seq, m.EventCount, m.EventIDs, m.CompactedContent)
	}
	// The newest results, up to ¾ of the tail, stay whole (two of them here); the older ones
	// are excerpts.
	var wantMasked []string
	for s := 1; s < steps-1; s++ {
		wantMasked = append(wantMasked, fmt.Sprintf("i1-%dr", s))
	}
	if diff := cmp.Diff(wantMasked, m.ExcerptedEventIDs); diff != "" {
		t.Errorf("excerpted results (-want +got):\n%s", diff)
	}
	items := NewViewer(nil).View(store.snapshot())
	if len(items) != len(events) {
		t.Errorf("the view shows %d items, want every one of the %d events and no summary", len(items), len(events))
	}
	shown := 0
	for _, it := range items {
		if it.Summary != nil {
			t.Fatal("a marker that only masks shows a summary")
		}
		c := store.snapshot()[it.Index].Content
		if it.Content != nil {
			c = it.Content
		}
		shown += budget.EstimateContent(c)
	}
	if shown > whole/2 {
		t.Errorf("the masked view weighs %d tokens, want at most the tail, %d", shown, whole/2)
	}

	// The loop goes on: the next compaction summarizes the oldest steps and rolls the mask up.
	store.add(loopSteps("i1", steps+20)[1+2*steps:]...)
	m2, err := c.Compact(context.Background(), live)
	if err != nil || m2 == nil {
		t.Fatalf("second Compact = %v, %v", m2, err)
	}
	if m2.MasksOnly() || m2.Seq != 2 || len(m2.EventIDs) == 0 {
		t.Fatalf("second marker = seq %d, ids %v: want a summary rolling up the mask", m2.Seq, m2.EventIDs)
	}
	items = NewViewer(nil).View(store.snapshot())
	if items[0].Summary == nil {
		t.Error("the view after the second compaction does not start with its summary")
	}
	for _, it := range items[1:] {
		if e := store.snapshot()[it.Index]; slices.Contains(m2.EventIDs, e.ID) {
			t.Errorf("%s is covered and still shown", e.ID)
		}
	}
}
