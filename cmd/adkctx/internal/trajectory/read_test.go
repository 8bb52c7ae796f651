package trajectory

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func readAll(t *testing.T, path string) ([]*Session, error) {
	t.Helper()
	var out []*Session
	for s, err := range ReadFile(path) {
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

func readOne(t *testing.T, path string) *Session {
	t.Helper()
	ss, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 {
		t.Fatalf("%s: %d sessions, want 1", path, len(ss))
	}
	return ss[0]
}

var cmpSession = cmp.Options{cmpopts.IgnoreUnexported(Call{}, Turn{}), cmpopts.EquateEmpty()}

func bash(cmd string) map[string]any { return map[string]any{"command": cmd} }

func TestReadChatObject(t *testing.T) {
	s := readOne(t, "testdata/chat.json")
	want := &Session{
		ID: "testdata/chat.json", Format: OpenAIChat, Model: "gpt-4o-2024-08-06",
		System: "You are an airline agent. Follow the policy.",
		Tools: []Tool{
			{Name: "get_user_details", Description: "Get the details of a user.", Parameters: map[string]any{"type": "object", "properties": map[string]any{"user_id": map[string]any{"type": "string"}}, "required": []any{"user_id"}}},
			{Name: "get_reservation_details", Description: "Get the details of a reservation.", Parameters: map[string]any{"type": "object", "properties": map[string]any{"reservation_id": map[string]any{"type": "string"}}}},
			{Name: "update_reservation_flights", Parameters: map[string]any{"type": "object", "properties": map[string]any{
				"reservation_id": map[string]any{"type": "string"}, "flights": map[string]any{"type": "array"}, "payment_id": map[string]any{"type": "string"}}}},
		},
		Turns: []Turn{
			{User: "Hi, I am mia_li_3668 and I want to change reservation NO6JO3.", Origin: Person, Steps: []Step{
				{Calls: []Call{
					{ID: "call_a1", Name: "get_user_details", Args: map[string]any{"user_id": "mia_li_3668"}, Recorded: true,
						Output:   `{"user_id": "mia_li_3668", "payment_methods": {"credit_card_4421486": {"brand": "visa"}, "gift_card_7091239": {"amount": 127}}}`,
						Response: map[string]any{"user_id": "mia_li_3668", "payment_methods": map[string]any{"credit_card_4421486": map[string]any{"brand": "visa"}, "gift_card_7091239": map[string]any{"amount": json.Number("127")}}}},
					{ID: "call_a2", Name: "get_reservation_details", Args: map[string]any{"reservation_id": "NO6JO3"}, Recorded: true,
						Output:   `{"reservation_id": "NO6JO3", "flights": [{"flight_number": "HAT136", "date": "2024-05-20"}], "payment_id": "credit_card_4421486"}`,
						Response: map[string]any{"reservation_id": "NO6JO3", "flights": []any{map[string]any{"flight_number": "HAT136", "date": "2024-05-20"}}, "payment_id": "credit_card_4421486"}},
				}},
				{Text: "Your reservation NO6JO3 has flight HAT136 on 2024-05-20. Which date would you like?"},
			}},
			{User: "Move it to 2024-05-22, pay with gift_card_7091239.", Origin: Person, Steps: []Step{
				{Text: "Updating.", Calls: []Call{{ID: "call_b1", Name: "update_reservation_flights", Recorded: true,
					Args:     map[string]any{"reservation_id": "NO6JO3", "flights": []any{map[string]any{"flight_number": "HAT136", "date": "2024-05-22"}}, "payment_id": "gift_card_7091239"},
					Output:   "Error: not enough balance",
					Response: map[string]any{"result": "Error: not enough balance"}}}},
				{Text: "The gift card does not cover it."},
			}},
		},
		Notes: []string{"the last message to the agent has no reply: not replayed"},
	}
	if d := cmp.Diff(want, s, cmpSession); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
	if s.Steps() != 4 {
		t.Errorf("Steps() = %d, want 4", s.Steps())
	}
}

func TestReadMessageArray(t *testing.T) {
	s := readOne(t, "testdata/messages.json")
	want := &Session{
		ID: "testdata/messages.json", Format: OpenAIChat,
		Tools: []Tool{
			{Name: "ls", Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}},
			{Name: "read", Parameters: map[string]any{"type": "object", "properties": map[string]any{"arguments": map[string]any{"type": "string"}}}},
		},
		Turns: []Turn{
			{User: "List the files.", Origin: Person, Steps: []Step{
				{Calls: []Call{{ID: "call_0_0", Name: "ls", Args: map[string]any{"path": "."}, Output: "go.mod\nmain.go", Response: map[string]any{"result": "go.mod\nmain.go"}, Recorded: true}}},
				// Two replies in a row are one model reply.
				{Text: "Two files.\n\nAnything else?"},
			}},
			// Two user messages in a row are one turn's message.
			{User: "Read main.go\n\nand go.mod", Origin: Person, Steps: []Step{
				{Calls: []Call{{ID: "x", Name: "read", Args: map[string]any{"arguments": "not json"}, Response: map[string]any{"error": "no output was recorded for this call"}}}},
			}},
		},
		Notes: []string{"1 calls without a recorded output: answered with an error", `1 calls whose arguments are not a JSON object: kept as {"arguments": text}`},
	}
	if d := cmp.Diff(want, s, cmpSession); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
}

func TestReadTauResults(t *testing.T) {
	ss, err := readAll(t, "testdata/tau.json")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var steps []int
	for _, s := range ss {
		ids = append(ids, s.ID)
		steps = append(steps, s.Steps())
		if s.Format != TauBench || s.System != "Airline policy." {
			t.Errorf("%s: format %q system %q", s.ID, s.Format, s.System)
		}
	}
	if d := cmp.Diff([]string{"testdata/tau.json#0-task7-trial0", "testdata/tau.json#1-task8-trial1"}, ids); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{2, 1}, steps); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	last := ss[1].Turns[0].Steps[0].Calls[0]
	if last.Recorded || last.Response["error"] == nil {
		t.Errorf("call without output: %+v", last)
	}
}

