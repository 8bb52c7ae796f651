package steps

import (
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/truncate"
)

// TruncateFunctionResponses applies the AfterTool truncation rules (truncate.Value with cfg) to
// every FunctionResponse.Response in req.Contents: outputs stored before truncation existed, or
// produced by other agents, reach the model cut the same way.
//
// It is copy-on-write: a Content, Part or FunctionResponse that changes is replaced in a new
// req.Contents slice by a copy; the originals (which may be shared with session events) are
// never modified. Responses within the limits are left alone, so it is idempotent.
func TruncateFunctionResponses(req *request.LLMRequest, cfg truncate.Config) TruncateReport {
	var total TruncateReport
	if req == nil {
		return total
	}
	var contents []*genai.Content // copy of req.Contents, made on the first change
	for i, c := range req.Contents {
		nc, cut, st := truncate.Responses(c, cfg, nil)
		if nc == c {
			continue
		}
		total.Responses += cut
		total.OmittedBytes += st.OmittedBytes
		if contents == nil {
			contents = append([]*genai.Content(nil), req.Contents...)
		}
		contents[i] = nc
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
