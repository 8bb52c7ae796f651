package engine

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/calibrate"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/glue/internal/tally"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
)

// CallRecordKey is the CustomMetadata key of the record adkctx puts on every model response
// event: the call's sequence number, our estimate of its request and the model. With the
// reported usage beside it, it lets any process rebuild a session's calibration and accounting
// from its stored events.
const CallRecordKey = "_adkctx_call"

// BeforeModel runs the request chain on req (requestSteps, see runChain) and writes one
// "budget decision" log entry, span event and set of metric points for it; it returns a
// *request.BudgetExceededError when the request cannot fit (the model is then not called).
//
// origin identifies the adk-go request req was read from (a comparable value, such as a
// weak.Pointer to it): the plugin and an agent callback may both see one request, which is
// processed once.
func (e *Engine) BeforeModel(ctx context.Context, c Call, state StateReader, req *request.LLMRequest, origin any) error {
	return e.beforeModel(ctx, c, state, req, origin, requestSteps[:])
}

// beforeModel is BeforeModel with the chain's steps (tests add some).
func (e *Engine) beforeModel(ctx context.Context, c Call, state StateReader, req *request.LLMRequest, origin any, steps []step) error {
	if req == nil {
		return nil
	}
	s := keyOf(c)
	st := e.state(s)
	in, ok := e.startCall(ctx, st, c, req, origin)
	if !ok {
		return nil // the plugin and the agent callback are both registered: processed once
	}
	switch {
	case !e.CompactionOn():
	case e.getCompactor() == nil:
		e.WiringError("not_wired", notWired) // also without the plugin: not wired covers it
	case !in.plugin:
		e.WiringError("plugin_missing", pluginMissing)
	}
	r := e.runChain(ctx, steps, s.ID, state, req, in)
	if r.recallOutputs {
		e.checkRecallStore(s)
	}

	d := r.budget.decision
	sent := e.sentCopy(req, r.err)
	cp := e.getCompactor()
	st.mu.Lock()
	in.call.model, in.call.seq, in.call.recallOutputs = req.Model, in.seq, r.recallOutputs
	if r.err == nil {
		in.call.estimate, in.call.predicted = d.FinalEstimatedTokens, d.FinalTokens
		in.stream.prefix, in.stream.sized, in.stream.turnsDrop = r.print, r.sized, d.TurnsDropped
	}
	prevSent := st.swapSent(sent, r.print, in.limits.Usable)
	tokenLimit := e.track(st, req.Model, in.limits, d, r.err == nil, r.withheldTokens)
	// A request over the soft limit built while a token compaction runs was built without its
	// summary: that compaction is the one it needs (the request after it decides on another).
	schedule := cp != nil && d.OverSoft && !st.tokenCompacting
	if schedule {
		st.tokenCompacting = true
	}
	st.mu.Unlock()

	if schedule {
		cp.Schedule(compactor.Request{Session: s, Trigger: compaction.TriggerTokens, Invocation: c.InvocationID(),
			Live: true, Limits: in.limits, TokenLimit: tokenLimit, Link: trace.SpanContextFromContext(ctx), Sent: prevSent})
	}
	e.report(ctx, s.ID, c, in.seq, r)
	return r.err
}

// callInput is what a model call starts from: the session's state for it, read under its lock.
type callInput struct {
	call   *call
	stream *stream
	seq    int
	limits budget.Limits
	cal    calibrate.Calibration
	plugin bool // the plugin saw the invocation start
	// prevDrop, prev and prevSized are the stream's previous request: the turns it left out, its
	// prints as sent and before the budget's trim.
	prevDrop        int
	prev, prevSized prefixPrint
}

// startCall numbers the call and reads what it needs of the session's state; false when req
// (origin) was already processed.
func (e *Engine) startCall(ctx context.Context, st *sessionState, c Call, req *request.LLMRequest, origin any) (callInput, bool) {
	limits := e.Limits(req.Model)
	st.mu.Lock()
	defer st.mu.Unlock()
	cl := st.call(callKey{c.InvocationID(), c.Branch(), c.AgentName()})
	if origin != nil && cl.lastRequest == origin {
		return callInput{}, false
	}
	cl.lastRequest = origin
	st.known = true
	st.seq++
	st.limits = limits
	sm := st.stream(streamKey{c.Branch(), c.AgentName()})
	st.noteSpan(c.InvocationID(), trace.SpanContextFromContext(ctx))
	return callInput{call: cl, stream: sm, seq: st.seq, limits: limits, cal: *st.calibration(req.Model),
		plugin: st.sawRun(c.InvocationID()), prevDrop: sm.turnsDrop, prev: sm.prefix, prevSized: sm.sized}, true
}

