package trajectory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// cxLine is one line of a Codex CLI rollout (the JSON Lines file a session writes under
// ~/.codex/sessions/): a record {timestamp, type, payload}. Rollouts written before Codex CLI
// wrapped its records hold the response items bare, after a first line of session metadata.
type cxLine struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
	// RecordType marks the state lines of the unwrapped form.
	RecordType string `json:"record_type"`
}

// cxItem is a response item of a rollout: a message, a call of a tool, its output, or the
// model's reasoning (left out).
type cxItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	// Name, Arguments (a JSON text) and CallID: a function call; Input: a custom tool call's
	// free-form input (apply_patch's patch); Action: a local shell call's command.
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     string          `json:"input"`
	Action    json.RawMessage `json:"action"`
	// Operation: an apply_patch call's (the Responses API's own tool).
	Operation json.RawMessage `json:"operation"`
	CallID    string          `json:"call_id"`
	// ID names the item; a local shell call without a call id is answered by it.
	ID     string          `json:"id"`
	Output json.RawMessage `json:"output"`
	// Message: the summary a compaction of Codex's own wrote (a "compacted" record).
	Message string `json:"message"`
}

// cxMeta is the payload of a rollout's session_meta record (or the first line of the unwrapped
// form): Codex's own instructions (recorded by later versions) and the user instructions (the
// AGENTS.md text, which the conversation holds too, as a message in the person's place).
type cxMeta struct {
	Instructions     *string `json:"instructions"`
	BaseInstructions *struct {
		Text string `json:"text"`
	} `json:"base_instructions"`
}

// isCodexLine reports whether the first object of a file opens a Codex CLI rollout: a
// session_meta record, or the bare session metadata of the unwrapped form (an id, a timestamp
// and the instructions, which are null when none were given; no "input", which a logged
// Responses API request with an id and a timestamp has beside its instructions).
func isCodexLine(obj map[string]json.RawMessage) bool {
	if raw, ok := obj["type"]; ok {
		_, payload := obj["payload"]
		return payload && string(raw) == `"session_meta"`
	}
	_, id := obj["id"]
	_, ts := obj["timestamp"]
	_, instr := obj["instructions"]
	_, input := obj["input"]
	return id && ts && instr && !input
}

// readCodex reads a Codex CLI rollout whose first line is first and whose other lines d decodes.
// The conversation is its response items in order: messages, calls and their outputs. What
// Codex writes in the person's place (the environment it describes, the project's AGENTS.md) is
// the harness's; developer messages are instructions; reasoning and UI events are left out; a
// summary Codex's own compaction wrote is replayed as a message to the agent.
func readCodex(name string, first json.RawMessage, d *json.Decoder) (*Session, error) {
	b := newBuilder(name, name, Codex)
	compacted, sealed, cut := 0, 0, false
	// The metadata's instructions are the user instructions (AGENTS.md), which Codex also writes
	// into the conversation in the person's place: they are the instruction only when no message
	// holds them (Codex once sent them with its own instructions). baseEnd is where they go then.
	var instructions string
	baseEnd, instructionsSent := 0, false
	items := &responseItems{b: b, user: func(text string) {
		o := cxOrigin(text)
		if o == System && instructions != "" && strings.Contains(text, instructions) {
			instructionsSent = true
		}
		b.user(text, o)
	}}
	for n := 1; ; n++ {
		record := fmt.Sprintf("line %d", n)
		raw := first
		if n > 1 {
			raw = nil
			if err := d.Decode(&raw); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				if errors.Is(err, io.ErrUnexpectedEOF) {
					cut = true
					break
				}
				return nil, syntaxError(name, record, err)
			}
		}
		var l cxLine
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, errorf(name, record, "a rollout record object", kindOf(raw))
		}
		payload := l.Payload
		switch {
		case n == 1 && l.Type == "":
			payload = raw // the unwrapped form's session metadata
			l.Type = "session_meta"
		case l.RecordType != "":
			continue
		case l.Type == "turn_context":
			var tc struct {
				Model string `json:"model"`
			}
			if json.Unmarshal(payload, &tc) == nil && b.s.Model == "" {
				b.s.Model = tc.Model
			}
			continue
		case len(payload) == 0 && n > 1:
			payload, l.Type = raw, "response_item" // the unwrapped form's items
		}
		switch l.Type {
		case "session_meta":
			var m cxMeta
			if err := json.Unmarshal(payload, &m); err != nil {
				return nil, errorf(name, record+".payload", "the session's metadata object", kindOf(payload))
			}
			if m.BaseInstructions != nil && m.BaseInstructions.Text != "" {
				b.system(m.BaseInstructions.Text)
			}
			baseEnd = len(b.s.System)
			if m.Instructions != nil {
				instructions = strings.TrimSpace(*m.Instructions)
			}
			continue
		case "compacted":
			var it cxItem
			if err := json.Unmarshal(payload, &it); err != nil {
				return nil, errorf(name, record+".payload", `a compaction {"message"}`, kindOf(payload))
			}
			items.flush()
			if it.Message == "" {
				sealed++ // the summary is the provider's, encrypted: the history goes on whole
				continue
			}
			b.user(it.Message, Environment)
			compacted++
			continue
		case "response_item":
		default:
			continue // event_msg and records of later versions: UI events, not the conversation
		}
		var it cxItem
		if err := json.Unmarshal(payload, &it); err != nil {
			return nil, errorf(name, record+".payload", "a response item object", kindOf(payload))
		}
		if err := items.add(record+".payload", it); err != nil {
			return nil, err
		}
	}
	items.flush()
	if instructions != "" && !instructionsSent {
		sys := b.s.System
		switch {
		case sys == "":
			sys = instructions
		case baseEnd == 0:
			sys = instructions + "\n\n" + sys
		default:
			sys = sys[:baseEnd] + "\n\n" + instructions + sys[baseEnd:]
		}
		b.s.System = sys
	}
	s := b.finish()
	s.Notes = append(s.Notes, "a Codex rollout records no tool declarations: the replay infers the tools from the calls")
	s.noteCount(compacted, "%d summaries Codex's own compaction wrote are replayed as messages to the agent, after the history they stood for")
	s.noteCount(sealed, "%d compactions of Codex's own whose summary only the provider can read (encrypted) left out: the replay goes on with the whole history")
	s.Notes = append(s.Notes, items.notes()...)
	if cut {
		s.Notes = append(s.Notes, "the last line is cut short (a session still being written?): left out")
	}
	return s, nil
}

