package engine

import (
	"context"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/processors/request"
)

// requestSteps are BeforeModel's steps, in the order they run. Each lives in its own file
// (step_<name>.go) with its report; adding a step is that file, its test and a line here. The
// budget runs last: it sizes the request as it is sent, so no step may follow it, and its report
// leads the "budget decision" entry (runChain).
var requestSteps = [...]step{
	{"recall", (*Engine).recallStep},
	{"truncate", (*Engine).truncateStep},
	{"normalize", (*Engine).normalizeStep},
	{"instructions", (*Engine).instructionsStep},
	{"budget", (*Engine).budgetStep},
}

// step is one step of the request chain. Its run changes c.req and returns what it did (nil:
// nothing to report). A step never changes a content in place: what it changes it replaces, so
// the measures taken of a content stay true for it (steps.Measures).
type step struct {
	name string
	run  func(e *Engine, ctx context.Context, c *chain) stepReport
}

// stepReport is what one step did to a request, as the call's "budget decision" log entry,
// adkctx.budget_decision span event and metrics report it. Each method appends the step's own
// part and nothing else; a part the step does not report is returned unchanged.
type stepReport interface {
	// logFields appends the step's fields of the log entry.
	logFields(fields []zap.Field) []zap.Field
	// spanAttrs appends the step's attributes of the span event.
	spanAttrs(attrs []attribute.KeyValue) []attribute.KeyValue
	// record records the step's metric points.
	record(t *telemetry)
}

// chain is what the steps of one request share: the request, what the call starts from, the
// contents' measures, and what BeforeModel acts on once the steps ran.
type chain struct {
	sessionID string
	state     StateReader
	req       *request.LLMRequest
	in        callInput
	check     bool // tests: measure so that Check can verify (Engine.stepCheck)

	m    *steps.Measures // nil until a step asks for it (measures)
	base []steps.Measure // the measures m started from, aligned with the contents then

	// Set by the steps, for BeforeModel.
	agents struct { // the AGENTS.md text, loaded once (Engine.agentsMD)
		loaded, ok bool
		merged     instructions.Merged
	}
	recallOutputs  bool          // the recall step: the agent declares read_saved_output
	withheldTokens int           // the recall step: the estimate of the declarations it withheld
	budget         budgetReport  // the budget step's decision
	print, sized   prefixPrint   // the budget step: the request as sent, and before its trim
	err            error         // the budget step's refusal
	reports        []stepReport  // in the entry's order (see runChain); nil: nothing reported
	buf            [8]stepReport // reports' backing array for up to 8 steps
}

// runChain runs steps on req (BeforeModel runs requestSteps) and returns what they share and
// report. The reports are kept in the order the decision reports them: the last step's (the
// budget's, the decision itself) first, then the others in the order they ran.
//
// The contents are measured once, when a step first asks (chain.measures): a content the
// stream's previous request held at the same place with the same print keeps its size; a step
// that replaces a content replaces its measure, and the new content is measured when asked. The
// steps never call back into the engine's state; with a check set (tests), every content is
// checked after each step against what was measured of it.
func (e *Engine) runChain(ctx context.Context, steps []step, sessionID string, state StateReader, req *request.LLMRequest, in callInput) *chain {
	c := &chain{sessionID: sessionID, state: state, req: req, in: in, check: e.stepCheck != nil}
	c.reports = c.buf[:0]
	for _, s := range steps {
		c.reports = append(c.reports, s.run(e, ctx, c))
		if e.stepCheck != nil {
			var err error
			if c.m != nil {
				err = c.m.Check(c.req.Contents)
			}
			e.stepCheck(s.name, err)
		}
	}
	if n := len(c.reports); n > 1 {
		last := c.reports[n-1]
		copy(c.reports[1:], c.reports[:n-1])
		c.reports[0] = last
	}
	return c
}

// measures returns the measures of the request's contents, measuring them the first time: the
// contents as they are then (after the steps that ran before) are the base, each taking its size
// from the stream's previous request (before its trim) where that held the same print at the
// same place.
func (c *chain) measures() *steps.Measures {
	if c.m == nil {
		c.base = measure(c.req.Contents, c.in.prevSized)
		c.m = steps.NewMeasures(c.req.Contents, c.base, c.check)
	}
	return c.m
}

// sameContents reports whether a and b hold the same contents (by identity), in order.
func sameContents(a, b []*genai.Content) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b))
}

// measure fingerprints contents: a content whose print the stream's previous request (prev,
// before its trim) held at the same place takes its size there; the others are estimated when
// asked (Tokens < 0).
func measure(contents []*genai.Content, prev prefixPrint) []steps.Measure {
	out := make([]steps.Measure, len(contents))
	for i, c := range contents {
		p := steps.Fingerprint(c)
		out[i] = steps.Measure{Print: p, Tokens: -1}
		if i < len(prev.contents) && prev.contents[i] == p {
			out[i].Tokens = prev.sizes[i]
		}
	}
	return out
}
