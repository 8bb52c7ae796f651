package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // the clock test never skips for want of zone data

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/platform"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/longrun"
)

// countingService counts the events its Get returns (what a session read costs).
type countingService struct {
	session.Service
	mu     sync.Mutex
	events int
	gets   int
}

func (c *countingService) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	resp, err := c.Service.Get(ctx, req)
	if err == nil && resp != nil && resp.Session != nil {
		c.mu.Lock()
		c.events += resp.Session.Events().Len()
		c.gets++
		c.mu.Unlock()
	}
	return resp, err
}

func (c *countingService) take() (events, gets int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	events, gets = c.events, c.gets
	c.events, c.gets = 0, 0
	return events, gets
}

// codingModel answers each user message by reading a file, then with a decision.
func codingModel() *llmtest.Model {
	return &llmtest.Model{UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
		last := req.Contents[len(req.Contents)-1]
		for _, p := range last.Parts {
			if p.FunctionResponse != nil {
				return genai.NewContentFromText("Decision: the module is safe to change. "+strings.Repeat("reason ", 30), genai.RoleModel), nil
			}
		}
		turn := userTexts(req)
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
			Name: "read_file", Args: map[string]any{"path": "src/" + strings.Fields(turn[len(turn)-1])[0] + ".go"}}}}}, nil
	}}
}

type pathArgs struct {
	Path string `json:"path"`
}

