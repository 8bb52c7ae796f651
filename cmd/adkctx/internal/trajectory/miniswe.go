package trajectory

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// The action regexes of mini-swe-agent's text-action form when the trajectory's config does not
// name one: v1 (trajectory_format "mini-swe-agent-1") fences commands as ```bash, v2 as
// ```mswea_bash_command.
var (
	actionV1 = regexp.MustCompile("(?s)```bash\\s*\\n(.*?)\\n```")
	actionV2 = regexp.MustCompile("(?s)```mswea_bash_command\\s*\\n(.*?)\\n```")
)

// shellObservation matches mini-swe-agent's observation template: an optional exception, the
// return code, then the output (whole in <output>, or a warning with its head and tail).
var shellObservation = regexp.MustCompile(`(?s)\A\s*(?:<exception>(.*?)</exception>\s*)?<returncode>(-?\d+)</returncode>\s*(.*)\z`)

// ShellResponse turns a shell observation as mini-swe-agent renders it into the response a
// shell tool returns: {"returncode": N, "output": text} (with "exception" when there was one).
// An observation rendered as a JSON object (mini-swe-agent v2's tool-call template) is that
// object; anything else is {"result": text}.
func ShellResponse(text string) map[string]any {
	if m, ok := decodeObject([]byte(text)); ok {
		return m
	}
	g := shellObservation.FindStringSubmatch(text)
	if g == nil {
		return map[string]any{"result": text}
	}
	out := g[3]
	if strings.HasPrefix(out, "<output>\n") && strings.HasSuffix(strings.TrimRight(out, " \t\r\n"), "</output>") {
		out = strings.TrimRight(out, " \t\r\n")
		out = out[len("<output>\n") : len(out)-len("</output>")]
	}
	m := map[string]any{"returncode": json.Number(g[2]), "output": out}
	if g[1] != "" {
		m["exception"] = g[1]
	}
	return m
}

// readMiniSWE reads a mini-swe-agent trajectory: text actions (a fenced command in the reply,
// its observation in the next user message) or tool calls (a bash tool, role "tool" outputs).
func readMiniSWE(name, format string, top map[string]json.RawMessage) (*Session, error) {
	var msgs []json.RawMessage
	if err := json.Unmarshal(top["messages"], &msgs); err != nil {
		return nil, errorf(name, "messages", "an array of messages", kindOf(top["messages"]))
	}
	var info struct {
		Config struct {
			Agent struct {
				ActionRegex string `json:"action_regex"`
			} `json:"agent"`
			Model struct {
				ModelName   string `json:"model_name"`
				ActionRegex string `json:"action_regex"`
			} `json:"model"`
		} `json:"config"`
	}
	if raw, ok := top["info"]; ok {
		json.Unmarshal(raw, &info) // optional metadata: a shape we do not know is ignored
	}
	decoded := make([]*chatMessage, len(msgs))
	toolForm := false
	for i, raw := range msgs {
		m, err := decodeMessage(name, fmt.Sprintf("messages[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		decoded[i] = m
		if m.Role == "assistant" && len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null" && string(m.ToolCalls) != "[]" {
			toolForm = true
		}
	}
	f := MiniSWEText
	if toolForm {
		f = MiniSWEToolCalls
	}
	b := newBuilder(name, name, f)
	b.s.Model = info.Config.Model.ModelName
	b.declare(Tool{Name: "bash", Description: "Execute a bash command", Parameters: map[string]any{
		"type":       "object",
		"properties": map[string]any{"command": map[string]any{"type": "string", "description": "The bash command to execute"}},
		"required":   []any{"command"},
	}})
	var actions []*regexp.Regexp
	if !toolForm {
		re := info.Config.Agent.ActionRegex
		if re == "" {
			re = info.Config.Model.ActionRegex
		}
		switch {
		case re != "":
			r, err := regexp.Compile("(?s)" + re)
			if err != nil {
				return nil, errorf(name, "info.config action_regex", "a regular expression Go's regexp (RE2) accepts", brief(re))
			}
			actions = []*regexp.Regexp{r}
		case format == "mini-swe-agent-1":
			actions = []*regexp.Regexp{actionV1}
		default:
			actions = []*regexp.Regexp{actionV2, actionV1}
		}
	}
	users, exits := 0, 0
	pending := false // the previous reply made a text action: the next user message is its observation
	for i, m := range decoded {
		record := fmt.Sprintf("messages[%d]", i)
		text, err := textOf(name, record+".content", m.Content)
		if err != nil {
			return nil, err
		}
		switch m.Role {
		case "system":
			b.system(text)
		case "user":
			if pending {
				pending = false
				if err := b.output(record, "", "bash", text, ShellResponse(text)); err != nil {
					return nil, err
				}
				continue
			}
			origin := Environment // after the task, user messages are the harness's (format errors, limits)
			if users == 0 {
				origin = Person
			}
			users++
			b.user(text, origin)
		case "assistant":
			pending = false
			if toolForm {
				calls, err := chatCalls(b, record, m)
				if err != nil {
					return nil, err
				}
				b.reply(text, calls)
				continue
			}
			cmds, rest := textActions(m, text, actions)
			if len(cmds) == 1 {
				b.reply(rest, []Call{{Name: "bash", Args: map[string]any{"command": cmds[0]}}})
				pending = true
				continue
			}
			b.reply(text, nil)
		case "tool":
			if !toolForm {
				return nil, errorf(name, record+".role", `"system", "user" or "assistant" in a text-action trajectory`, `"tool"`)
			}
			if err := b.output(record, m.ToolCallID, m.Name, text, ShellResponse(text)); err != nil {
				return nil, err
			}
		case "exit":
			exits++ // the run's end (exit status, submission): not sent to the model
		default:
			return nil, errorf(name, record+".role", `"system", "user", "assistant", "tool" or "exit"`, brief(m.Role))
		}
	}
	b.s.noteCount(exits, "%d exit messages (the run's end, never sent to the model) left out")
	return b.finish(), nil
}

// textActions returns the commands of a text-action reply — from extra.actions when
// mini-swe-agent recorded them, else by its action regex — and the reply's text without the
// fenced command when there is exactly one.
func textActions(m *chatMessage, text string, actions []*regexp.Regexp) ([]string, string) {
	var extra struct {
		Actions []struct {
			Command *string `json:"command"`
		} `json:"actions"`
	}
	if len(m.Extra) > 0 && json.Unmarshal(m.Extra, &extra) == nil && extra.Actions != nil {
		var cmds []string
		for _, a := range extra.Actions {
			if a.Command != nil {
				cmds = append(cmds, *a.Command)
			}
		}
		rest := text
		if len(cmds) == 1 {
			for _, re := range actions {
				if loc := re.FindStringIndex(text); loc != nil {
					rest = strings.TrimSpace(text[:loc[0]] + text[loc[1]:])
					break
				}
			}
		}
		return cmds, rest
	}
	for _, re := range actions {
		found := re.FindAllStringSubmatchIndex(text, -1)
		if len(found) == 0 {
			continue
		}
		cmds := make([]string, 0, len(found))
		for _, loc := range found {
			cmd := text[loc[0]:loc[1]]
			if len(loc) >= 4 && loc[2] >= 0 {
				cmd = text[loc[2]:loc[3]]
			}
			cmds = append(cmds, strings.TrimSpace(cmd))
		}
		rest := text
		if len(found) == 1 {
			rest = strings.TrimSpace(text[:found[0][0]] + text[found[0][1]:])
		}
		return cmds, rest
	}
	return nil, text
}
