package trajectory

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadCodex: a Codex CLI rollout reads as the conversation the model had: the developer
// message as the instruction; the AGENTS.md text and the environment Codex writes in the
// person's place as the harness's messages, not the person's; the calls of one response (shell
// commands, apply_patch's free-form patch, a local shell call) answered by call id, an output as
// text, a JSON text or an object holding its content; reasoning, UI events and the provider's
// web searches left out; Codex's own compaction summary replayed as a message to the agent.
func TestReadCodex(t *testing.T) {
	s := readOne(t, "testdata/codex.jsonl")
	shell := func(id, cmd, out string, resp map[string]any) Call {
		return Call{ID: id, Name: "shell_command", Args: map[string]any{"command": cmd, "workdir": "/work/tabs"}, Output: out, Response: resp, Recorded: true}
	}
	sed := "Exit code: 0\nWall time: 0.1 seconds\nOutput:\npackage tabs\n\nfunc Split(s string) []string { return strings.Split(s, \" \") }\n"
	test := `{"output":"--- FAIL: TestSplitTabs (0.00s)\nFAIL\n","metadata":{"exit_code":1,"duration_seconds":0.4}}`
	patch := "*** Begin Patch\n*** Update File: parse.go\n@@\n-func Split(s string) []string { return strings.Split(s, \" \") }\n+func Split(s string) []string { return strings.Fields(s) }\n*** End Patch\n"
	patched := `{"output":"Success. Updated the following files:\nM parse.go\n","metadata":{"exit_code":0,"duration_seconds":0.0}}`
	want := &Session{
		ID: "testdata/codex.jsonl", Format: Codex, Model: "gpt-5.1-codex",
		System: "<permissions instructions>Commands run in a workspace-write sandbox.</permissions instructions>",
		Tools: []Tool{
			{Name: "shell_command", Parameters: map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}, "workdir": map[string]any{"type": "string"}}}},
			{Name: "apply_patch", Parameters: map[string]any{"type": "object", "properties": map[string]any{"input": map[string]any{"type": "string"}}}},
			{Name: "local_shell", Parameters: map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "array"}, "timeout_ms": map[string]any{"type": "number"}, "type": map[string]any{"type": "string"}}}},
		},
		Turns: []Turn{
			{User: "# AGENTS.md instructions for /work/tabs\n\n<INSTRUCTIONS>\nRun go test ./... before you finish.\n</INSTRUCTIONS>\n\n" +
				"<environment_context>\n  <cwd>/work/tabs</cwd>\n  <shell>bash</shell>\n</environment_context>\n\nFix the tab parsing in parse.go.",
				Origin: Person, Steps: []Step{
					{Calls: []Call{
						shell("call_A1", "sed -n 1,40p parse.go", sed, map[string]any{"result": sed}),
						shell("call_A2", "go test ./...", test, mustObject(t, test)),
					}},
					{Text: "Split splits on spaces only; patching it.", Calls: []Call{{ID: "call_B1", Name: "apply_patch", Args: map[string]any{"input": patch},
						Output: patched, Response: mustObject(t, patched), Recorded: true}}},
					{Text: "parse.go now splits on any whitespace."},
				}},
			{User: "Summary: parse.go's Split now uses strings.Fields; TestSplitTabs failed before the fix.\n\nNow run the tests.", Origin: Person, Steps: []Step{
				{Calls: []Call{{ID: "call_C1", Name: "local_shell", Args: map[string]any{"type": "exec", "command": []any{"bash", "-lc", "go test ./..."}, "timeout_ms": jsonNumber("120000")},
					Output: "ok  \ttabs\t0.01s\n", Response: map[string]any{"result": "ok  \ttabs\t0.01s\n"}, Recorded: true}}},
				{Text: "All tests pass."},
			}},
		},
		Notes: []string{
			"a Codex rollout records no tool declarations: the replay infers the tools from the calls",
			"1 summaries Codex's own compaction wrote are replayed as messages to the agent, after the history they stood for",
			"1 compactions of Codex's own whose summary only the provider can read (encrypted) left out: the replay goes on with the whole history",
			"1 web searches the provider ran left out",
		},
	}
	if d := cmp.Diff(want, s, cmpSession); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
	// Only the person's words are theirs: not the AGENTS.md text, the environment or the summary.
	for i, said := range []string{"Fix the tab parsing in parse.go.", "Now run the tests."} {
		if got := s.Turns[i].Said(); got != said {
			t.Errorf("turn %d: the person said %q, want %q", i, got, said)
		}
	}
}

