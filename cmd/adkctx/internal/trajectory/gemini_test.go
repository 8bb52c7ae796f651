package trajectory

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadGeminiCLI: a Gemini CLI session reads as the conversation the model had: each model
// message one reply, its tool calls answered by the response of their recorded function
// response parts, by id when a call's result holds a whole batch's (an error response as the
// error it is); a user message repeating the results is not a message of the person's, nor is
// the session context the CLI opens with; a call the person cancelled gets the
// error every unanswered call gets; the CLI's notices to the person and the model's thoughts left
// out; content as a string or as parts.
func TestReadGeminiCLI(t *testing.T) {
	s := readOne(t, "testdata/gemini-cli.json")
	read := "package tabs\n\nfunc Split(s string) []string { return strings.Split(s, \" \") }\n"
	test := "Command: go test ./...\nDirectory: (root)\nStdout: --- FAIL: TestSplitTabs (0.00s)\nFAIL\nStderr: (empty)\nError: (none)\nExit Code: 1"
	failed := map[string]any{"error": "Failed to edit, 0 occurrences found for old_string"}
	want := []Turn{
		{User: "<session_context>\nThis is the Gemini CLI. Today's date is Saturday, 3 October 2026.\n</session_context>\n\nWhy does TestSplitTabs fail?", Origin: Person, Steps: []Step{
			{Text: "Let me look at the parser and run the test.", Calls: []Call{
				{ID: "read_file-1759478405000-a1", Name: "read_file", Args: map[string]any{"absolute_path": "/work/tabs/parse.go"},
					Output: read, Response: map[string]any{"output": read}, Recorded: true},
				{ID: "run_shell_command-1759478405000-b2", Name: "run_shell_command", Args: map[string]any{"command": "go test ./...", "description": "Run the tests"},
					Output: test, Response: map[string]any{"output": test}, Recorded: true},
			}},
			{Calls: []Call{
				{ID: "replace-1759478412000-c3", Name: "replace", Args: map[string]any{"file_path": "/work/tabs/parse.go", "old_string": "strings.Split(s, \" \")", "new_string": "strings.Fields(s)"},
					Output: `{"error":"Failed to edit, 0 occurrences found for old_string"}`, Response: failed, Recorded: true},
				{ID: "write_file-1759478412000-d4", Name: "write_file", Args: map[string]any{"file_path": "/work/tabs/parse.go"},
					Response: map[string]any{"error": "no output was recorded for this call"}}, // cancelled: never run
			}},
		}},
		{User: "Use strings.Fields.", Origin: Person, Steps: []Step{{Text: "Split splits on spaces only; strings.Fields splits on any whitespace, tabs included."}}},
	}
	if d := cmp.Diff(want, s.Turns, cmpSession); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	if said := s.Turns[0].Said(); said != "Why does TestSplitTabs fail?" {
		t.Errorf("the person said %q: the CLI's session context is not theirs", said)
	}
	if s.Format != GeminiCLI || s.Model != "gemini-2.5-pro" {
		t.Errorf("format %q model %q", s.Format, s.Model)
	}
	notes := []string{
		"1 calls without a recorded output: answered with an error",
		"a Gemini CLI session records no system prompt or tool declarations: the replay sends none and infers the tools from the calls",
		"1 notices the CLI showed the person (info, errors, warnings) left out: the model never saw them",
	}
	if d := cmp.Diff(notes, s.Notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}

// TestMalformedGeminiCLI: a session that cannot be read names the record and what was expected.
func TestMalformedGeminiCLI(t *testing.T) {
	const head = `{"sessionId": "s", "projectHash": "p", "messages": `
	for _, tc := range []struct{ body, want string }{
		{head + `7}`, "messages"},
		{head + `[7]}`, "messages[0]"},
		{head + `[{"type": "user", "content": 7}]}`, "messages[0].content"},
		{head + `[{"type": "user", "content": "go"}, {"type": "gemini", "toolCalls": [{"id": "a", "name": "t", "result": [{"functionResponse": {"response": 7}}]}]}]}`, "messages[1].toolCalls[0].result"},
	} {
		wantFormatError(t, "bad.json", tc.body, tc.want)
	}
}
