package trajectory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// builder assembles a Session from messages in recorded order, with the rules every format
// shares:
//   - consecutive messages to the agent are one turn's message (joined by a blank line);
//   - a reply right after a reply without calls continues it (one model reply);
//   - an output answers a call of the newest reply by id, or, without an id, the first call of
//     that reply still waiting whose name matches (any name when none is given);
//   - a call left without an output gets an error response saying so (counted in Notes);
//   - a turn without a reply at the end of the recording is not replayed (counted in Notes).
type builder struct {
	s        *Session
	file     string
	ids      map[string]bool
	declared map[string]bool
	used     map[string]int // undeclared tool name → index in s.Tools
	steps    int
	// open is the newest step when it may still take outputs.
	open        *Step
	lastOutputs int // outputs since the newest reply
	missing     int
	unparsed    int
	executed    int // code execution parts the provider ran, kept as text
}

func newBuilder(file, id string, f Format) *builder {
	return &builder{
		s:        &Session{ID: id, Format: f},
		file:     file,
		ids:      map[string]bool{},
		declared: map[string]bool{},
		used:     map[string]int{},
	}
}

func (b *builder) declare(t Tool) {
	if t.Name == "" || b.declared[t.Name] {
		return
	}
	b.declared[t.Name] = true
	b.s.Tools = append(b.s.Tools, t)
}

// system adds a system message: the instruction while no turn started, else a turn's message.
func (b *builder) system(text string) {
	if len(b.s.Turns) == 0 {
		if b.s.System != "" {
			b.s.System += "\n\n"
		}
		b.s.System += text
		return
	}
	b.user(text, System)
}

// user adds a message to the agent.
func (b *builder) user(text string, o Origin) {
	b.open = nil
	if n := len(b.s.Turns); n > 0 && len(b.s.Turns[n-1].Steps) == 0 {
		t := &b.s.Turns[n-1]
		if !t.mixed && t.Origin != o && (o == Person || t.Origin == Person) {
			t.mixed, t.said = true, t.Said()
		}
		if t.mixed && o == Person {
			if t.said != "" {
				t.said += "\n\n"
			}
			t.said += text
		}
		if t.User != "" {
			t.User += "\n\n"
		}
		t.User += text
		if t.Origin != Person {
			t.Origin = o
		}
		return
	}
	b.s.Turns = append(b.s.Turns, Turn{User: text, Origin: o})
}

// reply adds a model reply. Calls get unique ids and their tools are recorded.
func (b *builder) reply(text string, calls []Call) {
	if len(b.s.Turns) == 0 {
		b.s.Turns = append(b.s.Turns, Turn{Origin: None})
	}
	t := &b.s.Turns[len(b.s.Turns)-1]
	if n := len(t.Steps); n > 0 && b.open != nil && len(b.open.Calls) == 0 && b.lastOutputs == 0 {
		// A reply right after a reply without calls: one model reply.
		prev := &t.Steps[n-1]
		if text != "" {
			if prev.Text != "" {
				prev.Text += "\n\n"
			}
			prev.Text += text
		}
		prev.Calls = append(prev.Calls, b.calls(calls)...)
		b.open = prev
		return
	}
	t.Steps = append(t.Steps, Step{Text: text, Calls: b.calls(calls)})
	b.steps++
	b.open = &t.Steps[len(t.Steps)-1]
	b.lastOutputs = 0
}

// extend adds text and calls to the newest reply: the model wrote them in the same message,
// though outputs of its earlier calls were recorded before them.
func (b *builder) extend(text string, calls []Call) {
	prev := b.open
	if text != "" {
		if prev.Text != "" {
			prev.Text += "\n\n"
		}
		prev.Text += text
	}
	prev.Calls = append(prev.Calls, b.calls(calls)...)
}

func (b *builder) calls(calls []Call) []Call {
	for i := range calls {
		c := &calls[i]
		c.recordedID = c.ID
		if c.ID == "" || b.ids[c.ID] {
			c.ID = fmt.Sprintf("call_%d_%d", b.steps, i)
			for b.ids[c.ID] {
				c.ID += "_"
			}
		}
		b.ids[c.ID] = true
		if c.Args == nil {
			c.Args = map[string]any{}
		}
		b.use(c.Name, c.Args)
	}
	return calls
}

