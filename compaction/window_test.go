package compaction

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"
)

func sliding(interval, overlap int) windowParams {
	return windowParams{trigger: TriggerInvocations, interval: interval, overlap: overlap, retainEvents: 2}
}

func TestSelectWindow(t *testing.T) {
	type want struct {
		reason   string
		covered  []string // ids covered by the new marker
		excluded []string
		input    []string // ids given to the summarizer
		previous bool
		view     []string // ids of the view after the marker ("S" = summary)
	}
	type tc struct {
		name   string
		build  func(b *evBuilder) []*session.Event
		params windowParams
		want   want
	}
	invs := func(b *evBuilder, names ...string) []*session.Event {
		var out []*session.Event
		for _, n := range names {
			out = append(out, b.invocation(n)...)
		}
		return out
	}
	// rolled: first 5 invocations compacted, then more appended.
	rolled := func(t *testing.T, b *evBuilder, more ...string) []*session.Event {
		raw := invs(b, "i1", "i2", "i3", "i4", "i5")
		w, reason := selectWindow(raw, sliding(5, 2), nil)
		if w == nil {
			t.Fatalf("first compaction: %s", reason)
		}
		raw = applyWindow(t, raw, w)
		b.n++ // the marker took a timestamp slot
		return append(raw, invs(b, more...)...)
	}
	cases := []tc{
		{
			name:   "no markers, fewer than θ",
			build:  func(b *evBuilder) []*session.Event { return invs(b, "i1", "i2", "i3") },
			params: sliding(5, 2),
			want:   want{reason: reasonBelowInterval},
		},
		{
			name:   "no markers, exactly θ",
			build:  func(b *evBuilder) []*session.Event { return invs(b, "i1", "i2") },
			params: sliding(2, 2),
			want: want{
				covered: []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07", "e08"},
				input:   []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07", "e08"},
				view:    []string{"S"},
			},
		},
		{
			name:   "cap at θ new invocations",
			build:  func(b *evBuilder) []*session.Event { return invs(b, "i1", "i2", "i3") },
			params: sliding(2, 0),
			want: want{
				covered: []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07", "e08"},
				input:   []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07", "e08"},
				view:    []string{"S", "e09", "e10", "e11", "e12"},
			},
		},
		{
			name: "failed invocation skipped",
			build: func(b *evBuilder) []*session.Event {
				raw := invs(b, "i1", "i2")
				bad := b.answer("i3", "")
				bad.Content = nil
				bad.ErrorCode = "RESOURCE_EXHAUSTED"
				return append(raw, b.user("i3", "q"), bad)
			},
			params: sliding(2, 0),
			want:   want{reason: reasonFailed},
		},
		{
			name: "invocation without final response skipped",
			build: func(b *evBuilder) []*session.Event {
				return append(invs(b, "i1", "i2"), b.user("i3", "q"), b.call("i3", "c9"))
			},
			params: sliding(2, 0),
			want:   want{reason: reasonFailed},
		},
		{
			name: "orphaned call at the head does not block",
			build: func(b *evBuilder) []*session.Event {
				raw := []*session.Event{b.user("i0", "q0"), b.call("i0", "orphan"), b.answer("i0", "gave up")}
				return append(raw, invs(b, "i1")...)
			},
			params: sliding(2, 0),
			want: want{
				covered: []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07"},
				input:   []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07"},
				view:    []string{"S"},
			},
		},
		{
			name: "pending long-running call stays raw",
			build: func(b *evBuilder) []*session.Event {
				u := b.user("i0", "start job")
				lr := b.call("i0", "lr1")
				lr.LongRunningToolIDs = []string{"lr1"}
				raw := []*session.Event{u, lr, b.answer("i0", "started")}
				return append(raw, invs(b, "i1")...)
			},
			params: sliding(2, 0),
			want: want{
				covered:  []string{"e01", "e03", "e04", "e05", "e06", "e07"},
				excluded: []string{"e02"},
				input:    []string{"e01", "e03", "e04", "e05", "e06", "e07"},
				view:     []string{"S", "e02"},
			},
		},
		{
			name: "answered long-running call is covered with its response",
			build: func(b *evBuilder) []*session.Event {
				u := b.user("i0", "start job")
				lr := b.call("i0", "lr1")
				lr.LongRunningToolIDs = []string{"lr1"}
				raw := []*session.Event{u, lr, b.answer("i0", "started")}
				final := b.resp("i1", "lr1")
				final.Author = "user" // the client completes the long-running call
				raw = append(raw, final, b.answer("i1", "done"))
				return raw
			},
			params: sliding(2, 0),
			want: want{
				covered: []string{"e01", "e02", "e03", "e04", "e05"},
				input:   []string{"e01", "e02", "e03", "e04", "e05"},
				view:    []string{"S"},
			},
		},
		{
			name: "long-running call with only the tool's interim response stays raw",
			build: func(b *evBuilder) []*session.Event {
				u := b.user("i0", "start job")
				lr := b.call("i0", "lr1")
				lr.LongRunningToolIDs = []string{"lr1"}
				raw := []*session.Event{u, lr, b.resp("i0", "lr1"), b.answer("i0", "started")}
				return append(raw, b.invocation("i1")...)
			},
			params: sliding(2, 0),
			want: want{
				covered:  []string{"e01", "e04", "e05", "e06", "e07", "e08"},
				excluded: []string{"e02", "e03"},
				input:    []string{"e01", "e04", "e05", "e06", "e07", "e08"},
				view:     []string{"S", "e02", "e03"},
			},
		},
		{
			name: "long-running call answered after the cut stays raw with its response",
			build: func(b *evBuilder) []*session.Event {
				u := b.user("i0", "start job")
				lr := b.call("i0", "lr1")
				lr.LongRunningToolIDs = []string{"lr1"}
				raw := []*session.Event{u, lr, b.answer("i0", "started")}
				raw = append(raw, invs(b, "i1")...)
				final := b.resp("i2", "lr1")
				final.Author = "user"
				return append(raw, final, b.answer("i2", "done"))
			},
			params: sliding(2, 0),
			want: want{
				covered:  []string{"e01", "e03", "e04", "e05", "e06", "e07"},
				excluded: []string{"e02"},
				input:    []string{"e01", "e03", "e04", "e05", "e06", "e07"},
				view:     []string{"S", "e02", "e08", "e09"},
			},
		},
		{
			name: "pending tool confirmation stays raw",
			build: func(b *evBuilder) []*session.Event {
				u := b.user("i0", "delete it")
				call := b.call("i0", "orig")
				resp := b.resp("i0", "orig")
				resp.Actions.RequestedToolConfirmations = map[string]toolconfirmation.ToolConfirmation{"orig": {Hint: "ok?"}}
				conf := b.ev("i0", "assistant", &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
					ID: "conf1", Name: toolconfirmation.FunctionCallName,
					Args: map[string]any{"originalFunctionCall": map[string]any{"id": "orig", "name": "lookup"}, "toolConfirmation": map[string]any{"hint": "ok?"}},
				}}}})
				conf.LongRunningToolIDs = []string{"conf1"}
				raw := []*session.Event{u, call, resp, conf}
				return append(raw, invs(b, "i1")...)
			},
			params: sliding(2, 0),
			want: want{
				covered:  []string{"e01", "e05", "e06", "e07", "e08"},
				excluded: []string{"e02", "e03", "e04"},
				input:    []string{"e01", "e05", "e06", "e07", "e08"},
				view:     []string{"S", "e02", "e03", "e04"},
			},
		},
		{
			name: "parallel calls at the cut are not split (tokens)",
			build: func(b *evBuilder) []*session.Event {
				raw := invs(b, "i1")
				return append(raw, b.user("i2", "two lookups"), b.call("i2", "pa", "pb"), b.resp("i2", "pa", "pb"))
			},
			params: windowParams{trigger: TriggerTokens, interval: 5, retainEvents: 1, live: true, running: "i2"},
			want: want{
				covered:  []string{"e01", "e02", "e03", "e04", "e05"},
				excluded: nil,
				input:    []string{"e01", "e02", "e03", "e04", "e05"},
				view:     []string{"S", "e06", "e07"},
			},
		},
		{
			name: "id-less parallel calls paired by name and order",
			build: func(b *evBuilder) []*session.Event {
				raw := invs(b, "i1")
				return append(raw, b.user("i2", "two lookups"), b.call("i2", "", ""), b.resp("i2", "", ""), b.answer("i2", "ok"))
			},
			params: windowParams{trigger: TriggerTokens, interval: 5, retainEvents: 2},
			want: want{
				covered: []string{"e01", "e02", "e03", "e04", "e05"},
				input:   []string{"e01", "e02", "e03", "e04", "e05"},
				view:    []string{"S", "e06", "e07", "e08"},
			},
		},
		{
			name: "live invocation: unanswered call stays raw",
			build: func(b *evBuilder) []*session.Event {
				raw := invs(b, "i1")
				return append(raw, b.user("i2", "go"), b.call("i2", "x1"), b.resp("i2", "x1"), b.call("i2", "x2"))
			},
			params: windowParams{trigger: TriggerManual, interval: 5, retainEvents: 0, live: true, running: "i2"},
			want: want{
				covered:  []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07"},
				excluded: nil,
				input:    []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07"},
				view:     []string{"S", "e08"},
			},
		},
		{
			name: "equal timestamps at the edges",
			build: func(b *evBuilder) []*session.Event {
				raw := invs(b, "i1", "i2", "i3")
				for _, e := range raw {
					e.Timestamp = b.t0
				}
				return raw
			},
			params: sliding(2, 0),
			want: want{
				covered: []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07", "e08"},
				input:   []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07", "e08"},
				view:    []string{"S", "e09", "e10", "e11", "e12"},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := c.build(newEvBuilder())
			w, reason := selectWindow(raw, c.params, nil)
			if c.want.reason != "" {
				if w != nil || reason != c.want.reason {
					t.Fatalf("selectWindow = %v, %q; want nil, %q", w != nil, reason, c.want.reason)
				}
				return
			}
			if w == nil {
				t.Fatalf("selectWindow: nothing to do (%s)", reason)
			}
			var covered []string
			for _, e := range raw {
				if w.covered[e] {
					covered = append(covered, e.ID)
				}
			}
			got := want{covered: covered, excluded: w.m.ExcludedEventIDs, input: ids(w.input.Events), previous: w.input.Previous != nil}
			got.view = viewIDs(View(applyWindow(t, raw, w), nil))
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("selection mismatch (-want +got):\n%s", diff)
			}
			if w.m.EventCount != len(covered) {
				t.Errorf("EventCount = %d, want %d", w.m.EventCount, len(covered))
			}
		})
	}

	// Roll-ups over an existing marker.
	t.Run("overlap and roll-up", func(t *testing.T) {
		b := newEvBuilder()
		raw := rolled(t, b, "i6", "i7", "i8", "i9", "i10")
		w, reason := selectWindow(raw, sliding(5, 2), nil)
		if w == nil {
			t.Fatalf("nothing to do: %s", reason)
		}
		if w.input.Previous == nil {
			t.Fatal("previous summary not passed to the summarizer")
		}
		// Overlap: invocations i4, i5 (raw, already covered) come first.
		var invOrder []string
		for _, e := range w.input.Events {
			if len(invOrder) == 0 || invOrder[len(invOrder)-1] != e.InvocationID {
				invOrder = append(invOrder, e.InvocationID)
			}
		}
		if diff := cmp.Diff([]string{"i4", "i5", "i6", "i7", "i8", "i9", "i10"}, invOrder); diff != "" {
			t.Errorf("summarizer input invocations (-want +got):\n%s", diff)
		}
		if w.m.FirstEventID != "e01" || w.m.EventCount != 40 {
			t.Errorf("roll-up range: first %s count %d, want e01 40", w.m.FirstEventID, w.m.EventCount)
		}
		view := View(applyWindow(t, raw, w), nil)
		if diff := cmp.Diff([]string{"S"}, viewIDs(view)); diff != "" {
			t.Errorf("view after roll-up (-want +got):\n%s", diff)
		}
	})
	t.Run("below θ after a marker", func(t *testing.T) {
		b := newEvBuilder()
		raw := rolled(t, b, "i6", "i7")
		if w, reason := selectWindow(raw, sliding(5, 2), nil); w != nil || reason != reasonBelowInterval {
			t.Fatalf("got window=%v reason=%q, want below_interval", w != nil, reason)
		}
	})
	t.Run("token trigger keeps the retention tail", func(t *testing.T) {
		b := newEvBuilder()
		raw := rolled(t, b, "i6", "i7")
		p := windowParams{trigger: TriggerTokens, interval: 5, retainEvents: 4}
		w, reason := selectWindow(raw, p, nil)
		if w == nil {
			t.Fatalf("nothing to do: %s", reason)
		}
		view := viewIDs(View(applyWindow(t, raw, w), nil))
		want := []string{"S"}
		for _, e := range raw[len(raw)-4:] {
			want = append(want, e.ID)
		}
		if diff := cmp.Diff(want, view); diff != "" {
			t.Errorf("view (-want +got):\n%s", diff)
		}
	})
	t.Run("invocations with token limit reached act as tokens", func(t *testing.T) {
		b := newEvBuilder()
		raw := invs(b, "i1", "i2")
		p := sliding(5, 2)
		p.tokenLimit = 1
		w, _ := selectWindow(raw, p, nil)
		if w == nil || w.trigger != TriggerTokens {
			t.Fatalf("want a token-triggered window, got %+v", w)
		}
	})
}