func TestReadMiniSWEText(t *testing.T) {
	s := readOne(t, "testdata/text.traj.json")
	want := &Session{
		ID: "testdata/text.traj.json", Format: MiniSWEText, Model: "gemini/gemini-3-pro-preview",
		System: "You are a helpful assistant that can interact with a computer.",
		Turns: []Turn{
			{User: "<pr_description>\nFix the parser in src/parse.py\n</pr_description>", Origin: Person, Steps: []Step{
				{Text: "THOUGHT: Find the parser.", Calls: []Call{{ID: "call_0_0", Name: "bash", Args: bash(`grep -rn "def parse" src/`), Recorded: true,
					Output:   "<returncode>0</returncode>\n<output>\nsrc/parse.py:12:def parse_line(text):\n</output>",
					Response: map[string]any{"returncode": json.Number("0"), "output": "src/parse.py:12:def parse_line(text):\n"}}}},
				// Two actions: a format error, so no call; the harness's reply is a new turn.
				{Text: "THOUGHT: Two things.\n\n```bash\nls\n```\n\n```bash\npwd\n```"},
			}},
			{User: "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.", Origin: Environment, Steps: []Step{
				{Text: "THOUGHT: Run the tests.", Calls: []Call{{ID: "call_2_0", Name: "bash", Args: bash("python -m pytest tests/test_parse.py"), Recorded: true,
					Output:   "The last command <command>python -m pytest tests/test_parse.py</command> timed out and has been killed.\nThe output of the command was:\n<output>\ncollected 3 items\n</output>\nPlease try another command and make sure to avoid those requiring interactive input.",
					Response: map[string]any{"result": "The last command <command>python -m pytest tests/test_parse.py</command> timed out and has been killed.\nThe output of the command was:\n<output>\ncollected 3 items\n</output>\nPlease try another command and make sure to avoid those requiring interactive input."}}}},
				{Text: "THOUGHT: Submit.", Calls: []Call{{ID: "call_3_0", Name: "bash", Args: bash("echo MINI_SWE_AGENT_FINAL_OUTPUT && git diff"), Recorded: true,
					Output: "diff --git a/src/parse.py b/src/parse.py\n", Response: map[string]any{"result": "diff --git a/src/parse.py b/src/parse.py\n"}}}},
			}},
		},
	}
	if d := cmp.Diff(want, s, cmpSession, cmpopts.IgnoreFields(Session{}, "Tools")); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
	if len(s.Tools) != 1 || s.Tools[0].Name != "bash" {
		t.Errorf("tools: %+v", s.Tools)
	}
}