// use records an undeclared tool the first time it is called, inferring its parameters from
// the argument names (every one typed as the first value seen).
func (b *builder) use(name string, args map[string]any) {
	if b.declared[name] {
		return
	}
	i, ok := b.used[name]
	if !ok {
		i = len(b.s.Tools)
		b.used[name] = i
		b.s.Tools = append(b.s.Tools, Tool{Name: name, Parameters: map[string]any{"type": "object", "properties": map[string]any{}}})
	}
	props := b.s.Tools[i].Parameters["properties"].(map[string]any)
	for k, v := range args {
		if _, ok := props[k]; !ok {
			props[k] = map[string]any{"type": jsonType(v)}
		}
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number, float64, int:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case nil:
		return "null"
	default:
		return "object"
	}
}

// unanswered returns the ids of the newest reply's calls no output answered yet, in order; none
// once a message to the agent followed it.
func (b *builder) unanswered() []string {
	if b.open == nil {
		return nil
	}
	var ids []string
	for _, c := range b.open.Calls {
		if !c.Recorded {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// output answers a call of the newest reply. record locates the output for errors.
func (b *builder) output(record, callID, name, text string, response map[string]any) error {
	if b.open == nil {
		return errorf(b.file, record, "a tool output right after the reply that called the tool", "an output with no reply before it")
	}
	var c *Call
	for i := range b.open.Calls {
		cand := &b.open.Calls[i]
		if cand.Recorded {
			continue
		}
		switch {
		case callID != "":
			if cand.ID == callID || cand.recordedID == callID {
				c = cand
			}
		case name == "" || cand.Name == name:
			c = cand
		}
		if c != nil {
			break
		}
	}
	if c == nil {
		what := "an output"
		if callID != "" {
			what = fmt.Sprintf("an output for call id %s", brief(callID))
		} else if name != "" {
			what = fmt.Sprintf("an output of tool %s", brief(name))
		}
		return errorf(b.file, record, "an output of a call the reply before it made and no earlier output answered", what)
	}
	c.Output = text
	if response == nil {
		response = Response(text)
	}
	c.Response = response
	c.Recorded = true
	b.lastOutputs++
	return nil
}

// finish closes the session: unanswered calls, unanswered turns, notes.
func (b *builder) finish() *Session {
	for ti := range b.s.Turns {
		for si := range b.s.Turns[ti].Steps {
			for ci := range b.s.Turns[ti].Steps[si].Calls {
				c := &b.s.Turns[ti].Steps[si].Calls[ci]
				if !c.Recorded {
					b.missing++
					c.Response = map[string]any{"error": "no output was recorded for this call"}
				}
			}
		}
	}
	if n := len(b.s.Turns); n > 0 && len(b.s.Turns[n-1].Steps) == 0 {
		b.s.Turns = b.s.Turns[:n-1]
		b.s.Notes = append(b.s.Notes, "the last message to the agent has no reply: not replayed")
	}
	if b.missing > 0 {
		b.s.Notes = append(b.s.Notes, fmt.Sprintf("%d calls without a recorded output: answered with an error", b.missing))
	}
	if b.executed > 0 {
		b.s.Notes = append(b.s.Notes, fmt.Sprintf("%d parts of code the provider executed, or of its output, kept as the model's text", b.executed))
	}
	if b.unparsed > 0 {
		b.s.Notes = append(b.s.Notes, fmt.Sprintf("%d calls whose arguments are not a JSON object: kept as {\"arguments\": text}", b.unparsed))
	}
	return b.s
}

// args decodes a call's arguments: a JSON object, or a string holding one. Anything else is kept
// as {"arguments": text} and counted.
func (b *builder) args(raw json.RawMessage) map[string]any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			if m, ok := decodeObject([]byte(s)); ok {
				return m
			}
			if len(bytes.TrimSpace([]byte(s))) == 0 {
				return map[string]any{}
			}
			b.unparsed++
			return map[string]any{"arguments": s}
		}
	}
	if m, ok := decodeObject(raw); ok {
		return m
	}
	b.unparsed++
	return map[string]any{"arguments": string(raw)}
}

// decodeObject decodes a JSON object keeping numbers exact (json.Number).
func decodeObject(data []byte) (map[string]any, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if d.More() {
		return nil, false
	}
	return m, true
}

// Response is what a replayed tool returns for an output recorded as text: the object when the
// text is a JSON object, else {"result": text} (adk-go's convention for a result that is not an
// object).
func Response(text string) map[string]any {
	if m, ok := decodeObject([]byte(text)); ok {
		return m
	}
	return map[string]any{"result": text}
}

// opensWith reports whether text, past its leading white space, opens with one of prefixes: the
// tags a harness marks what it writes in the person's place with.
func opensWith(text string, prefixes ...string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range prefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}
