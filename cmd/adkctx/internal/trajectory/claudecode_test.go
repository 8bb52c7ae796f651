package trajectory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ccTranscript builds a Claude Code transcript from lines given as "kind payload": "user TEXT",
// "results ID:OUT,ID:OUT" (one user line of tool results), "text MSG TEXT", "call MSG ID" (one
// assistant line of message MSG), "side ..." (the same, a subagent's), "error MSG TEXT" (a reply
// Claude Code wrote itself), "snapshot" (a file history snapshot) or "raw JSON".
func ccTranscript(lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		kind, rest, _ := strings.Cut(l, " ")
		side := false
		if kind == "side" {
			side = true
			kind, rest, _ = strings.Cut(rest, " ")
		}
		head := fmt.Sprintf(`"uuid":"u%d","sessionId":"s","isSidechain":%v`, i, side)
		assistant := func(id, model, content string, extra string) string {
			return fmt.Sprintf(`{"type":"assistant",%s%s,"message":{"id":%q,"model":%q,"role":"assistant","content":[%s]}}`, head, extra, id, model, content)
		}
		switch kind {
		case "user":
			fmt.Fprintf(&b, `{"type":"user",%s,"message":{"role":"user","content":%q}}`, head, rest)
		case "results":
			var blocks []string
			for _, r := range strings.Split(rest, ",") {
				id, out, _ := strings.Cut(r, ":")
				blocks = append(blocks, fmt.Sprintf(`{"type":"tool_result","tool_use_id":%q,"content":%q}`, id, out))
			}
			fmt.Fprintf(&b, `{"type":"user",%s,"message":{"role":"user","content":[%s]}}`, head, strings.Join(blocks, ","))
		case "text":
			id, text, _ := strings.Cut(rest, " ")
			b.WriteString(assistant(id, "claude-x", fmt.Sprintf(`{"type":"text","text":%q}`, text), ""))
		case "call":
			id, call, _ := strings.Cut(rest, " ")
			b.WriteString(assistant(id, "claude-x", fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"Read","input":{"path":%q}}`, call, call), ""))
		case "error":
			id, text, _ := strings.Cut(rest, " ")
			b.WriteString(assistant(id, syntheticModel, fmt.Sprintf(`{"type":"text","text":%q}`, text), `,"isApiErrorMessage":true`))
		case "snapshot":
			b.WriteString(`{"type":"file-history-snapshot","messageId":"m0","snapshot":{"messageId":"m0","trackedFileBackups":{},"timestamp":"2026-03-02T10:00:00.000Z"},"isSnapshotUpdate":false}`)
		case "raw":
			b.WriteString(rest)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestClaudeCodeTranscripts: the shapes Claude Code writes besides the plain one read as the
// conversation the model had: an interactive session's transcript opening with a file history
// snapshot; a model message whose calls' outputs are recorded between its lines (one reply, its
// calls answered by id); a user line with text before its tool results; a subagent's own
// transcript (every line a sidechain); replies Claude Code wrote in the model's place (API
// errors) left out.
func TestClaudeCodeTranscripts(t *testing.T) {
	read := func(id string) Call {
		return Call{ID: id, Name: "Read", Args: map[string]any{"path": id}, Output: "out " + id, Response: map[string]any{"result": "out " + id}, Recorded: true}
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  []Turn
		notes []string
	}{{
		name:  "opens with a file history snapshot",
		lines: []string{"snapshot", "user hi", "text m1 hello"},
		want:  []Turn{{User: "hi", Origin: Person, Steps: []Step{{Text: "hello"}}}},
	}, {
		name:  "outputs between the lines of one message",
		lines: []string{"user go", "text m1 two reads", "call m1 t1", "results t1:out t1", "call m1 t2", "results t2:out t2", "text m2 done"},
		want: []Turn{{User: "go", Origin: Person, Steps: []Step{
			{Text: "two reads", Calls: []Call{read("t1"), read("t2")}},
			{Text: "done"},
		}}},
	}, {
		name:  "text written on after an output of the same message",
		lines: []string{"user go", "call m1 t1", "results t1:out t1", "text m1 and more", "call m1 t2", "results t2:out t2", "text m2 done"},
		want: []Turn{{User: "go", Origin: Person, Steps: []Step{
			{Text: "and more", Calls: []Call{read("t1"), read("t2")}},
			{Text: "done"},
		}}},
	}, {
		name: "text before the tool results of a user line",
		lines: []string{"user go", "call m1 t1",
			`raw {"type":"user","uuid":"x","sessionId":"s","message":{"role":"user","content":[{"type":"text","text":"stop there"},{"type":"tool_result","tool_use_id":"t1","content":"out t1","is_error":true}]}}`,
			"text m2 stopped"},
		want: []Turn{
			{User: "go", Origin: Person, Steps: []Step{{Calls: []Call{{ID: "t1", Name: "Read", Args: map[string]any{"path": "t1"}, Output: "out t1",
				Response: map[string]any{"error": "out t1"}, Recorded: true}}}}}, // is_error: an error result
			{User: "stop there", Origin: Person, Steps: []Step{{Text: "stopped"}}},
		},
	}, {
		name:  "a subagent's transcript",
		lines: []string{"side user sub task", "side call m1 t1", "side results t1:out t1", "side text m2 found it"},
		want:  []Turn{{User: "sub task", Origin: Person, Steps: []Step{{Calls: []Call{read("t1")}}, {Text: "found it"}}}},
	}, {
		name:  "a subagent's lines in a session's transcript",
		lines: []string{"user go", "side user sub task", "side text m9 sub reply", "text m1 done"},
		want:  []Turn{{User: "go", Origin: Person, Steps: []Step{{Text: "done"}}}},
		notes: []string{"2 lines of subagents or meta messages left out"},
	}, {
		name:  "an API error Claude Code wrote in the model's place",
		lines: []string{"user go", "call m1 t1", "results t1:out t1", "error e1 API Error: 529 overloaded", "user continue", "text m2 done"},
		want: []Turn{
			{User: "go", Origin: Person, Steps: []Step{{Calls: []Call{read("t1")}}}},
			{User: "continue", Origin: Person, Steps: []Step{{Text: "done"}}},
		},
		notes: []string{"1 replies Claude Code wrote in the model's place (API errors) left out"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			body := ccTranscript(tc.lines...)
			got := readBody(t, "t.jsonl", []byte(body))
			if len(got) != 1 {
				t.Fatalf("%d sessions, want 1", len(got))
			}
			s := got[0]
			if s.Format != ClaudeCode {
				t.Fatalf("format %q, want %q", s.Format, ClaudeCode)
			}
			if d := cmp.Diff(tc.want, s.Turns, cmpSession); d != "" {
				t.Errorf("turns (-want +got):\n%s\ntranscript:\n%s", d, body)
			}
			notes := append([]string{"a Claude Code transcript records no system prompt or tool declarations: the replay sends none and infers the tools from the calls"}, tc.notes...)
			if d := cmp.Diff(notes, s.Notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}

// TestClaudeCodeBranches: a transcript is a tree of messages linked by parentUuid; the
// conversation is the chain from the newest message back to its root. A rewind or an edited
// message leaves the abandoned branch in the file: it is not replayed. Claude Code's own
// compaction starts a new root that names the line before it (logicalParentUuid): the chain goes
// on across it. A chain naming a line the file does not hold is read in file order, with a note.
func TestClaudeCodeBranches(t *testing.T) {
	user := func(id, parent, text string) string {
		return fmt.Sprintf(`{"type":"user","uuid":%q,"parentUuid":%s,"sessionId":"s","message":{"role":"user","content":%q}}`, id, parent, text)
	}
	reply := func(id, parent, msg, text string) string {
		return fmt.Sprintf(`{"type":"assistant","uuid":%q,"parentUuid":%q,"sessionId":"s","message":{"id":%q,"model":"claude-x","role":"assistant","content":[{"type":"text","text":%q}]}}`, id, parent, msg, text)
	}
	call := func(id, parent, msg, callID string) string {
		return fmt.Sprintf(`{"type":"assistant","uuid":%q,"parentUuid":%q,"sessionId":"s","message":{"id":%q,"model":"claude-x","role":"assistant","content":[{"type":"tool_use","id":%q,"name":"Read","input":{"path":%q}}]}}`, id, parent, msg, callID, callID)
	}
	result := func(id, parent, callID string) string {
		return fmt.Sprintf(`{"type":"user","uuid":%q,"parentUuid":%q,"sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"out %s"}]}}`, id, parent, callID, callID)
	}
	readCall := func(id string) Call {
		return Call{ID: id, Name: "Read", Args: map[string]any{"path": id}, Output: "out " + id, Response: map[string]any{"result": "out " + id}, Recorded: true}
	}
	const base = "a Claude Code transcript records no system prompt or tool declarations: the replay sends none and infers the tools from the calls"
	for _, tc := range []struct {
		name  string
		lines []string
		want  []Turn
		notes []string
		// open: the file ends inside its last line (a writer's append not flushed whole).
		open bool
	}{{
		name: "the first message edited",
		lines: []string{user("u0", "null", "delete the logs"), reply("a0", "u0", "m0", "deleting"),
			user("u1", "null", "archive the logs"), reply("a1", "u1", "m1", "archiving")},
		want:  []Turn{{User: "archive the logs", Origin: Person, Steps: []Step{{Text: "archiving"}}}},
		notes: []string{base, "2 messages of branches the conversation left (a rewind or an edited message) left out"},
	}, {
		name: "a rewind to an earlier turn",
		lines: []string{user("u0", "null", "start"), reply("a0", "u0", "m0", "started"),
			user("u1", `"a0"`, "try plan A"), reply("a1", "u1", "m1", "plan A failed"),
			user("u2", `"a0"`, "try plan B"), reply("a2", "u2", "m2", "plan B works")},
		want: []Turn{
			{User: "start", Origin: Person, Steps: []Step{{Text: "started"}}},
			{User: "try plan B", Origin: Person, Steps: []Step{{Text: "plan B works"}}},
		},
		notes: []string{base, "2 messages of branches the conversation left (a rewind or an edited message) left out"},
	}, {
		name: "across Claude Code's compaction",
		lines: []string{user("u0", "null", "start"), reply("a0", "u0", "m0", "started"),
			`{"type":"system","subtype":"compact_boundary","uuid":"b0","parentUuid":null,"logicalParentUuid":"a0","sessionId":"s","content":"Conversation compacted"}`,
			`{"type":"user","uuid":"u1","parentUuid":"b0","sessionId":"s","isCompactSummary":true,"message":{"role":"user","content":"Summary: started."}}`,
			user("u2", `"u1"`, "go on"), reply("a1", "u2", "m1", "going on")},
		want: []Turn{
			{User: "start", Origin: Person, Steps: []Step{{Text: "started"}}},
			{User: "Summary: started.\n\ngo on", Origin: Person, Steps: []Step{{Text: "going on"}}},
		},
		notes: []string{base, "1 summaries Claude Code's own compaction wrote are replayed as messages to the agent, after the history they stood for"},
	}, {
		name:  "a last line cut short",
		lines: []string{user("u0", "null", "start"), reply("a0", "u0", "m0", "started"), `{"type":"user","uuid":"u1","parentUuid":"a0","sessionId":"s","mess`},
		want:  []Turn{{User: "start", Origin: Person, Steps: []Step{{Text: "started"}}}},
		notes: []string{base, "the last line is cut short (a session still being written?): left out"},
		open:  true,
	}, {
		// Claude Code writes each block of a model message as a line following the one before,
		// and each result as a line following its own call's: only the last call's result leads
		// on to the newest message.
		name: "parallel calls, each result following its call",
		lines: []string{user("u0", "null", "read both"), reply("a1", "u0", "m1", "reading"),
			call("a2", "a1", "m1", "t1"), call("a3", "a2", "m1", "t2"),
			result("r1", "a2", "t1"), result("r2", "a3", "t2"), reply("a4", "r2", "m2", "both read")},
		want: []Turn{{User: "read both", Origin: Person, Steps: []Step{
			{Text: "reading", Calls: []Call{readCall("t1"), readCall("t2")}},
			{Text: "both read"},
		}}},
		notes: []string{base},
	}, {
		// A line between the blocks of one model message that is not a message (a hook's
		// progress) can be the next block's parent; when the chain leads on from the first
		// call's result, the other block and its result hang off that line, not off the chain.
		// They are the same model message: Claude Code's own resume gathers a message's blocks
		// by its id, whatever line they follow.
		name: "parallel calls, a block following a progress line",
		lines: []string{user("u0", "null", "read both"), reply("a1", "u0", "m1", "reading"), call("a2", "a1", "m1", "t1"),
			`{"type":"progress","uuid":"p1","parentUuid":"a2","sessionId":"s","data":{"type":"hook_progress"},"toolUseID":"t1"}`,
			call("a3", "p1", "m1", "t2"), result("r1", "a2", "t1"), result("r2", "a3", "t2"), reply("a4", "r1", "m2", "both read")},
		want: []Turn{{User: "read both", Origin: Person, Steps: []Step{
			{Text: "reading", Calls: []Call{readCall("t1"), readCall("t2")}},
			{Text: "both read"},
		}}},
		notes: []string{base},
	}, {
		name:  "a chain naming a line the file does not hold",
		lines: []string{user("u0", "null", "start"), reply("a0", "u0", "m0", "started"), user("u1", `"gone"`, "next"), reply("a1", "u1", "m1", "done")},
		want: []Turn{
			{User: "start", Origin: Person, Steps: []Step{{Text: "started"}}},
			{User: "next", Origin: Person, Steps: []Step{{Text: "done"}}},
		},
		notes: []string{base, "1 lines name a parent the transcript does not hold: each joined to the line before it"},
	}, {
		// Claude Code sometimes names a parent it never wrote: joined to the line before it, the
		// chain still leaves out the branch a rewind abandoned.
		name: "a rewind, then a line naming a parent the file does not hold",
		lines: []string{user("u0", "null", "start"), reply("a0", "u0", "m0", "started"),
			user("u1", `"a0"`, "try plan A"), reply("a1", "u1", "m1", "plan A failed"),
			user("u2", `"a0"`, "try plan B"), reply("a2", "gone", "m2", "plan B works")},
		want: []Turn{
			{User: "start", Origin: Person, Steps: []Step{{Text: "started"}}},
			{User: "try plan B", Origin: Person, Steps: []Step{{Text: "plan B works"}}},
		},
		notes: []string{base, "2 messages of branches the conversation left (a rewind or an edited message) left out",
			"1 lines name a parent the transcript does not hold: each joined to the line before it"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Join(tc.lines, "\n")
			if !tc.open {
				body += "\n"
			}
			got := readBody(t, "t.jsonl", []byte(body))
			if len(got) != 1 {
				t.Fatalf("%d sessions, want 1", len(got))
			}
			if d := cmp.Diff(tc.want, got[0].Turns, cmpSession); d != "" {
				t.Errorf("turns (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.notes, got[0].Notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}

// TestClaudeCodeHarnessMessages: what Claude Code writes in the person's place (a local
// command's output, a background task's notice) is the harness's, not the person's words, also
// when it is joined with what they typed into one turn.
func TestClaudeCodeHarnessMessages(t *testing.T) {
	body := ccTranscript("user go", "text m1 started",
		"user <local-command-stdout>Compacted PreCompact hook output</local-command-stdout>",
		"text m2 ok",
		"user \n<task-notification>\n<status>completed</status>\n</task-notification>",
		"user <command-name>/compact</command-name><command-args>keep the plan</command-args>",
		"user <local-command-stdout>Compacted</local-command-stdout>",
		"user continue",
		"text m3 done")
	got := readBody(t, "t.jsonl", []byte(body))
	if len(got) != 1 {
		t.Fatalf("%d sessions, want 1", len(got))
	}
	type turn struct{ Origin, Said string }
	var turns []turn
	for _, tn := range got[0].Turns {
		turns = append(turns, turn{string(tn.Origin), tn.Said()})
	}
	want := []turn{
		{"person", "go"},
		{"environment", ""},
		{"person", "<command-name>/compact</command-name><command-args>keep the plan</command-args>\n\ncontinue"},
	}
	if d := cmp.Diff(want, turns); d != "" {
		t.Errorf("origins and the person's words (-want +got):\n%s\ntranscript:\n%s", d, body)
	}
	if u := got[0].Turns[2].User; !strings.Contains(u, "<task-notification>") || !strings.Contains(u, "Compacted") {
		t.Errorf("the joined message lost the harness's part: %q", u)
	}
}
