package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/config"
	"github.com/adkctx/adkctx/processors/response"
)

// manual is a manual compaction request of sess.
var manual = Request{Session: sess, Trigger: TriggerManual}

// blocking is a summarizer that ignores its context and waits until released.
type blocking struct {
	release chan struct{}
	started chan struct{} // receives once per call
	calls   atomic.Int32
	active  atomic.Int32
	maxSeen atomic.Int32
}

func newBlocking() *blocking {
	return &blocking{release: make(chan struct{}), started: make(chan struct{}, 100)}
}

func (b *blocking) Name() string { return "blocking" }

func (b *blocking) Summarize(_ context.Context, in SummaryInput) (*Summary, error) {
	b.calls.Add(1)
	n := b.active.Add(1)
	defer b.active.Add(-1)
	for {
		m := b.maxSeen.Load()
		if n <= m || b.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	b.started <- struct{}{}
	<-b.release
	return &Summary{Content: genai.NewContentFromText("late summary", genai.RoleUser)}, nil
}

func (b *blocking) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the summarizer was not called")
	}
}

// A summarizer that ignores its context cannot hold a compaction past Config.Timeout: the
// attempt returns, the fallback's summary is stored and the session is released.
func TestCompactorTimeoutIgnoredContext(t *testing.T) {
	for i := 0; i < 3; i++ { // the fallback must win every time, not by chance
		b := newBlocking()
		store := newStore(turns(1, 6)...)
		c, rep := newCompactor(t, Config{Summarizer: b, Timeout: 400 * time.Millisecond}, store)
		m, err := c.Compact(context.Background(), manual)
		close(b.release)
		if err != nil || m == nil {
			t.Fatalf("run %d: Compact = %v, %v; want the fallback's marker", i, m, err)
		}
		a := rep.lastAttempt(t)
		if a.Outcome != OutcomeCompacted || !a.FallbackUsed || a.Summarizer != "extractive" || m.Summarizer != "extractive" {
			t.Fatalf("run %d: attempt %s, fallback %v, summarizer %q", i, a.Outcome, a.FallbackUsed, a.Summarizer)
		}
		if !errors.Is(a.PrimaryErr, context.DeadlineExceeded) {
			t.Fatalf("run %d: primary error %v, want a deadline", i, a.PrimaryErr)
		}
		var se *SummarizerError
		if !errors.As(a.PrimaryErr, &se) || se.Summarizer != "blocking" {
			t.Fatalf("run %d: primary error %v is not the summarizer's", i, a.PrimaryErr)
		}
	}
}

// The same in the background: the session's slot is released, Wait returns.
func TestCompactorTimeoutReleasesSession(t *testing.T) {
	b := newBlocking()
	defer close(b.release)
	store := newStore(turns(1, 8)...)
	c, rep := newCompactor(t, Config{Summarizer: b, NoFallback: true, Timeout: 5 * time.Millisecond, Interval: 2}, store)
	c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if !c.Wait(ctx, sess) {
		t.Fatal("Wait: the compaction never ended")
	}
	if c.Pending(sess) {
		t.Error("still pending after Wait")
	}
	a := rep.lastAttempt(t)
	if a.Outcome != OutcomeFailed || !errors.Is(a.Err, context.DeadlineExceeded) || a.Failures != 1 {
		t.Errorf("attempt: %s, %v, %d failures", a.Outcome, a.Err, a.Failures)
	}
}

func TestCompactorSummarizerPanics(t *testing.T) {
	panicking := &funcSummarizer{name: "panicky", f: func(context.Context, SummaryInput) (*Summary, error) { panic("boom") }}
	t.Run("fallback", func(t *testing.T) {
		c, rep := newCompactor(t, Config{Summarizer: panicking}, newStore(turns(1, 5)...))
		m, err := c.Compact(context.Background(), manual)
		if err != nil || m == nil {
			t.Fatalf("Compact = %v, %v", m, err)
		}
		a := rep.lastAttempt(t)
		var pe *panicError
		if !a.FallbackUsed || !errors.As(a.PrimaryErr, &pe) || !strings.Contains(a.PrimaryErr.Error(), "panic: boom") {
			t.Errorf("attempt: fallback %v, primary error %v", a.FallbackUsed, a.PrimaryErr)
		}
	})
	t.Run("no fallback", func(t *testing.T) {
		c, rep := newCompactor(t, Config{Summarizer: panicking, NoFallback: true}, newStore(turns(1, 5)...))
		m, err := c.Compact(context.Background(), manual)
		if m != nil || err == nil || !strings.Contains(err.Error(), "summarizer panicky failed: panic: boom") {
			t.Fatalf("Compact = %v, %v; want the panic as an error", m, err)
		}
		if a := rep.lastAttempt(t); a.Outcome != OutcomeFailed || a.Failures != 1 {
			t.Errorf("attempt: %s, %d failures", a.Outcome, a.Failures)
		}
	})
}

