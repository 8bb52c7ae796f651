package trajectory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// chatMessage is an OpenAI-style chat message (Chat Completions), with mini-swe-agent's extra.
type chatMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	ToolCalls    json.RawMessage `json:"tool_calls"`
	ToolCallID   string          `json:"tool_call_id"`
	Name         string          `json:"name"`
	FunctionCall *chatFunction   `json:"function_call"`
	Extra        json.RawMessage `json:"extra"`
}

type chatFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type chatToolCall struct {
	ID       string        `json:"id"`
	Type     string        `json:"type"`
	Function *chatFunction `json:"function"`
}

func decodeMessage(file, record string, raw json.RawMessage) (*chatMessage, error) {
	var m chatMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil, errorf(file, record, "a chat message object", kindOf(raw))
		}
		return nil, syntaxError(file, record, err)
	}
	if m.Role == "" {
		return nil, errorf(file, record, `a chat message with a "role"`, "none")
	}
	return &m, nil
}

// readChat reads OpenAI-style chat messages into b. prefix locates the array in errors.
func readChat(b *builder, prefix string, msgs []json.RawMessage) error {
	for i, raw := range msgs {
		record := fmt.Sprintf("%s[%d]", prefix, i)
		if prefix == "" {
			record = fmt.Sprintf("message %d", i)
		}
		m, err := decodeMessage(b.file, record, raw)
		if err != nil {
			return err
		}
		if ids := b.unanswered(); m.Role == "user" && b.s.Format == AnthropicMessages && len(ids) > 0 {
			// A log in Anthropic's form whose user message answers the reply's calls as text
			// (Cline's "[tool for …] Result:"), not as tool_result blocks: the text is their output.
			if done, err := textResults(b, record, m, ids); done || err != nil {
				if err != nil {
					return err
				}
				continue
			}
		}
		if blocks, ok := anthropicBlocks(m); ok {
			// Anthropic's Messages form: calls and results are content blocks.
			b.s.Format = AnthropicMessages
			if err := readBlocks(b, record, m.Role, blocks); err != nil {
				return err
			}
			continue
		}
		text, err := textOf(b.file, record+".content", m.Content)
		if err != nil {
			return err
		}
		switch m.Role {
		case "system", "developer":
			b.system(text)
		case "user":
			b.user(text, Person)
		case "assistant":
			calls, err := chatCalls(b, record, m)
			if err != nil {
				return err
			}
			b.reply(text, calls)
		case "tool":
			if err := b.output(record, m.ToolCallID, m.Name, text, nil); err != nil {
				return err
			}
		case "function":
			if err := b.output(record, "", m.Name, text, nil); err != nil {
				return err
			}
		default:
			return errorf(b.file, record+".role", `"system", "developer", "user", "assistant", "tool" or "function"`, brief(m.Role))
		}
	}
	return nil
}

// anthropicBlocks returns a user or assistant message's content blocks when they are Anthropic's
// Messages form: an array holding a tool_use or tool_result block (and no tool_calls beside it).
func anthropicBlocks(m *chatMessage) ([]ccBlock, bool) {
	raw := bytes.TrimSpace(m.Content)
	if m.Role != "user" && m.Role != "assistant" || len(raw) == 0 || raw[0] != '[' || len(bytes.TrimSpace(m.ToolCalls)) > 0 && string(bytes.TrimSpace(m.ToolCalls)) != "null" {
		return nil, false
	}
	var blocks []ccBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return nil, false
	}
	for _, bl := range blocks {
		if bl.Type == "tool_use" || bl.Type == "tool_result" {
			return blocks, true
		}
	}
	return nil, false
}

// readBlocks reads a message's Anthropic content blocks: an assistant's text and tool_use blocks
// are one reply; a user's tool_result blocks answer the calls of the reply before them by id,
// and its text blocks are a message to the agent (after the results, as Anthropic's API orders
// them).
func readBlocks(b *builder, record, role string, blocks []ccBlock) error {
	if role == "assistant" {
		texts, calls := replyBlocks(b, blocks)
		b.reply(strings.Join(texts, "\n\n"), calls)
		return nil
	}
	if err := resultBlocks(b, record, blocks); err != nil {
		return err
	}
	if texts, _ := replyBlocks(b, blocks); len(texts) > 0 {
		b.user(strings.Join(texts, "\n\n"), Person)
	}
	return nil
}

