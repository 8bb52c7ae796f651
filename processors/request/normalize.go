package request

import (
	"slices"

	"google.golang.org/genai"
)

// syntheticError is the "error" value of the response Normalize gives a call that has none.
const syntheticError = "aborted: no result is available for this call (it was interrupted or its result was lost)"

// NormalizeReport says what Normalize changed. Names are function names only (never arguments
// or results), safe to log.
type NormalizeReport struct {
	// SyntheticResponses counts the responses synthesized for calls that had none.
	SyntheticResponses int
	// OrphansRemoved counts the responses removed because no call of the model content they
	// follow matched them (including duplicates).
	OrphansRemoved int
	// Reordered counts the response contents whose responses were put back in call order.
	Reordered int
	// ContentsInserted counts the user contents inserted to hold synthetic responses.
	ContentsInserted int
	// ContentsDropped counts nil contents and contents left empty after removing orphans.
	ContentsDropped int
	// ContentsMerged counts the response contents merged into the one before them: the
	// responses of one call turn given in several contents (parallel calls answered one by one).
	ContentsMerged int
	// SyntheticNames and OrphanNames list the function names of the synthesized and removed
	// responses, in history order.
	SyntheticNames []string
	OrphanNames    []string
}

// Normalize makes the function calls and responses in req.Contents valid for the model:
//
//   - every content with function calls is followed by a content holding exactly one response
//     per call, in call order. A missing response is synthesized (same ID and Name as the call,
//     Response {"error": "aborted: no result is available for this call (it was interrupted or
//     its result was lost)"}) and added to the following response content, or to a new user
//     content inserted right after the calls;
//   - the responses of one call turn may come in several contents right after it (contents
//     holding responses and no calls, as when parallel calls are answered one by one, in any
//     order): they are merged into one content, paired as if it held all their parts in order;
//   - a response that no call of the call content it follows matches is an orphan and is
//     removed; a content left without parts is dropped. Nil contents are dropped;
//   - calls and responses pair by ID (and name) when the call's ID is set; otherwise (adk-go
//     blanks its own "adk-" ids in requests) the k-th blank-ID response named X answers the k-th
//     unanswered call named X;
//   - other parts (text, ...) of those contents are kept. A response content that has to be
//     rebuilt holds the responses first, in call order, then its other parts in their order.
//
// Normalize is deterministic and idempotent (a second run changes nothing) and copy-on-write:
// changed contents are new values in a new req.Contents slice; no Content, Part or map of the
// original request is modified. It runs in time linear in the number of parts (pairing inside
// one content is quadratic in its number of parallel calls).
func Normalize(req *LLMRequest) NormalizeReport {
	var rep NormalizeReport
	if req == nil || len(req.Contents) == 0 {
		return rep
	}
	n := &normalizer{in: req.Contents, rep: &rep, countedAt: -1}
	if slices.Contains(n.in, nil) {
		kept := make([]*genai.Content, 0, len(n.in))
		for _, c := range n.in {
			if c != nil {
				kept = append(kept, c)
			}
		}
		rep.ContentsDropped += len(n.in) - len(kept)
		n.in = kept
		n.out = make([]*genai.Content, 0, len(kept)+1)
		n.dirty = true
	}
	n.run()
	if n.dirty {
		req.Contents = n.out
	}
	return rep
}

type normalizer struct {
	in    []*genai.Content
	out   []*genai.Content // valid only when dirty; otherwise the output so far is in[:i]
	dirty bool
	rep   *NormalizeReport
	calls []*genai.FunctionCall // scratch
	// countedAt is the index of in whose function parts were counted last (nCalls, nResps):
	// the scan for a turn's responses counts the content after them, which run visits next.
	countedAt      int
	nCalls, nResps int
}

// counts returns countFunctionParts(n.in[i]).
func (n *normalizer) counts(i int) (calls, resps int) {
	if i != n.countedAt {
		n.countedAt = i
		n.nCalls, n.nResps = countFunctionParts(n.in[i])
	}
	return n.nCalls, n.nResps
}

