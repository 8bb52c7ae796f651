package plan

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/record"
	"github.com/adkctx/adkctx/processors/request"
	"google.golang.org/genai"
)

// Selection is what one compaction is asked to do.
type Selection struct {
	Trigger compaction.Trigger
	// Invocation is the invocation that triggered the compaction: the one that just finished,
	// or the one still running when Live.
	Invocation string
	Live       bool
	// Limits are the limits of the model the session uses (they size the token tail and the
	// summary bound).
	Limits budget.Limits
	// TokenLimit is the soft limit in history tokens: estimated tokens of the history alone (the
	// request minus system instruction and tools, calibration undone). 0: unknown.
	TokenLimit int
	// LimitsFor returns the limits applied to a model (an LLM summarizer's prompt). Nil: the
	// built-in table.
	LimitsFor func(model string) budget.Limits
	// Now is the time of the compaction (the marker's range when no covered event has a usable
	// timestamp). Zero: time.Now().
	Now time.Time
	// Reserve estimates the history tokens that join the view before the next request and are
	// not among the events compacted (the event being stored when the compaction was
	// triggered): a token compaction keeps a tail small enough to leave room for them and the
	// summary under TokenLimit. 0: none.
	Reserve int
	// Sent are the newest requests the session's model was sent, as sent (system instruction,
	// tools, and contents after adkctx's steps), newest first: what a provider's prompt cache may
	// still hold; none: unknown. The summarizer gets the prefix of the newest one that shows every
	// event the summary covers (SummaryInput.Prefix), preferring the summarizer's model.
	Sent []*request.LLMRequest
}

// Result is what Prepare decided.
type Result struct {
	// Marker is the new marker and Metadata the CustomMetadata of the event to store it in (no
	// content, author "user"). Both are nil when there is nothing to do (Reason says why) or
	// when preparing failed (Err).
	Marker   *compaction.Marker
	Metadata map[string]any
	Reason   string
	// EventsCovered and InvocationsCovered count what the marker newly summarizes; Covered
	// holds those events, in stream order (what the recall history keeps of them).
	EventsCovered, InvocationsCovered int
	Covered                           []compaction.Event
	OriginalTokens, CompactedTokens   int
	Summarizer                        string
	SummarizerUsage                   budget.Usage
	// Shrunk estimates how many tokens the marker takes out of the view (what it covers and
	// newly shows as excerpts, less the summary it adds): a request built after it is stored is
	// that much smaller than one built before.
	Shrunk int
	// SharedPrefix: the summarizer's prompt was the agent's conversation (Summary.SharedPrefix).
	SharedPrefix bool
	FallbackUsed bool
	// PrimaryErr is the failure of Config.Summarizer when the fallback was used; Err the error
	// that made preparing fail.
	PrimaryErr, Err error
	// Ledger is the new marker's whole ledger (the marker may store only what it adds) and
	// Summary the summary a view shows for it: Viewer.Remember takes them once it is stored.
	Ledger  *compaction.Ledger
	Summary *genai.Content
}

// Prepare decides what to compact among events (one session's stored events in stream order,
// markers included) and summarizes it: the marker to append, or why there is none. It reads
// and stores nothing; appending Result.Metadata is the caller's (the hooks append it in the
// background, one compaction per session at a time, and retry when the session moved on).
// cfg is validated (Result.Err) and its zero fields mean the defaults; v may be nil.
//
// Config.Summarizer gets three quarters of Config.Timeout; the fallback runs on ctx, whose
// deadline is the caller's to set (the hooks bound each attempt by Config.Timeout).
func Prepare(ctx context.Context, cfg compaction.Config, v *Viewer, events []compaction.Event, sel Selection) Result {
	var r Result
	if err := cfg.Validate(); err != nil {
		r.Err = err
		return r
	}
	cfg = WithDefaults(cfg)
	if v == nil {
		v = NewViewer(nil)
	}
	if sel.Now.IsZero() {
		sel.Now = time.Now()
	}
	p := v.plan(events)
	w := selectFor(cfg, p, events, sel, &r)
	if w == nil {
		return r
	}
	readHints(events, p, w, max(cfg.Overlap, 0), sel.Now)
	var m *compaction.Marker
	if len(w.covered) == 0 {
		m = masksOnly(p.live[w.m.Scope], w, sel, &r)
	} else {
		w.input.Prefix = promptPrefix(sel.Sent, summarizerModel(cfg.Summarizer), events, w.covered)
		m = summarize(ctx, cfg, sel, w, &r)
	}
	if m == nil {
		return r
	}
	r.Shrunk = w.shrunk
	if len(w.covered) > 0 {
		r.Shrunk -= budget.EstimateContent(summaryContent(r.Summary))
	}
	md, err := m.Metadata()
	if err != nil {
		r.Err = err
		return r
	}
	r.Marker, r.Metadata = m, md
	r.Covered = make([]compaction.Event, 0, len(w.covered))
	for _, i := range slices.Sorted(slices.Values(w.covered)) {
		r.Covered = append(r.Covered, events[i])
	}
	return r
}

