package hooks_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/tool/toolutils"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/adk2/hooks"
	"github.com/adkctx/adkctx/adk2/internal/llmtest"
	"github.com/adkctx/adkctx/adk2/internal/scenario"
	"github.com/adkctx/adkctx/compaction"
)

// twinRunsTool is run_tests of scenario's twin runs: call k returns scenario.TwinRun(k).
type twinRunsTool struct {
	rawTool
	calls atomic.Int32
}

func (r *twinRunsTool) Run(agent.Context, any) (map[string]any, error) {
	return scenario.TwinRun(int(r.calls.Add(1)) - 1), nil
}

// ProcessRequest registers the tool itself (not the rawTool it embeds) for the request.
func (r *twinRunsTool) ProcessRequest(_ agent.Context, req *model.LLMRequest) error {
	return toolutils.PackTool(req, r)
}

// An LLM summarizer on the agent's model is sent a request the agent sent, byte for byte, when
// the agent's tool outputs differ only in their middle: scenario's twin runs (the tests pass,
// then fail, then pass, each output as long as the others, with the same first and last bytes),
// through adk-go v2's runner, on the in-memory and SQLite services. Before, the requests kept for
// the summarizer took each run's output for the first one (equal prints: a print looked at a
// text's length and edges), so the summarizer was shown the tests passing at every turn, in a
// prompt no request held, which no prompt cache serves.
func TestSummaryPromptIsARequestTheAgentSent(t *testing.T) {
	for name, newBase := range backends(t) {
		t.Run(name, func(t *testing.T) {
			m := &llmtest.Model{UsageScale: 1, Default: twinRunsStep}
			s := wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 2, RetainRecentInvocations: 1, Synchronous: true,
				Summarizer: &compaction.LLMSummarizer{Model: hooks.SummarizerModel(m)}}}, newBase(), nil, &twinRunsTool{rawTool: rawTool{name: scenario.RunTests}})
			for k := range 6 {
				if err := s.send(t, "s1", scenario.TwinMessage(k)); err != nil {
					t.Fatal(err)
				}
			}
			var agent, prompts []*model.LLMRequest
			for _, req := range m.Requests() {
				if isSummaryPrompt(req) {
					prompts = append(prompts, req)
				} else {
					agent = append(agent, req)
				}
			}
			if len(prompts) < 2 {
				t.Fatalf("%d summary prompts, want at least 2", len(prompts))
			}
			for i, p := range prompts {
				if !sentByTheAgent(p, agent) {
					t.Errorf("summary prompt %d (%d contents) is no request the agent sent, byte for byte", i+1, len(p.Contents))
				}
				if problem := scenario.TwinRunsProblem(p.Contents); problem != "" {
					t.Errorf("summary prompt %d: %s", i+1, problem)
				}
			}
		})
	}
}

// twinRunsStep plays the twin runs: a summary prompt gets a summary, a user message a run_tests
// call, a run's output an answer.
func twinRunsStep(req *model.LLMRequest) (*genai.Content, error) {
	if isSummaryPrompt(req) {
		return genai.NewContentFromText("Goal: run the tests at every turn and report the result.", genai.RoleModel), nil
	}
	if last := req.Contents[len(req.Contents)-1]; last.Parts[0].FunctionResponse == nil {
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: scenario.RunTests, Args: map[string]any{"path": "./..."}}}}}, nil
	}
	return genai.NewContentFromText("I ran the tests and read their output.", genai.RoleModel), nil
}

// isSummaryPrompt reports whether req is the LLM summarizer's prompt on the agent's
// conversation (its last content is the summary instruction).
func isSummaryPrompt(req *model.LLMRequest) bool {
	return strings.Contains(llmtest.AllText(&model.LLMRequest{Contents: req.Contents[len(req.Contents)-1:]}), "Write a summary of the whole conversation above")
}

// sentByTheAgent reports whether prompt, but its last content (the instruction), is the first
// contents of one of the agent's requests, with its system instruction and tools, as JSON.
func sentByTheAgent(prompt *model.LLMRequest, agent []*model.LLMRequest) bool {
	for _, a := range agent {
		if scenario.ExtensionProblem(promptOf(a), promptOf(prompt)) == "" {
			return true
		}
	}
	return false
}

func promptOf(r *model.LLMRequest) scenario.Prompt {
	p := scenario.Prompt{Contents: r.Contents}
	if r.Config != nil {
		p.System, p.Tools = r.Config.SystemInstruction, r.Config.Tools
	}
	return p
}
