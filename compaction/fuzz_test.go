package compaction

import (
	"encoding/json"
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
			if diff := cmp.Diff(m, again, cmpopts.EquateEmpty(), withRecords); diff != "" {
				t.Fatalf("value %d: re-encoded marker differs (-read +reencoded):\n%s", i, diff)
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
