package readback

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/marks"
	"github.com/adkctx/adkctx/recall"
)

// foreign is another agent's event as adk-go shows it to this one.
func foreign(line string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "For context:"}, {Text: line}}}
}

func TestNeeded(t *testing.T) {
	user := genai.NewContentFromText("list the open orders", genai.RoleUser)
	call := func(name string) *genai.Content {
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: map[string]any{"q": "x"}}}}}
	}
	result := func(name string, resp map[string]any) *genai.Content {
		return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: resp}}}}
	}
	cut := map[string]any{"output": "line 1\n[... output truncated: 900 lines omitted; " + OutputNote(OutputName("grep", "c1", 0, 1, true)) + "]\nline 1000"}
	cutNoTools := map[string]any{"output": "head\n[... output truncated: full output saved as artifact \"" + OutputName("grep", "c1", 0, 1, true) + "\"]"}
	excerpt := map[string]any{"output": "head … tail", "note": marks.ExcerptNote}
	nested := map[string]any{"runs": []any{map[string]any{"log": cut["output"]}}}
	summary := genai.NewContentFromText(compaction.SummaryHeader+"\nGoal: list the open orders.", genai.RoleUser)
	for _, tc := range []struct {
		name     string
		contents []*genai.Content
		want     Installed
	}{
		{"nothing to recall", []*genai.Content{user, call("grep"), result("grep", map[string]any{"output": "3 matches"})}, Installed{}},
		{"a cut output names its saved whole", []*genai.Content{user, call("grep"), result("grep", cut)}, Installed{Outputs: true}},
		{"a cut output noted without the tools", []*genai.Content{user, call("grep"), result("grep", cutNoTools)}, Installed{Outputs: true}},
		{"the note deep in a result", []*genai.Content{user, call("ci"), result("ci", nested)}, Installed{Outputs: true}},
		{"an excerpt of an older result", []*genai.Content{user, call("grep"), result("grep", excerpt)}, Installed{Outputs: true}},
		{"a summary stands for earlier turns", []*genai.Content{summary, user}, Installed{Outputs: true, History: true}},
		{"the model called a history tool", []*genai.Content{user, call(recall.ToolReadTurn), result(recall.ToolReadTurn, map[string]any{"text": "…"})}, Installed{History: true}},
		{"the model called an output tool", []*genai.Content{user, call(recall.ToolSearchOutputs)}, Installed{Outputs: true}},
		{"nil contents and parts", []*genai.Content{nil, {Role: genai.RoleUser, Parts: []*genai.Part{nil}}}, Installed{}},
		// adk-go shows another agent's calls and results to this one as text.
		{"another agent's cut output", []*genai.Content{user, foreign("[coder] `grep` tool returned result: " + mustJSON(t, cut))}, Installed{Outputs: true}},
		{"another agent's recall call", []*genai.Content{user, foreign("[coder] called tool `read_turn` with parameters: {\"turn\":\"turn 2\"}")}, Installed{History: true}},
		{"another agent's plain result", []*genai.Content{user, foreign("[coder] `grep` tool returned result: {\"output\":\"3 matches\"}")}, Installed{}},
	} {
		if diff := cmp.Diff(tc.want, Needed(tc.contents)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestWithhold(t *testing.T) {
	decl := func(names ...string) []*genai.FunctionDeclaration {
		out := make([]*genai.FunctionDeclaration, len(names))
		for i, n := range names {
			out[i] = &genai.FunctionDeclaration{Name: n, Description: n + " does its job"}
		}
		return out
	}
	names := func(cfg *genai.GenerateContentConfig) [][]string {
		var out [][]string
		for _, tl := range cfg.Tools {
			var ns []string
			for _, d := range tl.FunctionDeclarations {
				ns = append(ns, d.Name)
			}
			if tl.GoogleSearch != nil {
				ns = append(ns, "(google search)")
			}
			out = append(out, ns)
		}
		return out
	}
	newConfig := func() *genai.GenerateContentConfig {
		return &genai.GenerateContentConfig{Temperature: genai.Ptr[float32](0.2), Tools: []*genai.Tool{
			{FunctionDeclarations: decl("grep", recall.ToolReadOutput)},
			{FunctionDeclarations: decl(recall.ToolSearchOutputs, recall.ToolSearchHistory, recall.ToolReadTurn)},
			{GoogleSearch: &genai.GoogleSearch{}},
		}}
	}
	for _, tc := range []struct {
		name string
		keep Installed
		want [][]string
	}{
		{"nothing kept: a tool left empty is dropped", Installed{}, [][]string{{"grep"}, {"(google search)"}}},
		{"the output tools kept", Installed{Outputs: true}, [][]string{{"grep", recall.ToolReadOutput}, {recall.ToolSearchOutputs}, {"(google search)"}}},
		{"the history tools kept", Installed{History: true}, [][]string{{"grep"}, {recall.ToolSearchHistory, recall.ToolReadTurn}, {"(google search)"}}},
	} {
		cfg := newConfig()
		got := Withhold(cfg, tc.keep)
		if diff := cmp.Diff(tc.want, names(got)); diff != "" {
			t.Errorf("%s: declared (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(names(newConfig()), names(cfg)); diff != "" {
			t.Errorf("%s: the config given was changed (-before +after):\n%s", tc.name, diff)
		}
		if got.Temperature != cfg.Temperature {
			t.Errorf("%s: the rest of the config is not kept", tc.name)
		}
	}
	cfg := newConfig()
	if got := Withhold(cfg, Installed{Outputs: true, History: true}); got != cfg {
		t.Error("everything kept: the config is not returned as it is")
	}
	// A function calling config that forces a call or names the allowed functions could name a
	// function not declared: nothing is withheld then.
	for _, fc := range []*genai.FunctionCallingConfig{
		{Mode: genai.FunctionCallingConfigModeAny},
		{Mode: genai.FunctionCallingConfigModeAuto, AllowedFunctionNames: []string{recall.ToolReadOutput, "grep"}},
	} {
		cfg := newConfig()
		cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: fc}
		if got := Withhold(cfg, Installed{}); got != cfg {
			t.Errorf("function calling config %+v: declarations withheld", fc)
		}
	}
	if Withhold(nil, Installed{}) != nil {
		t.Error("a nil config is not returned nil")
	}
}