// A reply larger than MaxSummaryTokens, or than what it replaces, is rejected and the fallback
// used: a 2 MB reply with finish reason STOP never becomes a summary.
func TestCompactorRejectsLargeSummaries(t *testing.T) {
	huge := strings.Repeat("All fine. ", 200_000) // 2 MB
	cases := []struct {
		name   string
		cfg    Config
		events []Event
		limit  int // the bound the rejection names
	}{
		{
			name:   "2 MB reply, STOP",
			cfg:    Config{Summarizer: &LLMSummarizer{Model: &fakeModel{replies: []*response.LLMResponse{reply(huge, genai.FinishReasonStop)}}}},
			events: turns(1, 5),
			limit:  tokensOf(turns(1, 3)...) - 1,
		},
		{
			name: "above MaxSummaryTokens, below what it replaces",
			cfg: Config{MaxSummaryTokens: 1000,
				Summarizer: &funcSummarizer{name: "wordy", f: func(context.Context, SummaryInput) (*Summary, error) {
					return &Summary{Content: genai.NewContentFromText(strings.Repeat("detail ", 1500), genai.RoleUser)}, nil
				}}},
			events: turns(1, 40),
			limit:  1000,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := newStore(tc.events...)
			c, rep := newCompactor(t, tc.cfg, store)
			m, err := c.Compact(context.Background(), manual)
			if err != nil || m == nil {
				t.Fatalf("Compact = %v, %v", m, err)
			}
			a := rep.lastAttempt(t)
			var rej *SummaryRejectedError
			if !a.FallbackUsed || !errors.As(a.PrimaryErr, &rej) || rej.Reason != "too_large" || rej.Limit != tc.limit {
				t.Fatalf("attempt: fallback %v, primary error %v; want too_large, limit %d", a.FallbackUsed, a.PrimaryErr, tc.limit)
			}
			if m.Summarizer != "extractive" || m.CompactedTokens > tc.limit || m.CompactedTokens >= m.OriginalTokens {
				t.Errorf("stored summary: %s, %d tokens for %d", m.Summarizer, m.CompactedTokens, m.OriginalTokens)
			}
		})
	}
}

// A summary not smaller than what it replaces (but within MaxSummaryTokens) means the history is
// still too small: nothing to do, not a failure (no backoff).
func TestCompactorSummaryNotSmaller(t *testing.T) {
	wordy := &recorder{text: strings.Repeat("A careful and complete summary. ", 40)}
	store := newStore(turns(1, 3)...)
	c, rep := newCompactor(t, Config{Summarizer: wordy, NoFallback: true, RetainRecentInvocations: 1}, store)
	for i := 0; i < 2; i++ {
		m, err := c.Compact(context.Background(), manual)
		if m != nil || err != nil {
			t.Fatalf("Compact = %v, %v; want nothing", m, err)
		}
		a := rep.lastAttempt(t)
		if a.Outcome != OutcomeNothing || a.Reason != "summary_not_smaller" || a.PrimaryErr != nil || a.Failures != 0 {
			t.Fatalf("attempt: %s (%s), primary %v, %d failures", a.Outcome, a.Reason, a.PrimaryErr, a.Failures)
		}
	}
	// The sliding window is not held back either.
	c.Schedule(Request{Session: sess, Trigger: TriggerTokens, Invocation: "i3"})
	c.Wait(context.Background(), sess)
	if a := rep.lastAttempt(t); a.Outcome != OutcomeNothing {
		t.Errorf("scheduled attempt after summary_not_smaller: %s", a.Outcome)
	}
	if len(store.appends) != 0 {
		t.Errorf("%d markers stored", len(store.appends))
	}
	// With the default fallback: it is tried, and not smaller either.
	store = newStore(turns(1, 3)...)
	c, rep = newCompactor(t, Config{Summarizer: wordy, RetainRecentInvocations: 2}, store)
	if m, err := c.Compact(context.Background(), manual); m != nil || err != nil {
		t.Fatalf("Compact with a fallback = %v, %v; want nothing", m, err)
	}
	if a := rep.lastAttempt(t); a.Outcome != OutcomeNothing || a.Reason != "summary_not_smaller" || !a.FallbackUsed {
		t.Errorf("attempt with a fallback: %s (%s), fallback %v", a.Outcome, a.Reason, a.FallbackUsed)
	}
}