// selectFor selects what to compact, scope by scope (adk-go v1 has only ""). With nothing to do
// it sets r.Reason and returns nil.
func selectFor(cfg compaction.Config, p *plan, events []compaction.Event, sel Selection, r *Result) *window {
	params := windowParams{
		trigger:           sel.Trigger,
		interval:          cfg.Interval,
		overlap:           max(cfg.Overlap, 0),
		retainInvocations: cfg.RetainRecentInvocations,
		excerptBytes:      cfg.RetainedToolResultBytes,
		tokenLimit:        sel.TokenLimit,
		running:           sel.Invocation,
		live:              sel.Live,
	}
	reason := reasonEmpty
	for _, scope := range scopesOf(events) {
		params.scope = scope
		if sel.TokenLimit > 0 {
			params.retainTokens = retainTokens(cfg, sel.TokenLimit)
			if sel.Reserve > 0 && cfg.RetainRecentTokens == 0 {
				// What joins the view before the next request (a large tool result on its way) and
				// the summary must fit beside the tail under the limit: else that request is
				// trimmed, or compacted again at once.
				room := sel.TokenLimit - summaryRoom(p.live[scope].summary, sel.TokenLimit, maxSummaryTokens(cfg, sel.Limits)) - sel.Reserve
				params.retainTokens, params.reserve = min(params.retainTokens, max(room, 1)), sel.Reserve
			}
		}
		var w *window
		if w, reason = selectWindow(events, p, params); w != nil {
			r.EventsCovered, r.InvocationsCovered, r.OriginalTokens = len(w.covered), w.m.Invocations, w.original
			if prev := p.live[scope].m; prev != nil {
				r.InvocationsCovered -= prev.Invocations
			}
			return w
		}
	}
	r.Reason = reason
	return nil
}

// summaryRoom is the room a token compaction's raw tail leaves for the summary it writes beside
// what is on its way: a quarter of the limit, or the summary it rolls up (live; nil: none) as the
// view shows it plus a tenth of the limit for what the newly covered events add when that is
// more, at most the summary's bound. The bound alone was the measure before: at small windows it
// (1,024 tokens at least) is most of the limit, and the tail left beside it was the newest step
// alone, the working context the agent goes on to use summarized into a ledger of paths and
// counts though the summaries written were a few hundred tokens. At larger windows the bound
// is under a quarter of the limit and still decides: what the summary does not take is the
// room the history grows into before the next compaction. A summary larger than its room takes
// the next request past the soft limit, and the compaction that follows covers more.
func summaryRoom(live *genai.Content, tokenLimit, bound int) int {
	room := tokenLimit / 4
	if live != nil {
		room = max(room, budget.EstimateContent(summaryContent(live))+tokenLimit/10)
	}
	return min(room, bound)
}

// summarize writes w's summary, falling back on failure, and returns the complete marker; nil
// with r's Reason or Err set when there is none. A summary must be smaller than what it
// replaces.
func summarize(ctx context.Context, cfg compaction.Config, sel Selection, w *window, r *Result) *compaction.Marker {
	w.input.Limits = sel.LimitsFor
	limit := maxSummaryTokens(cfg, sel.Limits)
	bound := min(limit, max(w.original-1, 1))
	// The summarizer may take most of the attempt's time, never all of it: a fallback and the
	// append need the rest.
	sctx, cancel := context.WithTimeout(ctx, cfg.Timeout*3/4)
	defer cancel()
	sum, err := runSummarizer(sctx, cfg.Summarizer, w.input, bound)
	r.Summarizer = summarizerName(cfg.Summarizer)
	// The fallback answers the summarizer's failure, not the attempt's end: once ctx is done
	// (the caller gave up, or the attempt's time is out) nothing more is written.
	if err != nil && cfg.Fallback != nil && ctx.Err() == nil {
		r.PrimaryErr, r.FallbackUsed, r.Summarizer = err, true, summarizerName(cfg.Fallback)
		sum, err = runSummarizer(ctx, cfg.Fallback, w.input, bound)
	}
	var rej *compaction.SummaryRejectedError
	switch {
	case errors.As(err, &rej) && rej.Reason == "too_large" && rej.Tokens <= limit:
		// Not a failure: the history is still too small to be worth summarizing.
		r.Reason, r.PrimaryErr = "summary_not_smaller", nil
		return nil
	case err != nil:
		r.Err = err
		return nil
	case sum == nil:
		r.Reason = "summarizer_nothing_to_do"
		return nil
	}
	m := w.m
	if m.StartTimestamp <= 0 { // no covered event had a usable timestamp
		m.StartTimestamp = record.Seconds(sel.Now)
		m.EndTimestamp = m.StartTimestamp
	}
	m.SetSummary(sum, w.input.Ledger)
	r.Ledger, r.Summary = w.input.Ledger, sum.Content
	m.CompactedTokens = budget.EstimateContent(sum.Content)
	m.OriginalTokens = w.original
	m.CompressionRatio = float64(m.OriginalTokens) / float64(max(m.CompactedTokens, 1))
	m.Summarizer = sum.Summarizer
	r.Summarizer, r.SummarizerUsage, r.CompactedTokens = sum.Summarizer, sum.Usage, m.CompactedTokens
	r.SharedPrefix = sum.SharedPrefix
	return m
}

