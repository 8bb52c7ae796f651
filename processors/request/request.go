package request

import "google.golang.org/genai"

// LLMRequest is what adkctx's steps read and change of a model request: the model's name, the
// contents and the config (system instruction, tools). The glue of each adk-go major version
// copies these fields from adk-go's model.LLMRequest and back, so a field adk-go adds to its
// request changes nothing here.
type LLMRequest struct {
	Model    string
	Contents []*genai.Content
	Config   *genai.GenerateContentConfig
}
