package compaction

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/adkctx/adkctx/internal/textcut"
)

// Bounds of a Ledger. They keep a ledger (and its rendering) small however long the session.
const (
	maxInstructions    = 40  // user instructions kept verbatim
	maxInstructionLen  = 400 // runes per instruction
	maxRequests        = 12  // user requests kept (the newest verbatim, older ones shortened)
	maxRequestLen      = 400
	maxShortRequestLen = 100
	maxPaths           = 150 // paths listed; the rest are counted
	maxTools           = 60  // tool names listed; the rest are counted
	maxErrors          = 12
	maxErrorLen        = 240
	maxAnswers         = 3
	maxAnswerLen       = 400
)

// Ledger is the exact, deterministic record of what the summarized events did: the user's goal
// and instructions, the requests, every tool call counted once per path, the errors seen and the
// last answers. Each compaction continues the ledger of the marker it rolls up with the events
// it newly covers, so counts stay exact however many times summaries are rolled up; it is stored
// in the marker. Summarizers render it (the extractive summary is the ledger; an LLM summary gets
// its facts appended), so paths and counts are never invented.
type Ledger struct {
	Goal         string   `json:"goal,omitempty"`
	Instructions []string `json:"instructions,omitempty"`
	// InstructionsDropped counts instructions dropped by the bound (oldest first).
	InstructionsDropped int      `json:"instructionsDropped,omitempty"`
	Requests            []string `json:"requests,omitempty"`
	RequestsDropped     int      `json:"requestsDropped,omitempty"`
	// Paths maps a path a tool was called on to the calls per tool name.
	Paths map[string]map[string]int `json:"paths,omitempty"`
	// OtherPathCalls counts the calls on paths beyond the listed ones.
	OtherPathCalls int `json:"otherPathCalls,omitempty"`
	// Tools maps a tool name to its number of calls; OtherTools counts calls of unlisted tools.
	Tools      map[string]int `json:"tools,omitempty"`
	OtherTools int            `json:"otherTools,omitempty"`
	Errors     []string       `json:"errors,omitempty"`
	Answers    []string       `json:"answers,omitempty"`
	// Events and Invocations count what the ledger covers.
	Events      int `json:"events"`
	Invocations int `json:"invocations"`
}

func (l *Ledger) clone() *Ledger {
	if l == nil {
		return &Ledger{}
	}
	c := *l
	c.Instructions = slices.Clone(l.Instructions)
	c.Requests = slices.Clone(l.Requests)
	c.Errors = slices.Clone(l.Errors)
	c.Answers = slices.Clone(l.Answers)
	c.Tools = maps.Clone(l.Tools)
	c.Paths = make(map[string]map[string]int, len(l.Paths))
	for p, tools := range l.Paths {
		c.Paths[p] = maps.Clone(tools)
	}
	return &c
}

// instructionCue finds the words with which users state standing rules rather than requests.
var instructionCue = regexp.MustCompile(`(?i)\b(always|never|don'?t|do not|must|must not|make sure|remember|avoid|from now on|instead of|only ever|prefer|use port|use the)\b`)

// add counts events (newly covered, in stream order) into the ledger.
func (l *Ledger) add(events []Event, invocations int) {
	l.Invocations += invocations
	for i := range events {
		e := &events[i]
		if e.isMarkerOnly() {
			continue
		}
		l.Events++
		if e.ErrorCode != "" {
			l.addError("model error " + e.ErrorCode)
		}
		if e.Content == nil {
			continue
		}
		if e.isUser() {
			if text := oneLine(e.userText()); text != "" {
				l.addUserText(text)
			}
		} else if text := oneLine(textOf(e.Content)); text != "" {
			l.Answers = append(l.Answers, textcut.Runes(text, maxAnswerLen))
			if len(l.Answers) > maxAnswers {
				l.Answers = l.Answers[len(l.Answers)-maxAnswers:]
			}
		}
		for _, p := range e.Content.Parts {
			if p == nil {
				continue
			}
			if fc := p.FunctionCall; fc != nil {
				l.addCall(fc.Name, fc.Args)
			}
			if fr := p.FunctionResponse; fr != nil {
				if msg := responseError(fr.Response); msg != "" {
					l.addError("tool " + oneLine(fr.Name) + ": " + msg)
				}
			}
		}
	}
}

func (l *Ledger) addUserText(text string) {
	if l.Goal == "" {
		l.Goal = textcut.Runes(text, maxRequestLen)
		return
	}
	if instructionCue.MatchString(text) {
		l.Instructions = append(l.Instructions, textcut.Runes(text, maxInstructionLen))
		if len(l.Instructions) > maxInstructions {
			l.Instructions = l.Instructions[1:]
			l.InstructionsDropped++
		}
		return
	}
	l.Requests = append(l.Requests, textcut.Runes(text, maxRequestLen))
	if len(l.Requests) > maxRequests {
		l.Requests = l.Requests[1:]
		l.RequestsDropped++
	}
	// Older requests matter less: shorten all but the newest few.
	for i := 0; i < len(l.Requests)-4; i++ {
		l.Requests[i] = textcut.Runes(l.Requests[i], maxShortRequestLen)
	}
}

