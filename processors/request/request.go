package request

import "google.golang.org/genai"

// LLMRequest has the shape of adk-go's model.LLMRequest (the same in adk-go v1 and v2): a
// *model.LLMRequest converts to a *LLMRequest with no copy, (*request.LLMRequest)(req), so the
// steps of this package serve every adk-go major version. The conversion stops compiling if
// adk-go changes the shape, instead of silently dropping a field.
type LLMRequest struct {
	Model    string
	Contents []*genai.Content
	Config   *genai.GenerateContentConfig
	// Tools are adk-go's tool objects by name; the steps never read them.
	Tools map[string]any
}