func TestReadMiniSWEToolCalls(t *testing.T) {
	s := readOne(t, "testdata/toolcalls.traj.json")
	want := &Session{
		ID: "testdata/toolcalls.traj.json", Format: MiniSWEToolCalls, Model: "openai/gpt-5-mini",
		System: "You are a helpful assistant.",
		Turns: []Turn{
			{User: "Please solve this issue: the cache in pkg/cache/lru.go leaks.", Origin: Person, Steps: []Step{
				{Text: "Look at the file.", Calls: []Call{{ID: "call_X1", Name: "bash", Args: bash("nl -ba pkg/cache/lru.go | sed -n '1,40p'"), Recorded: true,
					Output:   "{\n  \"returncode\": 0,\n  \"output\": \"     1\\tpackage cache\\n     2\\tfunc (c *LRU) Evict() {}\\n\"\n}",
					Response: map[string]any{"returncode": json.Number("0"), "output": "     1\tpackage cache\n     2\tfunc (c *LRU) Evict() {}\n"}}}},
				{Text: "I think I am done."},
			}},
			{User: "Tool call error:\n\n<error>\nNo tool calls found in the response.\n</error>", Origin: Environment, Steps: []Step{
				{Calls: []Call{{ID: "call_X2", Name: "bash", Args: bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"), Recorded: true,
					Output:   "<returncode>0</returncode>\n<output>\nCOMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n</output>",
					Response: map[string]any{"returncode": json.Number("0"), "output": "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n"}}}},
			}},
		},
		Notes: []string{"1 exit messages (the run's end, never sent to the model) left out"},
	}
	if d := cmp.Diff(want, s, cmpSession, cmpopts.IgnoreFields(Session{}, "Tools")); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
}

func TestReadATIF(t *testing.T) {
	s := readOne(t, "testdata/atif.json")
	want := &Session{
		ID: "testdata/atif.json", Format: ATIF, Model: "gemini-2.5-flash",
		System: "You answer questions about stocks.",
		Tools: []Tool{
			{Name: "financial_search", Parameters: map[string]any{"type": "object", "properties": map[string]any{"ticker": map[string]any{"type": "string"}, "metric": map[string]any{"type": "string"}}}},
			{Name: "bash_command", Parameters: map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}},
		},
		Turns: []Turn{
			{User: "What is the price of GOOGL?", Origin: Person, Steps: []Step{
				{Text: "I will search.", Calls: []Call{
					{ID: "call_price_1", Name: "financial_search", Args: map[string]any{"ticker": "GOOGL", "metric": "price"}, Recorded: true,
						Output: "GOOGL is trading at $185.35", Response: map[string]any{"result": "GOOGL is trading at $185.35"}},
					{ID: "call_volume_2", Name: "financial_search", Args: map[string]any{"ticker": "GOOGL", "metric": "volume"}, Recorded: true,
						Output: "GOOGL volume: 1.5M shares traded.", Response: map[string]any{"result": "GOOGL volume: 1.5M shares traded."}},
				}},
				{Text: "THOUGHT: check\n```bash\ndate\n```", Calls: []Call{{ID: "call_4_1", Name: "bash_command", Args: bash("date"), Recorded: true,
					Output: "Tue Oct 14", Response: map[string]any{"result": "Tue Oct 14"}}}},
			}},
			// A result that answers no call reaches the agent as its environment's message.
			{User: "note: market closed", Origin: Environment, Steps: []Step{{Text: "GOOGL trades at $185.35."}}},
		},
	}
	if d := cmp.Diff(want, s, cmpSession); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
}

