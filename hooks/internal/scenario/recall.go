package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/recall"
)

// The recall figure's session (issue 22): the coding session's turns (read a file, answer) with
// facts planted that the compacted requests lose, then one question per fact. The scripted model
// answers a question from its request when the fact is there, else with the recall tools,
// searching for an exact word of the question.

// RecallInvocations is the length of the recall figure's session, before its questions.
const RecallInvocations = 200

// Fact kinds.
const (
	// FactTruncated is an identifier in the middle of a tool output cut at the truncation limit.
	FactTruncated = "truncated_output"
	// FactCovered is a value in a small tool result, in a turn a summary later covers: the
	// ledger keeps the calls, not what they returned.
	FactCovered = "covered_turn"
	// FactError is a value in an error a tool returned.
	FactError = "error_string"
	// FactMention is a value the user mentioned once, in passing.
	FactMention = "user_mention"
)

// FactKinds lists the kinds in report order.
func FactKinds() []string { return []string{FactTruncated, FactCovered, FactError, FactMention} }

// The figure's tools besides read_file.
const (
	FetchLog   = "fetch_log"
	ReadConfig = "read_config"
	Deploy     = "deploy"
)

// Fact is one planted fact: Value is what its question asks for, Key the exact word of the
// question a recall searches with.
type Fact struct {
	Kind       string
	Turn       int
	Key, Value string
}

// factsPerKind is how many facts of each kind the session plants.
const factsPerKind = 16

// RecallFacts returns the planted facts, factsPerKind of each kind, one kind every third turn
// from turn 2 to turn 191.
func RecallFacts() []Fact {
	var out []Fact
	for n := range factsPerKind {
		t := 2 + 12*n
		h := hash(strconv.Itoa(t))
		out = append(out,
			Fact{FactTruncated, t, fmt.Sprintf("order_%03d", t), fmt.Sprintf("REQ-%06x", h%0xffffff)},
			Fact{FactCovered, t + 3, fmt.Sprintf("cfg_%03d", t+3), fmt.Sprintf("CFG-%05d", h%100000)},
			Fact{FactError, t + 6, fmt.Sprintf("deploy_%03d", t+6), fmt.Sprintf("RGN-%04d", h%10000)},
			Fact{FactMention, t + 9, fmt.Sprintf("badge_%03d", t+9), fmt.Sprintf("LK-%04d", (h/7)%10000)},
		)
	}
	return out
}

// factAt returns the fact planted at turn i.
func factAt(i int) (Fact, bool) {
	for _, f := range RecallFacts() {
		if f.Turn == i {
			return f, true
		}
	}
	return Fact{}, false
}

// Question is what the user asks about f, as question n of the session's end.
func (f Fact) Question(n int) string {
	q := map[string]string{
		FactTruncated: "In the log of step %d, what was the id of %s?",
		FactCovered:   "At step %d, what value did setting %s have?",
		FactError:     "At step %d, which region did the failed %s name?",
		FactMention:   "At step %d I gave you a locker code for %s; what was it?",
	}[f.Kind]
	return fmt.Sprintf("[question %d] %s", n, fmt.Sprintf(q, f.Turn, f.Key))
}

// RecallMessage is the user's message of turn i: the coding session's, with a value mentioned in
// passing at the turns of FactMention.
func RecallMessage(i int) string {
	msg := UserMessage(i)
	if f, ok := factAt(i); ok && f.Kind == FactMention {
		msg += fmt.Sprintf(" By the way, the locker code for %s is %s.", f.Key, f.Value)
	}
	return msg
}

// RunRecallTool answers a tool call of the recall session.
func RunRecallTool(name string, args map[string]any) map[string]any {
	arg, _ := args["target"].(string)
	f, _ := factByKey(arg)
	switch name {
	case ReadFile:
		path, _ := args["path"].(string)
		return map[string]any{"content": FileContent(path)}
	case FetchLog:
		return map[string]any{"output": jobLog(f), "exit_code": 0.0}
	case ReadConfig:
		return map[string]any{"content": configFile(f)}
	case Deploy:
		return map[string]any{"error": fmt.Sprintf("deploy of %s failed: quota exceeded in region %s", f.Key, f.Value), "exit_code": 1.0}
	}
	return map[string]any{"error": "unknown tool " + name}
}

func factByKey(key string) (Fact, bool) {
	for _, f := range RecallFacts() {
		if f.Key == key {
			return f, true
		}
	}
	return Fact{Key: key, Value: "none"}, false
}

