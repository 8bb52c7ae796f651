package compactor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/history"
)

// busyStore is a session whose appends fail while a running invocation keeps writing: the first
// fails appends are refused as adk-go's database service refuses a stale handle, because the
// invocation stored an event in the meantime (unless unchanged: then they fail for another
// reason, on a session nobody changed).
type busyStore struct {
	mu        sync.Mutex
	events    []compaction.Event
	fails     int
	unchanged bool
	appends   int
}

type busySnap struct {
	s      *busyStore
	events []compaction.Event
}

func (b busySnap) Events() []compaction.Event { return b.events }

func (b busySnap) Changes(ctx context.Context) (history.Changes, error) {
	fresh, err := b.s.Read(ctx, compactor.Session{}, history.ForView)
	if err != nil {
		return history.Changes{}, err
	}
	return history.Since(b.events, fresh.Events()), nil
}

func (s *busyStore) Read(context.Context, compactor.Session, history.Purpose) (compactor.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return busySnap{s, append([]compaction.Event(nil), s.events...)}, nil
}

func (b busySnap) AppendMarker(_ context.Context, inv string, ts time.Time, md map[string]any) (string, error) {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appends++
	if s.appends <= s.fails {
		if s.unchanged {
			return "", errors.New("disk full")
		}
		s.events = append(s.events, compaction.Event{ID: fmt.Sprint("concurrent-", s.appends), InvocationID: "inv-next", Author: "user",
			Timestamp: ts, Content: genai.NewContentFromText("a message stored meanwhile", genai.RoleUser)})
		return "", errors.New("stale session error: last update time from request is older than in database")
	}
	id := fmt.Sprintf("marker-%d", s.appends)
	s.events = append(s.events, compaction.Event{ID: id, InvocationID: inv, Author: "user", Timestamp: ts, Metadata: md})
	return id, nil
}

func session(invocations int) []compaction.Event {
	var evs []compaction.Event
	start := time.Unix(1_700_000_000, 0)
	for i := range invocations {
		inv := fmt.Sprintf("inv-%d", i)
		evs = append(evs,
			compaction.Event{ID: fmt.Sprintf("u%d", i), InvocationID: inv, Author: "user", Timestamp: start.Add(time.Duration(2*i) * time.Second),
				Content: genai.NewContentFromText(fmt.Sprintf("question %d: %s", i, strings.Repeat("context ", 200)), genai.RoleUser)},
			compaction.Event{ID: fmt.Sprintf("m%d", i), InvocationID: inv, Author: "agent", Final: true, Timestamp: start.Add(time.Duration(2*i+1) * time.Second),
				Content: genai.NewContentFromText(fmt.Sprintf("answer %d: %s", i, strings.Repeat("detail ", 200)), genai.RoleModel)})
	}
	return evs
}

// A marker append refused because the session was written meanwhile is retried after reading
// the session again, a few times, then discarded as a conflict (no backoff); an append refused
// on an unchanged session is a failure.
func TestMarkerAppendRetried(t *testing.T) {
	tests := []struct {
		fails       int
		unchanged   bool
		wantOutcome compactor.Outcome
		wantAppends int
	}{
		{0, false, compactor.OutcomeCompacted, 1},
		{1, false, compactor.OutcomeCompacted, 2},
		{4, false, compactor.OutcomeCompacted, 5},
		{5, false, compactor.OutcomeConflict, 5},
		{1, true, compactor.OutcomeFailed, 1},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.fails, tc.unchanged), func(t *testing.T) {
			st := &busyStore{events: session(10), fails: tc.fails, unchanged: tc.unchanged}
			var got []compactor.Outcome
			c, err := compactor.New(compaction.Config{Summarizer: &compaction.ExtractiveSummarizer{}},
				compactor.Deps{Store: st, Report: func(a compactor.Attempt) { got = append(got, a.Outcome) }})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Compact(context.Background(), compactor.Request{Session: compactor.Session{ID: "s"}, Trigger: compaction.TriggerManual})
			if (err != nil) != (tc.wantOutcome != compactor.OutcomeCompacted) {
				t.Errorf("Compact: %v", err)
			}
			if len(got) != 1 || got[0] != tc.wantOutcome || st.appends != tc.wantAppends {
				t.Errorf("outcomes %v after %d appends; want %s after %d", got, st.appends, tc.wantOutcome, tc.wantAppends)
			}
		})
	}
}