// keep passes in[i] through unchanged.
func (n *normalizer) keep(i int) {
	if n.dirty {
		n.out = append(n.out, n.in[i])
	}
}

// change materializes the output before in[i] (all of in[:i] kept as is) and marks it dirty.
func (n *normalizer) change(i int) {
	if !n.dirty {
		n.out = make([]*genai.Content, 0, len(n.in)+2)
		n.out = append(n.out, n.in[:i]...)
		n.dirty = true
	}
}

// countFunctionParts counts the function call and function response parts of c (nil: none).
func countFunctionParts(c *genai.Content) (calls, resps int) {
	if c == nil {
		return 0, 0
	}
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		if p.FunctionCall != nil {
			calls++
		}
		if p.FunctionResponse != nil {
			resps++
		}
	}
	return calls, resps
}

func (n *normalizer) run() {
	for i := 0; i < len(n.in); i++ {
		c := n.in[i]
		nCalls, nResps := n.counts(i)
		if nCalls == 0 {
			if nResps == 0 {
				n.keep(i)
				continue
			}
			// Responses not preceded by their calls: orphans.
			n.change(i)
			if nc := n.withoutResponses(c); nc != nil {
				n.out = append(n.out, nc)
			} else {
				n.rep.ContentsDropped++
			}
			continue
		}

		// A content with calls. Responses inside it cannot answer anything.
		if nResps > 0 {
			n.change(i)
			n.out = append(n.out, n.withoutResponses(c))
		} else {
			n.keep(i)
		}
		n.calls = n.calls[:0]
		for _, p := range c.Parts {
			if p != nil && p.FunctionCall != nil {
				n.calls = append(n.calls, p.FunctionCall)
			}
		}

		switch end := n.responseRunEnd(i + 1); {
		case end == i+2: // one response content
			i++
			if rc, changed := n.pair(n.in[i]); changed {
				n.change(i)
				n.out = append(n.out, rc)
			} else {
				n.keep(i)
			}
		case end > i+2: // several (parallel calls answered one by one): given as one
			n.change(i + 1)
			n.out = append(n.out, n.merge(n.in[i+1:end]))
			i = end - 1
		default: // none: insert one with synthetic responses
			n.change(i + 1)
			parts := make([]*genai.Part, 0, len(n.calls))
			for _, call := range n.calls {
				parts = append(parts, n.synthetic(call))
			}
			n.out = append(n.out, &genai.Content{Role: genai.RoleUser, Parts: parts})
			n.rep.ContentsInserted++
		}
	}
}

// responseRunEnd returns the end of the run of contents starting at in[start] that hold
// responses and no calls: the responses of the call turn right before start (start when there
// are none).
func (n *normalizer) responseRunEnd(start int) int {
	end := start
	for end < len(n.in) {
		if nc, nr := n.counts(end); nc > 0 || nr == 0 {
			break
		}
		end++
	}
	return end
}

// merge pairs the responses of several contents (run) with n.calls as if they were one content
// holding all their parts in order, and returns that content, rebuilt as pair rebuilds one.
func (n *normalizer) merge(run []*genai.Content) *genai.Content {
	all := &genai.Content{Role: run[0].Role}
	if all.Role == "" {
		all.Role = genai.RoleUser
	}
	for _, c := range run {
		all.Parts = append(all.Parts, c.Parts...)
	}
	n.rep.ContentsMerged += len(run) - 1
	rc, _ := n.pair(all)
	return rc
}

func (n *normalizer) synthetic(call *genai.FunctionCall) *genai.Part {
	n.rep.SyntheticResponses++
	n.rep.SyntheticNames = append(n.rep.SyntheticNames, call.Name)
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{
		ID:       call.ID,
		Name:     call.Name,
		Response: map[string]any{"error": syntheticError},
	}}
}

