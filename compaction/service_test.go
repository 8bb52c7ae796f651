package compaction

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/sessiontestsuite"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/llmtest"
)

func TestServiceConformanceInMemory(t *testing.T) {
	sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true},
		func(t *testing.T) session.Service { return NewService(session.InMemoryService(), nil) })
}

func TestServiceConformanceSQLite(t *testing.T) {
	sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true},
		func(t *testing.T) session.Service {
			return NewService(newSQLite(t, filepath.Join(t.TempDir(), "s.db")), nil)
		})
}

func allEvents(s session.Session) []*session.Event {
	var out []*session.Event
	for e := range s.Events().All() {
		out = append(out, e)
	}
	return out
}

func TestServiceWrapper(t *testing.T) {
	for _, b := range []struct {
		name string
		base func(t *testing.T) session.Service
	}{
		{"inmemory", func(t *testing.T) session.Service { return session.InMemoryService() }},
		{"sqlite", func(t *testing.T) session.Service { return newSQLite(t, filepath.Join(t.TempDir(), "s.db")) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			base := b.base(t)
			svc := NewService(base, nil)
			if svc.Base() != base {
				t.Error("Base() is not the wrapped service")
			}
			created, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			live := created.Session
			if Unwrap(live) == live {
				t.Fatal("Create did not wrap the session")
			}
			if Unwrap(Unwrap(live)) != Unwrap(live) {
				t.Error("Unwrap of an unwrapped session is not the identity")
			}
			start := time.Now().Add(-time.Hour)
			var stored []*session.Event
			add := func(e *session.Event) {
				t.Helper()
				// Append through the wrapper with the wrapped session, as the
				// runner does; the view of the same object must follow.
				if err := svc.AppendEvent(ctx, live, e); err != nil {
					t.Fatalf("AppendEvent: %v", err)
				}
				stored = append(stored, e)
			}
			for i, id := range []string{"e1", "e2", "e3", "e4"} {
				e := tev(id, 0, "agent", "text of "+id)
				e.Timestamp = start.Add(time.Duration(i) * time.Second)
				add(e)
			}
			if diff := cmp.Diff([]string{"e1", "e2", "e3", "e4"}, describe(allEvents(live))); diff != "" {
				t.Errorf("before marker (-want +got):\n%s", diff)
			}
			m := markerOver(t, "M", 0, stored, 0, 2, "sum")
			m.Timestamp = start.Add(5 * time.Second)
			add(m)
			// Lazily recomputed on the same session object.
			if diff := cmp.Diff([]string{"S(M)", "e4"}, describe(allEvents(live))); diff != "" {
				t.Errorf("live view after marker (-want +got):\n%s", diff)
			}
			e5 := tev("e5", 0, "user", "text of e5")
			e5.Timestamp = start.Add(6 * time.Second)
			add(e5)
			evs := live.Events()
			if diff := cmp.Diff([]string{"S(M)", "e4", "e5"}, describe(allEvents(live))); diff != "" {
				t.Errorf("live view after e5 (-want +got):\n%s", diff)
			}
			if evs.Len() != 3 || evs.At(0) == nil || !IsSummaryEvent(evs.At(0)) || evs.At(3) != nil || evs.At(-1) != nil {
				t.Errorf("Events(): Len %d At(0) %v", evs.Len(), evs.At(0))
			}
			if got := len(RawEvents(live)); got != 6 {
				t.Errorf("RawEvents = %d events, want 6", got)
			}
			if RawEvents(nil) != nil {
				t.Error("RawEvents(nil) != nil")
			}

			// Get, List return views; delegated fields are the base's.
			got, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"S(M)", "e4", "e5"}, describe(allEvents(got.Session))); diff != "" {
				t.Errorf("Get view (-want +got):\n%s", diff)
			}
			inner := Unwrap(got.Session)
			if got.Session.ID() != "s" || got.Session.AppName() != "app" || got.Session.UserID() != "u" ||
				!got.Session.LastUpdateTime().Equal(inner.LastUpdateTime()) {
				t.Errorf("delegated fields differ")
			}
			if err := got.Session.State().Set("k", "v"); err != nil {
				t.Errorf("State().Set: %v", err)
			}
			if v, err := inner.State().Get("k"); err != nil || v != "v" {
				t.Errorf("state not delegated: %v %v", v, err)
			}
			list, err := svc.List(ctx, &session.ListRequest{AppName: "app", UserID: "u"})
			if err != nil || len(list.Sessions) != 1 || Unwrap(list.Sessions[0]) == list.Sessions[0] {
				t.Fatalf("List: %v %v", list, err)
			}

			// NumRecentEvents: the base trims, the view is over what came back.
			recent, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s", NumRecentEvents: 4})
			if err != nil {
				t.Fatal(err)
			}
			// Stored: e1 e2 e3 e4 M e5 → last 4: e3 e4 M e5; M covers e3.
			if diff := cmp.Diff([]string{"S(M)", "e4", "e5"}, describe(allEvents(recent.Session))); diff != "" {
				t.Errorf("NumRecentEvents view (-want +got):\n%s", diff)
			}

			// Errors pass through unchanged (a foreign session type here).
			err = svc.AppendEvent(ctx, &fakeSession{id: "missing"}, tev("x", 0, "user", "x"))
			baseErr := base.AppendEvent(ctx, &fakeSession{id: "missing"}, tev("x", 0, "user", "x"))
			if err == nil || baseErr == nil || err.Error() != baseErr.Error() {
				t.Errorf("AppendEvent(foreign) = %v, base says %v", err, baseErr)
			}
			if err := svc.Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("Get after Delete = %v, want ErrNotFound", err)
			}
		})
	}
}

