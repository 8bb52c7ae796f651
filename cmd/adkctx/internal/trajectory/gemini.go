package trajectory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// gcMessage is a message of a Gemini CLI session file (~/.gemini/tmp/<project>/chats/
// session-*.json): the person's ("user"), the model's ("gemini", with the tool calls it made and
// their results), or the CLI's own notices ("info", "error", "warning"), which the model never
// saw.
type gcMessage struct {
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Model     string          `json:"model"`
	ToolCalls []struct {
		ID     string          `json:"id"`
		Name   string          `json:"name"`
		Args   json.RawMessage `json:"args"`
		Result json.RawMessage `json:"result"`
	} `json:"toolCalls"`
}

// isGeminiCLISession reports whether an object is a Gemini CLI session: its messages beside the
// session's id and the hash of its project.
func isGeminiCLISession(obj map[string]json.RawMessage) bool {
	_, id := obj["sessionId"]
	_, project := obj["projectHash"]
	_, messages := obj["messages"]
	return id && project && messages
}

// readGeminiCLI reads a Gemini CLI session: each model message one reply, its tool calls answered
// by their recorded results; the CLI's notices and the model's thoughts left out.
func readGeminiCLI(name string, top map[string]json.RawMessage) (*Session, error) {
	var msgs []json.RawMessage
	if err := json.Unmarshal(top["messages"], &msgs); err != nil {
		return nil, errorf(name, "messages", "an array of messages", kindOf(top["messages"]))
	}
	b := newBuilder(name, name, GeminiCLI)
	notices := 0
	for i, raw := range msgs {
		record := fmt.Sprintf("messages[%d]", i)
		var m gcMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, errorf(name, record, `a message {"type", "content"}`, kindOf(raw))
		}
		text, err := gcText(name, record+".content", m.Content)
		if err != nil {
			return nil, err
		}
		switch m.Type {
		case "user":
			if text != "" { // a message of tool results only repeats the calls' (newer versions)
				b.user(text, gcOrigin(text))
			}
		case "gemini":
			if b.s.Model == "" {
				b.s.Model = m.Model
			}
			calls := make([]Call, 0, len(m.ToolCalls))
			for _, tc := range m.ToolCalls {
				calls = append(calls, Call{ID: tc.ID, Name: tc.Name, Args: b.args(tc.Args)})
			}
			if text == "" && len(calls) == 0 {
				continue
			}
			b.reply(text, calls)
			for j, tc := range m.ToolCalls {
				where := fmt.Sprintf("%s.toolCalls[%d].result", record, j)
				if len(bytes.TrimSpace(tc.Result)) == 0 || string(bytes.TrimSpace(tc.Result)) == "null" {
					continue // not run (cancelled): answered with an error at the end
				}
				out, resp, err := gcResult(name, where, tc.ID, tc.Result)
				if err != nil {
					return nil, err
				}
				if err := b.output(where, b.open.Calls[j].ID, "", out, resp); err != nil {
					return nil, err
				}
			}
		default:
			notices++
		}
	}
	s := b.finish()
	s.Notes = append(s.Notes, "a Gemini CLI session records no system prompt or tool declarations: the replay sends none and infers the tools from the calls")
	s.noteCount(notices, "%d notices the CLI showed the person (info, errors, warnings) left out: the model never saw them")
	return s, nil
}

// gcOrigin is who wrote a user message of text: the CLI for the context it opens a session with
// and its notices of a mode change, else the person.
func gcOrigin(text string) Origin {
	if opensWith(text, "<session_context>", "User has manually exited Plan Mode") {
		return Environment
	}
	return Person
}

// gcParts decodes a genai PartListUnion: a string, a part, or an array of strings and parts.
func gcParts(name, record string, raw json.RawMessage) ([]gaPart, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []gaPart{{Text: s}}, nil
	}
	var one gaPart
	if raw[0] == '{' && json.Unmarshal(raw, &one) == nil {
		return []gaPart{one}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errorf(name, record, "a string, a part or an array of parts", kindOf(raw))
	}
	var parts []gaPart
	for k, it := range items {
		p, err := gcParts(name, fmt.Sprintf("%s[%d]", record, k), it)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p...)
	}
	return parts, nil
}

// gcText is a message's text: its text parts (thoughts left out; media as "[image]").
func gcText(name, record string, raw json.RawMessage) (string, error) {
	parts, err := gcParts(name, record, raw)
	if err != nil {
		return "", err
	}
	var texts []string
	for _, p := range parts {
		switch {
		case p.Thought:
		case p.Text != "":
			texts = append(texts, p.Text)
		case p.media():
			texts = append(texts, "[image]")
		}
	}
	return strings.Join(texts, "\n"), nil
}

// gcResult is the recorded result of call id as the model read it: the response of its function
// response part (the one naming id: some versions record every result of a batch of parallel
// calls in each call's), with the text of the other parts (the CLI sends a tool's media beside
// it), or its text.
func gcResult(name, record, id string, raw json.RawMessage) (string, map[string]any, error) {
	parts, err := gcParts(name, record, raw)
	if err != nil {
		return "", nil, err
	}
	var resp map[string]any
	var texts []string
	for _, p := range parts {
		fr := p.response()
		switch {
		case fr != nil && fr.ID != "" && id != "" && fr.ID != id:
			// another call's result
		case fr != nil && resp == nil:
			m, ok := decodeObject(fr.Response)
			if !ok {
				return "", nil, errorf(name, record, `a function response {"response": {...}}`, kindOf(fr.Response))
			}
			resp = m
		case p.Text != "" && !p.Thought:
			texts = append(texts, p.Text)
		}
	}
	if resp == nil {
		text := strings.Join(texts, "\n")
		return text, Response(text), nil
	}
	out := responseText(resp)
	if len(texts) > 0 {
		out += "\n" + strings.Join(texts, "\n")
	}
	return out, resp, nil
}