// report writes the call's "budget decision" log entry (its fields built only when it is
// written), span event and metric points: where the call runs, then each step's report in the
// chain's order, then the refusal.
func (e *Engine) report(ctx context.Context, sessionID string, c Call, seq int, r *chain) {
	e.tel.decision(ctx, r.reports)
	level := zap.InfoLevel
	if r.err != nil {
		level = zap.WarnLevel
	}
	ce := e.log.Check(level, "budget decision")
	if ce == nil {
		return
	}
	fields := make([]zap.Field, 0, 48)
	fields = append(fields,
		zap.String("session_id", sessionID),
		zap.String("invocation_id", c.InvocationID()),
		zap.String("agent", c.AgentName()),
		zap.Int("call_seq", seq),
	)
	for _, rep := range r.reports {
		if rep != nil {
			fields = rep.logFields(fields)
		}
	}
	if r.err != nil {
		kind, msg := errkind.Of(r.err)
		fields = append(fields, zap.String("error_kind", string(kind)), zap.String("error", msg))
	}
	ce.Write(fields...)
}

// swapSent keeps sent (nil: nothing to keep), whose contents p prints, in the session's log of
// sent requests (usable: the model's usable input) and returns the requests kept before it,
// newest first: a compaction triggered now gets those, since sent is not sent yet (later
// callbacks may still change it) and may not be in the provider's cache. Hold st.mu.
func (st *sessionState) swapSent(sent *request.LLMRequest, p prefixPrint, usable int) []*request.LLMRequest {
	now := time.Now()
	prev := st.sent.recent(now)
	if sent == nil {
		return prev
	}
	st.sent.add(sent, p.contents, p.sizes, usable, now)
	st.sent.armExpiry(&st.mu)
	return prev
}

// sentCopy is what a summary needs of a request about to be sent (refused, or a summarizer that
// never sends it: nil): its model, system instruction, tools and contents (the slice copied, the
// contents shared: adk-go builds fresh contents for every request and adkctx's steps never
// change one in place; the summary reads them once the request was sent). Whether the summary
// uses it is the LLMSummarizer's decision (model, template, NoSharedPrefix).
func (e *Engine) sentCopy(req *request.LLMRequest, refused error) *request.LLMRequest {
	if refused != nil || !e.keepSent.Load() {
		return nil
	}
	out := &request.LLMRequest{Model: req.Model, Contents: slices.Clone(req.Contents)}
	if req.Config != nil {
		out.Config = &genai.GenerateContentConfig{SystemInstruction: req.Config.SystemInstruction, Tools: req.Config.Tools}
	}
	return out
}

// track records decision d in the session's state (st.mu held) and returns the soft limit in the
// compactor's unit (estimated tokens of the history alone). What is stored next is added to the
// projection of the next request (waitIfOverHard), which schedules the token compaction once
// that request passes the soft limit. The limit counts the recall tools' declarations the
// request withheld (withheld, estimated): the summary a compaction stores gives them a use, so
// the requests after it declare them, and its raw tail is sized for those requests.
func (e *Engine) track(st *sessionState, model string, limits budget.Limits, d steps.BudgetDecision, sent bool, withheld int) (tokenLimit int) {
	if sent {
		// The next request is built from the view, not from this one as trimmed: it is
		// projected from the request before the budget's cuts.
		st.lastEstimate, st.lastModel, st.added, st.softTriggered = d.EstimatedTokens, model, 0, false
	}
	st.tokenLimit = max(int(float64(limits.Soft)/calibrationFactor(d))-d.FixedTokens-withheld, 1)
	return st.tokenLimit
}