// A summarizer with nothing to say (nil, nil) is nothing to do.
func TestCompactorSummarizerNothing(t *testing.T) {
	quiet := &funcSummarizer{name: "quiet", f: func(context.Context, SummaryInput) (*Summary, error) { return nil, nil }}
	c, rep := newCompactor(t, Config{Summarizer: quiet}, newStore(turns(1, 5)...))
	if m, err := c.Compact(context.Background(), manual); m != nil || err != nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	if a := rep.lastAttempt(t); a.Outcome != OutcomeNothing || a.Reason != "summarizer_nothing_to_do" {
		t.Errorf("attempt: %s (%s)", a.Outcome, a.Reason)
	}
}

// clock is a settable clock for Deps.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Failed attempts back off, doubling up to 32 × Config.Backoff; manual compactions ignore it; a
// success resets it.
func TestCompactorBackoff(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	flaky := &funcSummarizer{name: "flaky", f: func(_ context.Context, in SummaryInput) (*Summary, error) {
		if fail.Load() {
			return nil, errors.New("quota")
		}
		return &Summary{Content: genai.NewContentFromText("S", genai.RoleUser)}, nil
	}}
	clk := &clock{now: at(10_000)}
	rep := &reports{}
	store := newStore(turns(1, 8)...)
	c, err := New(Config{Summarizer: flaky, NoFallback: true, Synchronous: true, Backoff: time.Minute, Interval: 2},
		Deps{Store: store, Report: rep.add, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	schedule := func() Attempt {
		t.Helper()
		n := len(rep.outcomes())
		c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})
		if got := len(rep.outcomes()); got != n+1 {
			t.Fatalf("a synchronous Schedule reported %d attempts, want 1", got-n)
		}
		return rep.lastAttempt(t)
	}
	type step struct {
		wait     time.Duration // before the attempt
		outcome  Outcome
		failures int
	}
	steps := []step{
		{0, OutcomeFailed, 1},
		{0, OutcomeBackoff, 1},
		{59 * time.Second, OutcomeBackoff, 1},
		{time.Second, OutcomeFailed, 2}, // waited 1 min
		{time.Minute, OutcomeBackoff, 2},
		{time.Minute, OutcomeFailed, 3}, // waited 2 min
		{4 * time.Minute, OutcomeFailed, 4},
		{8 * time.Minute, OutcomeFailed, 5},
		{16 * time.Minute, OutcomeFailed, 6},
		{32 * time.Minute, OutcomeFailed, 7}, // 32 min
		{32*time.Minute - time.Second, OutcomeBackoff, 7},
		{time.Second, OutcomeFailed, 8}, // still 32 min: the cap
	}
	for i, s := range steps {
		clk.advance(s.wait)
		a := schedule()
		if a.Outcome != s.outcome || a.Failures != s.failures {
			t.Fatalf("step %d: %s with %d failures; want %s with %d", i, a.Outcome, a.Failures, s.outcome, s.failures)
		}
	}
	// Manual compactions are not delayed (and count as failures too).
	if _, err := c.Compact(context.Background(), manual); err == nil {
		t.Fatal("manual Compact did not run (or did not fail)")
	}
	if a := rep.lastAttempt(t); a.Outcome != OutcomeFailed || a.Failures != 9 {
		t.Fatalf("manual attempt: %s, %d failures", a.Outcome, a.Failures)
	}
	fail.Store(false)
	if m, err := c.Compact(context.Background(), manual); err != nil || m == nil {
		t.Fatalf("manual Compact after recovery = %v, %v", m, err)
	}
	store.add(turns(9, 12)...)
	if a := schedule(); a.Outcome != OutcomeCompacted || a.Failures != 0 {
		t.Fatalf("after a success the backoff is reset: %s, %d failures", a.Outcome, a.Failures)
	}
}

// Schedule runs one compaction of a session at a time; triggers arriving meanwhile are coalesced
// into one run after it (a token trigger wins over a sliding-window one); other sessions run
// beside it.
func TestCompactorScheduleCoalesces(t *testing.T) {
	b := newBlocking()
	store := newStore(turns(1, 12)...)
	c, rep := newCompactor(t, Config{Summarizer: b, Interval: 2}, store)
	first := Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i12"}
	c.Schedule(first)
	b.waitStarted(t)
	if !c.Pending(sess) {
		t.Fatal("not pending while running")
	}
	c.Schedule(Request{Session: sess, Trigger: TriggerTokens, Invocation: "i12", Live: true, TokenLimit: 500})
	c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i12"}) // loses to the token trigger
	if got := rep.outcomes(); !cmp.Equal(got, []Outcome{OutcomeCoalesced, OutcomeCoalesced}) {
		t.Fatalf("outcomes while running: %v", got)
	}

	// Another session runs beside it.
	other := Session{App: "app", User: "u", ID: "s2"}
	otherStore := newStore(turns(1, 7)...)
	oc, orep := newCompactor(t, Config{Summarizer: &recorder{}, Interval: 2}, otherStore)
	oc.Schedule(Request{Session: other, Trigger: TriggerInvocations, Invocation: "i7"})
	oc.Wait(context.Background(), other)
	if a := orep.lastAttempt(t); a.Outcome != OutcomeCompacted {
		t.Fatalf("other session: %s", a.Outcome)
	}

	close(b.release) // the first run ends, the coalesced one runs, then nothing more
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if !c.Wait(ctx, sess) {
		t.Fatal("Wait timed out")
	}
	rep.mu.Lock()
	all := append([]Attempt(nil), rep.all...)
	rep.mu.Unlock()
	var ran []Trigger
	for _, a := range all {
		if a.Outcome != OutcomeCoalesced {
			ran = append(ran, a.Trigger)
		}
	}
	if diff := cmp.Diff([]Trigger{TriggerInvocations, TriggerTokens}, ran); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if b.calls.Load() > 2 || b.maxSeen.Load() != 1 {
		t.Errorf("%d summarizer calls, %d at once; want ≤ 2, 1", b.calls.Load(), b.maxSeen.Load())
	}
}

