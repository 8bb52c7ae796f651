package steps

import (
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/processors/response"
)

// UsageOf returns the usage a final (non-partial) response reports; ok is false for partial
// chunks and responses without usage.
func UsageOf(resp *response.LLMResponse) (u budget.Usage, ok bool) {
	if resp == nil || resp.Partial || resp.UsageMetadata == nil {
		return budget.Usage{}, false
	}
	return budget.UsageFrom(resp.UsageMetadata), true
}
