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

// isClaudeCodeLine reports whether an object is a line of a Claude Code transcript: a typed
// record of a session (sessionId, uuid or leafUuid beside its type).
func isClaudeCodeLine(obj map[string]json.RawMessage) bool {
	if _, ok := obj["type"]; !ok {
		return false
	}
	for _, k := range []string{"sessionId", "uuid", "leafUuid"} {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

// readClaudeCode reads a Claude Code transcript whose first line is first and whose other lines
// d decodes. Subagents' lines (sidechains) and meta lines are left out, as are thinking blocks;
// the content blocks of one model message, written one per line, are one reply.
func readClaudeCode(name string, first json.RawMessage, d *json.Decoder) (*Session, error) {
	b := newBuilder(name, name, ClaudeCode)
	var reply struct {
		id    string
		text  []string
		calls []Call
		open  bool
	}
	flush := func() {
		if reply.open {
			b.reply(strings.Join(reply.text, "\n\n"), reply.calls)
		}
		reply.id, reply.text, reply.calls, reply.open = "", nil, nil, false
	}
	skipped := 0
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
		if l.IsSidechain || l.IsMeta {
			skipped++
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
			reply.id, reply.open = l.Message.ID, true
			if text != "" {
				reply.text = append(reply.text, text)
			}
			for _, bl := range blocks {
				switch bl.Type {
				case "text":
					if bl.Text != "" {
						reply.text = append(reply.text, bl.Text)
					}
				case "tool_use":
					reply.calls = append(reply.calls, Call{ID: bl.ID, Name: bl.Name, Args: b.args(bl.Input)})
				}
			}
			continue
		}
		flush()
		origin := Person
		if l.IsCompactSummary {
			origin = Environment
		}
		if text != "" {
			b.user(text, origin)
		}
		for j, bl := range blocks {
			where := fmt.Sprintf("%s.content[%d]", record, j)
			switch bl.Type {
			case "text":
				if bl.Text != "" {
					b.user(bl.Text, origin)
				}
			case "tool_result":
				out, err := ccResultText(name, where, bl.Content)
				if err != nil {
					return nil, err
				}
				if err := b.output(where, bl.ToolUseID, "", out, nil); err != nil {
					return nil, err
				}
			}
		}
	}
	flush()
	s := b.finish()
	s.Notes = append(s.Notes, "a Claude Code transcript records no system prompt or tool declarations: the replay sends none and infers the tools from the calls")
	if skipped > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d lines of subagents or meta messages left out", skipped))
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
