package response

import "google.golang.org/genai"

// LLMResponse is what adkctx reads of a model response (and CustomMetadata, which it writes):
// the glue of each adk-go major version copies these fields from adk-go's model.LLMResponse (and
// CustomMetadata back), so a field adk-go adds to its response changes nothing here.
type LLMResponse struct {
	Content        *genai.Content
	UsageMetadata  *genai.GenerateContentResponseUsageMetadata
	CustomMetadata map[string]any
	Partial        bool
	FinishReason   genai.FinishReason
	ErrorCode      string
}
