package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adkctx/adkctx/budget"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"
)

func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

// attempts returns the compaction log entries (one per attempt).
func attempts(logs *observer.ObservedLogs) []map[string]any {
	var out []map[string]any
	for _, e := range logs.FilterMessage("compaction").All() {
		out = append(out, e.ContextMap())
	}
	return out
}

func nonMarkers(raw []*session.Event) []*session.Event {
	var out []*session.Event
	for _, e := range raw {
		if !IsCompactionEvent(e) {
			out = append(out, e)
		}
	}
	return out
}

func TestEndToEndSlidingWindow(t *testing.T) {
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			base, path := mk(t)
			logger, logs := observed()
			h := newHarness(t, harnessOpts{base: base, cfg: Config{Interval: 5, Logger: logger}})
			for i := 1; i <= 5; i++ {
				h.turn(fmt.Sprintf("question-%d", i))
			}
			raw := h.raw()
			markers := markersIn(t, raw)
			if len(markers) != 1 {
				t.Fatalf("after θ=5 invocations: %d markers stored, want 1", len(markers))
			}
			for _, e := range raw {
				// A marker carries no usage and no content: reading the
				// summary's own usage must never latch compaction on.
				if IsCompactionEvent(e) && (e.UsageMetadata != nil || e.Content != nil) {
					t.Errorf("marker event has usage/content: %+v", e.LLMResponse)
				}
			}
			originals := nonMarkers(raw)
			if len(originals) != 20 {
				t.Fatalf("stored events = %d, want 20 (user, call, response, answer × 5)", len(originals))
			}
			m := markers[0]
			if m.EventCount != 20 || m.FirstEventID != originals[0].ID || m.LastEventID != originals[19].ID ||
				m.Trigger != TriggerInvocations || m.Summarizer != "extractive" || m.OriginalTokens <= 0 || m.CompactedTokens <= 0 {
				t.Errorf("marker = %+v", m)
			}
			if got := m.CompactedContent.Parts[0].Text; strings.HasPrefix(got, SummaryHeader) || m.CompactedContent.Role != genai.RoleUser {
				t.Errorf("stored summary must be role user without the view header, got role %q text %q", m.CompactedContent.Role, got)
			}

			h.turn("question-6")
			_, texts := h.model.snapshot()
			req := texts[10] // first model call of the 6th invocation
			if len(req) != 2 || !strings.HasPrefix(req[0], "user|"+SummaryHeader) || req[1] != "user|question-6" {
				t.Fatalf("6th invocation request = %q, want [summary, question-6]", req)
			}
			if !strings.Contains(req[0], "Goal: question-1") || !strings.Contains(req[0], "Latest request: question-5") {
				t.Errorf("summary lacks goal/latest request: %q", req[0])
			}
			for _, line := range req[1:] {
				for i := 1; i <= 5; i++ {
					if strings.Contains(line, fmt.Sprintf("question-%d#", i)) || strings.Contains(line, fmt.Sprintf("answer to question-%d ", i)) {
						t.Errorf("compacted event leaked into the request: %q", line)
					}
				}
			}
			if got := len(nonMarkers(h.raw())); got != 24 {
				t.Errorf("stored events after 6 turns = %d, want 24 (nothing deleted)", got)
			}
			var outcomes []string
			for _, a := range attempts(logs) {
				outcomes = append(outcomes, a["outcome"].(string))
				for _, k := range []string{"session_id", "invocation_id", "trigger", "events_covered", "original_tokens", "compacted_tokens", "compression_ratio", "duration_ms", "summarizer", "fallback_used"} {
					if _, ok := a[k]; !ok {
						t.Errorf("log entry lacks %s: %v", k, a)
					}
				}
			}
			want := []string{OutcomeNothingToDo, OutcomeNothingToDo, OutcomeNothingToDo, OutcomeNothingToDo, OutcomeCompacted, OutcomeNothingToDo}
			if diff := cmp.Diff(want, outcomes); diff != "" {
				t.Errorf("logged outcomes (-want +got):\n%s", diff)
			}
			for _, e := range logs.All() {
				for k, v := range e.ContextMap() {
					if s, ok := v.(string); ok && strings.Contains(s, "question-") {
						t.Errorf("conversation text in log field %s: %q", k, s)
					}
				}
			}

			if path == "" {
				return
			}
			// Restart: a new service over the same file gives the same view.
			before, err := h.svc.Get(context.Background(), &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: h.session})
			if err != nil {
				t.Fatal(err)
			}
			svc2 := NewService(openSQLite(t, path), nil)
			after, err := svc2.Get(context.Background(), &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: h.session})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(describeEvents(before.Session), describeEvents(after.Session)); diff != "" {
				t.Errorf("view after restart differs (-before +after):\n%s", diff)
			}
		})
	}
}

