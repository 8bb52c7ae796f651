// Package response holds what adkctx reads of a model response: LLMResponse, the fields the glue
// of each adk-go major version copies from adk-go's model.LLMResponse (the usage it counts, the
// content a summarizer reads).
package response
