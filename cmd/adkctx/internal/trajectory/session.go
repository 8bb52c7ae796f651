package trajectory

import (
	"fmt"
	"strings"
)

// Format names the kind of record a session was read from.
type Format string

// The formats Read recognizes, and adk-go's stored sessions.
const (
	OpenAIChat       Format = "openai-chat"
	TauBench         Format = "tau-bench"
	MiniSWEText      Format = "mini-swe-agent-text"
	MiniSWEToolCalls Format = "mini-swe-agent-toolcalls"
	ATIF             Format = "atif"
	ADKSession       Format = "adk-session"
	// ADKSessionJSON: a stored session as JSON, as adk-go's REST API returns it (and adk-python's
	// API server, or its own dump).
	ADKSessionJSON Format = "adk-session-json"
	// ClaudeCode: a Claude Code transcript (JSON Lines).
	ClaudeCode Format = "claude-code"
	// Codex: a Codex CLI rollout (JSON Lines).
	Codex Format = "codex"
	// GeminiCLI: a Gemini CLI session file.
	GeminiCLI Format = "gemini-cli"
	// ResponsesRequest: a logged OpenAI Responses API request.
	ResponsesRequest Format = "openai-responses"
	// GenAIContents: genai contents, a Gemini API request's or a bare array of them (a Gemini CLI
	// checkpoint).
	GenAIContents Format = "genai-contents"
	// AnthropicMessages: chat messages in Anthropic's Messages form (calls and results as
	// tool_use and tool_result content blocks).
	AnthropicMessages Format = "anthropic-messages"
)

// Origin says who wrote a turn's opening message.
type Origin string

const (
	// Person: a message a person (or a benchmark's simulated user) wrote.
	Person Origin = "person"
	// Environment: feedback of the agent's harness sent as a user message (a format error, an
	// observation that answers no call).
	Environment Origin = "environment"
	// System: a system message in the middle of a conversation, sent as a user message.
	System Origin = "system"
	// None: the recording starts with the agent; the turn has no message of its own.
	None Origin = "none"
)

// Session is one recorded conversation in the neutral form the replay drives.
type Session struct {
	// ID names the session in reports: the file's path, with the record when the file holds
	// several ("results.json#3"), or app/user/session for a stored adk-go session.
	ID string
	// Format is the kind of record it was read from.
	Format Format
	// Model is the recorded model's name, "" when the record does not say.
	Model string
	// System is the system instruction ("" when none was recorded).
	System string
	// Tools are the tools the recording declares, followed by those it calls without declaring
	// them (their parameters inferred from the calls' arguments), in order of first use.
	Tools []Tool
	// Turns are the conversation: each a message to the agent and the steps that answered it.
	Turns []Turn
	// Notes say what reading changed or left out (never conversation text), in order.
	Notes []string
}

// Tool is one declared tool.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments (an object schema), nil when unknown.
	Parameters map[string]any
}

// Turn is one invocation of the agent: the message that starts it and the agent's steps.
type Turn struct {
	// User is the message; messages recorded one after the other, with no reply between them,
	// are joined into one. Origin is who wrote it: a person when they wrote any of it.
	User   string
	Origin Origin
	Steps  []Step
	// mixed: User joins a person's messages and others (a command's output the harness wrote in
	// the person's place); said is then the person's part.
	mixed bool
	said  string
}

// Said is what a person wrote of the turn's message: all of it, or the person's part of
// messages of several origins joined; "" when no person wrote it.
func (t *Turn) Said() string {
	switch {
	case t.Origin != Person:
		return ""
	case t.mixed:
		return t.said
	}
	return t.User
}

// Step is one model reply and what its calls returned.
type Step struct {
	// Text is the reply's text ("" when it only calls tools).
	Text  string
	Calls []Call
}

// Call is one function call of a step and its recorded output.
type Call struct {
	// ID is unique in the session: the recorded id, or one made from the step's position when
	// the record has none or repeats one.
	ID   string
	Name string
	Args map[string]any
	// Output is the output as the agent read it, as text.
	Output string
	// Response is what the replayed tool returns: Output decoded when it is a JSON object,
	// else {"result": Output}, or a shell observation's {"returncode", "output"}.
	Response map[string]any
	// Recorded is false when the record holds no output for the call: Response then says so.
	Recorded bool

	// recordedID is the id the record gave (outputs name it), before ID was made unique.
	recordedID string
}

// Steps counts the steps (model replies) of s.
func (s *Session) Steps() int {
	n := 0
	for _, t := range s.Turns {
		n += len(t.Steps)
	}
	return n
}

// FormatError is a record that is not what its format requires. Match it with errors.As.
type FormatError struct {
	// File is the path read (or the database source).
	File string
	// Record locates the problem: "messages[4].tool_calls[0]", "record 3 (task_id 12)", ….
	Record string
	// Expected says what was required there; Got what was found.
	Expected, Got string
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Record != "" {
		b.WriteString(": ")
		b.WriteString(e.Record)
	}
	b.WriteString(": expected ")
	b.WriteString(e.Expected)
	if e.Got != "" {
		b.WriteString(", got ")
		b.WriteString(e.Got)
	}
	return b.String()
}

// errorf builds a FormatError; got is quoted and shortened when it is a value.
func errorf(file, record, expected, got string) *FormatError {
	return &FormatError{File: file, Record: record, Expected: expected, Got: got}
}

// brief shows a value in an error: quoted, at most 60 bytes.
func brief(s string) string {
	const max = 60
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// noteCount notes n of something left out or read otherwise, as format (with a %d for n) says; no
// note when n is 0.
func (s *Session) noteCount(n int, format string) {
	if n > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf(format, n))
	}
}