func describeEvents(s session.Session) []string {
	var out []string
	for e := range s.Events().All() {
		out = append(out, e.ID+" "+e.Author+" "+contentText(e.Content))
	}
	return out
}

// requestsWellFormed checks that every function response in a request
// directly follows the content holding its call (never split by compaction).
func requestsWellFormed(t *testing.T, texts [][]string) {
	t.Helper()
	for i, req := range texts {
		for j, line := range req {
			if strings.Contains(line, "resp:lookup") && (j == 0 || !strings.Contains(req[j-1], "call:lookup")) {
				t.Fatalf("request %d: response at %d without its call: %q", i, j, req)
			}
		}
	}
}

func TestMidInvocationStaysBounded(t *testing.T) {
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			base, _ := mk(t)
			const limit = 6000
			logger, logs := observed()
			h := newHarness(t, harnessOpts{
				base:       base,
				cfg:        Config{Logger: logger},
				model:      &scriptedModel{toolsPerTurn: 40},
				outSize:    func(string) int { return 3000 },
				tokenLimit: limit,
			})
			evs := h.turn("run the 40-step migration")
			if last := evs[len(evs)-1]; !strings.HasPrefix(contentText(last.Content), "answer to run the 40-step migration") {
				t.Fatalf("turn did not finish with an answer: %q", contentText(last.Content))
			}
			prompts, texts := h.model.snapshot()
			if len(prompts) != 41 {
				t.Fatalf("model calls = %d, want 41", len(prompts))
			}
			maxPrompt := 0
			for _, p := range prompts {
				maxPrompt = max(maxPrompt, p)
			}
			// One tool output is ~800 tokens: the limit is checked before
			// each event is stored, so a request exceeds it by at most one
			// event plus system instruction and tools.
			if maxPrompt > limit+1500 {
				t.Errorf("max prompt = %d tokens, want ≤ %d (bounded within one invocation)", maxPrompt, limit+1500)
			}
			requestsWellFormed(t, texts)
			raw := h.raw()
			if n := len(markersIn(t, raw)); n < 3 {
				t.Errorf("markers = %d, want several mid-invocation compactions", n)
			}
			if got := len(nonMarkers(raw)); got != 1+40*2+1 {
				t.Errorf("stored events = %d, want %d (nothing lost)", got, 1+40*2+1)
			}
			var tokenAttempts int
			for _, a := range attempts(logs) {
				if a["trigger"] == string(TriggerTokens) && a["outcome"] == OutcomeCompacted {
					tokenAttempts++
				}
			}
			if tokenAttempts == 0 {
				t.Error("no token-triggered compaction logged")
			}
		})
	}
}

// failingSummarizer always fails.
type failingSummarizer struct{ name string }

func (f failingSummarizer) Name() string { return f.name }
func (f failingSummarizer) Summarize(context.Context, SummaryInput) (*Summary, error) {
	return nil, errors.New("summarizer down")
}

