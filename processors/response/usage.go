package response

import "github.com/adkctx/adkctx/budget"

// UsageOf returns the usage a final (non-partial) response reports; ok is false for partial
// chunks and responses without usage.
func UsageOf(resp *LLMResponse) (u budget.Usage, ok bool) {
	if resp == nil || resp.Partial || resp.UsageMetadata == nil {
		return budget.Usage{}, false
	}
	return budget.UsageFrom(resp.UsageMetadata), true
}