// TestReadCodexUnwrapped: a rollout written before Codex CLI wrapped its records (session
// metadata first, then bare response items and state lines) reads the same way.
func TestReadCodexUnwrapped(t *testing.T) {
	body := `{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-08-04T17:01:02.123Z","instructions":"Prefer rg over grep."}
{"record_type":"state"}
{"type":"message","role":"user","content":[{"type":"input_text","text":"List the Go files."}]}
{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"rg --files -g '*.go'\"]}","call_id":"call_1"}
{"record_type":"state"}
{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"main.go\\nparse.go\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"}
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"main.go and parse.go."}]}
`
	got := readBody(t, "rollout-2025-08-04T17-01-02-5973b6c0.jsonl", []byte(body))
	if len(got) != 1 {
		t.Fatalf("%d sessions, want 1", len(got))
	}
	out := `{"output":"main.go\nparse.go\n","metadata":{"exit_code":0,"duration_seconds":0.1}}`
	want := []Turn{{User: "List the Go files.", Origin: Person, Steps: []Step{
		{Calls: []Call{{ID: "call_1", Name: "shell", Args: map[string]any{"command": []any{"bash", "-lc", "rg --files -g '*.go'"}}, Output: out, Response: mustObject(t, out), Recorded: true}}},
		{Text: "main.go and parse.go."},
	}}}
	if d := cmp.Diff(want, got[0].Turns, cmpSession); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	if got[0].Format != Codex || got[0].System != "Prefer rg over grep." {
		t.Errorf("format %q, system %q", got[0].Format, got[0].System)
	}
}

// TestMalformedCodex: a rollout that cannot be read names the line and what was expected there.
func TestMalformedCodex(t *testing.T) {
	const open = `{"type":"session_meta","payload":{"id":"s","instructions":null}}` + "\n"
	for _, tc := range []struct{ body, want string }{
		{open + "7\n", "line 2"},
		{open + `{"type":"response_item","payload":7}`, "line 2.payload"},
		{open + `{"type":"response_item","payload":{"type":"message","role":"user","content":7}}`, "line 2.payload.content"},
		{open + `{"type":"response_item","payload":{"type":"function_call_output","call_id":"nope","output":"x"}}`, "line 2.payload"},
		{`{"type":"session_meta","payload":[]}`, "line 1.payload"},
	} {
		wantFormatError(t, "bad.jsonl", tc.body, tc.want)
	}
}

// mustObject decodes a JSON object as the readers do (numbers kept exact).
func mustObject(t *testing.T, s string) map[string]any {
	t.Helper()
	m, ok := decodeObject([]byte(s))
	if !ok {
		t.Fatalf("not a JSON object: %s", s)
	}
	return m
}

func jsonNumber(s string) json.Number { return json.Number(s) }

