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
	Type string `json:"type"`
	// UUID names the line; ParentUUID the line it follows in the conversation (null at a root),
	// LogicalParentUUID the one it follows across Claude Code's own compaction (whose boundary
	// starts a new root).
	UUID              string          `json:"uuid"`
	ParentUUID        json.RawMessage `json:"parentUuid"` // absent (nil) differs from null
	LogicalParentUUID string          `json:"logicalParentUuid"`
	IsSidechain       bool            `json:"isSidechain"`
	IsMeta            bool            `json:"isMeta"`
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
	IsError   bool            `json:"is_error"`
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
	lines, cut, err := ccLines(name, first, d)
	if err != nil {
		return nil, err
	}
	sidechain := -1 // the chain read: 0 (the session's) or 1 (a subagent's own file)
	for _, l := range lines {
		if l.isMessage() && !l.IsMeta {
			sidechain = 0
			if l.IsSidechain {
				sidechain = 1
			}
			break
		}
	}
	active, joined := activePath(lines, sidechain == 1)
	skipped, synthetic, abandoned, compacted := 0, 0, 0, 0
	for n, l := range lines {
		record := fmt.Sprintf("line %d", n+1)
		if !l.isMessage() {
			continue
		}
		if l.IsSidechain != (sidechain == 1) || l.IsMeta {
			skipped++
			continue
		}
		if active != nil && l.UUID != "" && !active[l.UUID] {
			abandoned++
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
			if text != "" {
				texts = append(texts, text)
			}
			blockTexts, calls := replyBlocks(b, blocks)
			texts = append(texts, blockTexts...)
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
			compacted++
		}
		// The outputs first: they answer the reply before the line, whatever text comes with
		// them (Anthropic's API wants them first; text before them would end the reply's turn).
		if err := resultBlocks(b, record, blocks); err != nil {
			return nil, err
		}
		if text != "" {
			b.user(text, ccOrigin(text, origin))
		}
		for _, bl := range blocks {
			if bl.Type == "text" && bl.Text != "" {
				b.user(bl.Text, ccOrigin(bl.Text, origin))
			}
		}
	}
	flush()
	s := b.finish()
	s.Notes = append(s.Notes, "a Claude Code transcript records no system prompt or tool declarations: the replay sends none and infers the tools from the calls")
	s.noteCount(skipped, "%d lines of subagents or meta messages left out")
	s.noteCount(synthetic, "%d replies Claude Code wrote in the model's place (API errors) left out")
	s.noteCount(abandoned, "%d messages of branches the conversation left (a rewind or an edited message) left out")
	s.noteCount(compacted, "%d summaries Claude Code's own compaction wrote are replayed as messages to the agent, after the history they stood for")
	if cut {
		s.Notes = append(s.Notes, "the last line is cut short (a session still being written?): left out")
	}
	s.noteCount(joined, "%d lines name a parent the transcript does not hold: each joined to the line before it")
	return s, nil
}

// ccOrigin is who wrote a message of text that a line of origin o holds: the harness when Claude
// Code wrote it in the person's place (a local command's output, /compact's or a "!" shell
// command's, and the notice that a background task ended), else o. The replay checks later
// requests for the person's words; a command's output is not theirs.
func ccOrigin(text string, o Origin) Origin {
	if opensWith(text, "<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>", "<bash-stderr>", "<task-notification>") {
		return Environment
	}
	return o
}

// attach adds to active the lines hanging off it that are part of the same exchange, not a
// branch: every block of a model message already on it (by the message's id, whatever line a
// block follows: a hook's progress line may come between two blocks), and the tool results
// following a line on it. A message with parallel calls is a tree (each result follows its own
// call's line), and only one of its branches leads to the newest message; a rewind branches at
// a message of the person's.
func attach(lines []ccLine, active map[string]bool) {
	messages := map[string]bool{} // model messages on the chain
	for i := range lines {
		if l := &lines[i]; active[l.UUID] && l.Type == "assistant" && l.Message != nil && l.Message.ID != "" {
			messages[l.Message.ID] = true
		}
	}
	for i := range lines {
		if l := &lines[i]; l.UUID != "" && l.Type == "assistant" && l.Message != nil && messages[l.Message.ID] {
			active[l.UUID] = true
		}
	}
	for i := range lines { // in file order: a line follows its parent
		l := &lines[i]
		var parent string
		if l.UUID == "" || active[l.UUID] || !l.isMessage() || json.Unmarshal(l.ParentUUID, &parent) != nil || !active[parent] {
			continue
		}
		if l.Type == "user" && holdsToolResult(l.Message.Content) {
			active[l.UUID] = true
		}
	}
}