// AfterModel records a final response's usage: calibration, accounting, a "model usage" log
// entry, and the call record on the response (stored with its event).
func (e *Engine) AfterModel(ctx context.Context, c Call, resp *response.LLMResponse) {
	usage, ok := steps.UsageOf(resp)
	if !ok {
		return
	}
	s := keyOf(c)
	st := e.state(s)
	st.mu.Lock()
	cl := st.call(callKey{c.InvocationID(), c.Branch(), c.AgentName()})
	est, predicted, model, seq := cl.estimate, cl.predicted, cl.model, cl.seq
	cl.estimate = 0 // one observation per request, even if two callbacks see the response
	var rec callRecord
	if est > 0 {
		cal := st.calibration(model)
		cal.Observe(est, usage.Prompt)
		st.tally.Add(c.InvocationID(), usage)
		calCopy, tallyCopy := *cal, st.tally
		rec = callRecord{Seq: seq, Estimate: est, Model: model, Calibration: &calCopy, Tally: &tallyCopy}
	}
	st.mu.Unlock()
	if est == 0 {
		return
	}
	md := maps.Clone(resp.CustomMetadata)
	if md == nil {
		md = map[string]any{}
	}
	md[CallRecordKey] = rec.encode()
	resp.CustomMetadata = md
	if ce := e.log.Check(zap.InfoLevel, "model usage"); ce != nil {
		ce.Write(
			zap.String("session_id", s.ID),
			zap.String("invocation_id", c.InvocationID()),
			zap.Int("call_seq", seq),
			zap.String("model", model),
			zap.Int("estimated_tokens", est),
			zap.Int("predicted_tokens", predicted),
			zap.Int("prompt_tokens", usage.Prompt),
			zap.Int("prediction_error", usage.Prompt-predicted),
			zap.Int("output_tokens", usage.Output),
			zap.Int("cached_tokens", usage.Cached),
			zap.Int("thought_tokens", usage.Thought),
		)
	}
	e.tel.usage(ctx, model, usage)
}

// callRecord is what adkctx stores with each model response (CustomMetadata[CallRecordKey]): the
// call's sequence number, our estimate of its request, the model, and the session's calibration
// (of that model) and accounting after the call, so that a process that reads only the newest
// part of a session (or none of the calls before) decides as one that saw every call.
type callRecord struct {
	Seq         int                    `json:"call_seq"`
	Estimate    int                    `json:"estimated_tokens"`
	Model       string                 `json:"model"`
	Calibration *calibrate.Calibration `json:"calibration,omitempty"`
	Tally       *tally.Tally           `json:"tally,omitempty"`
}

// encode returns the record in the shape a database round trip produces (float64 numbers,
// nested maps), so in-memory and database sessions hold the same value.
func (r callRecord) encode() map[string]any {
	b, err := json.Marshal(r)
	var out map[string]any
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil { // plain numbers and strings: does not happen
		return map[string]any{"call_seq": r.Seq, "estimated_tokens": r.Estimate, "model": r.Model}
	}
	return out
}

// readCallRecord returns the record an event carries; false when it has none that decodes.
func readCallRecord(e *compaction.Event) (callRecord, bool) {
	raw, ok := e.Metadata[CallRecordKey]
	if !ok || raw == nil {
		return callRecord{}, false
	}
	b, err := json.Marshal(raw)
	var r callRecord
	if err != nil || json.Unmarshal(b, &r) != nil || r.Seq <= 0 {
		return callRecord{}, false
	}
	return r, true
}

// callRecordModel returns the model an event's call record names, read without decoding the
// record; false when it holds no record of that shape.
func callRecordModel(e *compaction.Event) (string, bool) {
	m, ok := e.Metadata[CallRecordKey].(map[string]any)
	if !ok {
		return "", false
	}
	model, ok := m["model"].(string)
	return model, ok
}

// Restore rebuilds a session's calibration and accounting from its stored events when this
// process did not see every model call stored in them: a new process, an evicted session, or a
// replica behind a load balancer that is not sticky (another process served the last turns).
// The newest call record holds the session's accounting and its model's calibration after that
// call (the newest record of each other model, its calibration), so the events a bounded read
// returns are enough: every process makes the same decisions. It also notes that the plugin
// runs.
func (e *Engine) Restore(s compactor.Session, invocation string, events func() []compaction.Event) {
	e.restore(s, invocation, events, false)
}

// RestoreUnknown restores a session's accounting as Restore does, unless this process knows it
// by the time events are read: a run of the session that started meanwhile, or a model call it
// served, is newer than a read that began before it (Usage's), which would set back the call
// numbers and the accounting the run's next calls store.
func (e *Engine) RestoreUnknown(s compactor.Session, events func() []compaction.Event) {
	e.restore(s, "", events, true)
}

