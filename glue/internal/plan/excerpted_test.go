package plan

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	. "github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/marks"
	"github.com/adkctx/adkctx/processors/truncate"
)

// ExcerptsOf names the tool results a view shows as excerpts, each as stored and exactly as the
// view shows it (what the recall tools save in full and name from the excerpt).
func TestExcerptsOfMatchesTheView(t *testing.T) {
	var events []Event
	for k := 1; k <= 6; k++ {
		events = append(events, bigToolTurn(fmt.Sprintf("i%d", k))...)
	}
	store := newStore(events...)
	c, _ := newCompactor(t, Config{Interval: 3, Summarizer: &recorder{text: "S"}}, store)
	m, err := c.Compact(context.Background(), Selection{Trigger: TriggerInvocations, Invocation: "i6"})
	if err != nil || m == nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	stored := store.snapshot()
	got := ExcerptsOf(stored, m)
	if len(got) != 1 || got[0].EventID != "i5r" || got[0].InvocationID != "i5" || got[0].Tool != "read_file" {
		t.Fatalf("ExcerptsOf = %+v, want i5r's read_file result", got)
	}
	var shown map[string]any
	for _, it := range NewViewer(nil).View(stored) {
		if stored[it.Index].ID == "i5r" && it.Content != nil {
			shown = it.Content.Parts[0].FunctionResponse.Response
		}
	}
	if diff := cmp.Diff(shown, got[0].Shown); diff != "" {
		t.Errorf("shown (-view +ExcerptsOf):\n%s", diff)
	}
	if diff := cmp.Diff(bigToolTurn("i5")[2].Content.Parts[0].FunctionResponse.Response, got[0].Stored); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	if s, _ := got[0].Shown["content"].(string); !strings.Contains(s, "; "+marks.ExcerptNote+" ...]") {
		t.Errorf("the excerpt does not carry marks.ExcerptNote in its cut mark:\n%s", s)
	}
	if ExcerptsOf(stored, nil) != nil || ExcerptsOf(stored, &Marker{}) != nil {
		t.Error("a nil marker or one without excerpts names excerpts")
	}
}

// Result.Covered holds the events a marker newly covers, in stream order: the second marker's
// only those the first did not cover (what the recall history keeps, once each).
func TestResultCoveredIsWhatTheMarkerAdds(t *testing.T) {
	var events []Event
	for k := 1; k <= 9; k++ {
		events = append(events, bigToolTurn(fmt.Sprintf("i%d", k))...)
	}
	store := newStore(events[:6*4]...)
	cfg := Config{Interval: 3, Summarizer: &recorder{text: "S"}}
	ids := func(evs []Event) []string {
		var out []string
		for _, e := range evs {
			out = append(out, e.ID)
		}
		return out
	}
	want := func(invs ...string) []string {
		var out []string
		for _, inv := range invs {
			out = append(out, ids(bigToolTurn(inv))...)
		}
		return out
	}
	res := Prepare(context.Background(), cfg, nil, store.load(), Selection{Trigger: TriggerInvocations, Invocation: "i6", Now: t0})
	if res.Marker == nil {
		t.Fatalf("no marker: %s %v", res.Reason, res.Err)
	}
	if diff := cmp.Diff(want("i1", "i2", "i3", "i4"), ids(res.Covered)); diff != "" {
		t.Errorf("first marker covers (-want +got):\n%s", diff)
	}
	store.appendMarker("i6", res.Metadata)
	store.events = append(store.events, stamp(events[6*4:]...)...)
	res = Prepare(context.Background(), cfg, nil, store.load(), Selection{Trigger: TriggerInvocations, Invocation: "i9", Now: t0})
	if res.Marker == nil {
		t.Fatalf("no second marker: %s %v", res.Reason, res.Err)
	}
	if diff := cmp.Diff(want("i5", "i6", "i7"), ids(res.Covered)); diff != "" {
		t.Errorf("second marker newly covers (-want +got):\n%s", diff)
	}
}

// An excerpt of a text truncation cut states the size of the output the cut was taken from and
// carries the cut's note (where that output is kept) after marks.ExcerptHead, wherever the text sits
// in the result (a map entry, a list element, deeper); a text truncation did not cut keeps
// marks.ExcerptNote. The stored result is never modified.
func TestExcerptOfACutTextStatesTheOriginal(t *testing.T) {
	original := strings.Repeat("2026-11-28 a line of the service's log\n", 800)
	note := `full output saved as artifact "adkctx-tool-output-logs-call-1.txt"`
	cutText, st := truncate.Text(original, truncate.Config{MaxBytes: 8 << 10, MaxLines: 200}, note)
	whole := strings.Repeat("a line truncation did not cut\n", 60)
	for _, tc := range []struct {
		name   string
		result map[string]any
		at     func(map[string]any) string // the cut text as the view shows it
	}{
		{"a map entry", map[string]any{"output": cutText, "other": whole},
			func(m map[string]any) string { return m["output"].(string) }},
		{"a list element", map[string]any{"runs": []any{"ok", cutText}},
			func(m map[string]any) string { return m["runs"].([]any)[1].(string) }},
		{"deeper", map[string]any{"runs": []any{map[string]any{"log": cutText}}},
			func(m map[string]any) string { return m["runs"].([]any)[0].(map[string]any)["log"].(string) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprint(tc.result)
			ev := Event{ID: "e1", InvocationID: "i1", Author: "user", Timestamp: time.Unix(1e9, 0),
				Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("logs", tc.result)}}}
			got := ExcerptsOf([]Event{ev}, &Marker{ExcerptedEventIDs: []string{"e1"}, ExcerptBytes: 1024})
			if len(got) != 1 {
				t.Fatalf("ExcerptsOf = %+v", got)
			}
			if fmt.Sprint(tc.result) != before {
				t.Fatal("the stored result changed")
			}
			found := marks.Find(tc.at(got[0].Shown))
			if len(found) != 1 {
				t.Fatalf("%d marks in %q", len(found), tc.at(got[0].Shown))
			}
			m := found[0].Mark
			if want := (marks.Mark{OriginalLines: st.OriginalLines, OriginalBytes: st.OriginalBytes, Note: marks.ExcerptHead + "; " + note,
				OmittedLines: m.OmittedLines, OmittedBytes: m.OmittedBytes}); m != want {
				t.Errorf("mark %+v, want %+v", m, want)
			}
			if m.OmittedBytes < st.OmittedBytes || m.OmittedBytes >= st.OriginalBytes || m.OmittedLines < st.OmittedLines {
				t.Errorf("the excerpt omits %d lines, %d bytes of the original; truncation omitted %d, %d", m.OmittedLines, m.OmittedBytes, st.OmittedLines, st.OmittedBytes)
			}
			if other, ok := got[0].Shown["other"].(string); ok && !strings.Contains(other, "; "+marks.ExcerptNote+" ...]") {
				t.Errorf("a text truncation did not cut lost marks.ExcerptNote:\n%s", other)
			}
		})
	}
}
