package geminitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/genai"
)

// The methods the fake serves, as they appear after the model name in the path.
const (
	methodGenerate = "generateContent"
	methodStream   = "streamGenerateContent"
)

// pathPrefix is where the genai client sends Gemini API model calls (API version v1beta).
const pathPrefix = "/v1beta/models/"

// parsePath splits "/v1beta/models/{model}:{method}" into the model name and the method; ok is
// false for any other path or method.
func parsePath(p string) (model, method string, ok bool) {
	rest, found := strings.CutPrefix(p, pathPrefix)
	if !found {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", "", false
	}
	model, method = rest[:i], rest[i+1:]
	if strings.ContainsAny(model, "/:") || (method != methodGenerate && method != methodStream) {
		return "", "", false
	}
	return model, method, true
}

// wireRequest is the JSON body of generateContent and streamGenerateContent as the genai client
// writes it for the Gemini API (generateContentParametersToMldev): the model moves to the path,
// the config is split into generationConfig and top-level fields.
type wireRequest struct {
	Contents          []*genai.Content        `json:"contents,omitempty"`
	SystemInstruction *genai.Content          `json:"systemInstruction,omitempty"`
	Tools             []*genai.Tool           `json:"tools,omitempty"`
	ToolConfig        *genai.ToolConfig       `json:"toolConfig,omitempty"`
	SafetySettings    []*genai.SafetySetting  `json:"safetySettings,omitempty"`
	GenerationConfig  *genai.GenerationConfig `json:"generationConfig,omitempty"`
	CachedContent     string                  `json:"cachedContent,omitempty"`
	ServiceTier       string                  `json:"serviceTier,omitempty"`
}

// decodeBody decodes a request body strictly: one JSON object, no unknown field (the real
// service refuses those too), nothing after it.
func decodeBody(body []byte) (*wireRequest, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var w wireRequest
	if err := dec.Decode(&w); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the request object")
	}
	return &w, nil
}

// wireResponse is one GenerateContentResponse: the whole reply of generateContent, or one event
// of streamGenerateContent.
type wireResponse struct {
	Candidates     []wireCandidate                              `json:"candidates,omitempty"`
	PromptFeedback *genai.GenerateContentResponsePromptFeedback `json:"promptFeedback,omitempty"`
	UsageMetadata  *genai.GenerateContentResponseUsageMetadata  `json:"usageMetadata,omitempty"`
	ModelVersion   string                                       `json:"modelVersion,omitempty"`
	ResponseID     string                                       `json:"responseId,omitempty"`
}

type wireCandidate struct {
	Content      *genai.Content     `json:"content,omitempty"`
	FinishReason genai.FinishReason `json:"finishReason,omitempty"`
	Index        int                `json:"index"`
}

// wireError is a Google API error body.
type wireError struct {
	Error *genai.APIError `json:"error"`
}