// Many concurrent triggers on one session never run two compactions of it at once, and every
// Schedule is reported.
func TestCompactorScheduleConcurrent(t *testing.T) {
	b := &blocking{release: make(chan struct{}), started: make(chan struct{}, 1000)}
	close(b.release) // never blocks
	store := newStore(turns(1, 30)...)
	c, rep := newCompactor(t, Config{Summarizer: b, Interval: 1, RetainRecentInvocations: 1}, store)
	var wg sync.WaitGroup
	const n = 50
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Schedule(Request{Session: sess, Trigger: TriggerTokens, TokenLimit: 200 + i})
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if !c.Idle(ctx) {
		t.Fatal("Idle timed out")
	}
	if b.maxSeen.Load() != 1 {
		t.Errorf("%d compactions of one session ran at once", b.maxSeen.Load())
	}
	counts := map[Outcome]int{}
	for _, o := range rep.outcomes() {
		counts[o]++
	}
	// Every Schedule reports once (ran or coalesced); each coalesced batch adds one run.
	if counts[OutcomeCoalesced]+runsStarted(counts) < n || counts[OutcomeFailed] != 0 {
		t.Errorf("outcomes %v for %d schedules", counts, n)
	}
	if markers := len(store.appends); markers != counts[OutcomeCompacted] {
		t.Errorf("%d markers stored, %d compactions reported", markers, counts[OutcomeCompacted])
	}
	assertNoRepeatedRange(t, store.snapshot())
}

func runsStarted(counts map[Outcome]int) int {
	return counts[OutcomeCompacted] + counts[OutcomeNothing] + counts[OutcomeConflict] + counts[OutcomeBackoff]
}

// assertNoRepeatedRange checks that no event is listed by two markers (no range summarized
// twice).
func assertNoRepeatedRange(t *testing.T, events []Event) {
	t.Helper()
	seen := map[string]string{}
	for i := range events {
		m, err := ReadMarker(&events[i])
		if err != nil || m == nil {
			continue
		}
		for _, id := range m.EventIDs {
			if by, ok := seen[id]; ok {
				t.Errorf("event %s listed by markers %s and %s", id, by, events[i].ID)
			}
			seen[id] = events[i].ID
		}
	}
}

func TestCompactorWaitCloseIdle(t *testing.T) {
	b := newBlocking()
	store := newStore(turns(1, 8)...)
	c, rep := newCompactor(t, Config{Summarizer: b, Interval: 2}, store)
	c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})
	b.waitStarted(t)

	short, cancel := context.WithCancel(context.Background())
	cancel()
	if c.Wait(short, sess) || c.Idle(short) {
		t.Error("Wait/Idle with a done context reported no pending compaction")
	}
	if err := c.Close(short); !errors.Is(err, context.Canceled) {
		t.Errorf("Close with a done context = %v, want context.Canceled", err)
	}
	// Closed: a new trigger is reported and not run.
	c.Schedule(Request{Session: Session{ID: "s9"}, Trigger: TriggerInvocations})
	if a := rep.lastAttempt(t); a.Outcome != OutcomeClosed || a.Request.Session.ID != "s9" {
		t.Errorf("Schedule after Close: %s", a.Outcome)
	}
	if c.Pending(Session{ID: "s9"}) {
		t.Error("a closed compactor has a new pending compaction")
	}

	done := make(chan error, 1)
	go func() { done <- c.Close(context.Background()) }()
	close(b.release)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return after the compaction ended")
	}
	if c.Pending(sess) || !c.Wait(context.Background(), sess) || !c.Idle(context.Background()) {
		t.Error("work left after Close")
	}
	if a := rep.lastAttempt(t); a.Outcome != OutcomeCompacted {
		t.Errorf("the running compaction ended with %s, want compacted (Close waits for it)", a.Outcome)
	}
}

