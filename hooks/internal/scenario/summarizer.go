package scenario

import (
	"context"
	"fmt"
	"iter"
	"regexp"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
)

// SummarizerModel is the session's model answering compaction.LLMSummarizer's prompts (a
// compaction.Model): it states the goal and the decisions the prompt holds, and records each
// prompt beside the session's requests (Recorder.Aside), so the figures show what summaries
// cost, with what their prompt shares with the session's last request served from the cache.
type SummarizerModel struct {
	name  string
	agent *Model
}

// NewSummarizerModel returns a summarizer model named name; On binds it to the session's model
// before use.
func NewSummarizerModel(name string) *SummarizerModel { return &SummarizerModel{name: name} }

// On returns m recording beside agent.
func (m *SummarizerModel) On(agent *Model) *SummarizerModel {
	return &SummarizerModel{name: m.name, agent: agent}
}

// Name implements compaction.Model.
func (m *SummarizerModel) Name() string { return m.name }

var decisionRE = regexp.MustCompile(`Decision (D-\d+)`)

// GenerateContent implements compaction.Model.
func (m *SummarizerModel) GenerateContent(_ context.Context, req *request.LLMRequest) iter.Seq2[*response.LLMResponse, error] {
	prompt := budget.EstimateRequest(req.Contents, req.Config)
	var system *genai.Content
	var tools []*genai.Tool
	if req.Config != nil {
		system, tools = req.Config.SystemInstruction, req.Config.Tools
	}
	m.agent.mu.Lock()
	m.agent.rec.Aside(system, tools, req.Contents, prompt)
	m.agent.mu.Unlock()
	var decisions []string
	for _, d := range decisionRE.FindAllStringSubmatch(allText(req.Contents), -1) {
		decisions = append(decisions, d[1])
	}
	text := fmt.Sprintf("Goal: review the modules one by one and say whether each is safe to change.\n"+
		"Decisions so far: %s.\nOpen tasks: continue with the next module the user names.", strings.Join(decisions, ", "))
	content := genai.NewContentFromText(text, genai.RoleModel)
	return func(yield func(*response.LLMResponse, error) bool) {
		yield(&response.LLMResponse{Content: content, FinishReason: genai.FinishReasonStop,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(prompt), CandidatesTokenCount: int32(budget.EstimateContent(content))}}, nil)
	}
}