func (l *Ledger) addCall(name string, args map[string]any) {
	name = textcut.Runes(oneLine(name), 80)
	if name == "" {
		return
	}
	if l.Tools == nil {
		l.Tools = map[string]int{}
	}
	if _, ok := l.Tools[name]; ok || len(l.Tools) < maxTools {
		l.Tools[name]++
	} else {
		l.OtherTools++
	}
	for _, path := range argPaths(args) {
		if tools, ok := l.Paths[path]; ok {
			tools[name]++
			continue
		}
		if len(l.Paths) >= maxPaths {
			l.OtherPathCalls++
			continue
		}
		if l.Paths == nil {
			l.Paths = map[string]map[string]int{}
		}
		l.Paths[path] = map[string]int{name: 1}
	}
}

func (l *Ledger) addError(msg string) {
	msg = textcut.Runes(oneLine(msg), maxErrorLen)
	if slices.Contains(l.Errors, msg) {
		return
	}
	l.Errors = append(l.Errors, msg)
	if len(l.Errors) > maxErrors {
		l.Errors = l.Errors[1:]
	}
}

// pathKeys are argument names that hold a file or directory.
var pathKeys = map[string]bool{
	"path": true, "file": true, "filename": true, "file_path": true, "filepath": true, "dir": true,
	"directory": true, "folder": true, "paths": true, "files": true, "target": true, "source": true,
	"src": true, "dst": true, "dest": true, "destination": true, "cwd": true, "workdir": true,
}

// looksLikePath accepts short strings without spaces that contain a slash or end in an extension.
var looksLikePath = regexp.MustCompile(`^[\w.~\-/@+]*(/[\w.\-@+]*|\.[A-Za-z0-9]{1,8})$`)

// argPaths returns the paths among a call's top-level arguments (and lists of them), in sorted
// order so the ledger does not depend on map order.
func argPaths(args map[string]any) []string {
	var out []string
	add := func(key string, v any) {
		s, ok := v.(string)
		if !ok || s == "" || len(s) > 200 || strings.ContainsAny(s, " \t\r\n") {
			return
		}
		if pathKeys[strings.ToLower(key)] || looksLikePath.MatchString(s) {
			out = append(out, s)
		}
	}
	for k, v := range args {
		if list, ok := v.([]any); ok && pathKeys[strings.ToLower(k)] {
			for _, item := range list[:min(len(list), 20)] {
				add(k, item)
			}
			continue
		}
		add(k, v)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// responseError returns a one-line description of the failure a tool response reports: an
// "error" field, or a non-zero exit code with the last line of its error output. "" when the
// response does not report a failure.
func responseError(resp map[string]any) string {
	if resp == nil {
		return ""
	}
	if v, ok := resp["error"]; ok && v != nil && v != "" && v != false {
		return firstLine(fmt.Sprint(v))
	}
	for _, key := range []string{"exit_code", "exitCode", "exit_status", "returncode"} {
		code, ok := resp[key]
		if !ok || isZero(code) {
			continue
		}
		detail := ""
		for _, out := range []string{"stderr", "output", "stdout"} {
			if s, ok := resp[out].(string); ok {
				if detail = lastLine(s); detail != "" {
					break
				}
			}
		}
		return strings.TrimSpace(fmt.Sprintf("exit %v %s", code, detail))
	}
	return ""
}

// isZero reports whether an exit code means success: a zero number of any numeric type (a tool
// result held in memory keeps its Go types; a stored one has float64), "0", "" or nil.
func isZero(v any) bool {
	switch n := v.(type) {
	case nil:
		return true
	case string:
		return n == "" || n == "0"
	case json.Number:
		return n == "" || n == "0"
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return r.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return r.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return r.Float() == 0
	}
	return false
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" {
			return t
		}
	}
	return ""
}

// oneLine collapses all whitespace (line breaks included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Section titles of a rendered ledger.
const (
	secGoal         = "Goal: "
	secInstructions = "User instructions (verbatim, still in force unless the user changed them):"
	secRequests     = "Other requests, oldest first:"
	secLatest       = "Latest request: "
	secFiles        = "Files and paths the tools used (exact calls):"
	secTools        = "Tool calls: "
	secErrors       = "Errors seen:"
	secAnswers      = "Recent answers:"
	secRecord       = "Exact record of the summarized events:"
)

// render writes the ledger as text of at most maxBytes bytes, dropping the least important
// items first (old answers, old requests, old errors, rarely used paths); the goal and the
// instructions go last. facts=true renders only what a model cannot be trusted to count or
// quote (instructions, paths, tool counts, errors): the part appended to an LLM summary.
// Equal ledgers render to equal bytes.
func (l *Ledger) render(maxBytes int, facts bool) string {
	r := l.layout(facts)
	out := r.write()
	for len(out) > maxBytes {
		if !r.drop() {
			return textcut.Bytes(out, maxBytes)
		}
		out = r.write()
	}
	return out
}

// ledgerSection is one titled list of a rendered ledger.
type ledgerSection struct {
	title string
	items []string
	line  bool // one line: title + items joined
}

