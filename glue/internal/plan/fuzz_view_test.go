package plan

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	. "github.com/adkctx/adkctx/compaction"
)

// fuzzReader hands out bytes of data, then zeros.
type fuzzReader struct {
	data []byte
	pos  int
}

func (r *fuzzReader) next() int {
	if r.pos >= len(r.data) {
		return 0
	}
	r.pos++
	return int(r.data[r.pos-1])
}

func (r *fuzzReader) intn(n int) int { return r.next() % n }

// fuzzSession builds a session from data: plain events (ids e0..e11, duplicates possible, some
// without content or id), valid version 2 markers (ids m0..m5, random seq, previous and ids),
// events with content and a record, invalid records, and records of another version.
func fuzzSession(data []byte) []Event {
	r := &fuzzReader{data: data}
	scopes := []string{"", "a", "b"}
	n := 1 + r.intn(48)
	var events []Event
	for k := 0; k < n && r.pos < len(r.data)+4; k++ {
		kind := r.intn(10)
		scope := scopes[r.intn(3)]
		ts := at(r.intn(60))
		switch {
		case kind < 5:
			id := fmt.Sprintf("e%d", r.intn(12))
			if r.intn(16) == 0 {
				id = ""
			}
			e := userEv(id, fmt.Sprintf("i%d", r.intn(6)), "text "+id)
			if r.intn(8) == 0 {
				e.Content = nil
			}
			e.Scope, e.Timestamp = scope, ts
			events = append(events, e)
		case kind < 8:
			seq := 1 + r.intn(5)
			prev := ""
			if seq > 1 || r.intn(4) == 0 {
				prev = fmt.Sprintf("m%d", r.intn(6))
			}
			var ids []string
			for j, nIDs := 0, 1+r.intn(6); j < nIDs; j++ {
				if r.intn(5) == 0 {
					ids = append(ids, fmt.Sprintf("m%d", r.intn(6)))
				} else {
					ids = append(ids, fmt.Sprintf("e%d", r.intn(12)))
				}
			}
			m := v2(seq, prev, fmt.Sprintf("summary %d", k), ids...)
			m.Scope = scopes[r.intn(3)]
			m.EventCount = len(ids) + r.intn(4)
			md, err := m.Metadata()
			if err != nil {
				panic(err)
			}
			e := Event{ID: fmt.Sprintf("m%d", r.intn(6)), Author: "user", Timestamp: ts, Scope: scope, Metadata: md}
			if r.intn(6) == 0 {
				e.Content = genai.NewContentFromText("marker with content", genai.RoleUser)
			}
			events = append(events, e)
		case kind < 9:
			bad := []any{"junk", 42, map[string]any{"startTimestamp": 5.0, "endTimestamp": 1.0, "eventCount": 1.0},
				map[string]any{"version": 2.0, "seq": 0.0}, []any{1}, json.RawMessage(`{"eventIds":`)}[r.intn(6)]
			e := Event{ID: fmt.Sprintf("m%d", r.intn(6)), Author: "user", Timestamp: ts, Scope: scope,
				Metadata: map[string]any{MetadataKey: bad}}
			if r.intn(3) == 0 {
				e.Content = genai.NewContentFromText("content beside a bad record", genai.RoleUser)
			}
			events = append(events, e)
		default:
			m := v2(1, "", fmt.Sprintf("other version %d", k), fmt.Sprintf("e%d", r.intn(12)))
			m.Version = []int{0, 1, 3}[r.intn(3)]
			b, err := json.Marshal(m)
			if err != nil {
				panic(err)
			}
			events = append(events, Event{ID: fmt.Sprintf("m%d", r.intn(6)), Author: "user", Timestamp: ts, Scope: scope,
				Metadata: map[string]any{MetadataKey: json.RawMessage(b)}})
		}
	}
	return events
}