type fakeSession struct{ id string }

func (f *fakeSession) ID() string                { return f.id }
func (f *fakeSession) AppName() string           { return "app" }
func (f *fakeSession) UserID() string            { return "u" }
func (f *fakeSession) State() session.State      { return nil }
func (f *fakeSession) Events() session.Events    { return nil }
func (f *fakeSession) LastUpdateTime() time.Time { return time.Time{} }

func TestServiceWrapsWrapperOnce(t *testing.T) {
	ctx := t.Context()
	inner := NewService(session.InMemoryService(), nil)
	outer := NewService(inner, nil)
	c, err := outer.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Unwrap(c.Session).(*viewSession); ok {
		t.Error("Unwrap left a view session")
	}
	if err := outer.AppendEvent(ctx, c.Session, tev("e1", 1, "user", "hi")); err != nil {
		t.Fatal(err)
	}
	if n := c.Session.Events().Len(); n != 1 {
		t.Errorf("Len = %d", n)
	}
	var nilEvents fakeSession
	if n := (&viewSession{inner: &nilEvents}).Events().Len(); n != 0 {
		t.Errorf("nil inner events: Len = %d", n)
	}
}

func TestServiceConcurrentEvents(t *testing.T) {
	ctx := t.Context()
	svc := NewService(session.InMemoryService(), nil)
	c, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_ = c.Session.Events().Len()
			}
			_ = g
		}()
	}
	for i := range 50 {
		e := tev("e", 0, "user", "x")
		e.ID = ""
		e.Timestamp = time.Now().Add(time.Duration(i) * time.Millisecond)
		if err := svc.AppendEvent(ctx, c.Session, e); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if n := c.Session.Events().Len(); n != 50 {
		t.Errorf("Len = %d, want 50", n)
	}
}