func TestMalformedFiles(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"empty.json", "testdata/bad/empty.json: expected a JSON object or array, got an empty file"},
		{"scalar.json", `testdata/bad/scalar.json: expected a JSON object (a chat, mini-swe-agent or ATIF trajectory, a stored adk session) or an array (chat messages, tau-bench results, stored adk sessions), got a file starting with '4'`},
		{"truncated.json", "testdata/bad/truncated.json: expected valid JSON, got the file ends inside a value"},
		{"unknown.json", `testdata/bad/unknown.json: expected a trajectory: an object with "messages" (chat), "trajectory_format" (mini-swe-agent), "schema_version" (ATIF), "events" (a stored adk session), "sessionId" and "projectHash" (Gemini CLI), "contents" (a Gemini API request), "input" beside "model" (an OpenAI Responses API request), or JSON Lines of a Claude Code transcript or a Codex rollout, got an object with keys hello`},
		{"orphan_output.json", `testdata/bad/orphan_output.json: message 1: expected a tool output right after the reply that called the tool, got an output with no reply before it`},
		{"bad_role.json", `testdata/bad/bad_role.json: message 1.role: expected "system", "developer", "user", "assistant", "tool" or "function", got "robot"`},
		{"tau_bad.json", `testdata/bad/tau_bad.json: record 1 (task_id 2).traj: expected an array of chat messages, got an object`},
		{"atif_source.json", `testdata/bad/atif_source.json: steps[1].source: expected "system", "user" or "agent", got "model"`},
		{"atif_version.json", `testdata/bad/atif_version.json: schema_version: expected an ATIF version ("ATIF-v1.x"), got "\"OTHER-2\""`},
		{"miniswe_tool_in_text.json", `testdata/bad/miniswe_tool_in_text.json: messages[1].role: expected "system", "user" or "assistant" in a text-action trajectory, got "tool"`},
		{"call_no_name.json", `testdata/bad/call_no_name.json: message 1.tool_calls[0].function.name: expected the called function's name, got none`},
		{"content_object.json", `testdata/bad/content_object.json: message 0.content: expected a string, null or an array of content parts, got an object`},
		{"array_of_numbers.json", `testdata/bad/array_of_numbers.json: [0]: expected an object (a chat message or a tau-bench result), got a number`},
		{"two_values.json", `testdata/bad/two_values.json: expected one JSON value, got more data after the first object`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "bad", tt.file)
			ss, err := readAll(t, path)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want a *FormatError", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %s\nwant %s", err, tt.want)
			}
			if fe.File != path {
				t.Errorf("File = %q, want %q", fe.File, path)
			}
			// tau-bench's first record is good and comes before the error; no other file yields one.
			if tt.file != "tau_bad.json" && len(ss) != 0 {
				t.Errorf("%d sessions before the error", len(ss))
			}
		})
	}
}

