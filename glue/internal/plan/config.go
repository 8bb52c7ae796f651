package plan

import (
	"cmp"
	"math"
	"time"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
)

// The defaults of compaction.Config (documented there).
const (
	defaultOverlap                 = 2
	defaultRetainRecentInvocations = 2
	defaultRetainedToolResultBytes = 1024
	defaultTimeout                 = 2 * time.Minute
	defaultBackoff                 = 30 * time.Second
	// defaultRetainFraction is the share of the soft limit a token-triggered compaction keeps
	// raw when Config.RetainRecentTokens is 0: most of the window stays the agent's working
	// context (replayed shell agents kept more of what they used next with 0.7 than with 0.5 at
	// 8K to 32K windows, and than a plain cut to the hard limit), while the rest is hysteresis:
	// the next token compaction comes only after the history grew by 30% of the limit again.
	defaultRetainFraction = 0.7
)

// WithDefaults returns c with the documented defaults in its zero fields. Negative values that
// mean "off" stay negative, so applying it twice changes nothing.
func WithDefaults(c compaction.Config) compaction.Config {
	c.Overlap = cmp.Or(c.Overlap, defaultOverlap)
	c.RetainRecentInvocations = cmp.Or(c.RetainRecentInvocations, defaultRetainRecentInvocations)
	c.RetainedToolResultBytes = cmp.Or(c.RetainedToolResultBytes, defaultRetainedToolResultBytes)
	if c.Summarizer == nil {
		c.Summarizer = &compaction.ExtractiveSummarizer{}
	}
	if _, extractive := c.Summarizer.(*compaction.ExtractiveSummarizer); c.Fallback == nil && !extractive {
		c.Fallback = &compaction.ExtractiveSummarizer{}
	}
	if c.NoFallback {
		c.Fallback = nil
	}
	c.Timeout = cmp.Or(c.Timeout, defaultTimeout)
	c.Backoff = cmp.Or(c.Backoff, defaultBackoff)
	return c
}

// SlidingWindowDue reports whether a sliding-window compaction has work when raw completed
// invocations of a scope are not covered: they reach c.Interval past the raw tail it keeps
// (c.RetainRecentInvocations, or keepFloor, the tail a token-triggered compaction chose, when
// larger). Apply it to a Config with defaults. The compactor uses it to skip a read when nothing
// can be due; Prepare uses it to decide.
func SlidingWindowDue(c compaction.Config, raw, keepFloor int) bool {
	return slidingDue(raw, c.Interval, max(c.RetainRecentInvocations, keepFloor))
}

// slidingDue is the sliding window's rule: interval invocations past the keep raw ones (never
// without an interval).
func slidingDue(raw, interval, keep int) bool { return interval > 0 && raw >= interval+keep }

// maxSummaryTokens is the summary bound of c for a model with limits l.
func maxSummaryTokens(c compaction.Config, l budget.Limits) int {
	if c.MaxSummaryTokens > 0 {
		return c.MaxSummaryTokens
	}
	return min(max(l.Usable/10, 1024), 8192)
}

// retainTokens is the token tail of c for a soft limit of tokenLimit history tokens.
func retainTokens(c compaction.Config, tokenLimit int) int {
	if c.RetainRecentTokens > 0 {
		return c.RetainRecentTokens
	}
	return int(math.Round(float64(tokenLimit) * defaultRetainFraction))
}
