package compaction

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/textcut"
	"github.com/adkctx/adkctx/recall"
)

// UserTextTokens is the budget of the user's own messages in a ledger, in estimated tokens
// (budget.EstimateText of each message, whitespace collapsed, summed; the goal included).
// Within it every message is kept verbatim, whatever its language or phrasing, and every summary
// shows all of them while they also fit half the summary's bound: the extractive summary is the
// ledger and drops everything else first; an LLM summary gets them appended with the ledger's
// other facts, and the model's own text is bounded to leave them that room. A summary that
// cannot hold them within its bound is rejected rather than shortening them below half of it
// (the compaction then waits until it replaces more, or falls back). The summary bound is
// SummaryInput.MaxTokens: Config.MaxSummaryTokens (default a tenth of the model's usable input,
// 1,024 to 8,192 tokens), lower when the summary replaces fewer tokens than that. With the
// default bound the budget holds whole once the model's usable input is 20,480 tokens or more;
// below, half the bound (512 tokens at least).
//
// A single message longer than 2,000 characters is kept as its head and tail. Past the budget,
// the ledger frees room one message at a time, until the rest fits:
//  1. messages other than the 4 newest, oldest first, that hold none of the English words of a
//     standing rule (always, never, don't, must, make sure, from now on, prefer, …) are
//     shortened to 100 characters (head and tail, with a note of what was cut); then the same
//     messages are dropped, oldest first;
//  2. the other messages but the 4 newest, oldest first: shortened, then dropped;
//  3. the 4 newest messages, oldest first: shortened, then dropped;
//  4. the goal (the user's first message) is cut last.
//
// The summary says how many messages were dropped. The rule words only decide what goes first
// past the budget: within it, no message depends on them.
const UserTextTokens = 1024

// Bounds of a Ledger. They keep a ledger (and its rendering) small however long the session.
const (
	maxMessageRunes   = 2000 // runes per user message kept (head and tail)
	shortMessageRunes = 100  // runes of a message shortened to fit UserTextTokens
	recentMessages    = 4    // the newest messages, shortened and dropped last
	maxPaths          = 150  // paths listed; the rest are counted
	maxTools          = 60   // tool names listed; the rest are counted
	maxErrors         = 12
	maxErrorLen       = 240
	maxAnswers        = 3
	maxAnswerLen      = 400
)

// Ledger is the exact, deterministic record of what the summarized events did: the user's goal
// and messages, every tool call counted once per path, the errors seen, the last answers, and
// what the tools did and returned (the files shell commands read, with line ranges, and wrote,
// the commands and their exit status, failing tests, the paths and lines outputs named, the
// identifying values calls passed and results returned).
//
// The record of the tools' work is unexported: its shape follows what the ledger learns to
// read, so it is not Go API. It is stored with the rest (MarshalJSON: "step", "files",
// "commands", "failing", "values", "requests" and their "other…" counts) and rendered by the
// summarizers; a custom Summarizer gets it as text from ExtractiveSummarizer, whose summary is
// the ledger rendered.
//
// Each compaction continues the ledger of the marker it rolls up with the events it newly
// covers, so counts stay exact however many times summaries are rolled up; it is stored in the
// marker. Summarizers render it (the extractive summary is the ledger; an LLM summary gets the
// user's messages and the counts appended), so messages are quoted, and paths and counts never
// invented.
type Ledger struct {
	// Goal is the user's first message.
	Goal string `json:"goal,omitempty"`
	// Messages are the user's later messages, oldest first, whitespace collapsed: verbatim while
	// they fit UserTextTokens, which says what goes first past it.
	Messages []UserMessage `json:"messages,omitempty"`
	// MessagesDropped counts the messages dropped to fit UserTextTokens.
	MessagesDropped int `json:"messagesDropped,omitempty"`
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

	// tools is the record of what the tools did and returned (ledgerStep). It is stored with
	// the ledger (MarshalJSON) and read by its summaries, but it is not part of the Go API: its
	// shape follows what the ledger learns to read.
	tools toolRecord
}