func readFileTool(t *testing.T) tool.Tool {
	t.Helper()
	rt, err := functiontool.New(functiontool.Config{Name: "read_file", Description: "reads a file"},
		func(_ agent.ToolContext, a pathArgs) (map[string]any, error) {
			return map[string]any{"path": a.Path, "content": strings.Repeat("func f() { return }\n", 150)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// fakeClock advances a second per reading: events 1 s apart, whatever the machine's speed. It
// starts at the machine's time, so it runs ahead of the clock the compactor stamps markers with
// (which are then stamped after the newest event).
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration // 0: a second
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(max(c.step, time.Second))
	return c.now
}

// run sends one user message with ctx.
func run(ctx context.Context, t *testing.T, r *runner.Runner, sessionID, text string) {
	t.Helper()
	for _, err := range r.Run(ctx, "user", sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A turn reads what the model's view needs, not the session: after the first turns, each turn
// (its runner's Get, the compaction it triggers, the appends) reads at most twice the events the
// view shows plus the events stamped within the read margin before them — however long the
// session grows.
func TestLongBoundedReadsPerTurn(t *testing.T) {
	longrun.Test(t)
	for name, newBase := range backends(t) {
		t.Run(name, func(t *testing.T) {
			counted := &countingService{Service: newBase()}
			margin := 5 * time.Second
			s := wireStack(t, codingModel(), adkctx.Config{Compaction: &compaction.Config{Interval: 3, Synchronous: true,
				ReadMargin: margin}}, counted, readFileTool(t))
			clock := &fakeClock{now: time.Now()}
			ctx := platform.WithTimeProvider(context.Background(), clock.Now)
			// view returns the model's view now and how far back it reaches.
			view := func() (events []*session.Event, from time.Time) {
				resp, err := s.sessions.Get(ctx, &session.GetRequest{AppName: appName, UserID: "user", SessionID: "s1"})
				if err != nil {
					t.Fatal(err)
				}
				counted.take()
				events = hooks.ModelView(resp.Session)
				for _, e := range events {
					if !strings.HasPrefix(e.ID, "compaction-summary-") && (from.IsZero() || e.Timestamp.Before(from)) {
						from = e.Timestamp
					}
				}
				return events, from
			}
			run(ctx, t, s.runner, "s1", "mod99 to start with")
			worst := ""
			for i := range 60 {
				before, from := view()
				run(ctx, t, s.runner, "s1", fmt.Sprintf("mod%02d please look at it", i))
				read, gets := counted.take()
				after, _ := view()
				if i < 10 {
					continue // the session is still shorter than its view
				}
				skew := 0
				for _, e := range stored(t, counted.Service, "s1") {
					if !e.Timestamp.Before(from.Add(-margin)) && e.Timestamp.Before(from) {
						skew++
					}
				}
				counted.take()
				shows := max(len(before), len(after))
				if bound := 2*shows + skew; read > bound {
					t.Errorf("turn %d read %d events in %d gets; the view shows %d, %d stamped within the margin: bound %d",
						i, read, gets, shows, skew, bound)
				}
				worst = fmt.Sprintf("turn %d: %d events read in %d gets, view %d, margin %d", i, read, gets, shows, skew)
			}
			t.Log("last turn:", worst)
			if total := len(stored(t, counted.Service, "s1")); total < 200 {
				t.Fatalf("the session holds %d events: too short to show anything", total)
			}
		})
	}
}

// The model's requests are byte for byte those of the same build reading the whole session on
// every read: a bounded read changes what the process reads, never what the model sees.
func TestLongBoundedReadsSendTheSameRequests(t *testing.T) {
	longrun.Test(t)
	for name, newBase := range backends(t) {
		t.Run(name, func(t *testing.T) {
			requests := func(whole bool) []string {
				m := codingModel()
				s := wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 3, Synchronous: true}}, newBase(), readFileTool(t))
				if whole {
					hooks.ReadWhole(s.hooks)
				}
				clock := &fakeClock{now: time.Now()}
				ctx := platform.WithTimeProvider(context.Background(), clock.Now)
				for i := range 40 {
					run(ctx, t, s.runner, "s1", fmt.Sprintf("mod%02d please look at it", i))
				}
				var out []string
				for _, req := range m.Requests() {
					b, err := json.Marshal(struct {
						Contents []*genai.Content
						Config   *genai.GenerateContentConfig
					}{req.Contents, req.Config})
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, string(b))
				}
				return out
			}
			bounded, whole := requests(false), requests(true)
			if len(bounded) < 80 {
				t.Fatalf("%d requests", len(bounded))
			}
			if diff := cmp.Diff(whole, bounded); diff != "" {
				t.Errorf("requests with bounded reads differ from whole reads (-whole +bounded):\n%s", diff)
			}
			if !strings.Contains(bounded[len(bounded)-1], compaction.SummaryHeader) {
				t.Error("the last request holds no summary: nothing was compacted")
			}
		})
	}
}

// A Get that sets NumRecentEvents or After is the caller's page of the stored events: passed to
// storage as it is, the same through every process (markers included, no summary).
func TestPagedGetIsPassedThrough(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	s := wireStack(t, codingModel(), adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true}},
		sqliteService(t, path), readFileTool(t))
	for i := range 8 {
		run(context.Background(), t, s.runner, "s1", fmt.Sprintf("mod%02d please", i))
	}
	other, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	otherSessions := other.SessionService(sqliteService(t, path))
	all := stored(t, s.base, "s1")
	for _, req := range []*session.GetRequest{
		{NumRecentEvents: 4},
		{After: all[len(all)-5].Timestamp},
		{NumRecentEvents: 3, After: all[2].Timestamp},
	} {
		req.AppName, req.UserID, req.SessionID = appName, "user", "s1"
		var got [][]string
		for _, svc := range []session.Service{s.base, s.sessions, otherSessions} {
			resp, err := svc.Get(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for e := range resp.Session.Events().All() {
				ids = append(ids, e.ID)
			}
			got = append(got, ids)
		}
		if diff := cmp.Diff(got[0], got[1]); diff != "" {
			t.Errorf("%+v through the compacting process (-storage +wrapper):\n%s", req, diff)
		}
		if diff := cmp.Diff(got[0], got[2]); diff != "" {
			t.Errorf("%+v through another process (-storage +wrapper):\n%s", req, diff)
		}
	}
}

