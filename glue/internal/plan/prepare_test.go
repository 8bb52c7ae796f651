package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	. "github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/config"
	"github.com/adkctx/adkctx/internal/record"
	"github.com/adkctx/adkctx/processors/response"
)

// manual is a manual compaction request.
var manual = Selection{Trigger: TriggerManual}

func TestPrepareSummarizerPanics(t *testing.T) {
	panicking := &funcSummarizer{name: "panicky", f: func(context.Context, SummaryInput) (*Summary, error) { panic(panicSecret) }}
	t.Run("fallback", func(t *testing.T) {
		c, rep := newCompactor(t, Config{Summarizer: panicking}, newStore(turns(1, 5)...))
		m, err := c.Compact(context.Background(), manual)
		if err != nil || m == nil {
			t.Fatalf("Compact = %v, %v", m, err)
		}
		a := rep.lastAttempt(t)
		var pe *panicError
		if !a.FallbackUsed || !errors.As(a.PrimaryErr, &pe) || !strings.Contains(a.PrimaryErr.Error(), "panic (string) in ") ||
			strings.Contains(a.PrimaryErr.Error(), panicSecret) {
			t.Errorf("attempt: fallback %v, primary error %v", a.FallbackUsed, a.PrimaryErr)
		}
	})
	t.Run("no fallback", func(t *testing.T) {
		c, rep := newCompactor(t, Config{Summarizer: panicking, NoFallback: true}, newStore(turns(1, 5)...))
		m, err := c.Compact(context.Background(), manual)
		if m != nil || err == nil || !strings.Contains(err.Error(), "summarizer panicky failed: panic (string) in ") ||
			strings.Contains(err.Error(), panicSecret) {
			t.Fatalf("Compact = %v, %v; want the panic as an error", m, err)
		}
		if a := rep.lastAttempt(t); a.Outcome != OutcomeFailed {
			t.Errorf("attempt: %s", a.Outcome)
		}
	})
}

