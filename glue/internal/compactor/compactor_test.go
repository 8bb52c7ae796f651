package compactor_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	. "github.com/adkctx/adkctx/compaction"
	. "github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/history"
	"github.com/adkctx/adkctx/glue/internal/plan"
	"github.com/adkctx/adkctx/internal/config"
	"github.com/adkctx/adkctx/processors/request"
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
// attempt returns, the fallback's summary is stored and the session is released. In a synctest
// bubble the clock moves only while every goroutine waits, so the attempt's wait is measured
// exactly and the fallback's work takes none of the timeout: it gets its share every time, not
// by the machine's luck.
func TestCompactorTimeoutIgnoredContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBlocking()
		defer close(b.release)
		store := newStore(turns(1, 6)...)
		const timeout = time.Minute
		c, rep := newCompactor(t, Config{Summarizer: b, Timeout: timeout}, store)
		start := time.Now()
		m, err := c.Compact(context.Background(), manual)
		waited := time.Since(start)
		if err != nil || m == nil {
			t.Fatalf("Compact = %v, %v; want the fallback's marker", m, err)
		}
		if waited >= timeout {
			t.Errorf("the attempt waited %v for the summarizer, want less than Timeout (%v)", waited, timeout)
		}
		if b.calls.Load() != 1 || b.active.Load() != 1 {
			t.Errorf("summarizer: %d calls, %d still running; want 1 call, still blocked when the attempt ended", b.calls.Load(), b.active.Load())
		}
		a := rep.lastAttempt(t)
		if a.Outcome != OutcomeCompacted || !a.FallbackUsed || a.Summarizer != "extractive" || m.Summarizer != "extractive" {
			t.Fatalf("attempt %s, fallback %v, summarizer %q", a.Outcome, a.FallbackUsed, a.Summarizer)
		}
		if !errors.Is(a.PrimaryErr, context.DeadlineExceeded) {
			t.Fatalf("primary error %v, want a deadline", a.PrimaryErr)
		}
		var se *SummarizerError
		if !errors.As(a.PrimaryErr, &se) || se.Summarizer != "blocking" {
			t.Fatalf("primary error %v is not the summarizer's", a.PrimaryErr)
		}
	})
}