// Close waits for a coalesced run too.
func TestCompactorCloseDrains(t *testing.T) {
	b := newBlocking()
	store := newStore(turns(1, 8)...)
	c, rep := newCompactor(t, Config{Summarizer: b, Interval: 2}, store)
	c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})
	b.waitStarted(t)
	c.Schedule(Request{Session: sess, Trigger: TriggerTokens, TokenLimit: 300})
	close(b.release)
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rep.outcomes(); len(got) != 3 || got[0] != OutcomeCoalesced {
		t.Errorf("outcomes %v, want coalesced then two runs", got)
	}
}

// A marker stored by another writer between the load and the append: the summary is discarded.
func TestCompactorConflict(t *testing.T) {
	store := newStore(turns(1, 8)...)
	store.afterLoad = func(s *memStore, loads int) {
		if loads == 1 { // after the selection's load, before the check
			md, err := markerMetadata(v2(1, "", "theirs", "i1u"))
			if err != nil {
				panic(err)
			}
			s.add(Event{ID: "theirs", Author: "user", Metadata: md})
		}
	}
	c, rep := newCompactor(t, Config{Summarizer: &recorder{}}, store)
	m, err := c.Compact(context.Background(), manual)
	if m != nil || err != nil {
		t.Fatalf("Compact = %v, %v; want the summary discarded", m, err)
	}
	if a := rep.lastAttempt(t); a.Outcome != OutcomeConflict || a.Reason != "newer_marker" || a.Failures != 0 {
		t.Errorf("attempt: %s (%s)", a.Outcome, a.Reason)
	}
	if len(store.appends) != 0 {
		t.Error("our marker was stored")
	}
	// An invalid record or a marker of another scope stored meanwhile is no conflict.
	for _, other := range []map[string]any{
		{MetadataKey: map[string]any{"junk": true}},
		func() map[string]any {
			m := v2(1, "", "sub", "x")
			m.Scope = "sub"
			md, _ := markerMetadata(m)
			return md
		}(),
	} {
		store := newStore(turns(1, 8)...)
		store.afterLoad = func(s *memStore, loads int) {
			if loads == 1 {
				s.add(Event{ID: "other", Author: "user", Metadata: other})
			}
		}
		c, _ := newCompactor(t, Config{Summarizer: &recorder{}}, store)
		if m, err := c.Compact(context.Background(), manual); m == nil || err != nil {
			t.Errorf("Compact with %v stored meanwhile = %v, %v", other, m, err)
		}
	}
}

// An append error is retried once through a fresh load; a second error fails the attempt.
func TestCompactorAppendRetry(t *testing.T) {
	stale := errors.New("stale session")
	// writer stores an event of a running invocation before each append, as a runner does.
	writer := func(s *memStore) {
		s.add(Event{ID: fmt.Sprint("w", s.loads), InvocationID: "i9", Author: "user", Content: genai.NewContentFromText("more", genai.RoleUser)})
	}
	t.Run("retried after the session changed", func(t *testing.T) {
		store := newStore(turns(1, 8)...)
		store.appendErrs = []error{stale}
		store.beforeAppend = func(s *memStore) {
			if len(s.appendErrs) > 0 {
				writer(s)
			}
		}
		c, rep := newCompactor(t, Config{Summarizer: &recorder{}}, store)
		m, err := c.Compact(context.Background(), manual)
		if err != nil || m == nil {
			t.Fatalf("Compact = %v, %v", m, err)
		}
		if store.loads != 4 || len(store.appends) != 1 {
			t.Errorf("%d loads, %d markers; want 4 (selection, check, after the refusal, retry), 1", store.loads, len(store.appends))
		}
		if a := rep.lastAttempt(t); a.Outcome != OutcomeCompacted || a.MarkerID != "m1" {
			t.Errorf("attempt: %s %q", a.Outcome, a.MarkerID)
		}
	})
	t.Run("refused on an unchanged session", func(t *testing.T) {
		store := newStore(turns(1, 8)...)
		store.appendErrs = []error{stale}
		c, rep := newCompactor(t, Config{Summarizer: &recorder{}}, store)
		if m, err := c.Compact(context.Background(), manual); m != nil || !errors.Is(err, stale) {
			t.Fatalf("Compact = %v, %v; want the append error", m, err)
		}
		if a := rep.lastAttempt(t); a.Outcome != OutcomeFailed || a.Failures != 1 {
			t.Errorf("attempt: %s, %d failures", a.Outcome, a.Failures)
		}
	})
	t.Run("losing every race is a conflict, not a failure", func(t *testing.T) {
		store := newStore(turns(1, 8)...)
		store.appendErrs = []error{stale, stale, stale, stale, stale}
		store.beforeAppend = writer
		c, rep := newCompactor(t, Config{Summarizer: &recorder{}}, store)
		if m, _ := c.Compact(context.Background(), manual); m != nil {
			t.Fatalf("Compact stored %v", m)
		}
		if a := rep.lastAttempt(t); a.Outcome != OutcomeConflict || a.Failures != 0 {
			t.Errorf("attempt: %s, %d failures; want a conflict without backoff", a.Outcome, a.Failures)
		}
	})
	t.Run("load fails", func(t *testing.T) {
		store := newStore(turns(1, 8)...)
		store.loadErr = errors.New("database is locked")
		c, _ := newCompactor(t, Config{Summarizer: &recorder{}}, store)
		if _, err := c.Compact(context.Background(), manual); err == nil || err.Error() != "database is locked" {
			t.Fatalf("Compact = %v", err)
		}
	})
}