// withoutResponses returns a copy of c without its function responses (counted as orphans) and
// nil parts, or nil if nothing is left.
func (n *normalizer) withoutResponses(c *genai.Content) *genai.Content {
	parts := make([]*genai.Part, 0, len(c.Parts))
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.FunctionResponse != nil:
			n.rep.OrphansRemoved++
			n.rep.OrphanNames = append(n.rep.OrphanNames, p.FunctionResponse.Name)
			if p.FunctionCall != nil { // a malformed part carrying both: keep the call
				np := *p
				np.FunctionResponse = nil
				parts = append(parts, &np)
			}
		default:
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	nc := *c
	nc.Parts = parts
	return &nc
}

// pair matches the responses of rc with n.calls and returns rc itself if it is already valid,
// otherwise a rebuilt copy.
func (n *normalizer) pair(rc *genai.Content) (*genai.Content, bool) {
	var respBuf [8]int
	resps := respBuf[:0] // indices in rc.Parts of the responses
	hasNil := false
	for k, p := range rc.Parts {
		if p == nil {
			hasNil = true
			continue
		}
		if p.FunctionResponse != nil {
			resps = append(resps, k)
		}
	}
	// Already valid: one response per call, in call order. Checking this first (rather than only
	// after matching) makes Normalize idempotent even when ids repeat.
	if !hasNil && len(resps) == len(n.calls) {
		inOrder := true
		for j, call := range n.calls {
			if !answers(rc.Parts[resps[j]].FunctionResponse, call) {
				inOrder = false
				break
			}
		}
		if inOrder {
			return rc, false
		}
	}

	var matchBuf [8]int
	var usedBuf [8]bool
	match, used := n.match(rc, resps, matchBuf[:0], usedBuf[:0])

	valid, ordered := !hasNil, true
	last := -1
	for _, r := range match {
		if r < 0 {
			valid = false
			continue
		}
		if r < last {
			ordered = false
		}
		last = r
	}
	if !slices.Contains(used, false) && valid && ordered {
		return rc, false
	}

	parts := make([]*genai.Part, 0, len(n.calls)+len(rc.Parts)-len(resps))
	for j, call := range n.calls {
		if r := match[j]; r >= 0 {
			parts = append(parts, rc.Parts[resps[r]])
		} else {
			parts = append(parts, n.synthetic(call))
		}
	}
	for r, k := range resps {
		if !used[r] {
			n.rep.OrphansRemoved++
			n.rep.OrphanNames = append(n.rep.OrphanNames, rc.Parts[k].FunctionResponse.Name)
		}
	}
	for _, p := range rc.Parts {
		if p != nil && p.FunctionResponse == nil {
			parts = append(parts, p)
		}
	}
	if !ordered {
		n.rep.Reordered++
	}
	nc := *rc
	if nc.Role == "" {
		nc.Role = genai.RoleUser
	}
	nc.Parts = parts
	return &nc, true
}

// match pairs n.calls with the responses of rc (resps: their indices in rc.Parts): by ID first,
// then by name and position among responses without an ID. match holds, per call, an index into
// resps or -1; used, per response, whether a call took it. The slices passed in are reused.
func (n *normalizer) match(rc *genai.Content, resps []int, match []int, used []bool) ([]int, []bool) {
	for range n.calls {
		match = append(match, -1)
	}
	for range resps {
		used = append(used, false)
	}
	take := func(byID bool) {
		for j, call := range n.calls {
			if match[j] >= 0 || byID && call.ID == "" {
				continue
			}
			for r, k := range resps {
				fr := rc.Parts[k].FunctionResponse
				if !used[r] && fr.Name == call.Name && (byID && fr.ID == call.ID || !byID && fr.ID == "") {
					match[j], used[r] = r, true
					break
				}
			}
		}
	}
	take(true)
	take(false)
	return match, used
}

// answers reports whether fr is a valid answer to call in the same position: same name, and the
// call's ID or no ID.
func answers(fr *genai.FunctionResponse, call *genai.FunctionCall) bool {
	return fr.Name == call.Name && (fr.ID == call.ID || fr.ID == "")
}