// UserMessage is a message of the user that a Ledger keeps.
type UserMessage struct {
	Text string `json:"text"`
	// Rule: the text holds an English word of a standing rule (always, never, don't, …). Past
	// UserTextTokens such messages are shortened and dropped after the others; within it, every
	// message is kept alike.
	Rule bool `json:"rule,omitempty"`
	// Shortened: Text is the head and tail of the message, shortened to fit UserTextTokens.
	Shortened bool `json:"shortened,omitempty"`
}

// ledgerFields are a Ledger's fields without its methods, so encoding/json writes them by
// their tags.
type ledgerFields Ledger

// ledgerJSON is the stored form of a Ledger: its own fields, then its record of the tools' work,
// side by side in one object.
type ledgerJSON struct {
	ledgerFields
	toolRecord
}

// MarshalJSON encodes l in the marker record's form (Marker.Metadata stores it): its fields by
// their tags, with its record of what the tools did and returned beside them.
func (l Ledger) MarshalJSON() ([]byte, error) {
	return marshalUnescaped(ledgerJSON{ledgerFields(l), l.tools})
}

// UnmarshalJSON decodes a ledger stored by MarshalJSON (ReadMarker reads it). As for any struct,
// null leaves l as it is and an object sets the fields it holds.
func (l *Ledger) UnmarshalJSON(data []byte) error {
	v := ledgerJSON{ledgerFields(*l), l.tools}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*l = Ledger(v.ledgerFields)
	l.tools = v.toolRecord
	return nil
}