func TestShellResponse(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]any
	}{
		{"<returncode>2</returncode>\n<output>\nNo such file\n</output>", map[string]any{"returncode": json.Number("2"), "output": "No such file\n"}},
		{"<returncode>0</returncode>\n<output>\n</output>", map[string]any{"returncode": json.Number("0"), "output": ""}},
		{"<exception>boom</exception>\n<returncode>-1</returncode>\n<output>\n</output>", map[string]any{"returncode": json.Number("-1"), "output": "", "exception": "boom"}},
		{"<returncode>1</returncode>\n<warning>\ntoo long\n</warning><output_head>\nab\n</output_head>", map[string]any{"returncode": json.Number("1"), "output": "<warning>\ntoo long\n</warning><output_head>\nab\n</output_head>"}},
		{`{"returncode": 3, "output": "x"}`, map[string]any{"returncode": json.Number("3"), "output": "x"}},
		{"Observation: hello", map[string]any{"result": "Observation: hello"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, ShellResponse(tt.in)); d != "" {
			t.Errorf("ShellResponse(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

func TestFormatErrorNamesTheRecord(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"messages": [`)
	for i := range 30 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"role": "user", "content": "x"}`)
	}
	b.WriteString(`, {"role": "assistant", "tool_calls": "oops"}]}`)
	var err error
	for _, e := range Read("big.json", strings.NewReader(b.String())) {
		err = e
	}
	want := `big.json: messages[30].tool_calls: expected an array of tool calls, got a string`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestReadClaudeCode: a Claude Code transcript's lines are one session: the content blocks of
// one model message (written one per line) are one reply, thinking blocks and subagents' and
// meta lines are left out, tool results answer their calls by id (their text blocks joined, an
// image as a marker), and Claude Code's own compaction summary opens the person's next turn.
func TestReadClaudeCode(t *testing.T) {
	s := readOne(t, "testdata/claude-code.jsonl")
	result := func(text string) map[string]any { return map[string]any{"result": text} }
	read := "     1\tpackage parser\n     2\tfunc splitFields(s string) []string { return strings.Split(s, \" \") }"
	want := &Session{
		ID: "testdata/claude-code.jsonl", Format: ClaudeCode, Model: "claude-x",
		Turns: []Turn{
			{User: "Make the parser accept tabs. The tests are in parser_test.go.", Origin: Person, Steps: []Step{
				{Text: "I'll read the parser and its tests.", Calls: []Call{
					{ID: "toolu_1", Name: "Read", Args: map[string]any{"file_path": "/src/parser.go"}, Output: read, Response: result(read), Recorded: true},
					{ID: "toolu_2", Name: "Grep", Args: map[string]any{"pattern": "splitFields", "output_mode": "content"},
						Output: "/src/parser.go:2:func splitFields\n[image]", Response: result("/src/parser.go:2:func splitFields\n[image]"), Recorded: true},
				}},
				{Calls: []Call{{ID: "toolu_3", Name: "Bash", Args: map[string]any{"command": "go test ./...", "description": "Run the tests"},
					Output: "FAIL: TestTabs", Response: map[string]any{"error": "FAIL: TestTabs"}, Recorded: true}}}, // is_error
				{Text: "TestTabs fails as expected; splitFields splits on spaces only."},
			}},
			{User: "This session is being continued from a previous conversation.\n\nUse strings.Fields instead.", Origin: Person, Steps: []Step{
				{Calls: []Call{{ID: "toolu_4", Name: "Edit", Args: map[string]any{"file_path": "/src/parser.go", "old_string": `strings.Split(s, " ")`, "new_string": "strings.Fields(s)"},
					Response: map[string]any{"error": "no output was recorded for this call"}}}},
			}},
		},
		Notes: []string{
			"1 calls without a recorded output: answered with an error",
			"a Claude Code transcript records no system prompt or tool declarations: the replay sends none and infers the tools from the calls",
			"2 lines of subagents or meta messages left out",
			"1 summaries Claude Code's own compaction wrote are replayed as messages to the agent, after the history they stood for",
		},
	}
	if d := cmp.Diff(want, s, cmpSession, cmpopts.IgnoreFields(Session{}, "Tools")); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
	var tools []string
	for _, tl := range s.Tools {
		tools = append(tools, tl.Name)
	}
	if d := cmp.Diff([]string{"Read", "Grep", "Bash", "Edit"}, tools); d != "" {
		t.Errorf("tools inferred from the calls (-want +got):\n%s", d)
	}
}

// TestMalformedClaudeCode: a transcript that cannot be read names the line and what was
// expected there.
func TestMalformedClaudeCode(t *testing.T) {
	const open = `{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n"
	for _, tc := range []struct{ body, want string }{
		{open + `{"type":"assistant","sessionId":"s","message":{"id":"m","content":[]}}` + "\n{not json", "line 3"},
		{open + `7` + "\n", "line 2"},
		{open + `{"type":"assistant","sessionId":"s","message":{"id":"m","content":7}}`, "line 2.content"},
		{open + `{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"nope","content":"x"}]}}`, "line 2.content[0]"},
		{open + `{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":{"a":1}}]}}`, "line 2.content[0]"},
	} {
		wantFormatError(t, "bad.jsonl", tc.body, tc.want)
	}
}

// TestReadAnthropicMessages: chat messages in Anthropic's Messages form — the instruction beside
// them, tools with input_schema, calls as tool_use blocks and results as tool_result blocks (in
// any order, text blocks after them) — read as the same conversation the OpenAI form gives.
func TestReadAnthropicMessages(t *testing.T) {
	s := readOne(t, "testdata/anthropic.json")
	out := func(id, name string, args map[string]any, text string) Call {
		return Call{ID: id, Name: name, Args: args, Output: text, Response: map[string]any{"result": text}, Recorded: true}
	}
	want := &Session{
		ID: "testdata/anthropic.json", Format: AnthropicMessages, Model: "claude-x", System: "You are a careful coding agent.",
		Tools: []Tool{
			{Name: "read_file", Description: "Reads a file.", Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}},
			{Name: "run_tests", Parameters: map[string]any{"type": "object", "properties": map[string]any{}}},
		},
		Turns: []Turn{
			{User: "Fix the tab parsing.", Origin: Person, Steps: []Step{
				{Text: "Reading both files.", Calls: []Call{
					out("toolu_1", "read_file", map[string]any{"path": "a.go"}, "package a"),
					out("toolu_2", "read_file", map[string]any{"path": "b.go"}, "package b"),
				}},
				{Text: "Both read: a.go splits on spaces."},
			}},
			{User: "Now run the tests.", Origin: Person, Steps: []Step{{Calls: []Call{{ID: "toolu_3", Name: "run_tests", Args: map[string]any{},
				Output: "FAIL TestTabs", Response: map[string]any{"error": "FAIL TestTabs"}, Recorded: true}}}}}, // is_error
			{User: "Why does it fail?", Origin: Person, Steps: []Step{{Text: "a.go still splits on spaces only."}}},
		},
	}
	if d := cmp.Diff(want, s, cmpSession); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
}

