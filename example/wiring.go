package main

import (
	"go.uber.org/zap"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
)

const (
	appName   = "adkctx-example"
	agentName = "coder"
	// instruction is the agent's own instruction. adk-go templates it ({name} is a state lookup),
	// so it holds no braces; AGENTS.md text goes in through adkctx instead.
	instruction = "You are a careful coding assistant working in one repository. Use list_files, read_file " +
		"and search_text to look at the code before answering; cite paths and line numbers."
)

// agentSetup is what newAgent needs: the model, the tools, the storage and where AGENTS.md applies.
type agentSetup struct {
	LLM        model.LLM
	Tools      []tool.Tool
	Sessions   session.Service       // the storage (SQLite here); adkctx wraps it
	WorkDir    string                // AGENTS.md files apply from the project root down to here
	Summarizer compaction.Summarizer // offline: extractive; with Gemini: the LLM summarizer
	Fallback   compaction.Summarizer // used when Summarizer fails (nil: none)
	Models     []budget.ModelInfo    // context windows for models adkctx does not know
	Logger     *zap.Logger           // JSON lines: every budget decision, truncation, compaction
}

// newAgent wires adkctx into an adk-go agent the way an application does: the callbacks go in
// llmagent.Config, the plugin and the session-service wrapper in runner.Config.
func newAgent(s agentSetup) (*runner.Runner, *hooks.Hooks, error) {
	h, err := hooks.New(hooks.Config{
		Logger:       s.Logger,
		Models:       s.Models,
		Instructions: &hooks.InstructionsConfig{WorkDir: s.WorkDir},
		Compaction:   &compaction.Config{Summarizer: s.Summarizer, Fallback: s.Fallback},
	})
	if err != nil {
		return nil, nil, err
	}
	coder, err := llmagent.New(llmagent.Config{
		Name:                 agentName,
		Model:                s.LLM,
		Instruction:          instruction,
		Tools:                s.Tools,
		BeforeModelCallbacks: []llmagent.BeforeModelCallback{h.BeforeModel()},
		AfterModelCallbacks:  []llmagent.AfterModelCallback{h.AfterModel()},
		AfterToolCallbacks:   []llmagent.AfterToolCallback{h.AfterTool()},
	})
	if err != nil {
		return nil, nil, err
	}
	p, err := h.Plugin()
	if err != nil {
		return nil, nil, err
	}
	r, err := runner.New(runner.Config{
		AppName:        appName,
		Agent:          coder,
		SessionService: h.SessionService(s.Sessions),
		PluginConfig:   runner.PluginConfig{Plugins: []*plugin.Plugin{p}},
		// Truncated tool outputs are saved whole here (use a persistent artifact.Service in production).
		ArtifactService: artifact.InMemoryService(),
	})
	if err != nil {
		return nil, nil, err
	}
	return r, h, nil
}

// newPlainAgent is the same agent without adkctx: no callbacks, no plugin, the bare session
// service. The demo replays its script through it for comparison.
func newPlainAgent(s agentSetup) (*runner.Runner, error) {
	coder, err := llmagent.New(llmagent.Config{
		Name:        agentName,
		Model:       s.LLM,
		Instruction: instruction,
		Tools:       s.Tools,
	})
	if err != nil {
		return nil, err
	}
	return runner.New(runner.Config{AppName: appName, Agent: coder, SessionService: s.Sessions})
}
