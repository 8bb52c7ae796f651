package corpus

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// This file mirrors issue 28's definition of a step's references, to check that the corpora
// have what the issue measures: call arguments that reuse values seen many steps before.
//
// "References" of a step: the tokens of that step's call arguments (paths, dotted names,
// identifiers of ≥ 4 characters, ids, numbers of ≥ 4 digits; no stop words) that appeared in
// some earlier tool output or user message but not in the output just before.

var (
	refDateRE   = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}:\d{2})?\b`)
	refPathRE   = regexp.MustCompile(`(?:[\w.-]+/)+[\w.-]+`)
	refDottedRE = regexp.MustCompile(`\b\w+(?:\.\w+)+\b`)
	refWordRE   = regexp.MustCompile(`\b\w{4,}\b`)
)

// stopWords are words too common to say anything about what a call reuses: English, and the
// keywords and builtin names every Go source and shell command is full of.
var stopWords = wordSet(`that this with from have what when where which will would there their then than them
	they been were into some such only also more most other over very your about after before each just like make must
	need should could does done here true false null none func return string error package import type struct
	interface range else case default break continue const defer select chan nil bool byte rune uint int64 int32
	float64 uint64 uint8 panic recover print println testing test tests file files line lines
	head tail grep sed echo exit status output cat find sort`)

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// refTokens are the tokens of a text that can be references: dates, paths and dotted names whole,
// then the words of at least 4 characters left (identifiers, ids, numbers).
func refTokens(s string) map[string]bool {
	out := map[string]bool{}
	add := func(t string) {
		t = strings.Trim(t, ".-/")
		if len(t) >= 4 && !stopWords[strings.ToLower(t)] {
			out[t] = true
		}
	}
	for _, re := range []*regexp.Regexp{refDateRE, refPathRE, refDottedRE} {
		for _, t := range re.FindAllString(s, -1) {
			add(t)
		}
		s = re.ReplaceAllString(s, " ")
	}
	for _, t := range refWordRE.FindAllString(s, -1) {
		add(t)
	}
	return out
}

// refEvent is a message of a session as the metric sees it: a call's arguments, or a source
// (a tool output or a user message).
type refEvent struct {
	step    int // the number of calls before it
	message int // its index among the messages
	call    bool
	role    string // of the message: "user", "tool", "assistant"
	tool    string // the tools called, for a call
	text    string
}

// reference is one reference of one call, with its distance in steps and in messages to the
// last source that held it.
type reference struct {
	token    string
	step     int
	steps    int
	messages int
	from     string // the role of the source: "user" or "tool"
	tool     string // the tools of the call
}

// references lists the references of every call of a session.
func references(events []refEvent) []reference {
	last := map[string]refEvent{} // token → the last source holding it
	var prev refEvent             // the source just before the current call
	var out []reference
	for _, e := range events {
		if !e.call {
			for t := range refTokens(e.text) {
				last[t] = e
			}
			prev = e
			continue
		}
		justBefore := refTokens(prev.text)
		toks := refTokens(e.text)
		keys := make([]string, 0, len(toks))
		for t := range toks {
			keys = append(keys, t)
		}
		slices.Sort(keys)
		for _, t := range keys {
			src, ok := last[t]
			if !ok || justBefore[t] {
				continue
			}
			out = append(out, reference{token: t, step: e.step, steps: e.step - src.step, messages: e.message - src.message, from: src.role, tool: e.tool})
		}
	}
	return out
}

// sessionEvents reads a corpus file, in any of the package's formats, as events.
func sessionEvents(t testing.TB, path string) []refEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Messages []struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Format string `json:"trajectory_format"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var events []refEvent
	step := 0
	for i, m := range f.Messages {
		switch m.Role {
		case "user", "tool":
			if i == 0 {
				continue
			}
			events = append(events, refEvent{step: step, message: i, role: m.Role, text: m.Content})
		case "assistant":
			var args, names []string
			if f.Format == FormatText {
				if c, ok := bashBlock(m.Content); ok {
					args = append(args, c)
				}
			}
			for _, tc := range m.ToolCalls {
				args = append(args, argumentText(t, tc.Function.Arguments))
				names = append(names, tc.Function.Name)
			}
			if len(args) == 0 {
				continue
			}
			step++
			events = append(events, refEvent{step: step, message: i, call: true, role: m.Role, tool: strings.Join(names, ","), text: strings.Join(args, "\n")})
		}
	}
	return events
}

