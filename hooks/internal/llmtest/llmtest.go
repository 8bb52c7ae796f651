// Package llmtest provides a scripted model.LLM for tests: it records every request it receives
// (as the model would see it) and answers from a script, reporting prompt usage the way a real
// model does.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// Step answers one model call. Returning nil content means a plain "ok" text answer.
type Step func(req *model.LLMRequest) (*genai.Content, error)

// Model is a scripted model.LLM. Its zero value answers every call with the text "ok".
type Model struct {
	// ModelName is returned by Name (and so becomes LLMRequest.Model). Default "scripted-model".
	ModelName string
	// Script answers calls in order; once exhausted, Default answers.
	Script []Step
	// Default answers calls past the script. Nil answers "ok".
	Default Step
	// UsageScale, when > 0, makes every response report UsageMetadata with PromptTokenCount =
	// UsageScale × budget.EstimateRequest(req.Contents, req.Config), like a model whose tokenizer differs from our
	// estimate by that factor.
	UsageScale float64

	mu       sync.Mutex
	calls    int
	requests []*model.LLMRequest
}

// Name implements model.LLM.
func (m *Model) Name() string {
	if m.ModelName == "" {
		return "scripted-model"
	}
	return m.ModelName
}

// GenerateContent implements model.LLM.
func (m *Model) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		m.mu.Lock()
		i := m.calls
		m.calls++
		m.requests = append(m.requests, snapshot(req))
		step := m.Default
		if i < len(m.Script) {
			step = m.Script[i]
		}
		m.mu.Unlock()

		var content *genai.Content
		var err error
		if step != nil {
			content, err = step(req)
		}
		if err != nil {
			yield(nil, err)
			return
		}
		if content == nil {
			content = genai.NewContentFromText("ok", genai.RoleModel)
		}
		resp := &model.LLMResponse{Content: content, FinishReason: genai.FinishReasonStop, TurnComplete: true}
		if m.UsageScale > 0 {
			prompt := int32(m.UsageScale * float64(budget.EstimateRequest(req.Contents, req.Config)))
			out := int32(budget.EstimateContent(content))
			resp.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount: prompt, CandidatesTokenCount: out, TotalTokenCount: prompt + out,
			}
		}
		yield(resp, nil)
	}
}

// Requests returns the requests received so far, oldest first. Each is a deep copy taken when the
// model was called.
func (m *Model) Requests() []*model.LLMRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*model.LLMRequest(nil), m.requests...)
}

// Calls returns how many times the model was called.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// snapshot deep-copies what a test inspects of a request: model, contents and config.
func snapshot(req *model.LLMRequest) *model.LLMRequest {
	out := &model.LLMRequest{Model: req.Model}
	if b, err := json.Marshal(req.Contents); err == nil {
		_ = json.Unmarshal(b, &out.Contents)
	}
	if req.Config != nil {
		out.Config = &genai.GenerateContentConfig{}
		if b, err := json.Marshal(req.Config); err == nil {
			_ = json.Unmarshal(b, out.Config)
		}
	}
	return out
}

// Text returns a step answering with text.
func Text(s string) Step {
	return func(*model.LLMRequest) (*genai.Content, error) {
		return genai.NewContentFromText(s, genai.RoleModel), nil
	}
}

// Call returns a step that calls the named tools (in parallel when several), with args.
func Call(calls ...*genai.FunctionCall) Step {
	return func(*model.LLMRequest) (*genai.Content, error) {
		c := &genai.Content{Role: genai.RoleModel}
		for _, fc := range calls {
			cp := *fc
			c.Parts = append(c.Parts, &genai.Part{FunctionCall: &cp})
		}
		return c, nil
	}
}

// AllText concatenates every text part of the request's contents and system instruction, for
// "does the request mention X" assertions.
func AllText(req *model.LLMRequest) string {
	var b []byte
	add := func(c *genai.Content) {
		if c == nil {
			return
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			b = append(b, p.Text...)
			b = append(b, '\n')
			if p.FunctionResponse != nil {
				j, _ := json.Marshal(p.FunctionResponse.Response)
				b = append(b, j...)
				b = append(b, '\n')
			}
			if p.FunctionCall != nil {
				b = fmt.Appendf(b, "%s(%v)\n", p.FunctionCall.Name, p.FunctionCall.Args)
			}
		}
	}
	if req.Config != nil {
		add(req.Config.SystemInstruction)
	}
	for _, c := range req.Contents {
		add(c)
	}
	return string(b)
}
