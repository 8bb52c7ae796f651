package compactor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	. "github.com/adkctx/adkctx/compaction"
	. "github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/plan"
)

// recallLog records the calls of the compactor's Recall, with what was stored at each.
type recallLog struct {
	mu    sync.Mutex
	store *memStore
	calls []recallCall
}

type recallCall struct {
	kind    string // "excerpts" or "history"
	ids     []string
	markers int // marker events stored when called
}

func (r *recallLog) record(kind string, events []Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := recallCall{kind: kind, markers: len(r.store.appends)}
	for _, e := range events {
		c.ids = append(c.ids, e.ID)
	}
	r.calls = append(r.calls, c)
}

func (r *recallLog) SaveExcerpts(_ context.Context, s Session, m *Marker, events []Event) {
	var shown []Event
	for _, x := range plan.ExcerptsOf(events, m) {
		shown = append(shown, Event{ID: x.EventID})
	}
	r.record("excerpts", shown)
}

func (r *recallLog) WriteHistory(_ context.Context, s Session, covered []Event, _ int) {
	r.record("history", covered)
}

// respTurn is an invocation with a tool result large enough to be shown as an excerpt.
func respTurn(inv string) []Event {
	big := map[string]any{"content": longText(inv)}
	return []Event{
		userEv(inv+"u", inv, "Read the file of request "+inv+"."),
		{ID: inv + "c", InvocationID: inv, Author: "agent", Content: &genai.Content{Role: genai.RoleModel,
			Parts: []*genai.Part{genai.NewPartFromFunctionCall("read_file", map[string]any{"path": inv})}}},
		{ID: inv + "r", InvocationID: inv, Author: "user", Content: &genai.Content{Role: genai.RoleUser,
			Parts: []*genai.Part{genai.NewPartFromFunctionResponse("read_file", big)}}},
		modelEv(inv+"m", inv, "It holds the handlers of request "+inv+"."),
	}
}

func longText(inv string) string {
	out := "// head of " + inv + "\n"
	for range 140 {
		out += "func handler() { return process(ctx, req) }\n"
	}
	return out + "// tail of " + inv + "\n"
}

// With Deps.Recall, a compaction saves the results its marker shows as excerpts before the
// marker is stored (the notes naming them appear with it), and gives the history the events the
// stored marker newly covers; a conflict gives it nothing.
func TestCompactorRecall(t *testing.T) {
	var events []Event
	for _, inv := range []string{"i1", "i2", "i3", "i4", "i5", "i6"} {
		events = append(events, respTurn(inv)...)
	}
	store := newStore(events...)
	rec := &recallLog{store: store}
	c, err := New(Config{Summarizer: &recorder{}, Interval: 3}, Deps{Store: store, Recall: rec})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := c.Compact(context.Background(), Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i6"}); err != nil || m == nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	var covered []string
	for _, inv := range []string{"i1", "i2", "i3", "i4"} {
		for _, e := range respTurn(inv) {
			covered = append(covered, e.ID)
		}
	}
	want := []recallCall{
		{kind: "excerpts", ids: []string{"i5r"}, markers: 0},
		{kind: "history", ids: covered, markers: 1},
	}
	if diff := cmp.Diff(want, rec.calls, cmp.AllowUnexported(recallCall{})); diff != "" {
		t.Errorf("recall calls (-want +got):\n%s", diff)
	}

	// A newer marker stored meanwhile: the summary is discarded, no history is written.
	store = newStore(events...)
	store.afterLoad = func(s *memStore, loads int) {
		if loads == 1 {
			s.add(Event{ID: "theirs", Author: "user", Metadata: markerOf(t, turns(1, 3), "")})
		}
	}
	rec = &recallLog{store: store}
	c, _ = New(Config{Summarizer: &recorder{}, Interval: 3}, Deps{Store: store, Recall: rec})
	if m, _ := c.Compact(context.Background(), Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i6"}); m != nil {
		t.Fatal("stored over a newer marker")
	}
	for _, call := range rec.calls {
		if call.kind == "history" {
			t.Errorf("history written for a discarded marker: %v", call)
		}
	}
}