// masksOnly completes w's marker when it covers nothing new and only shows older tool results
// as excerpts (Marker.MasksOnly): no summarizer runs; the marker keeps the summary of live, the
// marker it rolls up (none when there is none).
func masksOnly(live liveMarker, w *window, sel Selection, r *Result) *compaction.Marker {
	m := w.m
	if live.m != nil {
		m.CompactedContent, m.SummaryLedger, m.SummaryTokens, m.SummaryBytes = live.m.CompactedContent, live.m.SummaryLedger, live.m.SummaryTokens, live.m.SummaryBytes
		m.Summarizer, m.OriginalTokens, m.CompactedTokens = live.m.Summarizer, live.m.OriginalTokens, live.m.CompactedTokens
		m.CompressionRatio = live.m.CompressionRatio
	} else {
		m.StartTimestamp, m.EndTimestamp = record.Seconds(sel.Now), record.Seconds(sel.Now)
		m.Ledger, m.LedgerDelta, m.LedgerFrom = nil, nil, 0
	}
	r.Ledger, r.Summary = w.input.Ledger, live.summary
	r.Summarizer = "none"
	return m
}

// scopesOf returns the isolation scopes of events, "" first.
func scopesOf(events []compaction.Event) []string {
	scopes := []string{""}
	seen := map[string]bool{"": true}
	for i := range events {
		if s := events[i].Scope; !seen[s] {
			seen[s] = true
			scopes = append(scopes, s)
		}
	}
	return scopes
}

// readHints records in w's marker what a reader of the session needs of storage once it is
// stored (Marker.RawCount, ReadFrom, ContextFrom), from the plan p of events before it.
func readHints(events []compaction.Event, p *plan, w *window, overlap int, now time.Time) {
	m := w.m
	newly := make(map[int]bool, len(w.covered))
	for _, i := range w.covered {
		newly[i] = true
	}
	// The marker itself is needed: stored at now, or right after the newest event when a
	// clock stamped events later than now (the store stamps it after them).
	from, known := now, true
	for i := range events {
		if events[i].Timestamp.After(from) {
			from = events[i].Timestamp
		}
	}
	need := func(t time.Time) {
		if record.Seconds(t) <= 0 {
			known = false
		} else if t.Before(from) {
			from = t
		}
	}
	for i := range events {
		if _, off := events[i].Timestamp.Zone(); off < m.UTCOffset {
			m.UTCOffset = off
		}
		if !p.shown(events, i) || newly[i] {
			continue
		}
		need(events[i].Timestamp)
		if events[i].Scope == m.Scope {
			m.RawCount++
		}
	}
	for scope, lm := range p.live {
		if scope != m.Scope {
			need(events[lm.at].Timestamp)
		}
	}
	if known {
		m.ReadFrom = record.Seconds(from)
	}
	// The next compaction gives its summarizer the newest ω covered invocations again.
	covered := func(i int) bool { return events[i].Scope == m.Scope && (p.covered[i] || newly[i]) }
	var invs []string
	for i := len(events) - 1; i >= 0 && len(invs) < overlap; i-- {
		if covered(i) && events[i].InvocationID != "" && !slices.Contains(invs, events[i].InvocationID) {
			invs = append(invs, events[i].InvocationID)
		}
	}
	ctx := time.Time{}
	for i := range events {
		if covered(i) && slices.Contains(invs, events[i].InvocationID) && record.Seconds(events[i].Timestamp) > 0 {
			if ctx.IsZero() || events[i].Timestamp.Before(ctx) {
				ctx = events[i].Timestamp
			}
		}
	}
	if !ctx.IsZero() {
		m.ContextFrom = record.Seconds(ctx)
	}
}