func viewIDs(view []*session.Event) []string {
	var out []string
	for _, e := range view {
		if IsSummaryEvent(e) {
			out = append(out, "S")
			continue
		}
		out = append(out, e.ID)
	}
	return out
}

func TestSelectWindowOrphanNeverBlocks(t *testing.T) {
	// adk-python 7236: one orphaned call must not block every later
	// compaction. Compact repeatedly; each time the view shrinks.
	b := newEvBuilder()
	raw := []*session.Event{b.user("i0", "q"), b.call("i0", "orphan"), b.answer("i0", "a")}
	for k := 1; k <= 12; k++ {
		raw = append(raw, b.invocation(fmt.Sprintf("i%d", k))...)
		w, _ := selectWindow(raw, sliding(3, 1), nil)
		if w == nil {
			continue
		}
		raw = applyWindow(t, raw, w)
		b.n++
	}
	if got := len(markersIn(t, raw)); got != 4 {
		t.Fatalf("markers = %d, want 4 (every 3 invocations)", got)
	}
	// i0 counts as an invocation: compactions after i2, i5, i8, i11; i12
	// stays raw.
	if diff := cmp.Diff([]string{"S", "e52", "e53", "e54", "e55"}, viewIDs(View(raw, nil))); diff != "" {
		t.Fatalf("view (-want +got):\n%s", diff)
	}
}