// jobLog is a job's log of about 60 KB, the fact's line in its middle.
func jobLog(f Fact) string {
	var b strings.Builder
	fmt.Fprintf(&b, "log of job %s\n", f.Key)
	for n := range 1500 {
		if n == 750 {
			fmt.Fprintf(&b, "2026-08-01T10:12:30Z worker-3 %s id=%s status=rejected\n", f.Key, f.Value)
		}
		fmt.Fprintf(&b, "2026-08-01T10:%02d:%02dZ worker-%d processed batch %05d ok\n", n/60%60, n%60, n%8, n)
	}
	b.WriteString("job finished: 1500 batches, 1 rejected\n")
	return b.String()
}

// configFile is a small settings file (about 1.3 KB) holding the fact's setting.
func configFile(f Fact) string {
	var b strings.Builder
	for n := range 40 {
		if n == 20 {
			fmt.Fprintf(&b, "%s = %s\n", f.Key, f.Value)
		}
		fmt.Fprintf(&b, "setting_%02d = default\n", n)
	}
	return b.String()
}

var questionRE = regexp.MustCompile(`^\[question (\d+)\]`)

// recallStep is where a request stands: the turn (or question) of its newest user message and
// the function calls and responses since.
type recallStep struct {
	step, question int // -1 when not one
	calls          int
	last           *genai.FunctionResponse // the newest function response since
}

func recallStepOf(contents []*genai.Content) recallStep {
	s := recallStep{step: -1, question: -1}
	for j := len(contents) - 1; j >= 0; j-- {
		c := contents[j]
		if c == nil || c.Role != genai.RoleUser || len(c.Parts) == 0 || c.Parts[0] == nil || c.Parts[0].Text == "" {
			continue
		}
		text := c.Parts[0].Text
		m, q := stepRE.FindStringSubmatch(text), questionRE.FindStringSubmatch(text)
		if m == nil && q == nil {
			continue
		}
		if m != nil {
			s.step, _ = strconv.Atoi(m[1])
		} else {
			s.question, _ = strconv.Atoi(q[1])
		}
		for _, c := range contents[j+1:] {
			for _, p := range c.Parts {
				switch {
				case p != nil && p.FunctionCall != nil:
					s.calls++
				case p != nil && p.FunctionResponse != nil:
					s.last = p.FunctionResponse
				}
			}
		}
		return s
	}
	return s
}

// responseText is a function response as the model reads it: its result or error text.
func responseText(resp map[string]any) string {
	for _, k := range []string{"result", "error", "output", "content"} {
		if s, ok := resp[k].(string); ok {
			return s
		}
	}
	return jsonOf(resp)
}

// recallSessionReply answers step i of the session: read the file, then the turn's fact tool,
// then a decision that repeats no value.
func recallSessionReply(step, calls int) *genai.Content {
	call := func(name string, args map[string]any) *genai.Content {
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: args}}}}
	}
	f, ok := factAt(step)
	tool := map[string]string{FactTruncated: FetchLog, FactCovered: ReadConfig, FactError: Deploy}[f.Kind]
	switch {
	case calls == 0:
		return call(ReadFile, map[string]any{"path": Path(step)})
	case calls == 1 && ok && tool != "":
		return call(tool, map[string]any{"target": f.Key})
	}
	return genai.NewContentFromText(fmt.Sprintf("Decision %s: %s is built around %s; it is safe to change with its callers in %s.",
		Decision(step), Path(step), Identifier(step), Dir(step)), genai.RoleModel)
}

var (
	turnLabelRE = regexp.MustCompile(`\] (turn \d+(?:\.\d+)?, entry \d+) ·`)
	cursorRE    = regexp.MustCompile(`cursor="([^"]+)"`)
	matchRE     = regexp.MustCompile(`(?m)^== (\S+) \(\d+ lines\)\n(?:.*\n)*?(\d+):`)
)

// nextRecall returns the recall call that follows a first one that did not show the value:
// the same search from its cursor, the page around its first match, or the turn of the best
// history excerpt; nil when the result gives none.
func nextRecall(f Fact, first string) *genai.FunctionCall {
	if f.Kind == FactTruncated {
		if m := cursorRE.FindStringSubmatch(first); m != nil {
			return &genai.FunctionCall{Name: recall.ToolSearchOutputs, Args: map[string]any{"query": f.Key, "cursor": m[1]}}
		}
		if m := matchRE.FindStringSubmatch(first); m != nil {
			line, _ := strconv.Atoi(m[2])
			return &genai.FunctionCall{Name: recall.ToolReadOutput, Args: map[string]any{"name": m[1], "range": fmt.Sprintf("%d-%d", max(line-5, 1), line+5)}}
		}
		return nil
	}
	if m := turnLabelRE.FindStringSubmatch(first); m != nil {
		return &genai.FunctionCall{Name: recall.ToolReadTurn, Args: map[string]any{"turn": m[1], "whole": true}}
	}
	return nil
}