// TestEndToEndSummaryReachesModel runs adk-go's runner + llmagent over the
// wrapper on a session that already holds a marker and checks the exact
// contents the model receives.
func TestEndToEndSummaryReachesModel(t *testing.T) {
	for _, b := range []struct {
		name string
		base func(t *testing.T) session.Service
	}{
		{"inmemory", func(t *testing.T) session.Service { return session.InMemoryService() }},
		{"sqlite", func(t *testing.T) session.Service { return newSQLite(t, filepath.Join(t.TempDir(), "s.db")) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			base := b.base(t)
			if _, err := base.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
				t.Fatal(err)
			}
			got, err := base.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			sess := got.Session
			start := time.Now().Add(-time.Hour)
			var stored []*session.Event
			add := func(e *session.Event, sec int) {
				t.Helper()
				e.Timestamp = start.Add(time.Duration(sec) * time.Second)
				if err := base.AppendEvent(ctx, sess, e); err != nil {
					t.Fatal(err)
				}
				stored = append(stored, e)
			}
			add(tev("o1", 0, "user", "old question alpha"), 1)
			add(tev("o2", 0, "helper", "old answer beta"), 2)
			add(tev("o3", 0, "user", "old question gamma"), 3)
			add(tev("o4", 0, "helper", "old answer delta"), 4)
			add(markerOver(t, "M", 0, stored, 0, 3, "The user asked about alpha and gamma."), 5)
			add(tev("r1", 0, "user", "recent question epsilon"), 6)
			add(tev("r2", 0, "helper", "recent answer zeta"), 7)

			llm := &llmtest.Model{Script: []llmtest.Step{llmtest.Text("new answer")}}
			a, err := llmagent.New(llmagent.Config{Name: "helper", Model: llm, Instruction: "Be brief."})
			if err != nil {
				t.Fatal(err)
			}
			r, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: NewService(base, nil)})
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range r.Run(ctx, "u", "s", genai.NewContentFromText("new question eta", genai.RoleUser), agent.RunConfig{}) {
				if err != nil {
					t.Fatalf("run: %v", err)
				}
			}
			if len(llm.Requests()) != 1 {
				t.Fatalf("model called %d times", len(llm.Requests()))
			}
			type turn struct{ Role, Text string }
			var turns []turn
			for _, c := range llm.Requests()[0].Contents {
				var parts []string
				for _, p := range c.Parts {
					parts = append(parts, p.Text)
				}
				turns = append(turns, turn{c.Role, strings.Join(parts, "|")})
			}
			want := []turn{
				{"user", "[Summary of earlier conversation]\nThe user asked about alpha and gamma."},
				{"user", "recent question epsilon"},
				{"model", "recent answer zeta"},
				{"user", "new question eta"},
			}
			if diff := cmp.Diff(want, turns); diff != "" {
				t.Errorf("model request contents (-want +got):\n%s", diff)
			}
			for _, tr := range turns {
				for _, bad := range []string{"For context:", "alpha\n", "beta", "delta", "old question"} {
					if strings.Contains(tr.Text, bad) {
						t.Errorf("request contains %q: %q", bad, tr.Text)
					}
				}
			}
			// Without the wrapper (compaction not configured) adk-go skips the
			// content-less marker event and sends the raw history.
			plain := &llmtest.Model{}
			pa, err := llmagent.New(llmagent.Config{Name: "helper", Model: plain})
			if err != nil {
				t.Fatal(err)
			}
			pr, err := runner.New(runner.Config{AppName: "app", Agent: pa, SessionService: base})
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range pr.Run(ctx, "u", "s", genai.NewContentFromText("plain question", genai.RoleUser), agent.RunConfig{}) {
				if err != nil {
					t.Fatalf("plain run: %v", err)
				}
			}
			var plainTexts []string
			for _, c := range plain.Requests()[0].Contents {
				plainTexts = append(plainTexts, c.Parts[0].Text)
			}
			wantPlain := []string{"old question alpha", "old answer beta", "old question gamma", "old answer delta",
				"recent question epsilon", "recent answer zeta", "new question eta", "new answer", "plain question"}
			if diff := cmp.Diff(wantPlain, plainTexts); diff != "" {
				t.Errorf("unwrapped request (-want +got):\n%s", diff)
			}

			// Storage keeps every event: the 7 seeded, two user messages and
			// two model replies.
			after, err := base.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			raw := RawEvents(after.Session)
			if len(raw) != 11 {
				t.Errorf("stored %d events, want 11", len(raw))
			}
			for i, id := range []string{"o1", "o2", "o3", "o4", "M", "r1", "r2"} {
				if raw[i].ID != id {
					t.Errorf("stored[%d] = %s, want %s", i, raw[i].ID, id)
				}
			}
		})
	}
}
