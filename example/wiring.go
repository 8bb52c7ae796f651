package main

import (
	"slices"

	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/cmd/launcher"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
)

const (
	// agentName is the agent's name, and the app name its sessions are stored under: adk-go's
	// launcher names an app after its root agent, so the REPL, the demo and the web UI share
	// sessions.
	agentName = "coder"
	appName   = agentName
	// instruction is the agent's own instruction. adk-go templates it ({name} is a state lookup),
	// so it holds no braces; AGENTS.md text goes in through adkctx instead.
	instruction = "You are a careful coding assistant working in one repository. Use list_files, read_file " +
		"and search_text to look at the code before answering; cite paths and line numbers."
)

// agentSetup is what wire needs.
type agentSetup struct {
	LLM      model.LLM
	Tools    []tool.Tool
	Sessions session.Service // the storage (SQLite here); adkctx wraps it
	// Artifacts keeps the full tool outputs, read back by the recall tools (the sessions'
	// SQLite file here: hooks/dbartifact). Nil: in memory, lost when the process ends.
	Artifacts artifact.Service
	WorkDir   string // AGENTS.md files apply from the project root down to here
	// Summarizer: extractive offline; with Gemini the agent's own model (extractive fallback).
	Summarizer  compaction.Summarizer
	Synchronous bool                 // compact on the turn that triggers it (the demo's figures)
	Interval    int                  // the cost policy: compact every Interval turns (0: when the window needs it)
	Models      []budget.ModelInfo   // context windows for models adkctx does not know
	Logger      *zap.Logger          // JSON lines: every budget decision, truncation, compaction
	Meter       metric.MeterProvider // nil: the global provider (no cost until an SDK is installed)
}

// wire builds the agent and wires adkctx into its runner configuration with one call,
// Hooks.Wire: adkctx's plugin is added and the session service wrapped (the model sees the
// compacted view; every original event stays in s.Sessions).
func wire(s agentSetup) (*hooks.Hooks, runner.Config, error) {
	h, err := hooks.New(adkctx.Config{
		Logger:        s.Logger,
		Models:        s.Models,
		Instructions:  &adkctx.InstructionsConfig{WorkDir: s.WorkDir},
		Compaction:    &compaction.Config{Summarizer: s.Summarizer, Synchronous: s.Synchronous, Interval: s.Interval},
		MeterProvider: s.Meter,
	})
	if err != nil {
		return nil, runner.Config{}, err
	}
	// The recall tools: the agent reads back what its requests left out (truncated outputs,
	// summarized turns) through the artifact service Wire captures.
	recallTools, err := h.RecallTools()
	if err != nil {
		return nil, runner.Config{}, err
	}
	tools := append(slices.Clip(s.Tools), recallTools...)
	coder, err := llmagent.New(llmagent.Config{Name: agentName, Model: s.LLM, Instruction: instruction, Tools: tools})
	if err != nil {
		return nil, runner.Config{}, err
	}
	artifacts := s.Artifacts
	if artifacts == nil {
		artifacts = artifact.InMemoryService()
	}
	rc, err := h.Wire(runner.Config{
		AppName:        appName,
		Agent:          coder,
		SessionService: s.Sessions,
		// Truncated tool outputs are saved whole here; the recall tools read them.
		ArtifactService: artifacts,
	})
	if err != nil {
		return nil, runner.Config{}, err
	}
	return h, rc, nil
}

// launcherConfig is the same wiring for adk-go's launcher (console, REST API, web UI).
func launcherConfig(rc runner.Config) *launcher.Config {
	return &launcher.Config{
		SessionService:  rc.SessionService,
		ArtifactService: rc.ArtifactService,
		PluginConfig:    rc.PluginConfig,
		AgentLoader:     agent.NewSingleLoader(rc.Agent),
	}
}

// newPlainAgent is the same agent without adkctx: no plugin, the bare session service. The demo
// replays its script through it for comparison.
func newPlainAgent(s agentSetup) (*runner.Runner, error) {
	coder, err := llmagent.New(llmagent.Config{Name: agentName, Model: s.LLM, Instruction: instruction, Tools: s.Tools})
	if err != nil {
		return nil, err
	}
	return runner.New(runner.Config{AppName: appName, Agent: coder, SessionService: s.Sessions})
}
