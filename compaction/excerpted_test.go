package compaction

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	if s, _ := got[0].Shown["content"].(string); !strings.Contains(s, "; "+ExcerptNote+" ...]") {
		t.Errorf("the excerpt does not carry ExcerptNote in its cut mark:\n%s", s)
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
