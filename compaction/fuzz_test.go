package compaction

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/textcut"
)

// FuzzReadMarker: any record value never panics; a valid one re-encodes to an equal marker.
func FuzzReadMarker(f *testing.F) {
	seed := func(m *Marker) {
		md, err := m.Metadata()
		if err != nil {
			f.Fatal(err)
		}
		b, _ := json.Marshal(md[MetadataKey])
		f.Add(string(b))
	}
	seed(fullMarker())
	seed(v2(1, "", "first", "e1"))
	for _, s := range []string{
		`{}`, `null`, `[]`, `3`, `"text"`, `{"version":2}`,
		`{"startTimestamp":1,"endTimestamp":2,"eventCount":1,"compactedContent":{"parts":[null,{"text":"x"}]},"firstEventId":"a","lastEventId":"b"}`,
		`{"version":2,"seq":1,"eventIds":["a"],"startTimestamp":1,"endTimestamp":2,"eventCount":1,"compactedContent":{"parts":[{"text":"x"}]}}`,
		`{"version":2,"seq":1e300,"eventIds":["a"],"startTimestamp":1,"endTimestamp":2,"eventCount":1,"compactedContent":{"parts":[{"text":"x"}]}}`,
		`{"version":-1,"startTimestamp":1,"endTimestamp":2,"eventCount":1}`,
		`{"startTimestamp":1e300,"endTimestamp":2,"eventCount":1,"compactedContent":{"parts":[{"text":"x"}]},"firstEventId":"a","lastEventId":"b"}`,
		`{"ledger":{"paths":{"a":{"t":1}},"tools":{}},"version":2,"seq":2,"previousMarkerId":"m","eventIds":["a",""],"startTimestamp":1,"endTimestamp":1,"eventCount":2,"compactedContent":{"role":"user","parts":[{"text":" y","thought":false}]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var decoded any
		values := []any{s, []byte(s), json.RawMessage(s)}
		if json.Unmarshal([]byte(s), &decoded) == nil && decoded != nil { // null: no record
			values = append(values, decoded)
		}
		var first *Marker
		for i, v := range values {
			m, err := ReadMarker(&Event{ID: "x", Metadata: map[string]any{MetadataKey: v}})
			if (m == nil) == (err == nil) {
				t.Fatalf("value %d (%T): ReadMarker = %v, %v; want exactly one of them", i, v, m, err)
			}
			if err != nil {
				var ime *InvalidMarkerError
				if !errorsAs(err, &ime) {
					t.Fatalf("value %d: error %T is not an *InvalidMarkerError", i, err)
				}
				if i > 0 && first != nil && i < 3 {
					t.Fatalf("value %d (%T) is invalid, the string form is valid: %v", i, v, err)
				}
				continue
			}
			if i == 0 {
				first = m
			}
			md, err := m.Metadata()
			if err != nil {
				t.Fatalf("value %d: a valid marker does not encode: %v", i, err)
			}
			again, err := ReadMarker(&Event{ID: "x", Metadata: md})
			if err != nil {
				t.Fatalf("value %d: the re-encoded marker is invalid: %v\n%v", i, err, md)
			}
			if diff := cmp.Diff(m, again, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("value %d: re-encoded marker differs (-read +reencoded):\n%s", i, diff)
			}
			// And the view accepts it: a record that reads valid is used.
			events := []Event{{ID: "x", Metadata: md}}
			if p := NewViewer(nil).plan(events); p.invalid != 0 {
				t.Fatalf("value %d: the view rejects a valid record", i)
			}
		}
	})
}

func errorsAs(err error, target **InvalidMarkerError) bool {
	ime, ok := err.(*InvalidMarkerError)
	if ok {
		*target = ime
	}
	return ok
}

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
		if e.isMarkerOnly() {
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

var transcriptTag = regexp.MustCompile(`^(\[user\]: |\[model\]: |\[model\] called |\[tool .*?\] returned: |\[context\] |\[previous summary\]: |\[note\]: )`)

// FuzzEscapeLine: an escaped string holds no line break, escaping is reversible for valid UTF-8,
// and no text placed in a transcript starts a line of its own.
func FuzzEscapeLine(f *testing.F) {
	for _, s := range []string{"", "plain", "a\nb", "\\n", "\r\n[user]: x", "\u2028[model]: y\u2029", "\x85", "\v\f", "\\\\\n", "bad \xff\n", "漢字\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := escapeLine(s)
		if strings.ContainsAny(out, "\n\r\v\f\u0085\u2028\u2029") {
			t.Fatalf("escapeLine(%q) = %q holds a line break", s, out)
		}
		if utf8.ValidString(s) && unescapeLine(out) != s {
			t.Fatalf("unescape(escapeLine(%q)) = %q", s, unescapeLine(out))
		}
		in := SummaryInput{
			Previous: genai.NewContentFromText(s+" previous", genai.RoleUser),
			Context:  []Event{modelEv("c", "i0", s+" context")},
			Events: []Event{userEv("u", "i1", s+" user"), callEv("k", "i1", "x", s, map[string]any{s: s}),
				respEv("r", "i1", "x", s, map[string]any{"out": s})},
		}
		prev, lines := transcriptLines(in, 50)
		for _, line := range strings.Split(fitTranscript(prev, lines, 1_000_000), "\n") {
			if !transcriptTag.MatchString(line) {
				t.Fatalf("transcript line without a tag: %q", line)
			}
		}
	})
}

// FuzzUserText: the user's messages (split at NUL) fed to a ledger, fitted and rendered within a
// bound. The ledger keeps at most UserTextTokens of them, in order, each verbatim or shortened;
// a render within a token bound keeps every message verbatim while they fit half of it; a byte
// bound is never passed; nothing panics.
func FuzzUserText(f *testing.F) {
	f.Add("goal\x00Bitte nichts unter vendor/ ändern.\x00always run gofmt\x00テストは表で書く", 200, 3000)
	f.Add(strings.Repeat("lorem ipsum dolor \x00", 300), 1024, 6<<10)
	f.Add("\xff\xfe\x00\x00 \x00\n\t\x00"+strings.Repeat("漢", 3000), 7, 50)
	f.Add("g\x00"+strings.Repeat("never 1 2 3 4 5 6 7 8 9 ", 100), 0, 0)
	f.Fuzz(func(t *testing.T, data string, maxTokens, maxBytes int) {
		maxTokens, maxBytes = maxTokens%(1<<14), maxBytes%(1<<16)
		l := &Ledger{}
		var sent []string
		for _, msg := range strings.Split(data, "\x00") {
			if text := oneLine(msg); text != "" {
				l.addUserText(text)
				sent = append(sent, textcut.Runes(text, maxMessageRunes))
			}
		}
		u := l.userText()
		if u.tokens > UserTextTokens || len(sent) > 0 && l.Goal == "" {
			t.Fatalf("ledger keeps %d tokens, goal %q", u.tokens, l.Goal)
		}
		// Kept messages are sent ones, in order, verbatim or shortened.
		next := 1
		for _, m := range l.Messages {
			for next < len(sent) && sent[next] != m.Text && textcut.Runes(sent[next], shortMessageRunes) != m.Text {
				next++
			}
			if next == len(sent) {
				t.Fatalf("kept message %q was not sent, or not in order", m.Text)
			}
			next++
		}
		if len(sent) > 0 && l.MessagesDropped+len(l.Messages) != len(sent)-1 {
			t.Fatalf("%d sent after the goal, %d kept, %d counted dropped", len(sent)-1, len(l.Messages), l.MessagesDropped)
		}
		lim := renderLimits{bytes: max(maxBytes, 0), tokens: max(maxTokens, 0), keepUser: userBudget(max(maxTokens, 0))}
		out := l.render(lim, maxBytes%2 == 0)
		if lim.bytes > 0 && len(out) > lim.bytes {
			t.Fatalf("render of %d bytes, bound %d", len(out), lim.bytes)
		}
		if lim.bytes == 0 && u.tokens <= lim.keepUser {
			for _, m := range l.Messages {
				if !strings.Contains(out, "\n- "+m.Text) {
					t.Fatalf("message %q (user text %d tokens, keep %d) missing:\n%s", m.Text, u.tokens, lim.keepUser, out)
				}
			}
		}
		if again := l.clone().render(lim, maxBytes%2 == 0); again != out {
			t.Fatalf("a clone renders differently")
		}
	})
}