// textResults reads a user message without tool_result blocks that follows a reply whose calls
// ids are unanswered as their outputs: one text block per call in order, what is left to the
// last (a single call takes all of it). false when the message holds no text.
func textResults(b *builder, record string, m *chatMessage, ids []string) (bool, error) {
	var texts []string
	raw := bytes.TrimSpace(m.Content)
	if len(raw) > 0 && raw[0] == '[' {
		var blocks []ccBlock
		if json.Unmarshal(raw, &blocks) != nil {
			return false, nil
		}
		for _, bl := range blocks {
			switch bl.Type {
			case "tool_result":
				return false, nil // answered the API's way
			case "text":
				texts = append(texts, bl.Text)
			}
		}
	} else {
		text, err := textOf(b.file, record+".content", m.Content)
		if err != nil || text == "" {
			return false, err
		}
		texts = []string{text}
	}
	if len(texts) == 0 {
		return false, nil
	}
	for i, id := range ids {
		if i >= len(texts) {
			break
		}
		out := texts[i]
		if i == len(ids)-1 {
			out = strings.Join(texts[i:], "\n")
		}
		if err := b.output(record, id, "", out, nil); err != nil {
			return false, err
		}
	}
	return true, nil
}

// chatCalls reads an assistant message's tool_calls (or legacy function_call).
func chatCalls(b *builder, record string, m *chatMessage) ([]Call, error) {
	var calls []Call
	raw := bytes.TrimSpace(m.ToolCalls)
	if len(raw) > 0 && string(raw) != "null" {
		var tcs []json.RawMessage
		if err := json.Unmarshal(raw, &tcs); err != nil {
			return nil, errorf(b.file, record+".tool_calls", "an array of tool calls", kindOf(raw))
		}
		for j, traw := range tcs {
			rec := fmt.Sprintf("%s.tool_calls[%d]", record, j)
			var tc chatToolCall
			if err := json.Unmarshal(traw, &tc); err != nil {
				return nil, errorf(b.file, rec, `a tool call {"id", "type": "function", "function": {"name", "arguments"}}`, kindOf(traw))
			}
			if tc.Function == nil || tc.Function.Name == "" {
				return nil, errorf(b.file, rec+".function.name", "the called function's name", "none")
			}
			calls = append(calls, Call{ID: tc.ID, Name: tc.Function.Name, Args: b.args(tc.Function.Arguments)})
		}
	}
	if f := m.FunctionCall; f != nil && len(calls) == 0 {
		if f.Name == "" {
			return nil, errorf(b.file, record+".function_call.name", "the called function's name", "none")
		}
		calls = append(calls, Call{Name: f.Name, Args: b.args(f.Arguments)})
	}
	return calls, nil
}

// textOf reads a message content: a string, null, or an array of parts whose text parts are
// joined by line breaks (other parts, such as images, are left out).
func textOf(file, record string, raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", syntaxError(file, record, err)
		}
		return s, nil
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", syntaxError(file, record, err)
		}
		var texts []string
		for j, p := range parts {
			p = bytes.TrimSpace(p)
			if len(p) > 0 && p[0] == '"' {
				var s string
				json.Unmarshal(p, &s)
				texts = append(texts, s)
				continue
			}
			var part struct {
				Type string  `json:"type"`
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(p, &part); err != nil {
				return "", errorf(file, fmt.Sprintf("%s[%d]", record, j), `a content part {"type", "text"}`, kindOf(p))
			}
			if part.Text != nil {
				texts = append(texts, *part.Text)
			}
		}
		return strings.Join(texts, "\n"), nil
	}
	return "", errorf(file, record, "a string, null or an array of content parts", kindOf(raw))
}

// readTools reads declared tools: OpenAI's [{"type": "function", "function": {...}}] or bare
// function declarations [{"name", "description", "parameters"}].
func readTools(b *builder, file string, raw json.RawMessage) error {
	var tools []json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return errorf(file, "tools", "an array of tool declarations", kindOf(raw))
	}
	type decl struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
		InputSchema map[string]any `json:"input_schema"` // Anthropic's name for it
	}
	for i, t := range tools {
		var w struct {
			Type     string `json:"type"`
			Function *decl  `json:"function"`
			decl
		}
		if err := json.Unmarshal(t, &w); err != nil {
			return errorf(file, fmt.Sprintf("tools[%d]", i), `a tool declaration {"type": "function", "function": {"name", "description", "parameters"}}`, kindOf(t))
		}
		d := w.decl
		if w.Function != nil {
			d = *w.Function
		}
		if d.Name == "" {
			return errorf(file, fmt.Sprintf("tools[%d]", i), "a tool declaration with a name", "none")
		}
		if d.Parameters == nil {
			d.Parameters = d.InputSchema
		}
		b.declare(Tool{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
	}
	return nil
}