// responseItems reads OpenAI Responses API items in order (a Codex rollout's, a logged
// request's input): an assistant message and the calls after it one reply, until an output or the
// next response's reasoning; outputs answer calls by call id; developer and system messages are
// instructions; user messages go to user. What the provider ran (a web or file search, its code
// interpreter, a remote MCP server's call) and items it cannot read (an item reference, an
// encrypted compaction) are left out and counted by type.
type responseItems struct {
	b     *builder
	user  func(text string)
	text  []string
	calls []Call
	// provider and unread count the items left out, by type.
	provider, unread map[string]int
}

// flush adds the reply read so far.
func (r *responseItems) flush() {
	if len(r.text) > 0 || len(r.calls) > 0 {
		r.b.reply(strings.Join(r.text, "\n\n"), r.calls)
	}
	r.text, r.calls = nil, nil
}

// add reads one item; where locates it for errors. A message without a type (the Responses
// API's short form, {"role", "content"}) is a message.
func (r *responseItems) add(where string, it cxItem) error {
	b := r.b
	if it.Type == "" && it.Role != "" {
		it.Type = "message"
	}
	switch it.Type {
	case "reasoning":
		r.flush() // a response's items start with its reasoning
	case "message":
		text, err := cxText(b.file, where+".content", it.Content)
		if err != nil {
			return err
		}
		switch it.Role {
		case "assistant":
			if text != "" {
				r.text = append(r.text, text)
			}
		case "developer", "system":
			r.flush()
			b.system(text)
		default:
			r.flush()
			if text != "" {
				r.user(text)
			}
		}
	case "function_call":
		r.calls = append(r.calls, Call{ID: it.CallID, Name: it.Name, Args: b.args(it.Arguments)})
	case "custom_tool_call":
		r.calls = append(r.calls, Call{ID: it.CallID, Name: it.Name, Args: map[string]any{"input": it.Input}})
	case "local_shell_call", "shell_call", "computer_call":
		// The Responses API's own tools the agent runs: named by their type, their action the
		// arguments. A local shell call without a call id is answered by its item id.
		id := it.CallID
		if id == "" {
			id = it.ID
		}
		r.calls = append(r.calls, Call{ID: id, Name: strings.TrimSuffix(it.Type, "_call"), Args: b.args(it.Action)})
	case "apply_patch_call":
		r.calls = append(r.calls, Call{ID: it.CallID, Name: "apply_patch", Args: b.args(it.Operation)})
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output", "shell_call_output",
		"computer_call_output", "apply_patch_call_output":
		r.flush()
		out, err := cxOutput(b.file, where+".output", it.Output)
		if err != nil {
			return err
		}
		id := it.CallID
		if id == "" && it.Type == "local_shell_call_output" {
			id = it.ID // the API's first form of it names the call by "id"
		}
		return b.output(where, id, "", out, nil)
	case "web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call", "mcp_list_tools":
		// The provider ran it: no call the agent's tools answer.
		r.count(&r.provider, it.Type)
	case "ghost_snapshot":
		// Codex's own record of the work tree, never sent to the model.
	default:
		if strings.HasSuffix(it.Type, "_output") || strings.HasSuffix(it.Type, "_response") {
			r.flush() // what the agent sent back ends the model's response
		}
		r.count(&r.unread, it.Type)
	}
	return nil
}