func TestSummarizerFallback(t *testing.T) {
	t.Run("fallback used, marker stored", func(t *testing.T) {
		logger, logs := observed()
		llm := &LLMSummarizer{Model: &fixedModel{resp: textReply("cut o", genai.FinishReasonMaxTokens)}}
		h := newHarness(t, harnessOpts{cfg: Config{Interval: 2, Summarizer: llm, Logger: logger}})
		h.turn("a")
		h.turn("b")
		ms := markersIn(t, h.raw())
		if len(ms) != 1 || ms[0].Summarizer != "extractive" {
			t.Fatalf("markers = %+v, want one from the extractive fallback", ms)
		}
		a := attempts(logs)
		last := a[len(a)-1]
		if last["outcome"] != OutcomeCompacted || last["fallback_used"] != true || !strings.Contains(last["primary_error"].(string), "finish_reason") {
			t.Errorf("log = %v", last)
		}
	})
	t.Run("both fail: no marker, turn succeeds, logged", func(t *testing.T) {
		logger, logs := observed()
		h := newHarness(t, harnessOpts{cfg: Config{Interval: 2, Summarizer: failingSummarizer{"primary"}, Fallback: failingSummarizer{"secondary"}, Logger: logger}})
		h.turn("a")
		evs := h.turn("b")
		if !strings.HasPrefix(contentText(evs[len(evs)-1].Content), "answer to b") {
			t.Fatal("turn did not succeed")
		}
		if ms := markersIn(t, h.raw()); len(ms) != 0 {
			t.Fatalf("markers = %d, want 0", len(ms))
		}
		if got := len(nonMarkers(h.raw())); got != 8 {
			t.Errorf("stored events = %d, want 8", got)
		}
		failed := logs.FilterMessage("compaction").FilterField(zap.String("outcome", OutcomeFailed)).All()
		if len(failed) != 1 {
			t.Fatalf("failed entries = %d, want 1", len(failed))
		}
		f := failed[0].ContextMap()
		if f["fallback_used"] != true || f["summarizer"] != "secondary" || f["primary_error"] == nil {
			t.Errorf("log = %v", f)
		}
		if failed[0].Level != zapcore.WarnLevel {
			t.Errorf("level = %v, want warn", failed[0].Level)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		var se *SummarizerError
		if len(h.errs) != 1 || !errors.As(h.errs[0], &se) {
			t.Errorf("Compact error = %v, want *SummarizerError", h.errs)
		}
	})
}

// blockingSummarizer blocks until released or its context ends.
type blockingSummarizer struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingSummarizer) Summarize(ctx context.Context, in SummaryInput) (*Summary, error) {
	b.once.Do(func() { close(b.started) })
	select {
	case <-b.release:
		return (&ExtractiveSummarizer{}).Summarize(ctx, in)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// seedSession stores n complete invocations through the base service.
func seedSession(t testing.TB, svc session.Service, id string, n int) {
	t.Helper()
	ctx := context.Background()
	resp, err := svc.Create(ctx, &session.CreateRequest{AppName: testApp, UserID: testUser, SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	b := &evBuilder{t0: time.Now().Add(-time.Hour)}
	for i := 0; i < n; i++ {
		for _, e := range b.invocation(fmt.Sprintf("seed-%d", i)) {
			e.ID = fmt.Sprintf("%s-%d-%s", id, i, e.ID)
			if err := svc.AppendEvent(ctx, resp.Session, e); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func req(svc session.Service, id string) Request {
	return Request{Service: svc, AppName: testApp, UserID: testUser, SessionID: id, Trigger: TriggerInvocations}
}

func TestCompactDetachedAndBounded(t *testing.T) {
	t.Run("cancelled caller context still compacts", func(t *testing.T) {
		svc := session.InMemoryService()
		seedSession(t, svc, "s", 5)
		c, _ := NewCompactor(Config{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		m, err := c.Compact(ctx, req(svc, "s"))
		if err != nil || m == nil {
			t.Fatalf("Compact = %v, %v; want a marker", m, err)
		}
		if len(markersIn(t, rawFrom(t, svc, "s"))) != 1 {
			t.Error("marker not stored")
		}
	})
	t.Run("timeout ends cleanly", func(t *testing.T) {
		svc := session.InMemoryService()
		seedSession(t, svc, "s", 5)
		bs := &blockingSummarizer{started: make(chan struct{}), release: make(chan struct{})}
		logger, logs := observed()
		c, _ := NewCompactor(Config{Summarizer: bs, Timeout: 50 * time.Millisecond, Logger: logger})
		m, err := c.Compact(context.Background(), req(svc, "s"))
		if m != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Compact = %v, %v; want nil, deadline exceeded", m, err)
		}
		if len(markersIn(t, rawFrom(t, svc, "s"))) != 0 {
			t.Error("marker stored despite timeout")
		}
		if a := attempts(logs); len(a) != 1 || a[0]["error"] != "timeout" {
			t.Errorf("log = %v", a)
		}
	})
	t.Run("one compaction per session at a time", func(t *testing.T) {
		svc := session.InMemoryService()
		seedSession(t, svc, "s", 5)
		bs := &blockingSummarizer{started: make(chan struct{}), release: make(chan struct{})}
		logger, logs := observed()
		c, _ := NewCompactor(Config{Summarizer: bs, Logger: logger})
		done := make(chan *Marker)
		go func() {
			m, _ := c.Compact(context.Background(), req(svc, "s"))
			done <- m
		}()
		<-bs.started
		m, err := c.Compact(context.Background(), req(svc, "s"))
		if m != nil || err != nil {
			t.Fatalf("second Compact = %v, %v; want nil, nil", m, err)
		}
		close(bs.release)
		if first := <-done; first == nil {
			t.Fatal("first compaction did not store a marker")
		}
		busy := logs.FilterField(zap.String("outcome", OutcomeSkippedBusy)).Len()
		if busy != 1 {
			t.Errorf("skipped_busy entries = %d, want 1", busy)
		}
		c.mu.Lock()
		left := len(c.busy)
		c.mu.Unlock()
		if left != 0 {
			t.Errorf("lock entries left = %d, want 0", left)
		}
	})
}

// hookSummarizer runs hook once (during the first Summarize), then
// summarizes extractively.
type hookSummarizer struct {
	hook func()
	once sync.Once
}

func (h *hookSummarizer) Summarize(ctx context.Context, in SummaryInput) (*Summary, error) {
	h.once.Do(h.hook)
	return (&ExtractiveSummarizer{}).Summarize(ctx, in)
}

func TestCompactDiscardsOnConflict(t *testing.T) {
	t.Run("newer marker", func(t *testing.T) {
		svc := session.InMemoryService()
		seedSession(t, svc, "s", 5)
		other, _ := NewCompactor(Config{})
		logger, logs := observed()
		c, _ := NewCompactor(Config{Logger: logger, Summarizer: &hookSummarizer{hook: func() {
			if m, err := other.Compact(context.Background(), req(svc, "s")); m == nil || err != nil {
				t.Errorf("replica compaction: %v %v", m, err)
			}
		}}})
		if m, err := c.Compact(context.Background(), req(svc, "s")); m != nil || err != nil {
			t.Fatalf("Compact = %v, %v; want discarded", m, err)
		}
		if n := len(markersIn(t, rawFrom(t, svc, "s"))); n != 1 {
			t.Errorf("markers = %d, want 1 (the replica's)", n)
		}
		if a := attempts(logs); len(a) != 1 || a[0]["outcome"] != OutcomeDiscardedConflict || a[0]["reason"] != "newer_marker" {
			t.Errorf("log = %v", a)
		}
	})
	t.Run("event landed inside the range", func(t *testing.T) {
		svc := session.InMemoryService()
		seedSession(t, svc, "s", 5)
		logger, logs := observed()
		c, _ := NewCompactor(Config{Logger: logger, Summarizer: &hookSummarizer{hook: func() {
			raw := rawFrom(t, svc, "s")
			late := newEvBuilder().user("late", "late write")
			late.Timestamp = raw[3].Timestamp.Add(time.Microsecond)
			resp, _ := svc.Get(context.Background(), &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: "s"})
			if err := svc.AppendEvent(context.Background(), resp.Session, late); err != nil {
				t.Error(err)
			}
		}}})
		if m, err := c.Compact(context.Background(), req(svc, "s")); m != nil || err != nil {
			t.Fatalf("Compact = %v, %v; want discarded", m, err)
		}
		if a := attempts(logs); len(a) != 1 || a[0]["reason"] != "event_in_range" {
			t.Errorf("log = %v", a)
		}
	})
}

func TestConcurrentReplicasSQLite(t *testing.T) {
	path := sqlitePath(t)
	base := openSQLite(t, path)
	seedSession(t, base, "s", 3)
	const replicas = 8
	const rounds = 3
	var wg sync.WaitGroup
	var mu sync.Mutex
	appended := map[string]bool{}
	for r := 0; r < replicas; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			// Each replica: its own service over the same file, its own
			// Compactor.
			svc := NewService(openSQLite(t, path), nil)
			c, err := NewCompactor(Config{Interval: 2, NoOverlap: true})
			if err != nil {
				t.Error(err)
				return
			}
			for k := 0; k < rounds; k++ {
				inv := fmt.Sprintf("r%d-k%d", r, k)
				for _, e := range []*session.Event{
					{Author: "user", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("q "+inv, genai.RoleUser)}},
					{Author: "assistant", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("a "+inv, genai.RoleModel)}},
				} {
					e.ID, e.InvocationID = inv+"-"+e.Author, inv
					appendWithRetry(t, svc, "s", e)
					mu.Lock()
					appended[e.ID] = true
					mu.Unlock()
				}
				if _, err := c.Compact(context.Background(), Request{Service: svc, AppName: testApp, UserID: testUser, SessionID: "s", InvocationID: inv}); err != nil {
					t.Errorf("replica %d: %v", r, err)
				}
			}
		}(r)
	}
	wg.Wait()
	raw := rawFrom(t, base, "s")
	stored := map[string]bool{}
	for _, e := range raw {
		stored[e.ID] = true
	}
	for id := range appended {
		if !stored[id] {
			t.Errorf("event %s lost", id)
		}
	}
	markers := markersIn(t, raw)
	if len(markers) == 0 {
		t.Fatal("no marker stored")
	}
	seen := map[string]bool{}
	for _, m := range markers {
		key := fmt.Sprintf("%d-%d-%s-%s", micros(m.StartTimestamp), micros(m.EndTimestamp), m.FirstEventID, m.LastEventID)
		if seen[key] {
			t.Errorf("duplicate marker range %s", key)
		}
		seen[key] = true
	}
	// Markers are roll-ups: each newer one covers strictly more.
	for i := 1; i < len(markers); i++ {
		if micros(markers[i].EndTimestamp) <= micros(markers[i-1].EndTimestamp) {
			t.Errorf("marker %d does not extend marker %d", i, i-1)
		}
	}
	view := View(raw, nil)
	if got := len(view); got == 0 || !IsSummaryEvent(view[0]) {
		t.Errorf("view does not start with the summary")
	}
	t.Logf("%d events, %d markers, view %d events", len(nonMarkers(raw)), len(markers), len(view))
}

// appendWithRetry appends e with a fresh session, retrying stale-session
// and busy errors (several writers on one database).
func appendWithRetry(t *testing.T, svc session.Service, id string, e *session.Event) {
	t.Helper()
	var err error
	for attempt := 0; attempt < 200; attempt++ {
		var resp *session.GetResponse
		resp, err = svc.Get(context.Background(), &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: id})
		if err == nil {
			e.Timestamp = time.Now()
			if err = svc.AppendEvent(context.Background(), resp.Session, e); err == nil {
				return
			}
		}
		time.Sleep(time.Duration(attempt%5+1) * time.Millisecond)
	}
	t.Errorf("append %s: %v", e.ID, err)
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"defaults", Config{}, ""},
		{"negative interval", Config{Interval: -1}, "Interval"},
		{"negative overlap", Config{Overlap: -1}, "Overlap"},
		{"negative retention tokens", Config{RetainRecentTokens: -5}, "RetainRecentTokens"},
		{"negative retention events", Config{RetainRecentEvents: -1}, "RetainRecentEvents"},
		{"negative timeout", Config{Timeout: -time.Second}, "Timeout"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		var ce *ConfigError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!errors.As(err, &ce) || ce.Field != c.field):
			t.Errorf("%s: err = %v, want ConfigError on %s", c.name, err, c.field)
		}
	}
	if _, err := NewCompactor(Config{Summarizer: &LLMSummarizer{}}); err == nil {
		t.Error("LLMSummarizer without a model accepted")
	}
	c, _ := NewCompactor(Config{Summarizer: &LLMSummarizer{Model: &fixedModel{}}})
	if _, ok := c.cfg.Fallback.(*ExtractiveSummarizer); !ok || c.cfg.Interval != 5 || c.cfg.Overlap != 2 || c.cfg.Timeout != 2*time.Minute {
		t.Errorf("defaults = %+v", c.cfg)
	}
	for _, r := range []Request{
		{},
		{Service: session.InMemoryService()},
		{Service: session.InMemoryService(), AppName: "a", UserID: "u", SessionID: "s", Trigger: "sometimes"},
	} {
		if _, err := c.Compact(context.Background(), r); err == nil {
			t.Errorf("Compact(%+v) accepted", r)
		}
	}
}

