package response

import (
	"google.golang.org/adk/model"

	"github.com/adkctx/adkctx/budget"
)

// UsageOf returns the token usage a model response reports. ok is false for a nil response, a
// partial (streaming) chunk, whose usage must not be counted, and a response without usage
// metadata.
func UsageOf(resp *model.LLMResponse) (u budget.Usage, ok bool) {
	if resp == nil || resp.Partial || resp.UsageMetadata == nil {
		return budget.Usage{}, false
	}
	return budget.UsageFrom(resp.UsageMetadata), true
}
