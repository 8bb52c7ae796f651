package response

import "google.golang.org/genai"

// LLMResponse has the shape of adk-go's model.LLMResponse (the same in adk-go v1 and v2): a
// *model.LLMResponse converts to a *LLMResponse with no copy, (*response.LLMResponse)(resp).
type LLMResponse struct {
	Content                 *genai.Content
	CitationMetadata        *genai.CitationMetadata
	GroundingMetadata       *genai.GroundingMetadata
	UsageMetadata           *genai.GenerateContentResponseUsageMetadata
	CustomMetadata          map[string]any
	LogprobsResult          *genai.LogprobsResult
	InputTranscription      *genai.Transcription
	OutputTranscription     *genai.Transcription
	ModelVersion            string
	Partial                 bool
	TurnComplete            bool
	Interrupted             bool
	SessionResumptionHandle string
	ErrorCode               string
	ErrorMessage            string
	FinishReason            genai.FinishReason
	AvgLogprobs             float64
}
