package trajectory

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadGeminiAPIRequest: the last request an agent on adk-go sent, logged as the Gemini API's
// GenerateContentRequest (contents, systemInstruction, tools), reads as the conversation the
// database source reads from the session's stored events, up to the reply the request asked for;
// the same in the Python SDK's snake_case, and its contents alone as an array (a Gemini CLI
// checkpoint's form).
func TestReadGeminiAPIRequest(t *testing.T) {
	svc, id, llm := recordedSession(t)
	want := stored(t, svc, id)
	want.Turns[len(want.Turns)-1].Steps = nil // the request asks for the last reply
	want.Turns = want.Turns[:len(want.Turns)-1]
	last := llm.sent[len(llm.sent)-1]
	logged, err := json.Marshal(map[string]any{
		"model": "models/gemini-2.5-flash", "contents": last.Contents,
		"systemInstruction": last.Config.SystemInstruction, "tools": last.Config.Tools,
	})
	if err != nil {
		t.Fatal(err)
	}
	contents, err := json.Marshal(last.Contents)
	if err != nil {
		t.Fatal(err)
	}
	// The request's config beside its contents, as the Python SDK's generate_content takes them
	// and adk-python's LlmRequest holds them; and adk-go's own LLMRequest in JSON.
	withConfig, err := json.Marshal(map[string]any{"model": "gemini-2.5-flash", "contents": last.Contents, "config": last.Config})
	if err != nil {
		t.Fatal(err)
	}
	last.Model = "gemini-2.5-flash"
	adkRequest, err := json.Marshal(last)
	if err != nil {
		t.Fatal(err)
	}
	snake := strings.NewReplacer(`"functionCall"`, `"function_call"`, `"functionResponse"`, `"function_response"`,
		`"systemInstruction"`, `"system_instruction"`, `"functionDeclarations"`, `"function_declarations"`,
		`"parametersJsonSchema"`, `"parameters_json_schema"`).Replace
	for _, tc := range []struct {
		name   string
		body   []byte
		format Format
	}{
		{"request.json", logged, GenAIContents},
		{"request-python.json", []byte(snake(string(logged))), GenAIContents},
		{"request-config.json", withConfig, GenAIContents},
		{"llm-request-python.json", []byte(snake(string(withConfig))), GenAIContents},
		{"llm-request-go.json", adkRequest, GenAIContents},
		{"checkpoint.json", contents, GenAIContents},
	} {
		got := readBody(t, tc.name, tc.body)
		if len(got) != 1 {
			t.Fatalf("%s: %d sessions", tc.name, len(got))
		}
		s := got[0]
		if d := cmp.Diff(want.Turns, s.Turns, cmpSession); d != "" {
			t.Errorf("%s: turns differ from the stored events' (-stored +read):\n%s", tc.name, d)
		}
		if s.Format != tc.format {
			t.Errorf("%s: format %q", tc.name, s.Format)
		}
		if tc.name == "checkpoint.json" {
			continue
		}
		if s.Model != "gemini-2.5-flash" || !strings.Contains(s.System, "Answer.") || len(s.Tools) != 1 || s.Tools[0].Name != "read_file" || s.Tools[0].Parameters == nil {
			t.Errorf("%s: model %q, system %q, tools %+v", tc.name, s.Model, s.System, s.Tools)
		}
	}
}

// TestMalformedGeminiAPIRequest: a request that cannot be read names the field and what was
// expected there.
func TestMalformedGeminiAPIRequest(t *testing.T) {
	call := `{"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]}`
	for _, tc := range []struct{ body, want string }{
		{`{"contents": 7}`, "contents"},
		{`{"contents": [7]}`, "contents[0]"},
		{`{"contents": [{"role": "tool", "parts": [{"text": "x"}]}]}`, "contents[0].role"},
		{`{"contents": [{"role": "user", "parts": [{"text": "go"}]}, ` + call + `, {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": 7}}]}]}`, "contents[2].parts[0]"},
		{`{"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]}]}`, "contents[0].parts[0]"},
		{`{"contents": [], "tools": [{"functionDeclarations": [{"description": "no name"}]}]}`, "tools[0].functionDeclarations[0]"},
		{`{"contents": [], "systemInstruction": 7}`, "systemInstruction"},
	} {
		wantFormatError(t, "bad.json", tc.body, tc.want)
	}
}

// TestMalformedGeminiAPIConfig: a request's config that cannot be read names it.
func TestMalformedGeminiAPIConfig(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"contents": [], "config": 7}`, "config"},
		{`{"contents": [], "config": {"system_instruction": 7}}`, "config.system_instruction"},
		{`{"Contents": [], "Config": {"tools": [{"functionDeclarations": [{}]}]}}`, "Config.tools[0].functionDeclarations[0]"},
		{`{"Contents": [7]}`, "Contents[0]"},
	} {
		wantFormatError(t, "bad.json", tc.body, tc.want)
	}
}

// TestReadGenAICodeExecution: the code a model wrote for the provider's code execution and what
// running it gave (camelCase or snake_case) are the model's reply, kept as its text and counted.
func TestReadGenAICodeExecution(t *testing.T) {
	for _, tc := range []struct{ name, code, result string }{
		{"camel.json", "executableCode", "codeExecutionResult"},
		{"snake.json", "executable_code", "code_execution_result"},
	} {
		body := `[{"role": "user", "parts": [{"text": "What is 2**10?"}]},
			{"role": "model", "parts": [{"` + tc.code + `": {"language": "PYTHON", "code": "print(2**10)"}}, {"` + tc.result + `": {"outcome": "OUTCOME_OK", "output": "1024\n"}}, {"text": "It is 1024."}]}]`
		got := readBody(t, tc.name, []byte(body))
		want := []Turn{{User: "What is 2**10?", Origin: Person, Steps: []Step{{Text: "print(2**10)\n1024\n\nIt is 1024."}}}}
		if d := cmp.Diff(want, got[0].Turns, cmpSession); d != "" {
			t.Errorf("%s: turns (-want +got):\n%s", tc.name, d)
		}
		if !cmp.Equal(got[0].Notes, []string{"2 parts of code the provider executed, or of its output, kept as the model's text"}) {
			t.Errorf("%s: notes %q", tc.name, got[0].Notes)
		}
	}
}