// holdsToolResult reports whether a message's content holds a tool result block.
func holdsToolResult(raw json.RawMessage) bool {
	var blocks []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return false
	}
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// isMessage reports whether a line is a message of the conversation.
func (l *ccLine) isMessage() bool {
	return (l.Type == "user" || l.Type == "assistant") && l.Message != nil
}

// ccLines decodes every line of a transcript: first, then the lines d decodes.
// A last line cut short (a session still being written) ends the lines: cut reports it.
func ccLines(name string, first json.RawMessage, d *json.Decoder) (lines []ccLine, cut bool, err error) {
	for n := 1; ; n++ {
		raw := first
		if n > 1 {
			raw = nil
			if err := d.Decode(&raw); err != nil {
				if errors.Is(err, io.EOF) {
					return lines, false, nil
				}
				if errors.Is(err, io.ErrUnexpectedEOF) {
					return lines, true, nil
				}
				return nil, false, syntaxError(name, fmt.Sprintf("line %d", n), err)
			}
		}
		var l ccLine
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, false, errorf(name, fmt.Sprintf("line %d", n), "a transcript record object", kindOf(raw))
		}
		lines = append(lines, l)
	}
}

// activePath returns the uuids of the lines on the conversation as it stands: the chain from the
// newest message of the chain read (sidechain: a subagent's) back to its root, across Claude
// Code's compaction boundaries, with the lines attached to it (attach). A rewind or an edited
// message leaves the branch it abandoned in the file; this chain does not hold it. nil when a
// message carries no uuid or no parentUuid (not even null: a transcript that does not record
// the chain). A line naming a parent the file does not hold (Claude Code sometimes writes one)
// is joined to the line before it in the file; joined counts them.
func activePath(lines []ccLine, sidechain bool) (active map[string]bool, joined int) {
	at := map[string]int{} // uuid → index of its line
	leaf := ""
	for i := range lines {
		l := &lines[i]
		if l.UUID == "" {
			continue
		}
		at[l.UUID] = i
		if l.isMessage() && !l.IsMeta && l.IsSidechain == sidechain {
			leaf = l.UUID
		}
	}
	for i := range lines {
		if l := &lines[i]; l.isMessage() && (l.UUID == "" || len(l.ParentUUID) == 0) {
			return nil, 0
		}
	}
	if leaf == "" {
		return nil, 0
	}
	active = map[string]bool{}
	for id := leaf; id != "" && !active[id]; {
		i := at[id]
		l := &lines[i]
		active[id] = true
		id = l.LogicalParentUUID
		var parent string
		if json.Unmarshal(l.ParentUUID, &parent) == nil && parent != "" {
			id = parent
		}
		if _, ok := at[id]; id != "" && !ok {
			joined++
			id = ""
			for j := i - 1; j >= 0 && id == ""; j-- {
				id = lines[j].UUID
			}
		}
	}
	attach(lines, active)
	return active, joined
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

// replyBlocks returns the texts and the calls of a model message's content blocks (thinking
// and other blocks left out).
func replyBlocks(b *builder, blocks []ccBlock) (texts []string, calls []Call) {
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
	return texts, calls
}

// resultBlocks answers calls of the newest reply with a message's tool_result blocks, by
// tool_use_id; record locates the message in errors.
func resultBlocks(b *builder, record string, blocks []ccBlock) error {
	for j, bl := range blocks {
		if bl.Type != "tool_result" {
			continue
		}
		where := fmt.Sprintf("%s.content[%d]", record, j)
		out, err := ccResultText(b.file, where, bl.Content)
		if err != nil {
			return err
		}
		if err := b.output(where, bl.ToolUseID, "", out, bl.response(out)); err != nil {
			return err
		}
	}
	return nil
}

// response is what a replayed tool returns for a tool_result block whose text is out: an error
// the result reported as {"error": out} (adk-go's convention), else Response(out).
func (bl *ccBlock) response(out string) map[string]any {
	if bl.IsError {
		return map[string]any{"error": out}
	}
	return Response(out)
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