// TestCodexInstructions: the session metadata's instructions are the user instructions (the
// AGENTS.md text) Codex also writes into the conversation, in the person's place: sent once, as
// that message, not also as the instruction. Only a rollout whose conversation does not hold
// them (Codex sent them with its own instructions then) has them in the instruction.
func TestCodexInstructions(t *testing.T) {
	const agents = "Run go test ./... before you finish."
	meta := func(base string) string {
		m := map[string]any{"id": "s", "timestamp": "2026-01-02T03:04:05Z", "instructions": agents}
		if base != "" {
			m["base_instructions"] = map[string]string{"text": base}
		}
		b, _ := json.Marshal(map[string]any{"type": "session_meta", "payload": m})
		return string(b) + "\n"
	}
	item := func(role, text string) string {
		b, _ := json.Marshal(map[string]any{"type": "response_item", "payload": map[string]any{"type": "message", "role": role,
			"content": []map[string]string{{"type": "input_text", "text": text}}}})
		return string(b) + "\n"
	}
	dev := item("developer", "<permissions instructions>Sandboxed.</permissions instructions>")
	ask, answer := item("user", "Fix parse.go."), item("assistant", "Fixed.")
	legacyMeta := `{"id":"s","timestamp":"2025-08-04T17:01:02.123Z","instructions":"` + agents + `"}` + "\n"
	legacyItem := func(role, text string) string {
		b, _ := json.Marshal(map[string]any{"type": "message", "role": role, "content": []map[string]string{{"type": "input_text", "text": text}}})
		return string(b) + "\n"
	}
	for _, tc := range []struct {
		name, body, system, user string
	}{
		{"AGENTS.md message", meta("") + dev + item("user", "# AGENTS.md instructions for /work\n\n<INSTRUCTIONS>\n"+agents+"\n</INSTRUCTIONS>") + ask + answer,
			"<permissions instructions>Sandboxed.</permissions instructions>",
			"# AGENTS.md instructions for /work\n\n<INSTRUCTIONS>\n" + agents + "\n</INSTRUCTIONS>\n\nFix parse.go."},
		{"user_instructions message", legacyMeta + legacyItem("user", "<user_instructions>\n\n"+agents+"\n\n</user_instructions>") + legacyItem("user", "Fix parse.go.") + legacyItem("assistant", "Fixed."),
			"", "<user_instructions>\n\n" + agents + "\n\n</user_instructions>\n\nFix parse.go."},
		{"not in the conversation", meta("") + ask + answer, agents, "Fix parse.go."},
		{"beside the base instructions", meta("You are Codex.") + dev + ask + answer,
			"You are Codex.\n\n" + agents + "\n\n<permissions instructions>Sandboxed.</permissions instructions>", "Fix parse.go."},
	} {
		got := readBody(t, tc.name+".jsonl", []byte(tc.body))
		if len(got) != 1 || len(got[0].Turns) != 1 {
			t.Fatalf("%s: %d sessions, want 1 of one turn", tc.name, len(got))
		}
		if got[0].System != tc.system || got[0].Turns[0].User != tc.user {
			t.Errorf("%s: system %q, user %q; want %q, %q", tc.name, got[0].System, got[0].Turns[0].User, tc.system, tc.user)
		}
		if said := got[0].Turns[0].Said(); said != "Fix parse.go." {
			t.Errorf("%s: the person said %q", tc.name, said)
		}
	}
}

// TestCodexOrigin: every message Codex writes in the person's place is the harness's (or, for
// instructions, the instruction's), as Codex itself tells them from the person's: a skill's
// text, a sub-agent's notice and a hook's prompt too, not only the environment.
func TestCodexOrigin(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Origin
	}{
		{"Fix parse.go.", Person},
		{"<skill> in my message is a tag I use", Person},
		{"# AGENTS.md instructions for /work\n\n<INSTRUCTIONS>\nRun the tests.\n</INSTRUCTIONS>", System},
		{"<user_instructions>\n\nRun the tests.\n\n</user_instructions>", System},
		{"<skill>\n<name>pdf</name>\n<path>/home/u/.codex/skills/pdf/SKILL.md</path>\nUse pdftotext.\n</skill>", System},
		{"<environment_context>\n  <cwd>/work</cwd>\n</environment_context>", Environment},
		{"<turn_aborted>\nThe user interrupted the previous turn.\n</turn_aborted>", Environment},
		{"<user_shell_command>\n<command>ls</command>\n<result>a.go</result>\n</user_shell_command>", Environment},
		{"<subagent_notification>\n{\"agent_id\":\"a1\",\"status\":\"completed\"}\n</subagent_notification>", Environment},
		{`<hook_prompt hook_run_id="stop-1">Run the linter before you stop.</hook_prompt>`, Environment},
	} {
		if got := cxOrigin(tc.text); got != tc.want {
			t.Errorf("cxOrigin(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
}

// TestCodexLocalShellCallWithoutCallID: a local shell call that names no call id (the Responses
// API leaves it null) is answered by the output naming its item id.
func TestCodexLocalShellCallWithoutCallID(t *testing.T) {
	body := `{"type":"session_meta","payload":{"id":"s","instructions":null}}
{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"List the files."}]}}
{"type":"response_item","payload":{"type":"local_shell_call","id":"lsh_1","call_id":null,"status":"completed","action":{"type":"exec","command":["ls"]}}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"lsh_1","output":"a.go\nb.go\n"}}
{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a.go and b.go."}]}}
`
	got := readBody(t, "rollout.jsonl", []byte(body))
	if len(got) != 1 || len(got[0].Turns) != 1 || len(got[0].Turns[0].Steps) != 2 {
		t.Fatalf("sessions %+v", got)
	}
	c := got[0].Turns[0].Steps[0].Calls[0]
	if c.ID != "lsh_1" || c.Output != "a.go\nb.go\n" || !c.Recorded {
		t.Errorf("call %+v", c)
	}
}