// marshalUnescaped encodes v leaving <, > and & as they are: encoding/json escapes a
// MarshalJSON result as the caller's encoder does (json.Marshal escapes them, an Encoder set
// with SetEscapeHTML(false) does not), so the ledger's bytes are those of a plain struct.
func marshalUnescaped(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func (l *Ledger) clone() *Ledger {
	if l == nil {
		return &Ledger{}
	}
	c := *l
	c.Messages = slices.Clone(l.Messages)
	c.Errors = slices.Clone(l.Errors)
	c.Answers = slices.Clone(l.Answers)
	c.Tools = maps.Clone(l.Tools)
	c.Paths = make(map[string]map[string]int, len(l.Paths))
	for p, tools := range l.Paths {
		c.Paths[p] = maps.Clone(tools)
	}
	l.cloneRecord(&c)
	return &c
}

// instructionCue finds the English words with which users often state standing rules: messages
// holding one are shortened and dropped after the others past UserTextTokens.
var instructionCue = regexp.MustCompile(`(?i)\b(always|never|don'?t|do not|must|must not|make sure|remember|avoid|from now on|instead of|only ever|prefer|use port|use the)\b`)

// LedgerDelta is what the events a compaction newly covers add to the ledger it continues: the
// facts NewLedgerDelta finds, in stream order, before any bound applies. A marker stores its
// ledger whole every 8 markers, or when this would be larger, and this otherwise (see
// Marker.Ledger): the ledger of a marker is the last whole one with the deltas after it applied
// in order (Ledger.Apply), the same ledger, byte for byte, as adding the events themselves.
type LedgerDelta struct {
	// Events and Invocations count what the delta covers.
	Events      int
	Invocations int
	// Users are the user's messages (one line each, cut to maxMessageRunes).
	Users []string
	// Answers are the model's last answers (at most maxAnswers, cut to maxAnswerLen).
	Answers []string
	// Errors are the errors seen, one line each.
	Errors []string

	// calls are the tool calls: the tool's name and the paths among its arguments.
	calls []ledgerCall
	// steps are what the tool calls did and returned, in stream order (the calls with nothing
	// to record left out). Markers written before the record existed have none.
	steps []ledgerStep
}

// deltaJSON is the stored form of a LedgerDelta: its fields and its tool calls and steps, in
// the marker record's order.
type deltaJSON struct {
	Events      int          `json:"events"`
	Invocations int          `json:"invocations,omitempty"`
	Users       []string     `json:"users,omitempty"`
	Answers     []string     `json:"answers,omitempty"`
	Calls       []ledgerCall `json:"calls,omitempty"`
	Errors      []string     `json:"errors,omitempty"`
	Steps       []ledgerStep `json:"steps,omitempty"`
}

// MarshalJSON encodes d in the marker record's form (Marker.Metadata stores it), its tool calls
// and what they did included.
func (d LedgerDelta) MarshalJSON() ([]byte, error) {
	return marshalUnescaped(deltaJSON{d.Events, d.Invocations, d.Users, d.Answers, d.calls, d.Errors, d.steps})
}

// UnmarshalJSON decodes a delta stored by MarshalJSON (ReadMarker reads it). As for any struct,
// null leaves d as it is and an object sets the fields it holds.
func (d *LedgerDelta) UnmarshalJSON(data []byte) error {
	v := deltaJSON{d.Events, d.Invocations, d.Users, d.Answers, d.calls, d.Errors, d.steps}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*d = LedgerDelta{Events: v.Events, Invocations: v.Invocations, Users: v.Users, Answers: v.Answers, Errors: v.Errors, calls: v.Calls, steps: v.Steps}
	return nil
}

// ledgerCall is one tool call of a LedgerDelta.
type ledgerCall struct {
	Name  string   `json:"name"`
	Paths []string `json:"paths,omitempty"`
}

// NewLedgerDelta returns what events (those a compaction newly covers, in stream order, over
// invocations new invocations) add to a ledger. Calls of the recall tools (reading back what the
// request left out) are not work on the task: they are left out. A call and its result make one
// step (compaction never covers one without the other; a result whose call is not among events
// makes a step of its own).
func NewLedgerDelta(events []Event, invocations int) *LedgerDelta {
	d := &LedgerDelta{Invocations: invocations}
	var steps []*pendingStep
	byID := map[string]*pendingStep{}
	byName := map[string][]*pendingStep{} // calls without an id, waiting for their result, oldest first
	for i := range events {
		e := &events[i]
		if e.isMarkerOnly() {
			continue
		}
		d.Events++
		if e.ErrorCode != "" {
			d.Errors = append(d.Errors, "model error "+e.ErrorCode)
		}
		if e.Content == nil {
			continue
		}
		if e.isUser() {
			if text := oneLine(e.userText()); text != "" {
				d.Users = append(d.Users, textcut.Runes(text, maxMessageRunes))
			}
		} else if text := oneLine(textOf(e.Content)); text != "" {
			d.Answers = append(d.Answers, textcut.Runes(text, maxAnswerLen))
			if len(d.Answers) > maxAnswers {
				d.Answers = d.Answers[len(d.Answers)-maxAnswers:]
			}
		}
		for _, p := range e.Content.Parts {
			if p == nil {
				continue
			}
			if fc := p.FunctionCall; fc != nil && !isRecallTool(fc.Name) {
				if name := textcut.Runes(oneLine(fc.Name), 80); name != "" {
					d.calls = append(d.calls, ledgerCall{Name: name, Paths: argPaths(fc.Args)})
					s := stepOf(fc, name)
					steps = append(steps, s)
					if fc.ID != "" {
						byID[fc.ID] = s
					} else {
						byName[fc.Name] = append(byName[fc.Name], s)
					}
				}
			}
			if fr := p.FunctionResponse; fr != nil && !isRecallTool(fr.Name) {
				if msg := responseError(fr.Response); msg != "" {
					d.Errors = append(d.Errors, "tool "+oneLine(fr.Name)+": "+msg)
				}
				s := byID[fr.ID]
				delete(byID, fr.ID)
				if s == nil && len(byName[fr.Name]) > 0 {
					s, byName[fr.Name] = byName[fr.Name][0], byName[fr.Name][1:]
				}
				if s == nil {
					s = &pendingStep{step: &ledgerStep{Tool: textcut.Runes(oneLine(fr.Name), 80)}}
					steps = append(steps, s)
				}
				s.addResult(fr.Response)
			}
		}
	}
	for _, s := range steps {
		if s.step.facts() {
			d.steps = append(d.steps, *s.step)
		}
	}
	d.validUTF8()
	return d
}

// validUTF8 replaces the invalid UTF-8 in the delta's text with U+FFFD, as storing it as JSON
// does: the ledger continued in memory is then the one read back from storage, byte for byte.
func (d *LedgerDelta) validUTF8() {
	valid := func(s *string) {
		if !utf8.ValidString(*s) {
			*s = strings.ToValidUTF8(*s, "\uFFFD")
		}
	}
	all := func(list []string) {
		for i := range list {
			valid(&list[i])
		}
	}
	all(d.Users)
	all(d.Answers)
	all(d.Errors)
	for i := range d.calls {
		valid(&d.calls[i].Name)
		all(d.calls[i].Paths)
	}
	for i := range d.steps {
		s := &d.steps[i]
		valid(&s.Tool)
		valid(&s.Command)
		valid(&s.Call)
		all(s.Failing)
		for j := range s.Files {
			valid(&s.Files[j].Path)
		}
		for j := range s.Values {
			valid(&s.Values[j].Key)
			valid(&s.Values[j].Value)
		}
	}
}

// Apply returns a new ledger: l (nil: an empty ledger) continued with deltas in order, as a
// marker storing a delta continues the ledger of the marker it rolls up (see Marker.Ledger). l
// is not changed.
func (l *Ledger) Apply(deltas ...*LedgerDelta) *Ledger {
	c := l.clone()
	for _, d := range deltas {
		c.apply(d)
	}
	return c
}

// apply adds a delta to the ledger.
func (l *Ledger) apply(d *LedgerDelta) {
	if d == nil {
		return
	}
	l.Invocations += d.Invocations
	l.Events += d.Events
	for _, u := range d.Users {
		l.addUserText(u)
	}
	for _, a := range d.Answers {
		l.Answers = append(l.Answers, a)
		if len(l.Answers) > maxAnswers {
			l.Answers = l.Answers[len(l.Answers)-maxAnswers:]
		}
	}
	for _, c := range d.calls {
		l.addCall(c.Name, c.Paths)
	}
	for _, e := range d.Errors {
		l.addError(e)
	}
	for i := range d.steps {
		l.applyStep(&d.steps[i])
	}
}

func (l *Ledger) addUserText(text string) {
	text = textcut.Runes(text, maxMessageRunes)
	if l.Goal == "" {
		l.Goal = text
	} else {
		l.Messages = append(l.Messages, UserMessage{Text: text, Rule: instructionCue.MatchString(text)})
	}
	u := l.userText()
	u.fit(UserTextTokens)
	l.Goal, l.Messages, l.MessagesDropped = u.goal, u.kept(), u.dropped
}

func (l *Ledger) addCall(name string, paths []string) {
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
	for _, path := range paths {
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

// pathKeys are argument names that hold a file or directory; looseKeys are names that hold one
// in coding tools and a code in others ("destination": "SEA"), taken only when the value looks
// like a path.
var (
	pathKeys = map[string]bool{
		"path": true, "file": true, "filename": true, "file_path": true, "filepath": true, "dir": true,
		"directory": true, "folder": true, "paths": true, "files": true, "cwd": true, "workdir": true,
	}
	looseKeys = map[string]bool{"target": true, "source": true, "src": true, "dst": true, "dest": true, "destination": true}
)

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
		key := strings.ToLower(k)
		if list, ok := v.([]any); ok && (pathKeys[key] || looseKeys[key]) {
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
	for _, key := range exitKeys {
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
	secGoal     = "Goal: "
	secMessages = "The user's messages, oldest first (verbatim; rules in them hold unless the user changed them):"
	secFiles    = "Files and paths the tools used (exact calls):"
	secTools    = "Tool calls: "
	secErrors   = "Errors seen:"
	secAnswers  = "Recent answers:"
	secRecord   = "Exact record of the summarized events:"
)

// renderLimits bound a rendered ledger.
type renderLimits struct {
	bytes  int // bytes of the text, a hard cap; 0: none
	tokens int // estimated tokens of the text (budget.EstimateText); 0: none
	// keepUser is what the goal and the user's messages keep of their estimated tokens whatever
	// tokens says: a ledger that does not fit tokens with them renders over it, and the summary
	// bound rejects it (see UserTextTokens).
	keepUser int
}

func (lim renderLimits) fits(s string) bool {
	return (lim.bytes <= 0 || len(s) <= lim.bytes) && (lim.tokens <= 0 || budget.EstimateText(s) <= lim.tokens)
}

// over estimates how many tokens s is over lim (≤ 0: it fits), counting a byte over as half a
// token.
func (lim renderLimits) over(s string) int {
	n := 0
	if lim.tokens > 0 {
		n = budget.EstimateText(s) - lim.tokens
	}
	if lim.bytes > 0 {
		n = max(n, (len(s)-lim.bytes+1)/2)
	}
	return n
}

// render writes the ledger within lim, dropping the least important items first: old answers,
// old errors, rarely used paths, then the record of what the tools did and returned, its oldest
// (least used) entries first. The goal and the user's messages (fitted to UserTextTokens) go
// last, shortened and dropped in the order UserTextTokens says, down to lim.keepUser tokens; past
// that, only lim.bytes cuts the text (its end first). facts=true renders only what a model cannot
// be trusted to quote or count (the goal and the user's messages, paths, the record, tool counts,
// errors): the part appended to an LLM summary. Equal ledgers render to equal bytes.
func (l *Ledger) render(lim renderLimits, facts bool) string {
	r, out := l.renderDropping(lim, facts)
	for user := r.userTokens; !lim.fits(out) && user > lim.keepUser; {
		user = max(min(user, r.userTokens)-max(lim.over(out), 1), lim.keepUser)
		r.setUser(l, user)
		out = r.write()
	}
	if lim.bytes > 0 && len(out) > lim.bytes {
		out = textcut.Bytes(out, lim.bytes)
	}
	return out
}

// renderDropping returns the layout with the fewest items dropped (in drop's order) whose text
// fits lim, and its text; everything dropped when nothing fits. Dropping an item shortens the
// text (but for the first "and N others" line a section gets), so the count is found by doubling
// it, then halving the gap, rather than by writing the text after every item.
func (l *Ledger) renderDropping(lim renderLimits, facts bool) (*ledgerLayout, string) {
	r := l.layout(facts)
	at := func(n int) (*ledgerLayout, string) {
		r.reset()
		for i := 0; i < n && r.drop(); i++ {
		}
		return r, r.write()
	}
	_, out := at(0)
	if lim.fits(out) {
		return r, out
	}
	total := r.droppable()
	lo, hi := 0, 1 // lo: known not to fit
	for hi < total {
		if _, o := at(hi); lim.fits(o) {
			break
		}
		lo, hi = hi, 2*hi
	}
	hi = min(hi, total)
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		if _, o := at(mid); lim.fits(o) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return at(hi)
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
	goal       string
	messages   []string         // the user's messages after the goal, fitted (setUser)
	userTokens int              // their estimated tokens, the goal's included
	secs       []*ledgerSection // in dropping order: the first section loses items first
	paths      []string         // the files section's paths, in its order
	pathCalls  func(string) int
	otherCalls int           // calls on paths not listed (dropped to fit), so totals stay exact
	rec        *recordLayout // what the tools did and returned
	// What reset restores: each section's items, the calls on paths not listed.
	full      [][]string
	baseOther int
}

func (l *Ledger) layout(facts bool) *ledgerLayout {
	r := &ledgerLayout{facts: facts, otherCalls: l.OtherPathCalls, rec: l.recordLayout()}
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
	r.setUser(l, UserTextTokens)
	if !facts {
		r.secs = append(r.secs, &ledgerSection{title: secAnswers, items: slices.Clone(l.Answers)})
	}
	r.secs = append(r.secs,
		&ledgerSection{title: secErrors, items: slices.Clone(l.Errors)},
		&ledgerSection{title: secFiles, items: files},
		&ledgerSection{title: secTools, items: l.toolLine(), line: true},
	)
	for _, s := range r.secs {
		r.full = append(r.full, s.items)
	}
	r.baseOther = r.otherCalls
	return r
}

// setUser lays out the goal and the user's messages fitted to maxTokens.
func (r *ledgerLayout) setUser(l *Ledger, maxTokens int) {
	u := l.userText()
	u.fit(maxTokens)
	r.goal, r.messages, r.userTokens = u.goal, r.messages[:0], u.tokens
	if u.dropped > 0 {
		r.messages = append(r.messages, fmt.Sprintf("(%d older messages omitted)", u.dropped))
	}
	for _, m := range u.kept() {
		r.messages = append(r.messages, m.Text)
	}
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

// write renders the layout in reading order: goal, the user's messages, files, tools, errors,
// answers.
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
	r.writeUser(&b)
	for _, title := range []string{secFiles, secRecord, secTools, secErrors, secAnswers} {
		if title == secRecord {
			r.rec.write(&b)
			continue
		}
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
	}
	return b.String()
}

// writeUser writes the goal and the user's messages, on a line of their own.
func (r *ledgerLayout) writeUser(b *strings.Builder) {
	if r.goal != "" {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(secGoal + r.goal)
	}
	if len(r.messages) > 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(secMessages)
		for _, m := range r.messages {
			b.WriteString("\n- " + m)
		}
	}
}

// userSection is the goal and the user's messages as render writes them, fitted to maxTokens.
func (l *Ledger) userSection(maxTokens int) string {
	r := &ledgerLayout{}
	r.setUser(l, maxTokens)
	var b strings.Builder
	r.writeUser(&b)
	return b.String()
}

// userBudget is the room a summary of at most maxTokens (0: no bound) keeps for the user's
// messages whatever else it holds: UserTextTokens, at most half the bound.
func userBudget(maxTokens int) int {
	if maxTokens <= 0 {
		return UserTextTokens
	}
	return min(UserTextTokens, maxTokens/2)
}

// fitContent returns render's text for the largest token bound with which the summary content
// holding it is at most maxTokens (0: no bound). render is given the bound of its text (0:
// none), smaller each time, until it fits or renders the same text again.
func fitContent(maxTokens int, render func(textTokens int) string) string {
	if maxTokens <= 0 {
		return render(0)
	}
	overhead := budget.EstimateContent(genai.NewContentFromText("", genai.RoleUser))
	prev := ""
	for tokens := max(maxTokens-overhead, 1); ; {
		text := render(tokens)
		excess := budget.EstimateContent(genai.NewContentFromText(text, genai.RoleUser)) - maxTokens
		if excess <= 0 || tokens == 1 || text == prev {
			return text
		}
		prev, tokens = text, max(tokens-excess, 1)
	}
}

// reset undoes every drop.
func (r *ledgerLayout) reset() {
	for i, s := range r.secs {
		s.items = r.full[i]
	}
	r.otherCalls = r.baseOther
	r.rec.reset()
}

// droppable counts the items drop can remove.
func (r *ledgerLayout) droppable() int {
	n := len(r.rec.items)
	for _, s := range r.secs {
		if !s.line {
			n += len(s.items)
		}
	}
	return n
}

// drop removes one item: from the first section that has any, the oldest (the least used path,
// for files, whose calls are then counted as other paths), then the record's oldest entry;
// false when nothing is left to drop.
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
	return r.rec.drop()
}

// isRecallTool reports whether name is one of the recall tools: reading back what a request left
// out is not work on the task, so the ledger leaves those calls out of its counts.
func isRecallTool(name string) bool {
	switch name {
	case recall.ToolReadOutput, recall.ToolSearchOutputs, recall.ToolSearchHistory, recall.ToolReadTurn:
		return true
	}
	return false
}
