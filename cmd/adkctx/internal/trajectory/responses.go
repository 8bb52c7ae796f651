package trajectory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// isResponsesRequest reports whether an object is an OpenAI Responses API request as logged: its
// "input" (an array of items or a string) beside the model, the instructions or the tools.
func isResponsesRequest(obj map[string]json.RawMessage) bool {
	if _, input := obj["input"]; !input {
		return false
	}
	_, model := obj["model"]
	_, instructions := obj["instructions"]
	_, tools := obj["tools"]
	return model || instructions || tools
}

// readResponsesRequest reads a logged OpenAI Responses API request (what an agent on the OpenAI
// Agents SDK or the Responses API sends): its items as a Codex rollout's are read, its
// instructions as the instruction, its function tools as declared.
func readResponsesRequest(name string, top map[string]json.RawMessage) (*Session, error) {
	var items []json.RawMessage
	var text string
	if json.Unmarshal(top["input"], &text) == nil {
		items = []json.RawMessage{json.RawMessage(`{"role": "user", "content": ` + string(top["input"]) + `}`)} // one message from the person
	} else if err := json.Unmarshal(top["input"], &items); err != nil {
		return nil, errorf(name, "input", "an array of items or a string", kindOf(top["input"]))
	}
	b := newBuilder(name, name, ResponsesRequest)
	if raw, ok := top["model"]; ok {
		json.Unmarshal(raw, &b.s.Model)
	}
	if raw, ok := top["instructions"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, errorf(name, "instructions", "a string", kindOf(raw))
		}
		b.system(text)
	}
	if raw, ok := top["tools"]; ok {
		if err := responsesTools(b, name, raw); err != nil {
			return nil, err
		}
	}
	r := &responseItems{b: b, user: func(text string) { b.user(text, Person) }}
	for i, raw := range items {
		where := fmt.Sprintf("input[%d]", i)
		var it cxItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, errorf(name, where, `an item {"type", ...} or a message {"role", "content"}`, kindOf(raw))
		}
		if err := r.add(where, it); err != nil {
			return nil, err
		}
	}
	r.flush()
	s := b.finish()
	s.Notes = append(s.Notes, r.notes()...)
	return s, nil
}

// responsesTools declares a request's function tools ({"type": "function", "name", "description",
// "parameters"}); the provider's own tools (web search, file search) are no calls the agent's
// tools answer.
func responsesTools(b *builder, name string, raw json.RawMessage) error {
	var tools []json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return errorf(name, "tools", "an array of tools", kindOf(raw))
	}
	for i, t := range tools {
		var d struct {
			Type        string         `json:"type"`
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		}
		if err := json.Unmarshal(t, &d); err != nil {
			return errorf(name, fmt.Sprintf("tools[%d]", i), `a tool {"type": "function", "name", "description", "parameters"}`, kindOf(t))
		}
		if d.Type != "" && !strings.EqualFold(d.Type, "function") {
			continue
		}
		if d.Name == "" {
			return errorf(name, fmt.Sprintf("tools[%d]", i), "a function tool with a name", "none")
		}
		b.declare(Tool{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
	}
	return nil
}