func (e *Engine) restore(s compactor.Session, invocation string, events func() []compaction.Event, unknownOnly bool) {
	evs := events()
	var newest []callRecord // newest first, one per model
	seen := map[string]bool{}
	added := 0 // what was stored after the newest call: part of the next request
	for i := len(evs) - 1; i >= 0; i-- {
		if model, ok := callRecordModel(&evs[i]); ok && seen[model] {
			continue // an older call of a model whose newest record is read: not decoded
		}
		rec, ok := readCallRecord(&evs[i])
		if len(newest) == 0 && !ok {
			added += budget.EstimateContent(evs[i].Content)
		}
		if ok && !seen[rec.Model] {
			seen[rec.Model] = true
			newest = append(newest, rec)
		}
	}
	st := e.state(s)
	st.mu.Lock()
	defer st.mu.Unlock()
	if unknownOnly && (st.known || len(newest) == 0) {
		return // a run got here first, or there is no accounting to restore: still unknown
	}
	st.noteRun(invocation)
	st.known = true
	if len(newest) == 0 || st.seq == newest[0].Seq {
		return // no call stored, or this process saw every one
	}
	st.calib, st.tally, st.seq = map[string]*calibrate.Calibration{}, tally.Tally{}, newest[0].Seq
	st.softTriggered = false
	st.limits = e.Limits(newest[0].Model)
	st.lastEstimate, st.lastModel, st.added = newest[0].Estimate, newest[0].Model, added
	if newest[0].Tally != nil {
		st.tally = *newest[0].Tally
	}
	for _, rec := range newest {
		if rec.Calibration != nil {
			*st.calibration(rec.Model) = *rec.Calibration
		}
	}
}

// noteRun records that the plugin saw invocation start. Hold st.mu.
func (st *sessionState) noteRun(inv string) {
	if inv == "" {
		return
	}
	st.unclaimed = slices.DeleteFunc(st.unclaimed, func(id string) bool { return id == inv })
	if st.sawRun(inv) {
		return
	}
	st.runs = append(st.runs, run{id: inv})
	if len(st.runs) <= maxRunsInSession {
		return
	}
	// Forget the oldest invocation that ended. One still running is forgotten only past
	// maxRunningInSession: its model call would be taken for a runner without the plugin.
	i := slices.IndexFunc(st.runs, func(r run) bool { return r.ended })
	if i < 0 {
		if len(st.runs) <= maxRunningInSession {
			return
		}
		i = 0
	}
	st.runs = slices.Delete(st.runs, i, i+1)
}

// endRun records that the invocation ended (AfterRun). Hold st.mu.
func (st *sessionState) endRun(inv string) {
	if r := st.findRun(inv); r != nil {
		r.ended = true
	}
}

// sawRun reports whether the plugin saw invocation start. Hold st.mu.
func (st *sessionState) sawRun(inv string) bool { return st.findRun(inv) != nil }

func (st *sessionState) findRun(inv string) *run {
	for i := range st.runs {
		if st.runs[i].id == inv {
			return &st.runs[i]
		}
	}
	return nil
}

// noteSpan remembers the span current in the invocation's first model call (adk-go's
// invoke_agent span): AfterRun runs outside it, and its compaction is linked to it. Hold st.mu.
func (st *sessionState) noteSpan(inv string, sc trace.SpanContext) {
	if r := st.findRun(inv); r != nil && !r.span.IsValid() {
		r.span = sc
	}
}

// runSpan returns the span noted for the invocation, or fallback. Hold st.mu.
func (st *sessionState) runSpan(inv string, fallback trace.SpanContext) trace.SpanContext {
	if r := st.findRun(inv); r != nil && r.span.IsValid() {
		return r.span
	}
	return fallback
}

// projected predicts the next request's size, with the safety margin the budget will add: the
// last request plus the events stored since (added): the same prediction the budget makes (the margin of a
// prediction grows with what is new since the last reported count), so a turn waits for a
// pending compaction exactly when the budget would otherwise trim. Hold st.mu.
func (st *sessionState) projected() int {
	if st.lastEstimate == 0 {
		return 0
	}
	p := st.calibration(st.lastModel).Predict(st.lastEstimate + st.added)
	return p.Tokens + p.Margin
}
