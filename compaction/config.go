package compaction

import (
	"errors"
	"fmt"
	"time"

	"github.com/adkctx/adkctx/internal/config"
	"github.com/adkctx/adkctx/internal/record"
)

// Config configures compaction (adkctx.Config.Compaction). Zero values mean the documented
// defaults.
type Config struct {
	// Interval θ is the cost policy: with θ > 0, a sliding-window compaction runs after an
	// invocation once θ completed invocations beyond the retained raw tail are not yet
	// summarized, and summarizes them, however much room the window has left: smaller, cheaper
	// requests, at the price of the older turns the model reads raw. Default 0: no sliding
	// window — compaction comes only when the next request approaches the model's soft limit
	// (or manually), so a session that fits the window is never compacted and the model keeps
	// as much of its working context raw as the window allows.
	Interval int
	// Overlap ω: how many already summarized invocations are given to the summarizer again, raw,
	// for continuity. Default 2; negative: none.
	Overlap int
	// RetainRecentInvocations R: every compaction leaves at least the newest R whole completed
	// invocations raw (never split inside a call/response pair), so the model always sees the
	// previous turn itself, not only its summary. Default 2: the previous turn and the one
	// before it, enough to resolve "as I said before" and "undo that" without the summary. The
	// tool results of all but the newest are shown as excerpts until the next compaction
	// (RetainedToolResultBytes).
	RetainRecentInvocations int
	// RetainedToolResultBytes: the tool results of the invocations a compaction leaves raw,
	// older than the newest one that ended with the model's answer, are shown cut to their head and tail, at most this many bytes each
	// (as JSON), until the next compaction, when they ended with the model's answer; the user
	// messages, calls and answers stay whole, and storage keeps the results whole. A compaction
	// changes the request right after the system instruction, so the whole raw tail is re-sent
	// at full price once; what it keeps then is re-read on every later request until the next
	// compaction. Shortening it at that moment breaks no cached prefix, and the results it
	// shortens were read and answered already. The newest invocation that ended (the previous
	// turn of the next request, also while a later one runs) keeps its results whole, as does
	// one without that answer (running, waiting on a long-running call, failed). Default 1024 (about 250 tokens: the first and last
	// lines); negative: keep them whole; else ≥ 512.
	RetainedToolResultBytes int
	// RetainRecentTokens is the raw tail a token-triggered or manual compaction keeps, in
	// estimated tokens. Default 70% of the model's soft limit (less the summary's room and
	// what is on its way when the compaction was triggered by a large event).
	RetainRecentTokens int
	// Summarizer writes the summaries. Default: an ExtractiveSummarizer (no model, equal input
	// gives equal bytes). An LLMSummarizer on the agent's own model (hooks.SummarizerModel)
	// writes summaries its prompt cache serves.
	Summarizer Summarizer
	// Fallback is used when Summarizer fails or its reply is rejected. Default: an
	// ExtractiveSummarizer when Summarizer is not one. NoFallback turns it off.
	Fallback   Summarizer
	NoFallback bool
	// MaxSummaryTokens rejects (and falls back on) a summary larger than this, in estimated
	// tokens. A summary is also rejected when it is larger than what it replaces. Default: a
	// tenth of the model's usable input, between 1,024 and 8,192.
	MaxSummaryTokens int
	// Timeout bounds one compaction attempt, summarizer included, whatever the summarizer does
	// (a late reply is discarded). Config.Summarizer gets three quarters of it, so that the
	// fallback and the append still have time when it hangs. It runs detached from the request's
	// cancellation. Default 2 min.
	Timeout time.Duration
	// Backoff is the wait before a session's compaction is retried after a failed attempt; it
	// doubles with each consecutive failure up to 32×. Default 30 s. Manual compactions are not
	// delayed.
	Backoff time.Duration
	// Synchronous runs every compaction on the turn that triggers it (AfterRun waits for the
	// summarizer) instead of in the background. Deterministic, for tests and batch jobs; the
	// default (false) keeps summarization off the turn's critical path.
	Synchronous bool
	// ReadMargin is how much further back than the compacted view needs a session read reaches
	// (sessions are read from the oldest event the view shows, not whole): room for events that
	// a writer other than adkctx stamped with a clock that lags by up to this much. adkctx
	// stamps the events it appends in order, whatever the clocks. Default 10 s; negative: none.
	ReadMargin time.Duration
}

// Validate reports every invalid field as an *adkctx.ConfigError (joined).
func (c *Config) Validate() error {
	if c == nil {
		return nil
	}
	var errs []error
	check := func(field string, bad bool, v any, reason string) {
		if bad {
			errs = append(errs, config.Errorf(field, v, "%s", reason))
		}
	}
	check("Interval", c.Interval < 0, c.Interval, "must be ≥ 0 (0: no sliding window)")
	check("RetainRecentInvocations", c.RetainRecentInvocations < 0, c.RetainRecentInvocations, "must be ≥ 1 (0 selects the default)")
	check("RetainedToolResultBytes", c.RetainedToolResultBytes > 0 && c.RetainedToolResultBytes < record.MinExcerptBytes,
		c.RetainedToolResultBytes, fmt.Sprintf("must be ≥ %d, 0 (default) or negative (off)", record.MinExcerptBytes))
	check("RetainRecentTokens", c.RetainRecentTokens < 0, c.RetainRecentTokens, "must be ≥ 0")
	check("MaxSummaryTokens", c.MaxSummaryTokens < 0, c.MaxSummaryTokens, "must be ≥ 0")
	check("Timeout", c.Timeout < 0, c.Timeout, "must be ≥ 0")
	check("Backoff", c.Backoff < 0, c.Backoff, "must be ≥ 0")
	if v, ok := c.Summarizer.(interface{ validate() error }); ok {
		errs = append(errs, config.Nest("Summarizer", v.validate()))
	}
	if v, ok := c.Fallback.(interface{ validate() error }); ok {
		errs = append(errs, config.Nest("Fallback", v.validate()))
	}
	return errors.Join(errs...)
}