// Timestamps lie: adk-go stamps local time and the SQLite driver stores each timestamp as text
// in its own UTC offset, compared as text. Two adkctx processes whose clocks are in Berlin and in
// Tokyo serve one SQLite session across Berlin's daylight-saving change, and a writer that does
// not go through adkctx stores notes stamped in New York's local time now and then. Every
// stored event is covered by the winning marker chain or shown raw in each process's bounded
// view (never neither, never both), and that view is the view of the whole session.
func TestClockChangesLoseNoEvent(t *testing.T) {
	zone := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatalf("time zone %s: %v", name, err) // time/tzdata is embedded: this cannot happen
		}
		return loc
	}
	berlin, tokyo, newYork := zone("Europe/Berlin"), zone("Asia/Tokyo"), zone("America/New_York")
	// Berlin's clocks go back from 03:00 to 02:00 at 01:00 UTC on the last Sunday of October.
	// The session starts an hour before, a year ahead of the machine's clock (so the compactor,
	// which stamps markers with the machine's time, never stamps one after the writers' events).
	year := time.Now().Year() + 1
	change := time.Date(year, time.October, 31, 1, 0, 0, 0, time.UTC)
	for change.Weekday() != time.Sunday {
		change = change.AddDate(0, 0, -1)
	}
	clock := &fakeClock{now: change.Add(-time.Hour), step: time.Minute}
	in := func(loc *time.Location) context.Context {
		return platform.WithTimeProvider(context.Background(), func() time.Time { return clock.Now().In(loc) })
	}
	path := filepath.Join(t.TempDir(), "sessions.db")
	cfg := adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}}}
	var writers []*wired
	for range 2 {
		writers = append(writers, wireStack(t, codingModel(), cfg, sqliteService(t, path), readFileTool(t)))
	}
	ctxs := []context.Context{in(berlin), in(tokyo)}
	foreign := sqliteService(t, path)
	for i := range 40 {
		run(ctxs[i%2], t, writers[i%2].runner, "s1", fmt.Sprintf("mod%02d please look at it", i))
		if i%4 == 3 {
			resp, err := foreign.Get(context.Background(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			ev := session.NewEventWithContext(in(newYork), fmt.Sprint("note-", i))
			ev.Author = "user"
			ev.Content = genai.NewContentFromText(fmt.Sprintf("a note from New York at turn %d", i), genai.RoleUser)
			if err := foreign.AppendEvent(context.Background(), resp.Session, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !clock.Now().After(change.Add(time.Hour)) {
		t.Fatal("the session did not cross the clock change")
	}
	whole, err := foreign.Get(context.Background(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	raw := stored(t, foreign, "s1")
	offsets := map[int]bool{}
	byID := map[string]*compaction.Marker{}
	var newest *compaction.Marker
	for _, e := range raw {
		_, off := e.Timestamp.Zone()
		offsets[off] = true
		if isMarker(e) {
			m, err := compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata})
			if err != nil {
				t.Fatal(err)
			}
			byID[e.ID] = m
			if newest == nil || m.Seq > newest.Seq {
				newest = m
			}
		}
	}
	if len(offsets) < 2 || newest == nil {
		t.Fatalf("stored offsets %v, newest marker %v: the test did not mix offsets or compact", offsets, newest)
	}
	covered := map[string]bool{}
	for m := newest; m != nil; m = byID[m.Previous] {
		for _, id := range m.EventIDs {
			covered[id] = true
		}
		if m.Previous == "" {
			break
		}
	}
	var wholeView []string
	for _, e := range hooks.ModelView(whole.Session) {
		wholeView = append(wholeView, e.ID)
	}
	for k, w := range writers {
		resp, err := w.sessions.Get(ctxs[k], &session.GetRequest{AppName: appName, UserID: "user", SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		shown := map[string]bool{}
		var ids []string
		for _, e := range hooks.ModelView(resp.Session) {
			shown[e.ID], ids = true, append(ids, e.ID)
		}
		for _, e := range raw {
			switch {
			case isMarker(e):
			case !shown[e.ID] && !covered[e.ID]:
				t.Errorf("writer %d: event %s (%s, stamped %v) is neither summarized nor shown", k, e.ID, e.Author, e.Timestamp)
			case shown[e.ID] && covered[e.ID]:
				t.Errorf("writer %d: event %s is summarized and shown", k, e.ID)
			}
		}
		if diff := cmp.Diff(wholeView, ids); diff != "" {
			t.Errorf("writer %d's bounded view differs from the whole session's (-whole +bounded):\n%s", k, diff)
		}
	}
}

// A call still waiting for its answer stays raw at any age, so the bounded reads of its session
// reach back to it and grow with the session: adkctx says so once, with what the read costs
// (events read and shown, how far back), and stays silent for a session nothing holds back.
func TestLongWideReadIsReported(t *testing.T) {
	longrun.Test(t)
	for name, newBase := range backends(t) {
		t.Run(name, func(t *testing.T) {
			m := codingModel()
			next := m.Default
			m.Default = func(req *model.LLMRequest) (*genai.Content, error) {
				if turn := userTexts(req); len(turn) > 0 && strings.HasPrefix(turn[len(turn)-1], "deploy") &&
					req.Contents[len(req.Contents)-1].Role == genai.RoleUser && req.Contents[len(req.Contents)-1].Parts[0].Text != "" {
					return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
						ID: "approval-1", Name: "request_approval", Args: map[string]any{"change": "deploy"}}}}}, nil
				}
				return next(req)
			}
			approval, err := functiontool.New(functiontool.Config{Name: "request_approval", Description: "asks a person to approve",
				IsLongRunning: true}, func(agent.ToolContext, map[string]any) (map[string]any, error) {
				return map[string]any{"status": "pending"}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			s := wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 3, Synchronous: true}}, newBase(),
				readFileTool(t), approval)
			clock := &fakeClock{now: time.Now()}
			ctx := platform.WithTimeProvider(context.Background(), clock.Now)
			run(ctx, t, s.runner, "held", "deploy the billing service")
			for i := range 30 {
				run(ctx, t, s.runner, "held", fmt.Sprintf("mod%02d please look at it", i))
				run(ctx, t, s.runner, "free", fmt.Sprintf("mod%02d please look at it", i))
			}

			entries := s.logs.FilterMessage("session read reaches back").All()
			if len(entries) != 1 {
				t.Fatalf("%d 'session read reaches back' entries, want 1 (for the held session, once)", len(entries))
			}
			f := entries[0].ContextMap()
			if f["session_id"] != "held" {
				t.Errorf("reported session %v, want held", f["session_id"])
			}
			read, shown := f["events_read"].(int64), f["events_shown"].(int64)
			if read <= 2*shown+64 || f["reaches_back"].(time.Duration) <= 0 {
				t.Errorf("reported %d events read, %d shown, reaching back %v: not a wide read", read, shown, f["reaches_back"])
			}
			resp, err := s.sessions.Get(ctx, &session.GetRequest{AppName: appName, UserID: "user", SessionID: "held"})
			if err != nil {
				t.Fatal(err)
			}
			pending := slices.ContainsFunc(hooks.ModelView(resp.Session), func(e *session.Event) bool {
				return e.Content != nil && slices.ContainsFunc(e.Content.Parts, func(p *genai.Part) bool {
					return p.FunctionCall != nil && p.FunctionCall.ID == "approval-1"
				})
			})
			if !pending {
				t.Error("the pending call is not in the model's view: nothing held the read back")
			}
		})
	}
}

// The first read of a session in a process is bounded too: a process that never served the
// session probes its newest events, learns from the newest marker how far back the view
// reaches, and reads that, not the session. The session's events are stamped by adk-go's time
// provider, a clock running ahead of the compacting process's, as another writer's may.
func TestLongFirstReadInAProcessIsBounded(t *testing.T) {
	longrun.Test(t)
	for name, newBase := range backends(t) {
		t.Run(name, func(t *testing.T) {
			counted := &countingService{Service: newBase()}
			cfg := adkctx.Config{Compaction: &compaction.Config{Interval: 3, Synchronous: true}}
			first := wireStack(t, codingModel(), cfg, counted, readFileTool(t))
			clock := &fakeClock{now: time.Now().Add(time.Hour)}
			ctx := platform.WithTimeProvider(context.Background(), clock.Now)
			for i := range 60 {
				run(ctx, t, first.runner, "s1", fmt.Sprintf("mod%02d please look at it", i))
			}
			total := len(stored(t, counted.Service, "s1"))
			counted.take()

			fresh := wireStack(t, codingModel(), cfg, counted, readFileTool(t)) // another process
			run(ctx, t, fresh.runner, "s1", "mod60 please look at it")
			read, gets := counted.take()
			resp, err := fresh.sessions.Get(ctx, &session.GetRequest{AppName: appName, UserID: "user", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			shows := len(hooks.ModelView(resp.Session))
			t.Logf("the first turn in a fresh process read %d events in %d gets; the view shows %d of %d stored", read, gets, shows, total)
			if total < 200 {
				t.Fatalf("the session holds %d events: too short to show anything", total)
			}
			if bound := 64 + 2*shows; read > bound {
				t.Errorf("the first turn read %d events in %d gets, over the probe and twice the view (%d): the session has %d",
					read, gets, bound, total)
			}
		})
	}
}

// Another writer's events do not hold the reads back once a compaction covered them: after an
// application posts many events through adk-go's own service, a fresh process reads the session
// whole once (no marker among its newest events), compacts them, and its next turn reads no more
// than twice the view plus the margin (the reader starts from the new marker, not the old one).
func TestBoundedReadAfterAnotherWriter(t *testing.T) {
	for name, newBase := range backends(t) {
		t.Run(name, func(t *testing.T) {
			counted := &countingService{Service: newBase()}
			const margin = 5 * time.Second
			cfg := adkctx.Config{Compaction: &compaction.Config{Interval: 3, Synchronous: true, ReadMargin: margin}}
			first := wireStack(t, codingModel(), cfg, counted, readFileTool(t))
			clock := &fakeClock{now: time.Now()}
			ctx := platform.WithTimeProvider(context.Background(), clock.Now)
			for i := range 12 {
				run(ctx, t, first.runner, "s1", fmt.Sprintf("mod%02d please look at it", i))
			}
			// The application posts 80 events through adk-go's own service.
			resp, err := counted.Service.Get(ctx, &session.GetRequest{AppName: appName, UserID: "user", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 80 {
				ev := session.NewEventWithContext(ctx, fmt.Sprintf("notify-%02d", i))
				ev.Author = "assistant"
				ev.Timestamp = clock.Now()
				ev.Content = genai.NewContentFromText(fmt.Sprintf("Build %d finished: all green.", i), genai.RoleModel)
				if err := counted.Service.AppendEvent(ctx, resp.Session, ev); err != nil {
					t.Fatal(err)
				}
			}
			markersBefore := countMarkers(stored(t, counted.Service, "s1"))

			fresh := wireStack(t, codingModel(), cfg, counted, readFileTool(t))
			counted.take()
			run(ctx, t, fresh.runner, "s1", "mod50 please look at it")
			if got := countMarkers(stored(t, counted.Service, "s1")); got <= markersBefore {
				t.Fatalf("the fresh process's first turn stored no compaction (%d markers): the test proves nothing", got)
			}
			counted.take()
			from := time.Time{}
			viewBefore := func() []*session.Event {
				// Straight from storage: a Get through the fresh process would teach its reader.
				resp, err := counted.Service.Get(ctx, &session.GetRequest{AppName: appName, UserID: "user", SessionID: "s1"})
				if err != nil {
					t.Fatal(err)
				}
				evs := hooks.ModelView(resp.Session)
				for _, e := range evs {
					if !strings.HasPrefix(e.ID, "compaction-summary-") && (from.IsZero() || e.Timestamp.Before(from)) {
						from = e.Timestamp
					}
				}
				return evs
			}
			before := viewBefore()
			run(ctx, t, fresh.runner, "s1", "mod51 please look at it")
			read, gets := counted.take()
			skew := 0
			for _, e := range stored(t, counted.Service, "s1") {
				if !e.Timestamp.Before(from.Add(-margin)) && e.Timestamp.Before(from) {
					skew++
				}
			}
			t.Logf("read %d events in %d gets; view %d; skew %d", read, gets, len(before), skew)
			if bound := 2*len(before) + skew; read > bound {
				t.Errorf("the turn after the compaction read %d events in %d gets; the view shows %d, %d stamped within the margin: bound %d",
					read, gets, len(before), skew, bound)
			}
		})
	}
}

func countMarkers(evs []*session.Event) int {
	n := 0
	for _, e := range evs {
		if isMarker(e) {
			n++
		}
	}
	return n
}
