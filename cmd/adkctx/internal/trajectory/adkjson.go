package trajectory

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

// jsonEvent is one event of a session as adk-go's REST API returns it (GET
// /apps/{app}/users/{user}/sessions/{id}), and as adk-python's API server and web UI export it:
// camelCase keys, the content in genai's JSON form. adk-python's own dump (snake_case keys) is
// read too: normalizeEvent renames its keys first.
type jsonEvent struct {
	ID                 string                                      `json:"id"`
	InvocationID       string                                      `json:"invocationId"`
	Branch             string                                      `json:"branch"`
	Author             string                                      `json:"author"`
	Partial            bool                                        `json:"partial"`
	LongRunningToolIDs []string                                    `json:"longRunningToolIds"`
	Content            *genai.Content                              `json:"content"`
	CustomMetadata     map[string]any                              `json:"customMetadata"`
	UsageMetadata      *genai.GenerateContentResponseUsageMetadata `json:"usageMetadata"`
}

// isSessionJSON reports whether an object is a stored session in JSON (it has "events", and an
// id or an app name: a trajectory format never has those three keys).
func isSessionJSON(obj map[string]json.RawMessage) bool {
	_, events := obj["events"]
	_, id := obj["id"]
	_, app := obj["appName"]
	_, appSnake := obj["app_name"]
	return events && (id || app || appSnake)
}

// readSessionJSON reads one stored session in JSON (see jsonEvent). record locates it in the
// file ("" for a file holding one session). Its events are converted as FromEvents converts a
// stored session's.
func readSessionJSON(name, record string, obj map[string]json.RawMessage) (*Session, error) {
	var hdr struct {
		ID    string `json:"id"`
		App   string `json:"appName"`
		AppS  string `json:"app_name"`
		User  string `json:"userId"`
		UserS string `json:"user_id"`
	}
	for key, dst := range map[string]*string{"id": &hdr.ID, "appName": &hdr.App, "app_name": &hdr.AppS, "userId": &hdr.User, "user_id": &hdr.UserS} {
		if raw, ok := obj[key]; ok && json.Unmarshal(raw, dst) != nil {
			return nil, errorf(name, joinRecord(record, key), "a string", kindOf(raw))
		}
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(obj["events"], &raws); err != nil {
		return nil, errorf(name, joinRecord(record, "events"), "an array of events", kindOf(obj["events"]))
	}
	events := make([]*session.Event, 0, len(raws))
	for i, raw := range raws {
		where := joinRecord(record, fmt.Sprintf("events[%d]", i))
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, errorf(name, where, "an event object", kindOf(raw))
		}
		normalized, err := json.Marshal(normalizeEvent(fields))
		if err != nil {
			return nil, errorf(name, where, "an event object", err.Error())
		}
		var ev jsonEvent
		if err := json.Unmarshal(normalized, &ev); err != nil {
			return nil, syntaxError(name, where, err)
		}
		events = append(events, &session.Event{
			ID: ev.ID, InvocationID: ev.InvocationID, Branch: ev.Branch, Author: ev.Author,
			LongRunningToolIDs: ev.LongRunningToolIDs,
			LLMResponse: model.LLMResponse{
				Content: ev.Content, CustomMetadata: ev.CustomMetadata, UsageMetadata: ev.UsageMetadata, Partial: ev.Partial,
			},
		})
	}
	id := strings.Join(nonEmpty(first(hdr.App, hdr.AppS), first(hdr.User, hdr.UserS), hdr.ID), "/")
	switch {
	case id != "":
	case record != "":
		id = name + "#" + record
	default:
		id = name
	}
	s, err := FromEvents(name, id, events)
	if s != nil {
		s.Format = ADKSessionJSON
	}
	return s, err
}

// snakeKeys are the snake_case keys adk-python's default dump writes where its API writes
// camelCase, in an event and in the parts of its content. Only these levels are renamed: the
// arguments and results of calls are the tools' own values and keep their keys.
var (
	snakeEventKeys = map[string]string{
		"invocation_id": "invocationId", "long_running_tool_ids": "longRunningToolIds",
		"custom_metadata": "customMetadata", "usage_metadata": "usageMetadata",
	}
	snakePartKeys = map[string]string{
		"function_call": "functionCall", "function_response": "functionResponse", "inline_data": "inlineData",
		"file_data": "fileData", "executable_code": "executableCode", "code_execution_result": "codeExecutionResult",
		"thought_signature": "thoughtSignature", "video_metadata": "videoMetadata",
	}
)

// normalizeEvent renames an event's snake_case keys (and its content's parts') to the camelCase
// jsonEvent reads. A key present in both spellings keeps the camelCase value.
func normalizeEvent(fields map[string]json.RawMessage) map[string]json.RawMessage {
	rename(fields, snakeEventKeys)
	raw, ok := fields["content"]
	if !ok {
		return fields
	}
	var content map[string]json.RawMessage
	if json.Unmarshal(raw, &content) != nil {
		return fields // not an object: jsonEvent's decoding reports it
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(content["parts"], &parts) != nil {
		return fields
	}
	changed := false
	for _, p := range parts {
		changed = rename(p, snakePartKeys) || changed
		changed = stdBase64(p, "thoughtSignature") || changed
		if raw, ok := p["inlineData"]; ok {
			var blob map[string]json.RawMessage
			if json.Unmarshal(raw, &blob) == nil && stdBase64(blob, "data") {
				if b, err := json.Marshal(blob); err == nil {
					p["inlineData"], changed = b, true
				}
			}
		}
	}
	if !changed {
		return fields
	}
	// Values decoded from JSON encode again.
	if b, err := json.Marshal(parts); err == nil {
		content["parts"] = b
		if b, err := json.Marshal(content); err == nil {
			fields["content"] = b
		}
	}
	return fields
}

// stdBase64 rewrites m[key], bytes in base64, from the URL alphabet pydantic writes (adk-python's
// dumps and its database's contents) to the standard one genai's JSON reads, and reports whether
// it changed it.
func stdBase64(m map[string]json.RawMessage, key string) bool {
	var s string
	if raw, ok := m[key]; !ok || json.Unmarshal(raw, &s) != nil {
		return false
	}
	std := strings.NewReplacer("-", "+", "_", "/").Replace(s)
	if n := len(std) % 4; n != 0 {
		std += strings.Repeat("=", 4-n)
	}
	if std == s {
		return false
	}
	b, err := json.Marshal(std)
	if err != nil {
		return false
	}
	m[key] = b
	return true
}

// rename renames m's keys by names and reports whether it renamed one.
func rename(m map[string]json.RawMessage, names map[string]string) bool {
	changed := false
	for from, to := range names {
		v, ok := m[from]
		if !ok {
			continue
		}
		delete(m, from)
		if _, both := m[to]; !both {
			m[to] = v
		}
		changed = true
	}
	return changed
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func joinRecord(record, field string) string {
	if record == "" {
		return field
	}
	return record + "." + field
}
