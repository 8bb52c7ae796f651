package engine

import (
	"context"
	"slices"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/truncate"
)

// chainReport is what the request processor chain did to one request: every step's report, and
// the request's prints as sent and before the budget's trim.
type chainReport struct {
	instructionBytes int
	recallOutputs    bool // req declared read_saved_output
	cut              request.TruncateReport
	norm             request.NormalizeReport
	decision         request.BudgetDecision
	err              error // the budget's refusal
	// print is the request as sent, sized before the budget's trim (the next request of the
	// stream extends that one); reused the tokens of its prefix the previous request held.
	print, sized prefixPrint
	reused       int
}

// runChain runs the request processors on req, in this order: the recall tools' notes (when
// req declares them), AGENTS.md instructions (the system instruction), truncation of function
// responses in history, call/response normalization, budget. The contents are measured once (request.Measures): a content the
// stream's previous request held at the same place with the same print keeps its size; a step
// that changes a content replaces it, and the new one is measured when asked. The steps never
// call back into the engine; with a check set (tests), every content is checked after each step
// against what was measured of it.
func (e *Engine) runChain(ctx context.Context, c Call, sessionID string, state StateReader, req *request.LLMRequest, in callInput) chainReport {
	var r chainReport
	r.recallOutputs = e.recallNotes(req)
	r.instructionBytes = e.injectInstructions(ctx, sessionID, state, req)
	// What the stream's previous request held unchanged was checked by the steps then: only
	// what is new is truncated.
	incoming := req.Contents
	base := measure(incoming, in.prevSized)
	m := request.NewMeasures(incoming, base, e.stepCheck != nil)
	check := func(step string) {
		if e.stepCheck != nil {
			e.stepCheck(step, m.Check(req.Contents))
		}
	}
	check("instructions")
	r.cut = truncateFrom(req, unchangedPrefix(base, in.prev), e.cfg.Truncation)
	check("truncate")
	r.norm = request.Normalize(req)
	check("normalize")
	r.sized.contents, r.sized.sizes = m.Prints(req.Contents)
	untrimmed := req.Contents
	r.decision, r.err = request.EnforceBudget(req, request.BudgetInput{
		Limits:               in.limits,
		Predict:              in.cal.Predict,
		Pinned:               compaction.IsSummary,
		Measures:             m,
		PreviousTurnsDropped: in.prevDrop,
	})
	check("budget")
	r.print = prefixPrint{fixed: fixedPrint(req), fixedTokens: r.decision.FixedTokens, contents: r.sized.contents, sizes: r.sized.sizes}
	if !sameContents(req.Contents, untrimmed) {
		r.print.contents, r.print.sizes = m.Prints(req.Contents)
	}
	r.reused = r.print.reused(in.prev)
	return r
}

// sameContents reports whether a and b hold the same contents (by identity), in order.
func sameContents(a, b []*genai.Content) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b))
}

// measure fingerprints contents: a content whose print the stream's previous request (prev,
// before its trim) held at the same place takes its size there; the others are estimated when
// asked (Tokens < 0).
func measure(contents []*genai.Content, prev prefixPrint) []request.Measure {
	out := make([]request.Measure, len(contents))
	for i, c := range contents {
		p := request.Fingerprint(c)
		out[i] = request.Measure{Print: p, Tokens: -1}
		if i < len(prev.contents) && prev.contents[i] == p {
			out[i].Tokens = prev.sizes[i]
		}
	}
	return out
}

// truncateFrom applies the truncation rules to the function responses of req.Contents[from:]
// (copy-on-write, see request.TruncateFunctionResponses).
func truncateFrom(req *request.LLMRequest, from int, cfg truncate.Config) request.TruncateReport {
	tail := &request.LLMRequest{Contents: req.Contents[from:]}
	cut := request.TruncateFunctionResponses(tail, cfg)
	if cut.Responses > 0 {
		req.Contents = append(slices.Clip(req.Contents[:from]), tail.Contents...)
	}
	return cut
}
