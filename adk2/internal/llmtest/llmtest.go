// Package llmtest is a scripted adk-go v2 model.LLM for the v2 module's tests and example: it
// records every request as the model receives it and answers from a script, reporting usage the
// way a real model does.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// Step answers one call. A nil content answers the text "ok".
type Step func(req *model.LLMRequest) (*genai.Content, error)

// Model is a scripted model.LLM; the zero value answers "ok" to every call.
type Model struct {
	// ModelName is its name (the requests' Model). Default "scripted-model".
	ModelName string
	// Script answers the calls in order; Default answers the calls past it.
	Script  []Step
	Default Step
	// UsageScale, when > 0, reports PromptTokenCount = UsageScale × adkctx's estimate of the
	// request: a model whose tokenizer counts that much more (or less) than the estimate.
	UsageScale float64

	mu       sync.Mutex
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
		step := m.Default
		if n := len(m.requests); n < len(m.Script) {
			step = m.Script[n]
		}
		m.requests = append(m.requests, deepCopy(req))
		m.mu.Unlock()
		content := genai.NewContentFromText("ok", genai.RoleModel)
		if step != nil {
			c, err := step(req)
			if err != nil {
				yield(nil, err)
				return
			}
			if c != nil {
				content = c
			}
		}
		resp := &model.LLMResponse{Content: content, FinishReason: genai.FinishReasonStop, TurnComplete: true}
		if m.UsageScale > 0 {
			prompt, out := int32(m.UsageScale*float64(budget.EstimateRequest(req.Contents, req.Config))), int32(budget.EstimateContent(content))
			resp.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: prompt, CandidatesTokenCount: out, TotalTokenCount: prompt + out}
		}
		yield(resp, nil)
	}
}

// Requests returns a copy of every request received, oldest first.
func (m *Model) Requests() []*model.LLMRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*model.LLMRequest(nil), m.requests...)
}

// Calls returns how many calls the model received.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// deepCopy copies what tests inspect (model, contents, config) through JSON.
func deepCopy(req *model.LLMRequest) *model.LLMRequest {
	out := &model.LLMRequest{Model: req.Model}
	b, _ := json.Marshal(struct {
		C []*genai.Content
		G *genai.GenerateContentConfig
	}{req.Contents, req.Config})
	var back struct {
		C []*genai.Content
		G *genai.GenerateContentConfig
	}
	_ = json.Unmarshal(b, &back)
	out.Contents, out.Config = back.C, back.G
	return out
}

// Text answers with text.
func Text(s string) Step {
	return func(*model.LLMRequest) (*genai.Content, error) {
		return genai.NewContentFromText(s, genai.RoleModel), nil
	}
}

// Call answers with function calls (parallel when several).
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

// AllText joins the request's system instruction and contents as text (function calls and
// responses included), for "does the model see X" assertions.
func AllText(req *model.LLMRequest) string {
	var b strings.Builder
	add := func(c *genai.Content) {
		for _, p := range partsOf(c) {
			b.WriteString(p.Text + "\n")
			if fr := p.FunctionResponse; fr != nil {
				j, _ := json.Marshal(fr.Response)
				b.Write(append(j, '\n'))
			}
			if fc := p.FunctionCall; fc != nil {
				fmt.Fprintf(&b, "%s(%v)\n", fc.Name, fc.Args)
			}
		}
	}
	if req.Config != nil {
		add(req.Config.SystemInstruction)
	}
	for _, c := range req.Contents {
		add(c)
	}
	return b.String()
}

func partsOf(c *genai.Content) []*genai.Part {
	if c == nil {
		return nil
	}
	var out []*genai.Part
	for _, p := range c.Parts {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}
