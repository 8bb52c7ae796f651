package trajectory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"slices"
	"strings"
)

// ReadFile reads the sessions of one trajectory file, recognized by its content. A file holding
// many sessions (tau-bench's results) is decoded one record at a time, so only one session is in
// memory. The first error ends the sequence; format errors are *FormatError values.
func ReadFile(path string) iter.Seq2[*Session, error] {
	return func(yield func(*Session, error) bool) {
		f, err := os.Open(path)
		if err != nil {
			yield(nil, err)
			return
		}
		defer f.Close()
		for s, err := range Read(path, f) {
			if !yield(s, err) || err != nil {
				return
			}
		}
	}
}

// Read reads the sessions of one trajectory held by r; name is the file's path, used in session
// ids and errors.
func Read(name string, r io.Reader) iter.Seq2[*Session, error] {
	return func(yield func(*Session, error) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		first, err := firstByte(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errorf(name, "", "a JSON object or array", "an empty file")
			}
			yield(nil, err)
			return
		}
		switch first {
		case '{':
			s, err := readObject(name, br)
			yield(s, err)
		case '[':
			for s, err := range readArray(name, br) {
				if !yield(s, err) || err != nil {
					return
				}
			}
		default:
			yield(nil, errorf(name, "", "a JSON object (a chat, mini-swe-agent or ATIF trajectory, a stored adk session) or an array (chat messages, tau-bench results, stored adk sessions)", fmt.Sprintf("a file starting with %q", first)))
		}
	}
}

// firstByte returns the first byte that is not whitespace or a byte-order mark, unread.
func firstByte(br *bufio.Reader) (byte, error) {
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte{0xEF, 0xBB, 0xBF}) {
		br.Discard(3)
	}
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b, br.UnreadByte()
	}
}

func syntaxError(name, record string, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return errorf(name, record, "valid JSON", fmt.Sprintf("a syntax error at byte %d (%v)", se.Offset, se))
	case errors.As(err, &te):
		return errorf(name, record, fmt.Sprintf("%s at %s", te.Type, te.Field), "JSON "+te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(name, record, "valid JSON", "the file ends inside a value")
	}
	return errorf(name, record, "valid JSON", err.Error())
}