func (r *responseItems) count(m *map[string]int, typ string) {
	if *m == nil {
		*m = map[string]int{}
	}
	if typ == "" {
		typ = "(no type)"
	}
	(*m)[typ]++
}

// notes says what the items left out.
func (r *responseItems) notes() []string {
	var notes []string
	for _, typ := range slices.Sorted(maps.Keys(r.provider)) {
		n := r.provider[typ]
		if typ == "web_search_call" {
			notes = append(notes, fmt.Sprintf("%d web searches the provider ran left out", n))
			continue
		}
		notes = append(notes, fmt.Sprintf("%d %s items the provider ran left out", n, typ))
	}
	if len(r.unread) > 0 {
		n, types := 0, make([]string, 0, len(r.unread))
		for _, typ := range slices.Sorted(maps.Keys(r.unread)) {
			n += r.unread[typ]
			types = append(types, typ)
		}
		notes = append(notes, fmt.Sprintf("%d items the replay does not read left out (%s)", n, strings.Join(types, ", ")))
	}
	return notes
}

// cxText is a message's text: a string, or its content items joined: their text (a refusal's
// too), an image as "[image]", a file as "[file]", a shell's output entry as its stdout and
// stderr.
func cxText(name, record string, raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var items []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
		Stdout  string `json:"stdout"`
		Stderr  string `json:"stderr"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return "", errorf(name, record, "a string or an array of content items", kindOf(raw))
	}
	var texts []string
	for _, it := range items {
		switch {
		case it.Text != "":
			texts = append(texts, it.Text)
		case it.Refusal != "":
			texts = append(texts, it.Refusal)
		case strings.Contains(it.Type, "image"):
			texts = append(texts, "[image]")
		case strings.Contains(it.Type, "file"):
			texts = append(texts, "[file]")
		case it.Stdout != "" || it.Stderr != "":
			out := it.Stdout
			if out != "" && it.Stderr != "" && !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			texts = append(texts, out+it.Stderr)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// cxOutput is a call's output as the agent read it: a string (a shell call's is a JSON text of
// its output and exit code), an object whose content holds it, a computer's screenshot, content
// items, or nothing (an apply_patch call's output without text).
func cxOutput(name, record string, raw json.RawMessage) (string, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return "", nil
	}
	var obj struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &obj) == nil {
		switch {
		case obj.Content != nil:
			raw = obj.Content
		case strings.Contains(obj.Type, "screenshot"), strings.Contains(obj.Type, "image"):
			return "[image]", nil
		}
	}
	return cxText(name, record, raw)
}

// cxOrigin is who wrote a user message of text: the harness for what Codex writes in the
// person's place (the environment it runs in, a note that a turn was aborted, a shell command
// the person ran and its output, a sub-agent's notice, a hook's prompt), the instructions for
// the project's AGENTS.md text and a skill's, else the person.
func cxOrigin(text string) Origin {
	t := strings.TrimSpace(text)
	tagged := func(open, close string) bool { return strings.HasPrefix(t, open) && strings.HasSuffix(t, close) }
	switch {
	case opensWith(t, "<user_instructions>", "# AGENTS.md instructions"), tagged("<skill>", "</skill>"):
		return System
	case opensWith(t, "<environment_context>", "<turn_aborted>", "<user_shell_command>"),
		tagged("<subagent_notification>", "</subagent_notification>"), tagged("<hook_prompt", "</hook_prompt>"):
		return Environment
	}
	return Person
}