// FuzzSelectWindow builds random sessions (calls with and without ids,
// parallel calls, long-running calls answered late or never, orphans,
// failed invocations), compacts them repeatedly with random triggers and
// checks the invariants on the resulting view: a call and its response are
// never split, a pending long-running call is never hidden, at most one
// summary is live, and no event is lost from storage.
func FuzzSelectWindow(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 0, 1, 2, 5, 6, 7, 0, 1, 3, 3, 4})
	f.Add([]byte{0, 8, 4, 0, 1, 2, 4, 0, 9, 4, 0, 1, 2, 4, 0, 1, 2, 4, 10, 10})
	// Regressions found by fuzzing.
	f.Add([]byte("07111100000000A\"2"))
	f.Add([]byte("01X\"2"))
	f.Add([]byte("0011771BB77\"11111111#"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 200 {
			ops = ops[:200]
		}
		b := newEvBuilder()
		var raw []*session.Event
		inv := 0
		invID := func() string { return fmt.Sprintf("i%d", inv) }
		var open []string // open calls of the current invocation (ids)
		var lrOpen []string
		n := 0
		newID := func() string { n++; return fmt.Sprintf("c%d", n) }
		for k, op := range ops {
			switch op % 12 {
			case 0:
				// A new invocation: calls left open by the previous one are
				// orphans (only long-running calls are answered later).
				inv++
				open = nil
				raw = append(raw, b.user(invID(), "q"))
			case 1:
				id := newID()
				open = append(open, id)
				raw = append(raw, b.call(invID(), id))
			case 2:
				if len(open) > 0 {
					raw = append(raw, b.resp(invID(), open[0]))
					open = open[1:]
				}
			case 3:
				a, c := newID(), newID()
				raw = append(raw, b.call(invID(), a, c), b.resp(invID(), a, c))
			case 4:
				raw = append(raw, b.answer(invID(), "a"))
			case 5:
				id := newID()
				e := b.call(invID(), id)
				e.LongRunningToolIDs = []string{id}
				lrOpen = append(lrOpen, id)
				raw = append(raw, e)
			case 6:
				if len(lrOpen) > 0 {
					// The tool's interim response (op even) or the client's
					// final one (op odd, author "user").
					r := b.resp(invID(), lrOpen[0])
					if k%2 == 1 {
						r.Author = "user"
						lrOpen = lrOpen[1:]
					}
					raw = append(raw, r)
				}
			case 7:
				raw = append(raw, b.call(invID(), ""), b.resp(invID(), ""))
			case 8:
				raw = append(raw, b.call(invID(), newID())) // orphan
			case 9:
				e := b.answer(invID(), "")
				e.Content = nil
				e.ErrorCode = "500"
				raw = append(raw, e)
			case 10, 11:
				triggers := []Trigger{TriggerInvocations, TriggerTokens, TriggerManual}
				p := windowParams{trigger: triggers[k%3], interval: 1 + k%3, overlap: k % 2, retainEvents: k % 4, retainTokens: 10 * (k % 5), live: op%12 == 11}
				if !p.live {
					open = nil // compacting after the invocation: it ended
				}
				if w, _ := selectWindow(raw, p, nil); w != nil {
					raw = applyWindow(t, raw, w)
					b.n++
				}
			}
		}
		view := View(raw, nil)
		inView := map[string]bool{}
		summaries := 0
		for _, e := range view {
			if IsSummaryEvent(e) {
				summaries++
			}
			inView[e.ID] = true
		}
		if summaries > 1 {
			t.Fatalf("%d summaries live, want ≤ 1", summaries)
		}
		pr := pairCalls(raw, false, "")
		for a, links := range pr.links {
			for _, c := range links {
				if inView[raw[a].ID] != inView[raw[c].ID] {
					t.Fatalf("pair split: %s in view=%v, %s in view=%v", raw[a].ID, inView[raw[a].ID], raw[c].ID, inView[raw[c].ID])
				}
			}
		}
		for i, e := range raw {
			if len(e.LongRunningToolIDs) > 0 && pr.pending[i] && !inView[e.ID] {
				t.Fatalf("pending long-running call %s summarized away", e.ID)
			}
		}
	})
}
