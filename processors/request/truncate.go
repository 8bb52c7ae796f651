package request

import (
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/processors/truncate"
)

// TruncateFunctionResponses applies the AfterTool truncation rules (truncate.Value with cfg) to
// every FunctionResponse.Response in req.Contents: outputs stored before truncation existed, or
// produced by other agents, reach the model cut the same way.
//
// It is copy-on-write: a Content, Part or FunctionResponse that changes is replaced in a new
// req.Contents slice by a copy; the originals (which may be shared with session events) are
// never modified. Responses within the limits are left alone, so it is idempotent.
func TruncateFunctionResponses(req *LLMRequest, cfg truncate.Config) TruncateReport {
	var total TruncateReport
	if req == nil {
		return total
	}
	var contents []*genai.Content // copy of req.Contents, made on the first change
	for i, c := range req.Contents {
		if c == nil {
			continue
		}
		var parts []*genai.Part // copy of c.Parts, made on the first change
		for j, p := range c.Parts {
			if p == nil || p.FunctionResponse == nil || p.FunctionResponse.Response == nil {
				continue
			}
			v, st := truncate.Value(p.FunctionResponse.Response, cfg, nil)
			if !st.Truncated {
				continue
			}
			total.Responses++
			total.OmittedBytes += st.OmittedBytes
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			fr := *p.FunctionResponse
			fr.Response = m
			np := *p
			np.FunctionResponse = &fr
			if parts == nil {
				parts = append([]*genai.Part(nil), c.Parts...)
			}
			parts[j] = &np
		}
		if parts == nil {
			continue
		}
		nc := *c
		nc.Parts = parts
		if contents == nil {
			contents = append([]*genai.Content(nil), req.Contents...)
		}
		contents[i] = &nc
	}
	if contents != nil {
		req.Contents = contents
	}
	return total
}

// TruncateReport says what TruncateFunctionResponses cut: how many function responses, and the
// bytes left out of them.
type TruncateReport struct {
	Responses, OmittedBytes int
}
