package engine

import (
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/internal/errkind"
)

// BeforeRun runs when an invocation starts (its user message is stored). It restores the
// session's state from its events when this process has none and, when the request it will
// build is projected over the hard limit while a compaction of the session is pending, waits for
// that compaction (at most Compaction.Timeout) so the request is built from the new summary.
//
// With compaction on, a run whose session was not read through adkctx's session wrapper
// (viewed false) is refused with the *adkctx.WiringError that says so: not_wired when the engine
// was never given a store (no Wire, no SessionService), view_missing otherwise. Such a run's
// model would read every stored event, and the markers adkctx appends beside it make adk-go's
// database service refuse the run's next append as stale: the user would meet that error, not
// its cause. A refused run schedules no compaction.
func (e *Engine) BeforeRun(ctx context.Context, s compactor.Session, invocation string, userMessage *genai.Content, viewed bool, events func() []compaction.Event) error {
	if e.CompactionOn() && !viewed {
		st := e.state(s)
		st.mu.Lock()
		st.noteRun(invocation)
		if r := st.findRun(invocation); r != nil {
			r.refused = true
		}
		st.mu.Unlock()
		if e.getCompactor() == nil {
			return e.WiringError("not_wired", notWired)
		}
		return e.WiringError("view_missing", viewMissing)
	}
	e.Restore(s, invocation, events)
	e.waitIfOverHard(ctx, s, invocation, userMessage, true, false)
	return nil
}

// Messages of the wiring problems a run or a model call finds.
const (
	notWired = "compaction is configured but this Hooks was never wired: no runner's session service is wrapped, so nothing " +
		"is compacted and requests grow until the budget trims them. Pass the runner.Config to Hooks.Wire and build the runner " +
		"from the config it returns (or register Hooks.Plugin() and wrap the session service with Hooks.SessionService)"
	viewMissing = "compaction is configured but this runner's session service is not adkctx's wrapper: its model would read " +
		"every stored event, whatever was compacted, and adk-go's database service would refuse its appends as stale once " +
		"adkctx stores a summary, so its runs are refused. Build the runner from the runner.Config Hooks.Wire returns (its " +
		"SessionService is the wrapper), or wrap the service with Hooks.SessionService"
)

// OnEvent runs before an event of a running invocation is stored. Its content will be part of
// the next request: when that request is projected over the soft limit, it schedules a token
// compaction; when it (the invocation's next, for an event that does not end it) is projected
// over the hard limit while a compaction is pending, it waits for the compaction, so the request
// is built from the new summary.
func (e *Engine) OnEvent(ctx context.Context, s compactor.Session, invocation string, content *genai.Content, final bool) {
	e.waitIfOverHard(ctx, s, invocation, content, !final, true)
}

// waitIfOverHard adds what was stored to the session's projection of its next request. When
// running (an event of a running invocation, which has the invoke_agent span its compaction is
// linked to) and the projection passes the soft limit, it schedules a token compaction, so the
// next request is built from the new summary when it is ready (at once when Synchronous). After
// an invocation's final event the next request is the next turn's: it is projected with a user
// message as large as this turn's; a larger one that takes the request past the soft limit
// schedules the compaction in BeforeModel (BeforeRun has no invoke_agent span to link). When
// wait and the projection passes the hard limit while a compaction of the session is pending, it
// waits for the compaction (at most Compaction.Timeout).
func (e *Engine) waitIfOverHard(ctx context.Context, s compactor.Session, invocation string, added *genai.Content, wait, running bool) {
	c := e.getCompactor()
	st := e.state(s)
	st.mu.Lock()
	tokens := budget.EstimateContent(added)
	st.added += tokens
	projected, hard := st.projected(), st.limits.Hard
	var soft *compactor.Request
	switch {
	case !running:
		st.userTokens = tokens
	case c == nil:
	case wait:
		soft = st.softTrigger(s, invocation, st.runSpan(invocation, trace.SpanContextFromContext(ctx)), 0, tokens)
	default: // the invocation's final event
		soft = st.softTrigger(s, invocation, st.runSpan(invocation, trace.SpanContextFromContext(ctx)), st.userTokens, tokens)
	}
	st.mu.Unlock()
	if soft != nil {
		c.Schedule(*soft)
	}
	if !wait || c == nil || !c.Pending(s) {
		return
	}
	if hard == 0 || projected <= hard {
		return
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, c.Config().Timeout)
	defer cancel()
	done := c.Wait(wctx, s)
	e.log.Info("waited for compaction",
		zap.String("session_id", s.ID), zap.String("invocation_id", invocation),
		zap.Int("projected_tokens", projected), zap.Int("hard_limit", hard),
		zap.Bool("done", done), zap.Int64("waited_ms", time.Since(start).Milliseconds()))
}