// A reply larger than MaxSummaryTokens, or than what it replaces, is rejected and the fallback
// used: a 2 MB reply with finish reason STOP never becomes a summary.
func TestPrepareRejectsLargeSummaries(t *testing.T) {
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
func TestPrepareSummaryNotSmaller(t *testing.T) {
	wordy := &recorder{text: strings.Repeat("A careful and complete summary. ", 40)}
	store := newStore(turns(1, 3)...)
	c, rep := newCompactor(t, Config{Summarizer: wordy, NoFallback: true, RetainRecentInvocations: 1}, store)
	for i := 0; i < 2; i++ {
		m, err := c.Compact(context.Background(), manual)
		if m != nil || err != nil {
			t.Fatalf("Compact = %v, %v; want nothing", m, err)
		}
		a := rep.lastAttempt(t)
		if a.Outcome != OutcomeNothing || a.Reason != "summary_not_smaller" || a.PrimaryErr != nil || a.Err != nil {
			t.Fatalf("attempt: %s (%s), primary %v, error %v", a.Outcome, a.Reason, a.PrimaryErr, a.Err)
		}
	}
	if len(store.appends) != 0 {
		t.Errorf("%d markers stored", len(store.appends))
	}
	// With a fallback: it is tried, and not smaller either. (The default one, extractive, fits
	// any bound it can by dropping answers, paths and errors: here it keeps the goal alone.)
	store = newStore(turns(1, 3)...)
	c, rep = newCompactor(t, Config{Summarizer: wordy, Fallback: &recorder{text: wordy.text}, RetainRecentInvocations: 2}, store)
	if m, err := c.Compact(context.Background(), manual); m != nil || err != nil {
		t.Fatalf("Compact with a fallback = %v, %v; want nothing", m, err)
	}
	if a := rep.lastAttempt(t); a.Outcome != OutcomeNothing || a.Reason != "summary_not_smaller" || !a.FallbackUsed {
		t.Errorf("attempt with a fallback: %s (%s), fallback %v", a.Outcome, a.Reason, a.FallbackUsed)
	}
}

// A summarizer with nothing to say (nil, nil) is nothing to do.
func TestPrepareSummarizerNothing(t *testing.T) {
	quiet := &funcSummarizer{name: "quiet", f: func(context.Context, SummaryInput) (*Summary, error) { return nil, nil }}
	c, rep := newCompactor(t, Config{Summarizer: quiet}, newStore(turns(1, 5)...))
	if m, err := c.Compact(context.Background(), manual); m != nil || err != nil {
		t.Fatalf("Compact = %v, %v", m, err)
	}
	if a := rep.lastAttempt(t); a.Outcome != OutcomeNothing || a.Reason != "summarizer_nothing_to_do" {
		t.Errorf("attempt: %s (%s)", a.Outcome, a.Reason)
	}
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

func TestConfigValidate(t *testing.T) {
	cfg := &Config{Interval: -1, RetainRecentInvocations: -2, RetainedToolResultBytes: 100, RetainRecentTokens: -3, MaxSummaryTokens: -4,
		Timeout: -time.Second, Backoff: -time.Minute,
		Summarizer: &LLMSummarizer{Template: "x"}, Fallback: &LLMSummarizer{Model: &fakeModel{}, MaxPartChars: -1}}
	err := cfg.Validate()
	var got []string
	for _, leaf := range config.Leaves(err) {
		var ce *config.Error
		if !errors.As(leaf, &ce) {
			t.Fatalf("%v is not a *config.Error", leaf)
		}
		got = append(got, fmt.Sprintf("%s=%v", ce.Field, ce.Value))
	}
	want := []string{"Interval=-1", "RetainRecentInvocations=-2", "RetainedToolResultBytes=100", "RetainRecentTokens=-3", "MaxSummaryTokens=-4",
		"Timeout=-1s", "Backoff=-1m0s", "Summarizer.Model=<nil>", "Summarizer.Template=<nil>", "Fallback.MaxPartChars=-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if err := (&Config{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
	if err := (*Config)(nil).Validate(); err != nil {
		t.Errorf("nil config: %v", err)
	}
}

func TestConfigDefaults(t *testing.T) {
	got := WithDefaults(Config{Overlap: -1})
	if got.Interval != 0 || got.Overlap != -1 || got.RetainRecentInvocations != defaultRetainRecentInvocations ||
		got.Timeout != defaultTimeout || got.Backoff != defaultBackoff || got.Fallback != nil {
		t.Errorf("defaults: %+v", got)
	}
	if _, ok := got.Summarizer.(*ExtractiveSummarizer); !ok {
		t.Errorf("default summarizer %T", got.Summarizer)
	}
	llm := WithDefaults(Config{Summarizer: &LLMSummarizer{Model: &fakeModel{}}})
	if _, ok := llm.Fallback.(*ExtractiveSummarizer); !ok || llm.Overlap != defaultOverlap {
		t.Errorf("LLM summarizer: fallback %T, overlap %d", llm.Fallback, llm.Overlap)
	}
	// Applying the defaults twice changes nothing: "off" stays off.
	off := WithDefaults(Config{Overlap: -1, RetainedToolResultBytes: -1})
	if again := WithDefaults(off); again.Overlap != -1 || again.RetainedToolResultBytes != -1 {
		t.Errorf("defaults applied twice: overlap %d, excerpt bytes %d; want -1, -1", again.Overlap, again.RetainedToolResultBytes)
	}
	if nf := WithDefaults(Config{Summarizer: &LLMSummarizer{Model: &fakeModel{}}, NoFallback: true}); nf.Fallback != nil {
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
		if got := maxSummaryTokens(tc.cfg, tc.l); got != tc.want {
			t.Errorf("maxSummaryTokens(%+v, usable %d) = %d, want %d", tc.cfg.MaxSummaryTokens, tc.l.Usable, got, tc.want)
		}
	}
	if got := retainTokens(Config{}, 1001); got != 701 {
		t.Errorf("retainTokens(1001) = %d", got)
	}
	if got := retainTokens(Config{RetainRecentTokens: 7}, 1001); got != 7 {
		t.Errorf("retainTokens with RetainRecentTokens 7 = %d", got)
	}
}

// An event without a usable timestamp (zero, before 1970, far future) does not make every
// compaction of the session fail: the marker's range leaves it out (coverage is by id).
func TestPrepareUnusableTimestamps(t *testing.T) {
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
			c, _ := newCompactor(t, Config{Summarizer: &recorder{}}, &memStore{events: events})
			c.now = at(5000)
			m, err := c.Compact(context.Background(), manual)
			if err != nil || m == nil {
				t.Fatalf("Compact = %v, %v", m, err)
			}
			if m.StartTimestamp <= 0 || m.EndTimestamp < m.StartTimestamp || m.EndTimestamp > record.MaxSeconds {
				t.Errorf("range %v–%v", m.StartTimestamp, m.EndTimestamp)
			}
			if len(m.EventIDs) != 6 {
				t.Errorf("covered %v", m.EventIDs)
			}
		})
	}
}