// ledgerLayout is a ledger laid out for rendering; drop removes one item at a time to fit.
type ledgerLayout struct {
	facts      bool
	goal       []string
	secs       []*ledgerSection // in dropping order: the first section loses items first
	latest     []string
	paths      []string // the files section's paths, in its order
	pathCalls  func(string) int
	otherCalls int // calls on paths not listed (dropped to fit), so totals stay exact
}

func (l *Ledger) layout(facts bool) *ledgerLayout {
	r := &ledgerLayout{facts: facts, otherCalls: l.OtherPathCalls}
	r.pathCalls = func(p string) int {
		n := 0
		for _, c := range l.Paths[p] {
			n += c
		}
		return n
	}
	// Most used first, then by name.
	r.paths = slices.Collect(maps.Keys(l.Paths))
	slices.SortFunc(r.paths, func(a, b string) int {
		return cmp.Or(cmp.Compare(r.pathCalls(b), r.pathCalls(a)), cmp.Compare(a, b))
	})
	files := make([]string, 0, len(r.paths))
	for _, p := range r.paths {
		var uses []string
		for _, t := range slices.Sorted(maps.Keys(l.Paths[p])) {
			uses = append(uses, t+" ×"+strconv.Itoa(l.Paths[p][t]))
		}
		files = append(files, p+" ("+strings.Join(uses, ", ")+")")
	}
	instructions := slices.Clone(l.Instructions)
	if l.InstructionsDropped > 0 {
		instructions = append([]string{fmt.Sprintf("(%d older instructions omitted)", l.InstructionsDropped)}, instructions...)
	}
	requests := slices.Clone(l.Requests)
	if n := len(requests); n > 0 && !facts {
		r.latest, requests = requests[n-1:], requests[:n-1]
	}
	if l.RequestsDropped > 0 && len(requests) > 0 {
		requests = append([]string{fmt.Sprintf("(%d older requests omitted)", l.RequestsDropped)}, requests...)
	}
	if !facts {
		r.secs = append(r.secs, &ledgerSection{title: secAnswers, items: slices.Clone(l.Answers)}, &ledgerSection{title: secRequests, items: requests})
	}
	r.secs = append(r.secs,
		&ledgerSection{title: secErrors, items: slices.Clone(l.Errors)},
		&ledgerSection{title: secFiles, items: files},
		&ledgerSection{title: secTools, items: l.toolLine(), line: true},
		&ledgerSection{title: secInstructions, items: instructions},
	)
	if l.Goal != "" && !facts {
		r.goal = []string{secGoal + l.Goal}
	}
	return r
}

// toolLine is the tools section: each tool's count, most used first, and the total.
func (l *Ledger) toolLine() []string {
	tools := slices.Collect(maps.Keys(l.Tools))
	slices.SortFunc(tools, func(a, b string) int { return cmp.Or(cmp.Compare(l.Tools[b], l.Tools[a]), cmp.Compare(a, b)) })
	total := l.OtherTools
	var items []string
	for _, t := range tools {
		items = append(items, t+" ×"+strconv.Itoa(l.Tools[t]))
		total += l.Tools[t]
	}
	if l.OtherTools > 0 {
		items = append(items, "others ×"+strconv.Itoa(l.OtherTools))
	}
	if total == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s (%d calls over %d invocations)", strings.Join(items, ", "), total, l.Invocations)}
}

// write renders the layout in reading order: goal, instructions, requests, latest, files, tools,
// errors, answers.
func (r *ledgerLayout) write() string {
	var b strings.Builder
	newline := func() {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
	}
	if r.facts {
		b.WriteString(secRecord)
	}
	for _, g := range r.goal {
		newline()
		b.WriteString(g)
	}
	for _, title := range []string{secInstructions, secRequests, secFiles, secTools, secErrors, secAnswers} {
		for _, s := range r.secs {
			if s.title != title || len(s.items) == 0 && !(s.title == secFiles && r.otherCalls > 0) {
				continue
			}
			newline()
			if s.line {
				b.WriteString(s.title + strings.Join(s.items, ", "))
				continue
			}
			b.WriteString(s.title)
			for _, it := range s.items {
				b.WriteString("\n- " + it)
			}
			if s.title == secFiles && r.otherCalls > 0 {
				fmt.Fprintf(&b, "\n- and %d calls on other paths", r.otherCalls)
			}
		}
		if title == secRequests && len(r.latest) > 0 {
			newline()
			b.WriteString(secLatest + r.latest[0])
		}
	}
	return b.String()
}

// drop removes one item: from the first section that has any, the oldest (the least used path,
// for files, whose calls are then counted as other paths); false when nothing is left to drop.
func (r *ledgerLayout) drop() bool {
	for _, s := range r.secs {
		if len(s.items) == 0 || s.line {
			continue
		}
		if s.title == secFiles {
			r.otherCalls += r.pathCalls(r.paths[len(s.items)-1])
			s.items = s.items[:len(s.items)-1]
		} else {
			s.items = s.items[1:]
		}
		return true
	}
	return false
}