func TestManualCompactionKeepsTail(t *testing.T) {
	svc := session.InMemoryService()
	seedSession(t, svc, "s", 3)
	c, _ := NewCompactor(Config{RetainRecentEvents: 4})
	r := req(svc, "s")
	r.Trigger = TriggerManual
	m, err := c.Compact(context.Background(), r)
	if err != nil || m == nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	raw := rawFrom(t, svc, "s")
	view := View(raw, nil)
	if len(view) != 5 || !IsSummaryEvent(view[0]) || m.EventCount != 8 || m.Trigger != TriggerManual {
		t.Errorf("view = %v, marker count %d trigger %s", viewIDs(view), m.EventCount, m.Trigger)
	}
	if budget.EstimateContent(m.CompactedContent) != m.CompactedTokens {
		t.Error("CompactedTokens is not the summary's estimate")
	}
}

// adk-python 4740/5602: a long-running call summarized away breaks resume.
// Here the call and the tool's interim response stay raw through a
// compaction, and the client's final response resumes the run.
func TestLongRunningCallSurvivesCompaction(t *testing.T) {
	type jobArgs struct {
		Name string `json:"name"`
	}
	job, err := functiontool.New(functiontool.Config{Name: "start_job", Description: "starts a job", IsLongRunning: true},
		func(_ agent.ToolContext, a jobArgs) (map[string]any, error) {
			return map[string]any{"status": "pending"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	m := &scriptedModel{toolsPerTurn: 1, reply: func(req *model.LLMRequest) (*model.LLMResponse, error) {
		last := req.Contents[len(req.Contents)-1]
		if last.Role == genai.RoleUser && len(last.Parts) == 1 && last.Parts[0].Text == "start the job" {
			return &model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				{FunctionCall: &genai.FunctionCall{Name: "start_job", Args: map[string]any{"name": "nightly"}}},
			}}}, nil
		}
		if p := last.Parts[len(last.Parts)-1]; p.FunctionResponse != nil && p.FunctionResponse.Name == "start_job" {
			return &model.LLMResponse{Content: genai.NewContentFromText(fmt.Sprintf("job status: %v", p.FunctionResponse.Response["status"]), genai.RoleModel)}, nil
		}
		return nil, nil
	}}
	h := newHarness(t, harnessOpts{cfg: Config{Interval: 5}, model: m, extraTools: []tool.Tool{job}})
	var callID, callEventID string
	for _, ev := range h.turn("start the job") {
		for _, p := range ev.Content.Parts {
			if p.FunctionCall != nil && p.FunctionCall.Name == "start_job" {
				callID, callEventID = p.FunctionCall.ID, ev.ID
			}
		}
	}
	if callID == "" {
		t.Fatal("no long-running call made")
	}
	for i := 1; i <= 4; i++ {
		h.turn(fmt.Sprintf("question-%d", i))
	}
	ms := markersIn(t, h.raw())
	if len(ms) != 1 {
		t.Fatalf("markers = %d, want 1", len(ms))
	}
	if len(ms[0].ExcludedEventIDs) != 2 || ms[0].ExcludedEventIDs[0] != callEventID {
		t.Errorf("ExcludedEventIDs = %v, want the call event %s and its interim response", ms[0].ExcludedEventIDs, callEventID)
	}
	// The client completes the job.
	evs := h.send(&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		ID: callID, Name: "start_job", Response: map[string]any{"status": "done"},
	}}}})
	if got := contentText(evs[len(evs)-1].Content); got != "job status: done" {
		t.Fatalf("resumed run answered %q, want the final job status", got)
	}
	_, texts := h.model.snapshot()
	last := texts[len(texts)-1]
	if !strings.HasPrefix(last[0], "user|"+SummaryHeader) || !strings.Contains(strings.Join(last, "\n"), "call:start_job") {
		t.Errorf("resumed request = %q, want the summary and the raw call", last)
	}
}