// Prepare refuses an invalid configuration with the same error Validate gives, and stores
// nothing to do.
func TestPrepareValidates(t *testing.T) {
	cfg := Config{Interval: -1, RetainedToolResultBytes: 100}
	r := Prepare(context.Background(), cfg, nil, stamp(turns(1, 8)...), Selection{Trigger: TriggerManual})
	var ce *config.Error
	if r.Marker != nil || !errors.As(r.Err, &ce) || r.Err.Error() != cfg.Validate().Error() {
		t.Errorf("Prepare with an invalid config = %+v, want the validation error", r)
	}
}

// The marker records how far back a reader must reach (ReadFrom): the oldest event the view
// shows after it. The compaction's clock does not bound it: a session whose events were stamped
// by a clock ahead of the compacting process (another writer's, adk-go's time provider) gets
// the same hint as one stamped by the same clock, not "now", which would reach back to before
// every event and make each reader read the whole session.
func TestReadFromIsTheOldestEventShown(t *testing.T) {
	events := stamp(turns(1, 12)...) // from t0, one second apart
	for name, now := range map[string]time.Time{
		"clock after the events":  events[len(events)-1].Timestamp.Add(time.Minute),
		"clock before the events": t0.Add(-time.Hour),
	} {
		t.Run(name, func(t *testing.T) {
			r := Prepare(context.Background(), Config{Interval: 2}, nil, events, Selection{Trigger: TriggerInvocations, Now: now})
			if r.Marker == nil {
				t.Fatalf("no marker: %v", r.Err)
			}
			covered := map[string]bool{}
			for _, id := range r.Marker.EventIDs {
				covered[id] = true
			}
			var oldest time.Time
			for _, e := range events {
				if !covered[e.ID] {
					oldest = e.Timestamp
					break
				}
			}
			if got := record.Time(r.Marker.ReadFrom); !got.Equal(oldest) {
				t.Errorf("ReadFrom = %v, want the oldest event shown, %v", got, oldest)
			}
		})
	}
}

// TestSummaryRoom: the room a token compaction's tail leaves for its summary is a quarter of the
// limit, or the summary it rolls up plus a tenth of the limit when larger, within the summary's
// bound.
func TestSummaryRoom(t *testing.T) {
	small := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "ledger line"}}}
	large := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: strings.Repeat("ledger line ", 100)}}}
	largeTokens := budget.EstimateContent(summaryContent(large))
	tests := []struct {
		name              string
		live              *genai.Content
		tokenLimit, bound int
		want              int
	}{
		{"a first summary at a small window: a quarter of the limit, not the bound", nil, 1200, 1024, 300},
		{"a small summary rolled up: a quarter of the limit", small, 1200, 1024, 300},
		{"a large summary rolled up: it and a tenth of the limit", large, 1200, 1024, largeTokens + 120},
		{"at a large window the bound decides", large, 100_000, 1024, 1024},
	}
	for _, tt := range tests {
		if got := summaryRoom(tt.live, tt.tokenLimit, tt.bound); got != tt.want {
			t.Errorf("%s: summaryRoom = %d, want %d", tt.name, got, tt.want)
		}
	}
}
