package llmtest

import (
	"context"
	"iter"

	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"

	"github.com/adkctx/adkctx/hooks/internal/scenario"
	"github.com/adkctx/adkctx/processors/request"
)

// Scenario is the scripted coding session's model (internal/scenario) as an adk-go
// model.LLM: it answers every request with the session's next step and measures what it was
// sent (Figures).
type Scenario struct {
	*scenario.Model
	name string
}

// NewScenario returns the session's model named name, measuring against soft (0: no limit).
func NewScenario(name string, soft int) Scenario { return Scenario{scenario.NewModel(soft), name} }

// NewScenarioFor is NewScenario measuring session s.
func NewScenarioFor(name string, soft int, s scenario.Session) Scenario {
	return Scenario{scenario.NewModelFor(soft, s), name}
}

// NewScenarioWith is NewScenario measuring as r says.
func NewScenarioWith(name string, r scenario.Recorder) Scenario {
	return Scenario{scenario.NewRecordingModel(r), name}
}

// Name implements model.LLM.
func (m Scenario) Name() string { return m.name }

// GenerateContent implements model.LLM.
func (m Scenario) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		r := m.Respond(&request.LLMRequest{Model: req.Model, Contents: req.Contents, Config: req.Config})
		yield(&model.LLMResponse{Content: r.Content, UsageMetadata: r.UsageMetadata, CustomMetadata: r.CustomMetadata,
			Partial: r.Partial, FinishReason: r.FinishReason, ErrorCode: r.ErrorCode, TurnComplete: true}, nil)
	}
}

type pathArgs struct {
	Path string `json:"path"`
}

// ScenarioTools are the default session's tools (read_file, list_files, run_tests), answering
// with its scripted outputs.
func ScenarioTools() ([]tool.Tool, error) { return ScenarioToolsFor(scenario.Default()) }

// ScenarioToolsFor are session s's tools, over a workspace of their own (scenario.Workspace).
func ScenarioToolsFor(s scenario.Session) ([]tool.Tool, error) {
	ws := scenario.NewWorkspace(s)
	var out []tool.Tool
	for _, name := range []string{scenario.ReadFile, scenario.ListFiles, scenario.RunTests} {
		t, err := functiontool.New(functiontool.Config{Name: name, Description: "scripted tool " + name},
			func(_ toolContext, a pathArgs) (map[string]any, error) {
				return ws.Run(name, map[string]any{"path": a.Path}), nil
			})
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// PathTool is a function tool name taking one argument, path, answered by fn.
func PathTool(name string, fn func(path string) map[string]any) (tool.Tool, error) {
	return functiontool.New(functiontool.Config{Name: name, Description: "test tool " + name},
		func(_ toolContext, a pathArgs) (map[string]any, error) { return fn(a.Path), nil })
}