// checkView verifies a view against an independent model of the rules: per scope the valid
// marker with the highest (Seq, EventCount, position) wins; its chain (Previous, the first valid
// marker event with that id, same scope, no repeats) lists the hidden events.
func checkView(t *testing.T, events []Event, items []Item) {
	t.Helper()
	type cand struct {
		at int
		m  *Marker
	}
	var cands []cand
	firstByID := map[string]int{}
	for i := range events {
		m, err := ReadMarker(&events[i])
		if err != nil || m == nil {
			continue
		}
		if _, ok := firstByID[events[i].ID]; !ok && events[i].ID != "" {
			firstByID[events[i].ID] = len(cands)
		}
		cands = append(cands, cand{i, m})
	}
	winner := map[string]int{}
	for k, c := range cands {
		w, ok := winner[c.m.Scope]
		if !ok {
			winner[c.m.Scope] = k
			continue
		}
		b := cands[w]
		if c.m.Seq > b.m.Seq || c.m.Seq == b.m.Seq && (c.m.EventCount > b.m.EventCount || c.m.EventCount == b.m.EventCount && c.at > b.at) {
			winner[c.m.Scope] = k
		}
	}
	listed := map[string]map[string]bool{} // scope → ids listed by the chain
	for scope, k := range winner {
		listed[scope] = map[string]bool{}
		seen := map[int]bool{}
		for !seen[k] {
			seen[k] = true
			c := cands[k]
			for _, id := range c.m.EventIDs {
				listed[scope][id] = true
			}
			next, ok := firstByID[c.m.Previous]
			if c.m.Previous == "" || !ok || cands[next].m.Scope != scope {
				break
			}
			k = next
		}
	}
	// Raw items: exactly the visible events not hidden, in stream order.
	var raw []int
	lastIndex := -1
	summaries := map[string]Item{}
	for _, it := range items {
		if it.Index < lastIndex {
			t.Fatalf("items out of order at index %d", it.Index)
		}
		lastIndex = it.Index
		if it.Summary != nil {
			scope, found := "", false
			for sc, k := range winner { // summary texts are unique per generated marker
				if summaryText(cands[k].m) == textOf(it.Summary) {
					scope, found = sc, true
				}
			}
			if !found {
				t.Fatalf("summary %q is no winner's", textOf(it.Summary))
			}
			if _, dup := summaries[scope]; dup {
				t.Fatalf("scope %q summarized twice", scope)
			}
			summaries[scope] = it
			continue
		}
		raw = append(raw, it.Index)
	}
	hidden := map[int]bool{}
	for i, e := range raw {
		if i > 0 && e <= raw[i-1] {
			t.Fatalf("raw event %d shown twice or out of order", e)
		}
	}
	shown := map[int]bool{}
	for _, i := range raw {
		shown[i] = true
	}
	for i := range events {
		e := &events[i]
		if isMarkerOnly(e) {
			if shown[i] {
				t.Fatalf("marker-only event %d shown", i)
			}
			continue
		}
		_, hasWinner := winner[e.Scope]
		isListed := hasWinner && e.ID != "" && listed[e.Scope][e.ID]
		switch {
		case !shown[i] && !isListed:
			t.Fatalf("event %d (%q, scope %q) hidden without being listed by the winning chain", i, e.ID, e.Scope)
		case shown[i] && isListed:
			t.Fatalf("event %d (%q, scope %q) listed by the winning chain but shown", i, e.ID, e.Scope)
		case !shown[i]:
			hidden[i] = true
		}
	}
	// One summary per scope with a winner, from the winner, first among the scope's events (or at
	// the winner when none comes before it).
	if len(summaries) != len(winner) {
		t.Fatalf("%d summaries for %d winning scopes", len(summaries), len(winner))
	}
	for scope, k := range winner {
		it := summaries[scope]
		w := cands[k]
		if it.MarkerID != events[w.at].ID {
			t.Fatalf("scope %q: summary from %q, the winner is %q", scope, it.MarkerID, events[w.at].ID)
		}
		want := w.at
		for i := range events {
			if events[i].Scope == scope && i < want {
				want = i
				break
			}
		}
		if it.Index != want {
			t.Fatalf("scope %q: summary at %d, want %d", scope, it.Index, want)
		}
		if !IsSummary(it.Summary) {
			t.Fatalf("scope %q: summary content is not a summary", scope)
		}
	}
}

func summaryText(m *Marker) string { return textOf(summaryContent(m.CompactedContent)) }

func FuzzView(f *testing.F) {
	for _, s := range []string{"", "\x00", "\x05\x00\x00\x01\x06\x00\x00\x02\x01", "hello, world", "\x30\x07\x01\x02\x03\x04\x05\x06\x07\x08",
		"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\xef\xee\xed\xec\xeb\xea"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		events := fuzzSession(data)
		before, _ := json.Marshal(events)
		v := NewViewer(nil)
		items := v.View(events)
		checkView(t, events, items)
		// A second view is the same.
		if diff := cmp.Diff(items, v.View(events)); diff != "" {
			t.Fatalf("second view differs:\n%s", diff)
		}
		if after, _ := json.Marshal(events); string(after) != string(before) {
			t.Fatal("View mutated its input")
		}
	})
}