// What a compaction stores and reports.
func TestCompactorMarkerAndAttempt(t *testing.T) {
	events := turns(1, 5)
	events[len(events)-1].Timestamp = time.Now().Add(time.Hour) // a clock ahead of ours
	store := newStore(events...)
	clk := &clock{now: time.Now()}
	rep := &reports{}
	usage := budget.Usage{Prompt: 100, Output: 10}
	sum := &funcSummarizer{name: "fixed", f: func(context.Context, SummaryInput) (*Summary, error) {
		return &Summary{Content: genai.NewContentFromText("the summary", genai.RoleUser), Usage: usage}, nil
	}}
	c, err := New(Config{Summarizer: sum, Interval: 3}, Deps{Store: store, Report: rep.add, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Compact(context.Background(), Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i5"})
	if err != nil || m == nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	original := tokensOf(turns(1, 3)...)
	compacted := budget.EstimateContent(genai.NewContentFromText("the summary", genai.RoleUser))
	if m.OriginalTokens != original || m.CompactedTokens != compacted ||
		m.CompressionRatio != float64(original)/float64(compacted) || m.Summarizer != "fixed" || m.Trigger != TriggerInvocations {
		t.Errorf("marker: %d → %d tokens (ratio %v), %s, %s", m.OriginalTokens, m.CompactedTokens, m.CompressionRatio, m.Summarizer, m.Trigger)
	}
	a := rep.lastAttempt(t)
	want := Attempt{Outcome: OutcomeCompacted, Trigger: TriggerInvocations, MarkerID: "m1", EventsCovered: 6, InvocationsCovered: 3,
		OriginalTokens: original, CompactedTokens: compacted, Summarizer: "fixed", SummarizerUsage: usage}
	got := Attempt{Outcome: a.Outcome, Trigger: a.Trigger, MarkerID: a.MarkerID, EventsCovered: a.EventsCovered,
		InvocationsCovered: a.InvocationsCovered, OriginalTokens: a.OriginalTokens, CompactedTokens: a.CompactedTokens,
		Summarizer: a.Summarizer, SummarizerUsage: a.SummarizerUsage}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attempt (-want +got):\n%s", diff)
	}
	if a.Marker != m || a.Request.Invocation != "i5" || !a.Start.Equal(clk.Now()) {
		t.Errorf("attempt marker/request/start: %p %q %v", a.Marker, a.Request.Invocation, a.Start)
	}
	// The marker event: no content, author user, the request's invocation, a timestamp after the
	// newest stored event.
	stored := store.snapshot()
	me := stored[len(stored)-1]
	if me.Content != nil || me.Author != "user" || me.InvocationID != "i5" || !me.Timestamp.After(events[len(events)-1].Timestamp) {
		t.Errorf("marker event: content %v, author %q, invocation %q, time %v", me.Content, me.Author, me.InvocationID, me.Timestamp)
	}
	read, err := ReadMarker(&me)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, read); diff != "" {
		t.Errorf("stored marker (-reported +read):\n%s", diff)
	}
	// A second compaction rolls it up.
	store.add(turns(6, 8)...)
	m2, err := c.Compact(context.Background(), Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})
	if err != nil || m2 == nil {
		t.Fatalf("second Compact = %v, %v", m2, err)
	}
	if m2.Seq != 2 || m2.Previous != "m1" || m2.OriginalTokens != tokensOf(turns(4, 6)...)+budget.EstimateContent(summaryContent(m.CompactedContent)) {
		t.Errorf("roll-up: seq %d previous %q original %d", m2.Seq, m2.Previous, m2.OriginalTokens)
	}
	if a := rep.lastAttempt(t); a.InvocationsCovered != 3 || a.EventsCovered != 6 {
		t.Errorf("roll-up attempt covers %d invocations, %d events; want the new ones only (3, 6)", a.InvocationsCovered, a.EventsCovered)
	}
}