// readObject reads a file holding one JSON object (a chat, a mini-swe-agent or an ATIF
// trajectory, a stored adk session) or JSON Lines of one (a Claude Code transcript, a Codex
// rollout).
func readObject(name string, r io.Reader) (*Session, error) {
	d := json.NewDecoder(r)
	var raw json.RawMessage
	if err := d.Decode(&raw); err != nil {
		return nil, syntaxError(name, "", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, syntaxError(name, "", err)
	}
	if isCodexLine(top) {
		return readCodex(name, raw, d)
	}
	if isClaudeCodeLine(top) {
		return readClaudeCode(name, raw, d)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errorf(name, "", "one JSON value", "more data after the first object")
	}
	if raw, ok := top["trajectory_format"]; ok {
		var tf string
		if json.Unmarshal(raw, &tf) != nil || !strings.HasPrefix(tf, "mini-swe-agent") {
			return nil, errorf(name, "trajectory_format", `"mini-swe-agent-1" or "mini-swe-agent-1.1"`, brief(string(raw)))
		}
		return readMiniSWE(name, tf, top)
	}
	if raw, ok := top["schema_version"]; ok {
		var sv string
		if json.Unmarshal(raw, &sv) != nil || !strings.HasPrefix(sv, "ATIF-v1") {
			return nil, errorf(name, "schema_version", `an ATIF version ("ATIF-v1.x")`, brief(string(raw)))
		}
		return readATIF(name, top)
	}
	if isGeminiCLISession(top) {
		return readGeminiCLI(name, top)
	}
	if isSessionJSON(top) {
		return readSessionJSON(name, "", top)
	}
	// A logged request holds no "messages": a chat log with "contents" or "input" beside them is
	// chat.
	if _, messages := top["messages"]; !messages {
		if isGenAIRequest(top) {
			return readGenAIRequest(name, top)
		}
		if isResponsesRequest(top) {
			return readResponsesRequest(name, top)
		}
	}
	if raw, ok := top["messages"]; ok {
		var msgs []json.RawMessage
		if err := json.Unmarshal(raw, &msgs); err != nil {
			return nil, errorf(name, "messages", "an array of chat messages", kindOf(raw))
		}
		b := newBuilder(name, name, OpenAIChat)
		if raw, ok := top["model"]; ok {
			json.Unmarshal(raw, &b.s.Model)
		}
		if raw, ok := top["tools"]; ok {
			if err := readTools(b, name, raw); err != nil {
				return nil, err
			}
		}
		if raw, ok := top["system"]; ok { // Anthropic's Messages form: the instruction beside the messages
			text, err := textOf(name, "system", raw)
			if err != nil {
				return nil, err
			}
			b.system(text)
		}
		if err := readChat(b, "messages", msgs); err != nil {
			return nil, err
		}
		return b.finish(), nil
	}
	return nil, errorf(name, "", `a trajectory: an object with "messages" (chat), "trajectory_format" (mini-swe-agent), "schema_version" (ATIF), "events" (a stored adk session), "sessionId" and "projectHash" (Gemini CLI), "contents" (a Gemini API request), "input" beside "model" (an OpenAI Responses API request), or JSON Lines of a Claude Code transcript or a Codex rollout`, "an object with keys "+keysOf(top))
}

// readArray reads a file holding a JSON array: chat messages (one session), tau-bench results or
// stored adk sessions (one session per record, decoded one at a time).
func readArray(name string, r io.Reader) iter.Seq2[*Session, error] {
	return func(yield func(*Session, error) bool) {
		d := json.NewDecoder(r)
		if _, err := d.Token(); err != nil {
			yield(nil, syntaxError(name, "", err))
			return
		}
		var elems []json.RawMessage
		tau, sessions, contents := false, false, false
		for i := 0; d.More(); i++ {
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				yield(nil, syntaxError(name, fmt.Sprintf("[%d]", i), err))
				return
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(raw, &obj); err != nil {
				yield(nil, errorf(name, fmt.Sprintf("[%d]", i), "an object (a chat message or a tau-bench result)", kindOf(raw)))
				return
			}
			if i == 0 {
				_, tau = obj["traj"]
				sessions = isSessionJSON(obj)
				contents = isGenAIArray(obj)
				if _, role := obj["role"]; !tau && !sessions && !role && !contents {
					yield(nil, errorf(name, "[0]", `a chat message (with "role"), a genai content (with "parts"), a tau-bench result (with "traj") or a stored adk session (with "events")`, "an object with keys "+keysOf(obj)))
					return
				}
			}
			if sessions {
				s, err := readSessionJSON(name, fmt.Sprintf("[%d]", i), obj)
				if !yield(s, err) || err != nil {
					return
				}
				continue
			}
			if !tau {
				elems = append(elems, raw)
				continue
			}
			s, err := readTau(name, i, obj)
			if !yield(s, err) || err != nil {
				return
			}
		}
		if _, err := d.Token(); err != nil {
			yield(nil, syntaxError(name, "", err))
			return
		}
		if _, err := d.Token(); !errors.Is(err, io.EOF) {
			yield(nil, errorf(name, "", "one JSON value", "more data after the array"))
			return
		}
		if tau || sessions {
			return
		}
		if len(elems) == 0 {
			yield(nil, errorf(name, "", "at least one message", "an empty array"))
			return
		}
		if contents {
			b := newBuilder(name, name, GenAIContents)
			if err := readGenAI(b, "", elems); err != nil {
				yield(nil, err)
				return
			}
			yield(b.finish(), nil)
			return
		}
		b := newBuilder(name, name, OpenAIChat)
		if err := readChat(b, "", elems); err != nil {
			yield(nil, err)
			return
		}
		yield(b.finish(), nil)
	}
}

func readTau(name string, i int, obj map[string]json.RawMessage) (*Session, error) {
	record := fmt.Sprintf("record %d", i)
	var task, trial json.Number
	if raw, ok := obj["task_id"]; ok {
		if json.Unmarshal(raw, &task) == nil {
			record += fmt.Sprintf(" (task_id %s)", task)
		}
	}
	if raw, ok := obj["trial"]; ok {
		json.Unmarshal(raw, &trial)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(obj["traj"], &msgs); err != nil {
		return nil, errorf(name, record+".traj", "an array of chat messages", kindOf(obj["traj"]))
	}
	id := fmt.Sprintf("%s#%d", name, i)
	if task != "" {
		id += "-task" + string(task)
		if trial != "" {
			id += "-trial" + string(trial)
		}
	}
	b := newBuilder(name, id, TauBench)
	if err := readChat(b, record+".traj", msgs); err != nil {
		return nil, err
	}
	return b.finish(), nil
}

func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func keysOf(m map[string]json.RawMessage) string {
	keys := slices.Sorted(maps.Keys(m))
	if len(keys) > 8 {
		keys = append(keys[:8], "…")
	}
	if len(keys) == 0 {
		return "(none)"
	}
	return strings.Join(keys, ", ")
}