// AfterRun runs after an invocation's last event is stored: it forgets the invocation's calls
// and schedules the sliding-window compaction. snap, when not nil, is the invocation's read of
// the session with the events it appended: the compaction works from it instead of reading the
// session again.
func (e *Engine) AfterRun(ctx context.Context, s compactor.Session, invocation string, snap compactor.Snapshot) {
	st := e.state(s)
	st.mu.Lock()
	if r := st.findRun(invocation); r != nil && r.refused {
		r.ended = true
		st.mu.Unlock()
		return
	}
	st.forgetInvocation(invocation)
	sent := st.sent.recent(time.Now())
	limits, tokenLimit := st.limits, st.tokenLimit
	link := st.runSpan(invocation, trace.SpanContextFromContext(ctx))
	st.endRun(invocation)
	st.mu.Unlock()
	if c := e.getCompactor(); c != nil && c.Config().Interval > 0 { // a sliding window is the cost policy's
		c.Schedule(compactor.Request{Session: s, Trigger: compaction.TriggerInvocations, Invocation: invocation,
			Limits: limits, TokenLimit: tokenLimit, Link: link, Sent: sent, Snapshot: snap})
	}
}

// reportCompaction logs and measures one compaction attempt: Warn when it failed or its primary
// summarizer did, Info when it compacted or its caller cancelled it, Debug otherwise.
func (e *Engine) reportCompaction(a compactor.Attempt) {
	if a.Outcome == compactor.OutcomeCompacted || a.Outcome == compactor.OutcomeNothing && a.Trigger == compaction.TriggerTokens {
		e.compacted(a.Request.Session, a.Shrunk)
	}
	if a.Request.Trigger == compaction.TriggerTokens && a.Outcome != compactor.OutcomeCoalesced {
		e.tokenCompactionDone(a.Request.Session)
	}
	ratio := 0.0
	if a.CompactedTokens > 0 {
		ratio = round3(float64(a.OriginalTokens) / float64(a.CompactedTokens))
	}
	fields := []zap.Field{
		zap.String("session_id", a.Request.Session.ID),
		zap.String("invocation_id", a.Request.Invocation),
		zap.String("trigger", string(a.Trigger)),
		zap.String("outcome", string(a.Outcome)),
		zap.Int("events_covered", a.EventsCovered),
		zap.Int("invocations_covered", a.InvocationsCovered),
		zap.Int("original_tokens", a.OriginalTokens),
		zap.Int("compacted_tokens", a.CompactedTokens),
		zap.Float64("compression_ratio", ratio),
		zap.Int64("duration_ms", a.Duration.Milliseconds()),
		zap.String("summarizer", a.Summarizer),
		zap.Bool("fallback_used", a.FallbackUsed),
	}
	if a.Reason != "" {
		fields = append(fields, zap.String("reason", a.Reason))
	}
	if a.Marker != nil {
		fields = append(fields, zap.Int("seq", a.Marker.Seq), zap.String("marker_event_id", a.MarkerID), zap.Int("keep_invocations", a.Marker.KeepInvocations),
			zap.Int("results_excerpted", len(a.Marker.ExcerptedEventIDs)))
	}
	if a.SummarizerUsage.Prompt > 0 {
		fields = append(fields, zap.Int("summarizer_prompt_tokens", a.SummarizerUsage.Prompt), zap.Int("summarizer_output_tokens", a.SummarizerUsage.Output),
			zap.Int("summarizer_cached_tokens", a.SummarizerUsage.Cached), zap.Bool("summarizer_shared_prefix", a.SharedPrefix))
	}
	if a.PrimaryErr != nil {
		kind, msg := errkind.Of(a.PrimaryErr)
		fields = append(fields, zap.String("primary_error_kind", string(kind)), zap.String("primary_error", msg))
	}
	if a.Err != nil {
		kind, msg := errkind.Of(a.Err)
		fields = append(fields, zap.String("error_kind", string(kind)), zap.String("error", msg), zap.Int("consecutive_failures", a.Failures))
	}
	switch {
	case a.Outcome == compactor.OutcomeCanceled:
		// The caller of a manual compaction gave up: it has the error; nothing is wrong.
		e.log.Info("compaction", fields...)
	case a.Outcome == compactor.OutcomeFailed, a.PrimaryErr != nil:
		// A primary summarizer that failed is news to an operator filtering on Warn (quota
		// exhausted, a key revoked) even when the fallback wrote the summary.
		e.log.Warn("compaction", fields...)
	case a.Outcome == compactor.OutcomeCompacted:
		e.log.Info("compaction", fields...)
	default:
		e.log.Debug("compaction", fields...)
	}
	e.tel.compaction(a)
}