var bashBlockRE = regexp.MustCompile("(?s)```bash\\s*\\n(.*?)\\n```")

// bashBlock is the command of a text-form reply, found as mini-swe-agent finds it.
func bashBlock(content string) (string, bool) {
	m := bashBlockRE.FindAllStringSubmatch(content, -1)
	if len(m) != 1 {
		return "", false
	}
	return strings.TrimSpace(m[0][1]), true
}

// argumentText is the values of a tool call's JSON arguments, joined.
func argumentText(t testing.TB, args string) string {
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatalf("arguments %q: %v", args, err)
	}
	var parts []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(v[k])
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			parts = append(parts, v)
		case float64:
			parts = append(parts, fmt.Sprint(v))
		}
	}
	walk(v)
	return strings.Join(parts, " ")
}

// refStats summarizes the references of sessions.
type refStats struct {
	calls, callsWithRefs, callsWithFar int
	refs, far                          int
	distances                          []int
}

func (s *refStats) add(events []refEvent, farSteps int, byMessages bool) {
	refs := references(events)
	withRef := map[int]bool{}
	withFar := map[int]bool{}
	for _, r := range refs {
		d := r.steps
		if byMessages {
			d = r.messages
		}
		s.distances = append(s.distances, d)
		withRef[r.step] = true
		if d >= farSteps {
			s.far++
			withFar[r.step] = true
		}
	}
	for _, e := range events {
		if e.call {
			s.calls++
		}
	}
	s.refs += len(refs)
	s.callsWithRefs += len(withRef)
	s.callsWithFar += len(withFar)
}

func (s *refStats) percentile(p float64) int {
	if len(s.distances) == 0 {
		return 0
	}
	d := slices.Clone(s.distances)
	slices.Sort(d)
	return d[int(p*float64(len(d)-1))]
}

func (s *refStats) String() string {
	return fmt.Sprintf("%d calls, %d with references, %d with a far one; %d references, %d far (%.1f%%); distance median %d, p90 %d, max %d",
		s.calls, s.callsWithRefs, s.callsWithFar, s.refs, s.far, 100*float64(s.far)/float64(max(s.refs, 1)),
		s.percentile(0.5), s.percentile(0.9), s.percentile(1))
}

func TestReferences(t *testing.T) {
	events := []refEvent{
		{message: 1, role: "user", text: "fix cmp/path.go please"},
		{step: 1, message: 2, call: true, text: "grep -rn Validate ."},
		{step: 1, message: 3, role: "tool", text: "uuid.go:195:func Validate(s string) error {\nutil.go:12:xvalues 2025-05-17"},
		{step: 2, message: 4, call: true, text: "nl -ba uuid.go | sed -n '190,220p'"},
		{step: 2, message: 5, role: "tool", text: "190 something else"},
		{step: 3, message: 6, call: true, text: "sed -n 1,20p cmp/path.go && grep xvalues util.go && grep Validate uuid.go # 2025-05-18 2025"},
	}
	got := references(events)
	want := []reference{
		// Step 2 reads uuid.go, named in the output just before: no reference.
		{token: "Validate", step: 3, steps: 2, messages: 3, from: "tool"},
		{token: "cmp/path.go", step: 3, steps: 3, messages: 5, from: "user"},
		{token: "util.go", step: 3, steps: 2, messages: 3, from: "tool"},
		{token: "uuid.go", step: 3, steps: 2, messages: 3, from: "tool"},
		{token: "xvalues", step: 3, steps: 2, messages: 3, from: "tool"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("references:\n got %v\nwant %v", got, want)
	}
}
