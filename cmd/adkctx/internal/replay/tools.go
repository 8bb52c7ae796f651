package replay

import (
	"fmt"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
)

// recorded is what a replayed call returns.
type recorded struct {
	response map[string]any
	// endsTurn: the call is in the last step of its turn, which the recording ended with tool
	// outputs (no reply after them): the run must end there too.
	endsTurn bool
}

// replayTool is one recorded tool: each call returns the output recorded for its call id. It is
// a function tool for adk-go's flow (Declaration, Run, ProcessRequest).
type replayTool struct {
	decl  *genai.FunctionDeclaration
	calls map[string]recorded
}

func (t *replayTool) Name() string        { return t.decl.Name }
func (t *replayTool) Description() string { return t.decl.Description }
func (t *replayTool) IsLongRunning() bool { return false }

func (t *replayTool) Declaration() *genai.FunctionDeclaration { return t.decl }

// Run returns the recorded output of the call. A call the recording does not hold is an error
// (never happens: the model only makes recorded calls).
func (t *replayTool) Run(ctx agent.ToolContext, _ any) (map[string]any, error) {
	r, ok := t.calls[ctx.FunctionCallID()]
	if !ok {
		return nil, fmt.Errorf("replay: no recorded output for call %q of %s", ctx.FunctionCallID(), t.decl.Name)
	}
	if r.endsTurn {
		ctx.Actions().SkipSummarization = true
	}
	return deepCopy(r.response).(map[string]any), nil
}

// ProcessRequest declares the tool in the request, as adk-go's own function tools do.
func (t *replayTool) ProcessRequest(_ agent.ToolContext, req *model.LLMRequest) error {
	if req.Tools == nil {
		req.Tools = map[string]any{}
	}
	if _, dup := req.Tools[t.decl.Name]; dup {
		return fmt.Errorf("replay: duplicate tool %q", t.decl.Name)
	}
	req.Tools[t.decl.Name] = t
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	for _, gt := range req.Config.Tools {
		if gt != nil && gt.FunctionDeclarations != nil {
			gt.FunctionDeclarations = append(gt.FunctionDeclarations, t.decl)
			return nil
		}
	}
	req.Config.Tools = append(req.Config.Tools, &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{t.decl}})
	return nil
}

// toolsOf builds the session's tools: one per declared or called tool, all answering from one
// map of the session's calls.
func toolsOf(s *trajectory.Session) []tool.Tool {
	calls := map[string]recorded{}
	for _, t := range s.Turns {
		for si, st := range t.Steps {
			last := si == len(t.Steps)-1
			for _, c := range st.Calls {
				calls[c.ID] = recorded{response: c.Response, endsTurn: last}
			}
		}
	}
	out := make([]tool.Tool, 0, len(s.Tools))
	for _, d := range s.Tools {
		decl := &genai.FunctionDeclaration{Name: d.Name, Description: d.Description}
		if d.Parameters != nil {
			decl.ParametersJsonSchema = d.Parameters
		}
		out = append(out, &replayTool{decl: decl, calls: calls})
	}
	return out
}