// The same in the background: the session's slot is released when the attempt times out, and
// Wait returns then (the bubble's clock shows it waited no longer than Timeout).
func TestCompactorTimeoutReleasesSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBlocking()
		defer close(b.release)
		store := newStore(turns(1, 8)...)
		const timeout = time.Minute
		c, rep := newCompactor(t, Config{Summarizer: b, NoFallback: true, Timeout: timeout, Interval: 2}, store)
		start := time.Now()
		c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})
		synctest.Wait()
		if !c.Pending(sess) || b.active.Load() != 1 {
			t.Fatal("the compaction is not running with its summarizer blocked: the interleaving did not happen")
		}
		if !c.Wait(context.Background(), sess) {
			t.Fatal("Wait: the compaction never ended")
		}
		if waited := time.Since(start); waited > timeout {
			t.Errorf("the session was held %v, more than Timeout (%v)", waited, timeout)
		}
		if c.Pending(sess) {
			t.Error("still pending after Wait")
		}
		a := rep.lastAttempt(t)
		if a.Outcome != OutcomeFailed || !errors.Is(a.Err, context.DeadlineExceeded) || a.Failures != 1 {
			t.Errorf("attempt: %s, %v, %d failures", a.Outcome, a.Err, a.Failures)
		}
	})
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
			s.add(Event{ID: "theirs", Author: "user", Metadata: markerOf(t, turns(1, 3), "")})
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
		markerOf(t, turns(1, 3), "sub"),
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
		if store.loads != 3 || len(store.appends) != 1 {
			t.Errorf("%d loads, %d markers; want 3 (selection, check, after the refusal), 1", store.loads, len(store.appends))
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
	want := Attempt{Outcome: OutcomeCompacted, Trigger: TriggerInvocations, MarkerID: "m1", Result: plan.Result{EventsCovered: 6, InvocationsCovered: 3,
		OriginalTokens: original, CompactedTokens: compacted, Summarizer: "fixed", SummarizerUsage: usage}}
	got := Attempt{Outcome: a.Outcome, Trigger: a.Trigger, MarkerID: a.MarkerID, Result: plan.Result{EventsCovered: a.EventsCovered,
		InvocationsCovered: a.InvocationsCovered, OriginalTokens: a.OriginalTokens, CompactedTokens: a.CompactedTokens,
		Summarizer: a.Summarizer, SummarizerUsage: a.SummarizerUsage}}
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
	if diff := cmp.Diff(m, read, cmp.AllowUnexported(Ledger{}, LedgerDelta{})); diff != "" {
		t.Errorf("stored marker (-reported +read):\n%s", diff)
	}
	// A second compaction rolls it up.
	store.add(turns(6, 8)...)
	m2, err := c.Compact(context.Background(), Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})
	if err != nil || m2 == nil {
		t.Fatalf("second Compact = %v, %v", m2, err)
	}
	if m2.Seq != 2 || m2.Previous != "m1" || m2.OriginalTokens != tokensOf(turns(4, 6)...)+budget.EstimateContent(shownSummary(t, store.snapshot()[:len(stored)])) {
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
// timeout with the fallback's summary, the model's call still blocked.
func TestCompactorTimeoutLLMModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		model := &stuckModel{block: make(chan struct{}), reply: &response.LLMResponse{
			Content: genai.NewContentFromText("Goal: late", genai.RoleModel), FinishReason: genai.FinishReasonStop}}
		defer close(model.block)
		store := newStore(turns(1, 6)...)
		const timeout = time.Minute
		c, rep := newCompactor(t, Config{Summarizer: &LLMSummarizer{Model: model}, Timeout: timeout}, store)
		start := time.Now()
		c.Schedule(manual)
		if !c.Wait(context.Background(), sess) {
			t.Fatal("the compaction never ended")
		}
		if waited := time.Since(start); waited > timeout {
			t.Errorf("the compaction took %v, more than Timeout (%v)", waited, timeout)
		}
		a := rep.lastAttempt(t)
		if a.Outcome != OutcomeCompacted || !a.FallbackUsed || a.Marker.Summarizer != "extractive" || !errors.Is(a.PrimaryErr, context.DeadlineExceeded) {
			t.Errorf("attempt: %s, fallback %v, primary error %v", a.Outcome, a.FallbackUsed, a.PrimaryErr)
		}
	})
}

// A manual compaction waits for the compaction of the session in flight instead of running
// beside it, and fails after Close. The interleaving is fixed in a synctest bubble: the
// scheduled compaction's summarizer is blocked when the manual one starts, and the manual one
// is then blocked too, its summarizer not called, until the first ends.
func TestManualCompactionJoinsTheSingleFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newStore(turns(1, 8)...)
		release := make(chan struct{})
		free := sync.OnceFunc(func() { close(release) })
		defer free() // a failed test leaves no goroutine blocked in the bubble
		var calls, running, overlap atomic.Int32
		gate := &funcSummarizer{name: "gate", f: func(ctx context.Context, in SummaryInput) (*Summary, error) {
			calls.Add(1)
			if running.Add(1) > 1 {
				overlap.Add(1)
			}
			defer running.Add(-1)
			<-release
			return (&ExtractiveSummarizer{}).Summarize(ctx, in)
		}}
		c, rep := newCompactor(t, Config{Interval: 2, RetainRecentInvocations: 2, Summarizer: gate, NoFallback: true}, store)
		c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})
		synctest.Wait()
		if calls.Load() != 1 || running.Load() != 1 {
			t.Fatalf("%d summarizer calls, %d running; want the scheduled compaction's, blocked", calls.Load(), running.Load())
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.Compact(context.Background(), Request{Session: sess, Trigger: TriggerManual})
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("the manual compaction ended (%v) while the scheduled one was running", err)
		default:
		}
		if calls.Load() != 1 {
			t.Fatalf("%d summarizer calls while the scheduled compaction runs, want 1: the manual one ran beside it", calls.Load())
		}
		free()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		var order []Trigger
		rep.mu.Lock()
		for _, a := range rep.all {
			order = append(order, a.Trigger)
		}
		rep.mu.Unlock()
		if diff := cmp.Diff([]Trigger{TriggerInvocations, TriggerManual}, order); diff != "" || overlap.Load() != 0 {
			t.Errorf("attempts in order (-want +got):\n%s%d overlaps", diff, overlap.Load())
		}
		if err := c.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compact(context.Background(), Request{Session: sess, Trigger: TriggerManual}); err == nil {
			t.Error("Compact after Close succeeded")
		}
	})
}

