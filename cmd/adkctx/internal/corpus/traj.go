package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The two trajectory formats of mini-swe-agent that the shell sessions are written in.
const (
	// FormatText: each assistant message holds a THOUGHT and one ```bash block; each observation
	// is a user message.
	FormatText = "mini-swe-agent-1"
	// FormatToolCall: each assistant message calls the bash tool (OpenAI chat tool_calls); each
	// observation is a tool message answering its call; the run ends with an "exit" message.
	FormatToolCall = "mini-swe-agent-1.1"
)

// submitSentinel is the first line of output by which a mini-swe-agent session submits.
const submitSentinel = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"

// Long outputs are shown as mini-swe-agent shows them: below maxObservation characters whole,
// else a warning, the first and last observationHalf characters and the count of those elided.
const (
	maxObservation  = 10000
	observationHalf = 5000
)

// renderObservation formats a command's result as the model sees it: the return code, then the
// output, or its head and tail when it is long. Lengths count characters, not bytes.
func renderObservation(output string, code int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<returncode>%d</returncode>\n", code)
	n := utf8.RuneCountInString(output)
	if n < maxObservation {
		b.WriteString("<output>\n")
		b.WriteString(output)
		b.WriteString("</output>")
		return b.String()
	}
	runes := []rune(output)
	b.WriteString("<warning>\n")
	b.WriteString(longOutputWarning)
	b.WriteString("</warning><output_head>\n")
	b.WriteString(string(runes[:observationHalf]))
	b.WriteString("\n</output_head>\n<elided_chars>\n")
	fmt.Fprintf(&b, "%d characters elided", n-maxObservation)
	b.WriteString("\n</elided_chars>\n<output_tail>\n")
	b.WriteString(string(runes[n-observationHalf:]))
	b.WriteString("\n</output_tail>")
	return b.String()
}

const longOutputWarning = `The command printed more than can be shown, so only its beginning and its end follow.
Narrow the command down: print a range of lines of a file with sed -n or head and tail,
make a grep or find pattern more specific, or send the output to a file and search that file.
`

// trajectory is a mini-swe-agent trajectory file.
type trajectory struct {
	Info             trajInfo      `json:"info"`
	Messages         []trajMessage `json:"messages"`
	TrajectoryFormat string        `json:"trajectory_format"`
	InstanceID       string        `json:"instance_id"`
}

type trajInfo struct {
	ExitStatus  string         `json:"exit_status"`
	Submission  string         `json:"submission"`
	ModelStats  modelStats     `json:"model_stats"`
	MiniVersion string         `json:"mini_version"`
	Config      map[string]any `json:"config"`
}

type modelStats struct {
	InstanceCost float64 `json:"instance_cost"`
	APICalls     int     `json:"api_calls"`
}

// trajMessage is one message of a trajectory: OpenAI chat fields, plus mini-swe-agent's
// timestamp and extra.
type trajMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []toolCall     `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Timestamp  float64        `json:"timestamp,omitempty"`
	Extra      map[string]any `json:"extra,omitempty"`
}

// toolCall is an OpenAI chat tool call.
type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON object, as a string
}

func (t *trajectory) marshal() ([]byte, error) { return marshalJSON(t) }

// marshalJSON indents like the files the formats come from and leaves <, > and & as they are
// (the observations are full of them).
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// argumentsJSON encodes tool call arguments as a JSON string, as OpenAI's API returns them.
func argumentsJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only maps of strings, numbers and slices are encoded
	}
	return strings.TrimSuffix(b.String(), "\n")
}
