package trajectory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ccLine is one line of a Claude Code transcript (the JSON Lines file a session writes under
// ~/.claude/projects/): a message of the person or of tool results ("user"), a content block of
// the model's reply ("assistant"), or bookkeeping (other types, left out).
type ccLine struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	// IsAPIErrorMessage marks a reply Claude Code wrote in the model's place (an API error).
	IsAPIErrorMessage bool `json:"isApiErrorMessage"`
	// IsCompactSummary marks the summary Claude Code's own compaction wrote in the person's place.
	IsCompactSummary bool `json:"isCompactSummary"`
	Message          *struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// ccBlock is a content block of a Claude Code message (Anthropic's Messages API form).
type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// syntheticModel is the model Claude Code names in the replies it writes itself (an API error,
// "No response requested."): the model never wrote them.
const syntheticModel = "<synthetic>"

// isClaudeCodeLine reports whether an object is a line of a Claude Code transcript: a typed
// record of a session (sessionId, uuid or leafUuid beside its type), or the file history
// snapshot an interactive session's transcript starts with (it names neither).
func isClaudeCodeLine(obj map[string]json.RawMessage) bool {
	if _, ok := obj["type"]; !ok {
		return false
	}
	for _, k := range []string{"sessionId", "uuid", "leafUuid", "snapshot"} {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

// readClaudeCode reads a Claude Code transcript whose first line is first and whose other lines
// d decodes. The transcript is the chain of its first message: a session's own, its subagents'
// lines (sidechains) left out, or a subagent's (agent-*.jsonl, every line a sidechain). Meta
// lines, thinking blocks and the replies Claude Code wrote in the model's place are left out; the
// content blocks of one model message, written one per line, are one reply, the outputs of its
// earlier calls recorded between them or not.
func readClaudeCode(name string, first json.RawMessage, d *json.Decoder) (*Session, error) {
	b := newBuilder(name, name, ClaudeCode)
	var reply struct {
		id    string
		text  []string
		calls []Call
		open  bool
	}
	// written is the id of the model message the newest reply holds, once outputs follow it.
	var written string
	flush := func() {
		if reply.open {
			b.reply(strings.Join(reply.text, "\n\n"), reply.calls)
			written = reply.id
		}
		reply.id, reply.text, reply.calls, reply.open = "", nil, nil, false
	}
	skipped, synthetic := 0, 0
	sidechain := -1 // the chain read: -1 until the first message, then 0 (the session's) or 1
	for n := 1; ; n++ {
		raw := first
		if n > 1 {
			raw = nil
			if err := d.Decode(&raw); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, syntaxError(name, fmt.Sprintf("line %d", n), err)
			}
		}
		record := fmt.Sprintf("line %d", n)
		var l ccLine
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, errorf(name, record, "a transcript record object", kindOf(raw))
		}
		if l.Type != "user" && l.Type != "assistant" || l.Message == nil {
			continue
		}
		if sidechain < 0 && !l.IsMeta {
			sidechain = 0
			if l.IsSidechain {
				sidechain = 1
			}
		}
		if l.IsSidechain != (sidechain == 1) || l.IsMeta {
			skipped++
			continue
		}
		if l.Type == "assistant" && (l.IsAPIErrorMessage || l.Message.Model == syntheticModel) {
			synthetic++
			continue
		}
		blocks, text, err := ccContent(name, record, l.Message.Content)
		if err != nil {
			return nil, err
		}
		if l.Type == "assistant" {
			if reply.open && reply.id != l.Message.ID {
				flush()
			}
			if b.s.Model == "" {
				b.s.Model = l.Message.Model
			}
			var texts []string
			var calls []Call
			if text != "" {
				texts = append(texts, text)
			}
			for _, bl := range blocks {
				switch bl.Type {
				case "text":
					if bl.Text != "" {
						texts = append(texts, bl.Text)
					}
				case "tool_use":
					calls = append(calls, Call{ID: bl.ID, Name: bl.Name, Args: b.args(bl.Input)})
				}
			}
			if !reply.open && l.Message.ID != "" && l.Message.ID == written && b.open != nil {
				// The message the newest reply holds, written on after outputs of its calls.
				b.extend(strings.Join(texts, "\n\n"), calls)
				continue
			}
			reply.id, reply.open = l.Message.ID, true
			reply.text, reply.calls = append(reply.text, texts...), append(reply.calls, calls...)
			continue
		}
		flush()
		origin := Person
		if l.IsCompactSummary {
			origin = Environment
		}
		// The outputs first: they answer the reply before the line, whatever text comes with
		// them (Anthropic's API wants them first; text before them would end the reply's turn).
		for j, bl := range blocks {
			if bl.Type != "tool_result" {
				continue
			}
			where := fmt.Sprintf("%s.content[%d]", record, j)
			out, err := ccResultText(name, where, bl.Content)
			if err != nil {
				return nil, err
			}
			if err := b.output(where, bl.ToolUseID, "", out, nil); err != nil {
				return nil, err
			}
		}
		if text != "" {
			b.user(text, origin)
		}
		for _, bl := range blocks {
			if bl.Type == "text" && bl.Text != "" {
				b.user(bl.Text, origin)
			}
		}
	}
	flush()
	s := b.finish()
	s.Notes = append(s.Notes, "a Claude Code transcript records no system prompt or tool declarations: the replay sends none and infers the tools from the calls")
	if skipped > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d lines of subagents or meta messages left out", skipped))
	}
	if synthetic > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d replies Claude Code wrote in the model's place (API errors) left out", synthetic))
	}
	return s, nil
}

// ccContent decodes a message's content: a string (its text) or an array of blocks.
func ccContent(name, record string, raw json.RawMessage) ([]ccBlock, string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, "", syntaxError(name, record+".content", err)
		}
		return nil, s, nil
	}
	var blocks []ccBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, "", errorf(name, record+".content", "a string or an array of content blocks", kindOf(raw))
	}
	return blocks, "", nil
}

// ccResultText is a tool result's content as the agent read it: a string, or the text of its
// blocks (an image block as "[image]").
func ccResultText(name, record string, raw json.RawMessage) (string, error) {
	blocks, text, err := ccContent(name, record, raw)
	if err != nil || blocks == nil {
		return text, err
	}
	var texts []string
	for _, bl := range blocks {
		switch bl.Type {
		case "text":
			texts = append(texts, bl.Text)
		case "image":
			texts = append(texts, "[image]")
		}
	}
	return strings.Join(texts, "\n"), nil
}
