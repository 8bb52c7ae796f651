package readback

import (
	"reflect"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/marks"
	"github.com/adkctx/adkctx/recall"
)

// The recall tools, by what they read.
var (
	outputTools  = []string{recall.ToolReadOutput, recall.ToolSearchOutputs}
	historyTools = []string{recall.ToolSearchHistory, recall.ToolReadTurn}
)

// Needed reports which recall tools the model has a use for in contents (a request's): every
// one once a summary stands for earlier turns (their outputs may have been saved); before that,
// the output tools once a tool result names a saved output (a truncation note) or is shown as an
// excerpt; either once the model called one of them. Another agent's calls and results count
// too: adk-go shows them to this agent as text ("For context: [agent] `tool` tool returned
// result: …"). Until then their declarations are about 900 tokens of every request that nothing
// in the conversation can use.
func Needed(contents []*genai.Content) Installed {
	var need Installed
	for _, c := range contents {
		if c == nil {
			continue
		}
		if compaction.IsSummary(c) {
			return Installed{Outputs: true, History: true}
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			name := ""
			switch {
			case p.Text != "" && !p.Thought:
				need.Outputs = need.Outputs || namesSavedOutput(p.Text) || mentionsTool(p.Text, outputTools)
				need.History = need.History || mentionsTool(p.Text, historyTools)
			case p.FunctionCall != nil:
				name = p.FunctionCall.Name
			case p.FunctionResponse != nil:
				name = p.FunctionResponse.Name
				if !need.Outputs && holdsString(p.FunctionResponse.Response, namesSavedOutput) {
					need.Outputs = true
				}
			}
			need.Outputs = need.Outputs || slices.Contains(outputTools, name)
			need.History = need.History || slices.Contains(historyTools, name)
		}
		if need.Outputs && need.History {
			break // nothing more to learn: the rest of the history is not read
		}
	}
	return need
}

// mentionsTool reports whether text names one of tools as adk-go writes another agent's call or
// result for this one (the name in backquotes).
func mentionsTool(text string, tools []string) bool {
	return strings.Contains(text, "`") && slices.ContainsFunc(tools, func(name string) bool { return strings.Contains(text, "`"+name+"`") })
}

// namesSavedOutput reports whether s points at a saved output: a truncation note naming one, or
// the view's excerpt note (RewriteNotes names the saved result in it).
func namesSavedOutput(s string) bool {
	return strings.Contains(s, OutputPrefix) || strings.Contains(s, marks.ExcerptNote)
}

// holdsString reports whether a string of v satisfies pred.
func holdsString(v any, pred func(string) bool) bool {
	switch x := v.(type) {
	case string:
		return pred(x)
	case map[string]any:
		for _, e := range x {
			if holdsString(e, pred) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holdsString(e, pred) {
				return true
			}
		}
	}
	return false
}

// Withhold returns cfg without the declarations of the recall tools keep leaves out: the output
// tools unless keep.Outputs, the history tools unless keep.History. It never changes cfg or its
// tools: a tool that loses a declaration is a copy, one left with nothing is dropped, and cfg is
// returned as it is when it declares nothing to withhold, or when its function calling config
// forces a call or names the functions allowed (withholding could leave it naming functions not
// declared, or forcing a call with none declared). A model that calls a withheld tool anyway
// still reaches it (the agent keeps it).
func Withhold(cfg *genai.GenerateContentConfig, keep Installed) *genai.GenerateContentConfig {
	if cfg == nil {
		return nil
	}
	if tc := cfg.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil &&
		(tc.FunctionCallingConfig.Mode == genai.FunctionCallingConfigModeAny || len(tc.FunctionCallingConfig.AllowedFunctionNames) > 0) {
		return cfg
	}
	withheld := func(name string) bool {
		return !keep.Outputs && slices.Contains(outputTools, name) || !keep.History && slices.Contains(historyTools, name)
	}
	var tools []*genai.Tool // copy of cfg.Tools, made on the first change
	for i, t := range cfg.Tools {
		if t == nil || !slices.ContainsFunc(t.FunctionDeclarations, func(d *genai.FunctionDeclaration) bool { return d != nil && withheld(d.Name) }) {
			if tools != nil {
				tools = append(tools, t)
			}
			continue
		}
		if tools == nil {
			tools = append(make([]*genai.Tool, 0, len(cfg.Tools)), cfg.Tools[:i]...)
		}
		nt := *t
		nt.FunctionDeclarations = slices.DeleteFunc(slices.Clone(t.FunctionDeclarations), func(d *genai.FunctionDeclaration) bool {
			return d != nil && withheld(d.Name)
		})
		if len(nt.FunctionDeclarations) == 0 {
			nt.FunctionDeclarations = nil
			if reflect.ValueOf(nt).IsZero() { // declares nothing: a provider may refuse it
				continue
			}
		}
		tools = append(tools, &nt)
	}
	if tools == nil {
		return cfg
	}
	nc := *cfg
	nc.Tools = tools
	return &nc
}
