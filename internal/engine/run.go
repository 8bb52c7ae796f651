package engine

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/compactor"
	"github.com/adkctx/adkctx/internal/errkind"
)

// BeforeRun runs when an invocation starts (its user message is stored). It restores the
// session's state from its events when this process has none, checks that the session is read
// through adkctx's view, and, when the request it will build is projected over the hard limit
// while a compaction of the session is pending, waits for that compaction (at most
// Compaction.Timeout) so the request is built from the new summary.
func (e *Engine) BeforeRun(ctx context.Context, s compactor.Session, invocation string, userMessage *genai.Content, viewed bool, events func() []compaction.Event) {
	e.Restore(s, invocation, events)
	if e.CompactionOn() && !viewed {
		e.WiringError("view_missing", "compaction is configured but the runner's session service is not wrapped: its model reads "+
			"every stored event, whatever was compacted. Wrap it with Hooks.SessionService, or use Hooks.Wire")
	}
	e.waitIfOverHard(ctx, s, invocation, userMessage, true, false)
}

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
	st := e.state(s)
	st.mu.Lock()
	tokens := budget.EstimateContent(added)
	st.added += tokens
	projected, hard := st.projected(), st.limits.Hard
	var soft *compactor.Request
	switch {
	case !running:
		st.userTokens = tokens
	case wait:
		soft = st.softTrigger(s, invocation, st.runSpan(invocation, trace.SpanContextFromContext(ctx)), 0)
	default: // the invocation's final event
		soft = st.softTrigger(s, invocation, st.runSpan(invocation, trace.SpanContextFromContext(ctx)), st.userTokens)
	}
	st.mu.Unlock()
	c := e.getCompactor()
	if c != nil && soft != nil {
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
	st.forgetInvocation(invocation)
	sent := st.sent.recent(time.Now())
	limits, tokenLimit := st.limits, st.tokenLimit
	link := st.runSpan(invocation, trace.SpanContextFromContext(ctx))
	st.endRun(invocation)
	st.mu.Unlock()
	if c := e.getCompactor(); c != nil {
		c.Schedule(compactor.Request{Session: s, Trigger: compaction.TriggerInvocations, Invocation: invocation,
			Limits: limits, TokenLimit: tokenLimit, Link: link, Sent: sent, Snapshot: snap})
	}
}

// reportCompaction logs and measures one compaction attempt: Warn when it failed or its primary
// summarizer did, Info when it compacted, Debug otherwise.
func (e *Engine) reportCompaction(a compactor.Attempt) {
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

// NoteAppend checks, when an invocation's event is stored through adkctx's session wrapper,
// that the plugin saw the invocation start: with compaction on, a runner without the plugin
// never compacts.
func (e *Engine) NoteAppend(s compactor.Session, invocation, author string) {
	if !e.CompactionOn() || author == "user" || invocation == "" {
		return
	}
	st := e.state(s)
	st.mu.Lock()
	ok := st.sawRun(invocation)
	st.mu.Unlock()
	if !ok {
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
// call. Hold st.mu.
func (st *sessionState) softTrigger(s compactor.Session, inv string, link trace.SpanContext, more int) *compactor.Request {
	if st.softTriggered || st.lastEstimate == 0 || st.limits.Soft == 0 ||
		st.calibration(st.lastModel).Predict(st.lastEstimate+st.added+more).Tokens <= st.limits.Soft {
		return nil
	}
	st.softTriggered = true
	return &compactor.Request{Session: s, Trigger: compaction.TriggerTokens, Invocation: inv, Live: true,
		Limits: st.limits, TokenLimit: st.tokenLimit, Link: link, Sent: st.sent.recent(time.Now())}
}