// TestReadAnthropicTextResults: a log in Anthropic's form whose user message answers the reply's
// call as text instead of a tool_result block (Cline's api_conversation_history.json) reads the
// text as the call's output, not as a message of the person's.
func TestReadAnthropicTextResults(t *testing.T) {
	body := `[
 {"role": "user", "content": [{"type": "text", "text": "<task>Fix a.go</task>"}]},
 {"role": "assistant", "content": [{"type": "text", "text": "Reading it."}, {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.go"}}]},
 {"role": "user", "content": [{"type": "text", "text": "[read_file for 'a.go'] Result:\npackage a"}, {"type": "text", "text": "<environment_details>\nmain.go\n</environment_details>"}]},
 {"role": "assistant", "content": [{"type": "text", "text": "It is package a."}]}
]`
	got := readBody(t, "cline.json", []byte(body))
	out := "[read_file for 'a.go'] Result:\npackage a\n<environment_details>\nmain.go\n</environment_details>"
	want := []Turn{{User: "<task>Fix a.go</task>", Origin: Person, Steps: []Step{
		{Text: "Reading it.", Calls: []Call{{ID: "toolu_1", Name: "read_file", Args: map[string]any{"path": "a.go"}, Output: out, Response: map[string]any{"result": out}, Recorded: true}}},
		{Text: "It is package a."},
	}}}
	if len(got) != 1 || got[0].Format != AnthropicMessages {
		t.Fatalf("%d sessions (%+v), want one in Anthropic's form", len(got), got)
	}
	if d := cmp.Diff(want, got[0].Turns, cmpSession); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
}

// TestDetectionKeepsFormats: a file goes to the reader of its format when it also holds a key
// another format is told by: a chat log with an "input" or a "contents" beside its "messages" is
// chat; a logged Responses API request with an id and a timestamp beside its instructions is no
// Codex rollout's metadata; a request whose input is one string is a Responses API request.
func TestDetectionKeepsFormats(t *testing.T) {
	chat := `"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]`
	for _, tc := range []struct {
		name, body string
		format     Format
		user       []string
		system     string
	}{
		{"chat with input", `{"model": "gpt-4o", "input": [{"role": "user", "content": "hi"}], ` + chat + `}`, OpenAIChat, []string{"hi"}, ""},
		{"chat with contents", `{"contents": [{"role": "user", "parts": [{"text": "hi"}]}], ` + chat + `}`, OpenAIChat, []string{"hi"}, ""},
		{"request with id and timestamp", `{"id": "req_1", "timestamp": "2025-01-01T00:00:00Z", "model": "gpt-5", "instructions": "Be brief.", "input": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}`, ResponsesRequest, []string{"hi"}, "Be brief."},
		{"request with a string input", `{"model": "gpt-5", "instructions": "Be brief.", "input": "hi"}`, ResponsesRequest, nil, "Be brief."},
	} {
		got := readBody(t, tc.name, []byte(tc.body))
		if len(got) != 1 {
			t.Fatalf("%s: %d sessions", tc.name, len(got))
		}
		s := got[0]
		var user []string
		for _, turn := range s.Turns {
			user = append(user, turn.User)
		}
		if s.Format != tc.format || s.System != tc.system || !cmp.Equal(user, tc.user, cmpopts.EquateEmpty()) {
			t.Errorf("%s: format %q, system %q, turns %q; want %q, %q, %q", tc.name, s.Format, s.System, user, tc.format, tc.system, tc.user)
		}
	}
}