// compacted takes a finished token compaction into the projection of the session's next
// request: it is smaller by what a stored marker took out of the view (shrunk; 0 when nothing
// was compacted), and a request that the events stored next take past the soft limit schedules
// another compaction, sized with room for them (a large tool result on its way may leave
// something to compact where the last attempt found nothing).
func (e *Engine) compacted(s compactor.Session, shrunk int) {
	st := e.state(s)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.added = max(st.added-shrunk, -st.lastEstimate)
	st.softTriggered = false
}

// tokenCompactionDone records that the token compaction the engine scheduled for the session
// ended (its report came after compacted took what it stored into the projection): the events
// and requests that come next may schedule another.
func (e *Engine) tokenCompactionDone(s compactor.Session) {
	st := e.state(s)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.tokenCompacting = false
}

// NoteAppend checks an event appended through adkctx's session wrapper for a runner that
// bypasses the plugin (with compaction on, such a runner never compacts). run is the invocation
// of the adk-go run the append was made in ("" outside a run): adk-go's runner appends with the
// invocation's context. The runner stores an invocation's user message before its plugins'
// BeforeRun, and BeforeRun before any agent's event of it; so an agent's event of a run whose
// user message was stored while the plugin has not seen the run start comes from a runner
// without the plugin. Writes outside a run — an application's notification, a crash recovery, a
// worker's message, with a new, empty or reused invocation id — are never taken for one, nor is
// anything when this process did not see the run's user message stored.
func (e *Engine) NoteAppend(s compactor.Session, run, author string) {
	if !e.CompactionOn() || run == "" {
		return
	}
	st := e.state(s)
	st.mu.Lock()
	missing := false
	switch {
	case author != "user":
		missing = slices.Contains(st.unclaimed, run)
	case !st.sawRun(run) && !slices.Contains(st.unclaimed, run):
		if len(st.unclaimed) == maxUnclaimed {
			st.unclaimed = slices.Delete(st.unclaimed, 0, 1)
		}
		st.unclaimed = append(st.unclaimed, run)
	}
	st.mu.Unlock()
	if missing {
		e.WiringError("plugin_missing", pluginMissing)
	}
}

// pluginMissing is the message of the plugin_missing wiring problem.
const pluginMissing = "compaction is configured but the adkctx plugin does not run: nothing is compacted, and neither " +
	"budgets, truncation, normalization nor AGENTS.md apply unless the model and tool callbacks are registered. " +
	"Register Hooks.Plugin() with the runner, or use Hooks.Wire"

// softTrigger returns the token compaction to schedule when the next request, projected from the
// last one sent, what was stored since and more (estimated tokens still to come), passes the
// soft limit (once per request sent): the compaction comes when the window needs it. A trigger
// earlier by one tool result at the truncation limit, so that the summary is ready in time,
// compacted at small windows, where that result is a large part of the limit, on nearly every
// call. incoming is the event being stored, which the compaction's read may not hold yet: the
// tail it keeps leaves room for it and what is still to come (compactor.Request.Reserve). None
// while a token compaction of the session runs or waits to (st.tokenCompacting): the projection
// does not know yet what it takes out. Hold st.mu.
func (st *sessionState) softTrigger(s compactor.Session, inv string, link trace.SpanContext, more, incoming int) *compactor.Request {
	if st.softTriggered || st.tokenCompacting || st.lastEstimate == 0 || st.limits.Soft == 0 ||
		st.calibration(st.lastModel).Predict(st.lastEstimate+st.added+more).Tokens <= st.limits.Soft {
		return nil
	}
	st.softTriggered, st.tokenCompacting = true, true
	return &compactor.Request{Session: s, Trigger: compaction.TriggerTokens, Invocation: inv, Live: true,
		Limits: st.limits, TokenLimit: st.tokenLimit, Link: link, Sent: st.sent.recent(time.Now()), Reserve: incoming + more}
}