// Every attempt is reported exactly once.
func TestCompactorReportsOnce(t *testing.T) {
	store := newStore(turns(1, 8)...)
	c, rep := newCompactor(t, Config{Summarizer: &recorder{}, Synchronous: true}, store)
	ctx := context.Background()
	c.Compact(ctx, manual)                                                                          // compacted
	c.Compact(ctx, manual)                                                                          // nothing
	c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})               // nothing
	c.Schedule(Request{Session: Session{ID: "empty"}, Trigger: TriggerInvocations, Invocation: ""}) // same store, nothing
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	c.Schedule(manual) // closed
	want := []Outcome{OutcomeCompacted, OutcomeNothing, OutcomeNothing, OutcomeNothing, OutcomeClosed}
	if diff := cmp.Diff(want, rep.outcomes()); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

func TestConfigValidate(t *testing.T) {
	cfg := &Config{Interval: -1, RetainRecentInvocations: -2, RetainedToolResultBytes: 100, RetainRecentTokens: -3, MaxSummaryTokens: -4,
		Timeout: -time.Second, Backoff: -time.Minute,
		Summarizer: &LLMSummarizer{Template: "x"}, Fallback: &LLMSummarizer{Model: &fakeModel{}, MaxPartChars: -1}}
	err := cfg.Validate()
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		for _, leaf := range flatten(e) {
			var ce *config.Error
			if !errors.As(leaf, &ce) {
				t.Fatalf("%v is not a *config.Error", leaf)
			}
			got = append(got, fmt.Sprintf("%s=%v", ce.Field, ce.Value))
		}
	}
	want := []string{"Interval=-1", "RetainRecentInvocations=-2", "RetainedToolResultBytes=100", "RetainRecentTokens=-3", "MaxSummaryTokens=-4",
		"Timeout=-1s", "Backoff=-1m0s", "Summarizer.Model=<nil>", "Summarizer.Template=<nil>", "Fallback.MaxPartChars=-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if _, err := New(*cfg, Deps{Store: newStore()}); err == nil {
		t.Error("New accepted an invalid config")
	}
	var ce *config.Error
	if _, err := New(Config{}, Deps{}); !errors.As(err, &ce) || ce.Field != "Store" {
		t.Errorf("New without a store = %v", err)
	}
	if err := (&Config{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
	if err := (*Config)(nil).Validate(); err != nil {
		t.Errorf("nil config: %v", err)
	}
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

func TestConfigDefaults(t *testing.T) {
	c, err := New(Config{Overlap: -1}, Deps{Store: newStore()})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Config()
	if got.Interval != defaultInterval || got.Overlap != 0 || got.RetainRecentInvocations != defaultRetainRecentInvocations ||
		got.Timeout != defaultTimeout || got.Backoff != defaultBackoff || got.Fallback != nil {
		t.Errorf("defaults: %+v", got)
	}
	if _, ok := got.Summarizer.(*ExtractiveSummarizer); !ok {
		t.Errorf("default summarizer %T", got.Summarizer)
	}
	llm := Config{Summarizer: &LLMSummarizer{Model: &fakeModel{}}}.withDefaults()
	if _, ok := llm.Fallback.(*ExtractiveSummarizer); !ok || llm.Overlap != defaultOverlap {
		t.Errorf("LLM summarizer: fallback %T, overlap %d", llm.Fallback, llm.Overlap)
	}
	if nf := (Config{Summarizer: &LLMSummarizer{Model: &fakeModel{}}, NoFallback: true}).withDefaults(); nf.Fallback != nil {
		t.Errorf("NoFallback: fallback %T", nf.Fallback)
	}
	for _, tc := range []struct {
		cfg  Config
		l    budget.Limits
		want int
	}{
		{Config{}, budget.Limits{Usable: 1_000_000}, 8192},
		{Config{}, budget.Limits{Usable: 50_000}, 5000},
		{Config{}, budget.Limits{Usable: 5_000}, 1024},
		{Config{}, budget.Limits{}, 1024},
		{Config{MaxSummaryTokens: 300}, budget.Limits{Usable: 1_000_000}, 300},
	} {
		if got := tc.cfg.maxSummaryTokens(tc.l); got != tc.want {
			t.Errorf("maxSummaryTokens(%+v, usable %d) = %d, want %d", tc.cfg.MaxSummaryTokens, tc.l.Usable, got, tc.want)
		}
	}
	if got := (Config{}).retainTokens(1001); got != 501 {
		t.Errorf("retainTokens(1001) = %d", got)
	}
	if got := (Config{RetainRecentTokens: 7}).retainTokens(1001); got != 7 {
		t.Errorf("retainTokens with RetainRecentTokens 7 = %d", got)
	}
}

// An event without a usable timestamp (zero, before 1970, far future) does not make every
// compaction of the session fail: the marker's range leaves it out (coverage is by id).
func TestCompactorUnusableTimestamps(t *testing.T) {
	for name, bad := range map[string][]time.Time{
		"zero first":   {{}},
		"all zero":     {{}, {}, {}, {}, {}, {}},
		"before 1970":  {time.Unix(-5, 0)},
		"year 9999":    {time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		"zero and far": {{}, time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(name, func(t *testing.T) {
			events := stamp(turns(1, 5)...)
			for i, ts := range bad {
				events[i].Timestamp = ts
			}
			store := &memStore{events: events}
			clk := &clock{now: at(5000)}
			c, err := New(Config{Summarizer: &recorder{}}, Deps{Store: store, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			m, err := c.Compact(context.Background(), manual)
			if err != nil || m == nil {
				t.Fatalf("Compact = %v, %v", m, err)
			}
			if m.StartTimestamp <= 0 || m.EndTimestamp < m.StartTimestamp || m.EndTimestamp > maxSeconds {
				t.Errorf("range %v–%v", m.StartTimestamp, m.EndTimestamp)
			}
			if len(m.EventIDs) != 6 {
				t.Errorf("covered %v", m.EventIDs)
			}
		})
	}
}

// Two compactors (two runners, or two processes) over one session: the one that stores second
// discards its summary; no event is summarized twice.
func TestCompactorTwoWriters(t *testing.T) {
	store := newStore(turns(1, 8)...)
	slow := newBlocking()
	c1, rep1 := newCompactor(t, Config{Summarizer: slow}, store)
	c2, _ := newCompactor(t, Config{Summarizer: &recorder{}}, store)
	c1.Schedule(manual)
	slow.waitStarted(t)
	if m, err := c2.Compact(context.Background(), manual); err != nil || m == nil {
		t.Fatalf("second writer: %v, %v", m, err)
	}
	close(slow.release)
	c1.Wait(context.Background(), sess)
	if a := rep1.lastAttempt(t); a.Outcome != OutcomeConflict {
		t.Errorf("first writer: %s (%s), want conflict", a.Outcome, a.Reason)
	}
	if len(store.appends) != 1 {
		t.Errorf("%d markers stored, want 1", len(store.appends))
	}
	assertNoRepeatedRange(t, store.snapshot())
}

// An LLMSummarizer over a model that ignores its context (issue 9's row): the attempt ends at the
// timeout with the fallback's summary.
func TestCompactorTimeoutLLMModel(t *testing.T) {
	model := &fakeModel{block: make(chan struct{}), replies: []*response.LLMResponse{reply("Goal: late", genai.FinishReasonStop)}}
	defer close(model.block)
	store := newStore(turns(1, 6)...)
	c, rep := newCompactor(t, Config{Summarizer: &LLMSummarizer{Model: model}, Timeout: 400 * time.Millisecond}, store)
	c.Schedule(manual)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if !c.Wait(ctx, sess) {
		t.Fatal("the compaction never ended")
	}
	a := rep.lastAttempt(t)
	if a.Outcome != OutcomeCompacted || !a.FallbackUsed || a.Marker.Summarizer != "extractive" || !errors.Is(a.PrimaryErr, context.DeadlineExceeded) {
		t.Errorf("attempt: %s, fallback %v, primary error %v", a.Outcome, a.FallbackUsed, a.PrimaryErr)
	}
}

// A manual compaction waits for the compaction of the session in flight instead of running
// beside it, and fails after Close.
func TestManualCompactionJoinsTheSingleFlight(t *testing.T) {
	store := newStore(turns(1, 8)...)
	release := make(chan struct{})
	var running, overlap atomic.Int32
	gate := &funcSummarizer{name: "gate", f: func(ctx context.Context, in SummaryInput) (*Summary, error) {
		if running.Add(1) > 1 {
			overlap.Add(1)
		}
		defer running.Add(-1)
		<-release
		return (&ExtractiveSummarizer{}).Summarize(ctx, in)
	}}
	c, _ := newCompactor(t, Config{Interval: 2, RetainRecentInvocations: 2, Summarizer: gate, NoFallback: true}, store)
	c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})
	done := make(chan error, 1)
	go func() {
		_, err := c.Compact(context.Background(), Request{Session: sess, Trigger: TriggerManual})
		done <- err
	}()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !c.Idle(context.Background()) || overlap.Load() != 0 {
		t.Errorf("the manual compaction ran beside the scheduled one (%d overlaps)", overlap.Load())
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compact(context.Background(), Request{Session: sess, Trigger: TriggerManual}); err == nil {
		t.Error("Compact after Close succeeded")
	}
}