// markerOf is the metadata of a real marker covering events (in scope), as another writer
// would store it.
func markerOf(t *testing.T, events []Event, scope string) map[string]any {
	t.Helper()
	events = stamp(events...)
	for i := range events {
		events[i].Scope = scope
	}
	r := plan.Prepare(context.Background(), Config{Summarizer: &recorder{}, RetainRecentInvocations: 1}, nil, events,
		plan.Selection{Trigger: TriggerManual})
	if r.Metadata == nil {
		t.Fatalf("no marker: %s %v", r.Reason, r.Err)
	}
	return r.Metadata
}

// shownSummary is the summary a view of events shows.
func shownSummary(t *testing.T, events []Event) *genai.Content {
	t.Helper()
	for _, it := range plan.NewViewer(nil).View(events) {
		if it.Summary != nil {
			return it.Summary
		}
	}
	t.Fatal("no summary in the view")
	return nil
}

// New validates the configuration and requires a store; Config reports the defaults in use.
func TestNew(t *testing.T) {
	if _, err := New(Config{Interval: -1}, Deps{Store: newStore()}); err == nil {
		t.Error("New accepted an invalid config")
	}
	var ce *config.Error
	if _, err := New(Config{}, Deps{}); !errors.As(err, &ce) || ce.Field != "Store" {
		t.Errorf("New without a store = %v", err)
	}
	c, err := New(Config{Overlap: -1}, Deps{Store: newStore()})
	if err != nil {
		t.Fatal(err)
	}
	// The documented defaults, the explicit Overlap kept.
	got := c.Config()
	if _, ok := got.Summarizer.(*ExtractiveSummarizer); !ok || got.Interval != 0 || got.RetainRecentInvocations != 2 || got.Overlap != -1 || got.Timeout != 2*time.Minute {
		t.Errorf("Config() = %+v, want the defaults (extractive, no interval, retain 2, timeout 2m) with overlap -1", got)
	}
}

// stuckModel is a summarizer model that ignores its context: it answers once block is closed.
type stuckModel struct {
	block chan struct{}
	reply *response.LLMResponse
}

func (m *stuckModel) Name() string { return "gemini-2.5-flash" }

func (m *stuckModel) GenerateContent(context.Context, *request.LLMRequest) iter.Seq2[*response.LLMResponse, error] {
	return func(yield func(*response.LLMResponse, error) bool) {
		<-m.block
		yield(m.reply, nil)
	}
}

// "Off" settings reach the compaction: no excerpts and no overlap when they are negative (the
// defaults are applied by New and again by Prepare).
func TestOffSettingsStayOff(t *testing.T) {
	var events []Event
	for k := 1; k <= 6; k++ {
		inv := fmt.Sprintf("i%d", k)
		events = append(events,
			userEv(inv+"u", inv, "read the file of "+inv),
			Event{ID: inv + "c", InvocationID: inv, Author: "agent", Content: &genai.Content{Role: genai.RoleModel,
				Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: inv + "-call", Name: "read_file"}}}}},
			Event{ID: inv + "r", InvocationID: inv, Author: "agent", Content: &genai.Content{Role: genai.RoleUser,
				Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: inv + "-call", Name: "read_file",
					Response: map[string]any{"content": strings.Repeat("a line of the file\n", 400)}}}}}},
			modelEv(inv+"m", inv, "it is fine"))
	}
	rec := &recorder{}
	store := newStore(events[:16]...) // i1..i4
	c, rep := newCompactor(t, Config{Interval: 2, Overlap: -1, RetainedToolResultBytes: -1, Summarizer: rec}, store)
	for _, inv := range []string{"i4", "i6"} {
		if inv == "i6" {
			store.add(events[16:]...)
		}
		if _, err := c.Compact(context.Background(), Request{Session: sess, Trigger: TriggerInvocations, Invocation: inv}); err != nil {
			t.Fatal(err)
		}
		a := rep.lastAttempt(t)
		if a.Outcome != OutcomeCompacted {
			t.Fatalf("%s: %s (%s, %v)", inv, a.Outcome, a.Reason, a.Err)
		}
		if len(a.Marker.ExcerptedEventIDs) != 0 || a.Marker.ExcerptBytes != 0 {
			t.Errorf("%s: %s, excerpts %v (%d bytes); want a marker without excerpts", inv, a.Outcome, a.Marker.ExcerptedEventIDs, a.Marker.ExcerptBytes)
		}
	}
	if n := len(rec.inputs[len(rec.inputs)-1].Context); n != 0 {
		t.Errorf("the second compaction gave the summarizer %d overlap events, want none", n)
	}
}

