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

// RecallScenario is the recall figure's model (scenario.RecallModel) as an adk-go model.LLM.
type RecallScenario struct {
	*scenario.RecallModel
	name string
}

// NewRecallScenario returns the recall session's model named name.
func NewRecallScenario(name string) RecallScenario {
	return RecallScenario{scenario.NewRecallModel(), name}
}

// Name implements model.LLM.
func (m RecallScenario) Name() string { return m.name }

// GenerateContent implements model.LLM.
func (m RecallScenario) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		r := m.Respond(&request.LLMRequest{Model: req.Model, Contents: req.Contents, Config: req.Config})
		yield(&model.LLMResponse{Content: r.Content, UsageMetadata: r.UsageMetadata, FinishReason: r.FinishReason, TurnComplete: true}, nil)
	}
}

type recallArgs struct {
	Path   string `json:"path,omitempty"`
	Target string `json:"target,omitempty"`
}

// RecallSessionTools are the recall session's tools (read_file, fetch_log, read_config,
// deploy), answering with its scripted outputs.
func RecallSessionTools() ([]tool.Tool, error) {
	var out []tool.Tool
	for _, name := range []string{scenario.ReadFile, scenario.FetchLog, scenario.ReadConfig, scenario.Deploy} {
		t, err := functiontool.New(functiontool.Config{Name: name, Description: "scripted tool " + name},
			func(_ toolContext, a recallArgs) (map[string]any, error) {
				return scenario.RunRecallTool(name, map[string]any{"path": a.Path, "target": a.Target}), nil
			})
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
