package trajectory

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadResponsesRequest: a logged OpenAI Responses API request reads as the conversation it
// holds: its instructions the instruction; its function tools declared (the provider's web search
// left out); a message in the short form ({"role", "content"}) or as an item; the calls of one
// response answered by call id, an output as text or as content items; reasoning left out.
func TestReadResponsesRequest(t *testing.T) {
	s := readOne(t, "testdata/responses.json")
	read := "package tabs\n\nfunc Split(s string) []string { return strings.Split(s, \" \") }\n"
	out := func(id, name string, args map[string]any, text string) Call {
		return Call{ID: id, Name: name, Args: args, Output: text, Response: map[string]any{"result": text}, Recorded: true}
	}
	want := &Session{
		ID: "testdata/responses.json", Format: ResponsesRequest, Model: "gpt-5.1",
		System: "You are a careful coding agent. Run the tests before you answer.",
		Tools: []Tool{
			{Name: "read_file", Description: "Reads a file.", Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}},
			{Name: "run_tests", Description: "Runs go test.", Parameters: map[string]any{"type": "object", "properties": map[string]any{"pkg": map[string]any{"type": "string"}}}},
		},
		Turns: []Turn{
			{User: "Why does TestSplitTabs fail?", Origin: Person, Steps: []Step{
				{Calls: []Call{
					out("call_1", "read_file", map[string]any{"path": "parse.go"}, read),
					out("call_2", "run_tests", map[string]any{"pkg": "./..."}, "--- FAIL: TestSplitTabs (0.00s)"),
				}},
				{Text: "Split splits on spaces only; tabs stay inside the fields."},
			}},
			{User: "Fix it and rerun the tests.", Origin: Person, Steps: []Step{
				{Calls: []Call{out("call_3", "run_tests", map[string]any{"pkg": "./tabs"}, "ok  tabs 0.01s")}},
				{Text: "Fixed: Split uses strings.Fields; the tests pass."},
			}},
		},
	}
	if d := cmp.Diff(want, s, cmpSession); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
}

// TestMalformedResponsesRequest: a request that cannot be read names the field and what was
// expected there.
func TestMalformedResponsesRequest(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"model": "m", "input": [7]}`, "input[0]"},
		{`{"model": "m", "instructions": 7, "input": []}`, "instructions"},
		{`{"model": "m", "input": [{"type": "function_call_output", "call_id": "nope", "output": "x"}]}`, "input[0]"},
		{`{"model": "m", "input": [{"role": "user", "content": 7}]}`, "input[0].content"},
		{`{"model": "m", "tools": [{"type": "web_search"}, {"type": "function"}], "input": []}`, "tools[1]"},
		{`{"model": "m", "tools": [7], "input": []}`, "tools[0]"},
	} {
		wantFormatError(t, "bad.json", tc.body, tc.want)
	}
}

// TestReadResponsesToolItems: the calls of the Responses API's own tools an agent runs (a local
// shell, a shell, a computer, apply_patch) are calls answered by their outputs, whatever form the
// output takes (text, a shell's stdout and stderr, a screenshot); a refusal is the model's reply;
// what the provider ran or stores (a file search, an item reference) is left out and counted.
func TestReadResponsesToolItems(t *testing.T) {
	s := readOne(t, "testdata/responses-tools.json")
	out := func(id, name string, args map[string]any, text string) Call {
		return Call{ID: id, Name: name, Args: args, Output: text, Response: map[string]any{"result": text}, Recorded: true}
	}
	want := &Session{
		ID: "testdata/responses-tools.json", Format: ResponsesRequest, Model: "computer-use-preview",
		System: "You work in the person's repository.",
		Tools: []Tool{
			{Name: "local_shell", Parameters: map[string]any{"type": "object", "properties": map[string]any{
				"type": map[string]any{"type": "string"}, "command": map[string]any{"type": "array"}, "env": map[string]any{"type": "object"}}}},
			{Name: "shell", Parameters: map[string]any{"type": "object", "properties": map[string]any{
				"commands": map[string]any{"type": "array"}, "timeout_ms": map[string]any{"type": "number"}}}},
			{Name: "computer", Parameters: map[string]any{"type": "object", "properties": map[string]any{"type": map[string]any{"type": "string"}}}},
			{Name: "apply_patch", Parameters: map[string]any{"type": "object", "properties": map[string]any{
				"type": map[string]any{"type": "string"}, "path": map[string]any{"type": "string"}, "diff": map[string]any{"type": "string"}}}},
		},
		Turns: []Turn{
			{User: "List the repository, run the tests, look at the page and fix the title.", Origin: Person, Steps: []Step{
				{Text: "I'll look around first.", Calls: []Call{
					out("call_ls", "local_shell", map[string]any{"type": "exec", "command": []any{"ls"}, "env": map[string]any{}}, "go.mod\npage.go\n"),
					out("call_sh", "shell", map[string]any{"commands": []any{"go test ./..."}, "timeout_ms": json.Number("60000")}, "--- FAIL: TestTitle\nexit status 1\n"),
					out("call_cu", "computer", map[string]any{"type": "screenshot"}, "[image]"),
				}},
				{Calls: []Call{out("call_ap", "apply_patch", map[string]any{"type": "update_file", "path": "page.go", "diff": "@@\n-const Title = \"\"\n+const Title = \"Home\"\n"}, "Updated page.go")}},
				{Text: "The title is set; TestTitle passes."},
			}},
			{User: "Now delete the repository.", Origin: Person, Steps: []Step{{Text: "I can't delete the repository."}}},
		},
		Notes: []string{
			"1 file_search_call items the provider ran left out",
			"1 items the replay does not read left out (item_reference)",
		},
	}
	if d := cmp.Diff(want, s, cmpSession); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
}