// A trigger coalesced behind a running compaction runs after it on a read taken after it: the
// snapshot its request carries was read before that compaction stored its marker, and a summary
// prepared from it would be discarded as a conflict (newer_marker) — the summarizer's call wasted.
func TestCoalescedRunReadsAfterTheRunItWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := newBlocking()
		store := newStore(turns(1, 12)...)
		c, rep := newCompactor(t, Config{Summarizer: b, Interval: 2}, store)
		first, _ := store.Read(ctx, sess, history.ForView)
		c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i12", Snapshot: first})
		synctest.Wait() // the first run is held in its summarizer
		store.add(turns(13, 16)...)
		second, _ := store.Read(ctx, sess, history.ForView) // read before the first run's marker, as a turn's is
		c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i16", Snapshot: second})
		close(b.release)
		c.Wait(ctx, sess)
		if diff := cmp.Diff([]Outcome{OutcomeCoalesced, OutcomeCompacted, OutcomeCompacted}, rep.outcomes()); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s%d summarizer calls", diff, b.calls.Load())
		}
	})
}

// A manual compaction that ends because its caller's context was cancelled or its deadline
// passed is not a failure of the session: it is reported as canceled, counts no failure and
// starts no backoff, so the next automatic compaction runs (a real summarizer failure still
// backs off: TestCompactorBackoff). Config.Timeout is the compactor's own bound, not the
// caller's: an attempt it ends still fails (TestCompactorTimeoutReleasesSession).
func TestCompactorCallerCancelIsNoFailure(t *testing.T) {
	// honest summarizes unless its context is done; cancelInside ends the caller's context
	// while the summary is being written.
	var cancelInside atomic.Pointer[context.CancelFunc]
	honest := &funcSummarizer{name: "honest", f: func(ctx context.Context, in SummaryInput) (*Summary, error) {
		if f := cancelInside.Swap(nil); f != nil {
			(*f)()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return &Summary{Content: genai.NewContentFromText("S", genai.RoleUser)}, nil
	}}
	tests := []struct {
		name       string
		noFallback bool
		// ctx returns the caller's context of the manual compaction.
		ctx  func() context.Context
		want error
	}{
		{"canceled before", false, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, context.Canceled},
		{"canceled before, no fallback", true, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, context.Canceled},
		{"canceled while summarizing", true, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancelInside.Store(&cancel)
			return ctx
		}, context.Canceled},
		{"caller's deadline passed", true, func() context.Context {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			t.Cleanup(cancel)
			return ctx
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{now: at(10_000)}
			rep := &reports{}
			c, err := New(Config{Summarizer: honest, NoFallback: tt.noFallback, Synchronous: true, Backoff: time.Minute, Interval: 2},
				Deps{Store: newStore(turns(1, 8)...), Report: rep.add, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			if m, err := c.Compact(tt.ctx(), manual); !errors.Is(err, tt.want) || m != nil {
				t.Fatalf("cancelled Compact = %v, %v; want no marker and %v", m, err, tt.want)
			}
			if a := rep.lastAttempt(t); a.Outcome != OutcomeCanceled || a.Failures != 0 {
				t.Fatalf("cancelled attempt: %s with %d failures; want %s with 0", a.Outcome, a.Failures, OutcomeCanceled)
			}
			c.Schedule(Request{Session: sess, Trigger: TriggerInvocations, Invocation: "i8"})
			if a := rep.lastAttempt(t); a.Outcome != OutcomeCompacted || a.Failures != 0 {
				t.Fatalf("the automatic compaction after it: %s with %d failures (%v); want it to run and compact", a.Outcome, a.Failures, a.Err)
			}
		})
	}
}
