package scenario

import (
	"context"
	"fmt"
	"iter"
	"regexp"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
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
		yield(&response.LLMResponse{Content: content, FinishReason: genai.FinishReasonStop, TurnComplete: true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(prompt), CandidatesTokenCount: int32(budget.EstimateContent(content))}}, nil)
	}
}

// Prompt is what a model was sent: system instruction, tools, contents.
type Prompt struct {
	System   *genai.Content
	Tools    []*genai.Tool
	Contents []*genai.Content
}

// ExtensionProblem says how ext fails to be base's first contents plus one more (a summary
// instruction after the agent's conversation): "" when its system instruction and tools are
// base's and every content but its last is base's, in order, as JSON.
func ExtensionProblem(base, ext Prompt) string {
	n := len(ext.Contents) - 1
	if n < 1 || n > len(base.Contents) {
		return fmt.Sprintf("%d contents before the last, the base request had %d", n, len(base.Contents))
	}
	for i := range n {
		if a, b := jsonOf(base.Contents[i]), jsonOf(ext.Contents[i]); a != b {
			return fmt.Sprintf("content %d differs:\n%s\n%s", i, a, b)
		}
	}
	if jsonOf(base.System) != jsonOf(ext.System) || jsonOf(base.Tools) != jsonOf(ext.Tools) {
		return "its system instruction or tools are not the base request's"
	}
	return ""
}

// EndProblems checks summary prompts that extend the agent's conversation (prompts[k] is the k-th
// marker's) against a session's stored events: each one's content before its instruction must
// show its marker's last covered event, the same text. It lists what differs.
func EndProblems(events []compaction.Event, prompts [][]*genai.Content) []string {
	byID := map[string]*compaction.Event{}
	var markers []*compaction.Marker
	for i := range events {
		byID[events[i].ID] = &events[i]
		if m, err := compaction.ReadMarker(&events[i]); err == nil && m != nil {
			markers = append(markers, m)
		}
	}
	if len(prompts) > len(markers) {
		return []string{fmt.Sprintf("%d summary prompts for %d markers", len(prompts), len(markers))}
	}
	var out []string
	for k, contents := range prompts {
		m := markers[k]
		last, ok := byID[m.LastEventID]
		if got := contents[len(contents)-2]; !ok || allText([]*genai.Content{got}) != allText([]*genai.Content{last.Content}) {
			out = append(out, fmt.Sprintf("summary prompt %d ends with %q, want marker %d's last covered event %s", k+1, allText([]*genai.Content{got}), m.Seq, m.LastEventID))
		}
	}
	return out
}
