package compaction

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/genai"
	"mvdan.cc/sh/v3/syntax"

	"github.com/adkctx/adkctx/internal/textcut"
)

// Bounds of what one tool step adds to a ledger's record (ledgerStep).
const (
	maxStepNamed   = 48   // paths an output names
	maxStepLines   = 6    // lines per path named
	maxStepFailing = 16   // failing tests an output names
	maxStepValues  = 48   // values a result returns
	maxCallRunes   = 240  // runes of a call with its identifying values
	maxValueRunes  = 80   // runes of a value (longer ones are not identifiers)
	maxKeyRunes    = 60   // runes of a value's key path (its tail kept)
	maxTestRunes   = 160  // runes of a failing test's name
	maxScanLines   = 4000 // lines of an output read: the first 3,000 and the last 1,000
	maxWalkLeaves  = 4000 // JSON leaves of a result or of a call's arguments visited
	maxWalkDepth   = 10
	maxJSONText    = 1 << 20 // a string holding JSON longer than this is not decoded
)

// ledgerStep is what one tool call and its result add to the ledger's record of what the tools
// did and returned: for a call running a shell script, the script (one line), what it did to
// files, its exit status, and the paths, lines and failing tests its output named; for any other
// call, the identifying values it passed and those its result returned. Bounded per step; what
// goes past a bound is counted.
type ledgerStep struct {
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Command is the shell script the call ran, on one line, heredoc bodies elided; Run: it ran
	// more than reading, listing and writing files (it is listed among the commands run).
	Command string `json:"command,omitempty"`
	Run     bool   `json:"run,omitempty"`
	// Exit is the exit status the result reported (nil: none).
	Exit *int `json:"exit,omitempty"`
	// Files are what the script did to files, in its order, then the paths and lines its output
	// named (for a structured call, the files it wrote; for any tool, the file:line locations
	// a text result named).
	Files []fileOp `json:"files,omitempty"`
	// Failing are the failing tests the output named.
	Failing []string `json:"failing,omitempty"`
	// Call is a structured call with the identifying values it passed: name(key=value, …); ""
	// when it passed none (or ran a script).
	Call string `json:"call,omitempty"`
	// Failed: the result reported an error.
	Failed bool `json:"failed,omitempty"`
	// Values are the identifier-like values the result returned, in the order of its keys.
	Values []returnedValue `json:"values,omitempty"`
	// Over counts what the step's bounds left out: file operations and values.
	FilesOver  int `json:"filesOver,omitempty"`
	ValuesOver int `json:"valuesOver,omitempty"`
}

// fileOp is one thing a shell command did to a file, or a path an output named.
type fileOp struct {
	Path string `json:"path"`
	// Op is read, search, write, create, remove, use (an argument of another command) or name
	// (an output named it).
	Op string `json:"op"`
	// Range is the lines a read showed (zero: unknown).
	Range lineRange `json:"range,omitzero"`
	// Lines are the line numbers an output named (file:line), in its order.
	Lines []int `json:"lines,omitempty"`
}

// lineRange is a range of lines read: From..To, To 0 for the end of the file; From < 0 for the
// last -From lines; the zero value is an unknown range.
type lineRange struct {
	From int `json:"from,omitempty"`
	To   int `json:"to,omitempty"`
}

// returnedValue is an identifier-like value a result returned, under its key path
// (payment_methods.credit_card_7815826.id, flights[2].date).
type returnedValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// pendingStep is a step read from its call, waiting for its result.
type pendingStep struct {
	step   *ledgerStep
	script *shellScript    // the script the call ran (nil: a structured call)
	passed map[string]bool // the identifying values the call passed
}

// stepOf reads a tool call: a shell script among its arguments, or the identifying values it
// passes and the files it writes.
func stepOf(fc *genai.FunctionCall, name string) *pendingStep {
	p := &pendingStep{step: &ledgerStep{Tool: name}}
	if sc := shellArg(fc.Args); sc != nil {
		p.script = sc
		p.step.Command, p.step.Run, p.step.Files = sc.line, sc.runs, slices.Clone(sc.ops)
		return p
	}
	p.step.Call, p.passed = callLine(name, fc.Args)
	p.step.Files = writesOf(fc.Args)
	return p
}

// Argument names a call is read by, compared by argKey: lower case, without '_' and '-'
// (timeout_ms, timeoutMs and timeout-ms are one name).
var (
	// commandKeys hold a shell tool's script (Claude Code's and OpenHands' "command", Codex's
	// "cmd").
	commandKeys = set("command", "cmd", "script")
	// runOptionKeys say how, where or how long a command runs, or describe it to the user, never
	// what runs: a time limit, a working directory, an environment or shell, bounds of the
	// output, and the harnesses' own flags (input to a running process, background, sandbox,
	// permissions, risk). A command beside these alone is a shell tool's, whatever it runs.
	runOptionKeys = set("description", "reason", "justification",
		"timeout", "timeoutms", "timeoutsec", "timeoutsecs", "timeoutseconds", "yieldtimems",
		"cwd", "workdir", "workingdir", "workingdirectory", "env", "environment", "shell", "login",
		"maxoutputtokens", "maxoutputchars", "maxoutputbytes",
		"isinput", "background", "runinbackground", "restart", "dangerouslydisablesandbox",
		"withescalatedpermissions", "sandboxpermissions", "securityrisk")
	// contentKeys hold a file's content or a piece of it: a file's text, an edit's old and new
	// text, a list of edits, a patch, a text to find or to write. Never a script, however much
	// it reads as one (a Justfile, run.sh).
	contentKeys = set("content", "contents", "filetext", "text", "oldstring", "newstring", "oldstr", "newstr", "edits", "patch", "diff")
	// writeKeys are the content keys only a write passes (not text, a text to find as often):
	// with a file's path, the call writes that file.
	writeKeys = set("content", "contents", "filetext", "newstring", "newstr", "edits")
	// patchKeys hold a unified diff: the call writes the files it changes.
	patchKeys = set("patch", "diff")
	// fileKeys hold one file's path (pathKeys without the directories).
	fileKeys = set("path", "file", "filename", "filepath")
)

func argKey(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, k)
}

// shellArg returns the script a call's arguments hold: the first string argument, by key, that
// reads as a shell script (readShell), or a list of strings that does as an argv
// (["bash", "-lc", "…"]). A string is read as a shell tool's command, whatever program it runs,
// when it is the call's only argument or a command key's beside run options alone; any other
// needs the vocabulary, and one word is not one there (an editor tool's {"command": "view",
// "path": …}). Arguments named like paths or contents are never scripts, nor are run options
// beside a command.
func shellArg(args map[string]any) *shellScript {
	for _, k := range slices.Sorted(maps.Keys(args)) {
		lower, key := strings.ToLower(k), argKey(k)
		if pathKeys[lower] || looseKeys[lower] || contentKeys[key] || len(args) > 1 && runOptionKeys[key] {
			continue
		}
		switch v := args[k].(type) {
		case string:
			at := besideArgs
			if commandKeys[key] && runOptionsBeside(args, k) {
				at = shellCommand
			} else if len(args) == 1 {
				at = onlyArg
			}
			if sc, ok := readShell(v, at); ok && (!sc.bare || at != besideArgs) {
				return sc
			}
		case []any:
			if argv, ok := quoteArgv(v); ok {
				if sc, ok := readShell(argv, onlyArg); ok {
					return sc
				}
			}
		}
	}
	return nil
}

// runOptionsBeside reports whether every argument but key is a run option.
func runOptionsBeside(args map[string]any, key string) bool {
	for k := range args {
		if k != key && !runOptionKeys[argKey(k)] {
			return false
		}
	}
	return true
}

// writesOf returns the files a structured call writes: its file's path when it passes a file's
// content or an edit (Write, Edit, str_replace_editor's create and str_replace), the files a
// unified diff it passes changes.
func writesOf(args map[string]any) []fileOp {
	var ops []fileOp
	add := func(p string) {
		if p = cleanPath(p, ""); p != "" && fileOperand(p) && len(ops) < maxScriptOps &&
			!slices.ContainsFunc(ops, func(op fileOp) bool { return op.Path == p }) {
			ops = append(ops, fileOp{Path: p, Op: opWrite})
		}
	}
	writes := false
	for _, k := range slices.Sorted(maps.Keys(args)) {
		key := argKey(k)
		writes = writes || writeKeys[key]
		if s, ok := args[k].(string); ok && patchKeys[key] && len(s) <= maxScriptBytes {
			for _, p := range patchTargets(s) {
				add(p)
			}
		}
	}
	if !writes {
		return ops
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if p, ok := args[k].(string); ok && fileKeys[argKey(k)] {
			add(p)
		}
	}
	return ops
}

// quoteArgv joins a list of strings into one shell command line, each quoted.
func quoteArgv(list []any) (string, bool) {
	if len(list) == 0 || len(list) > 64 {
		return "", false
	}
	words := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return "", false
		}
		q, err := syntax.Quote(s, syntax.LangBash)
		if err != nil {
			return "", false
		}
		words = append(words, q)
	}
	return strings.Join(words, " "), true
}

// callLine is a structured call with the identifying values among its arguments (sorted by key
// path; paths left out, the ledger lists them by path), cut to maxCallRunes ("" when it passes
// none), and every identifier-like value it passed, paths included: a result that returns one
// of them again says nothing new.
func callLine(name string, args map[string]any) (string, map[string]bool) {
	paths := argPaths(args)
	w := &valueWalk{limit: maxWalkLeaves}
	w.walk(args, "", 0)
	var parts []string
	passed := map[string]bool{}
	for _, v := range w.values {
		passed[v.Value] = true
		if _, isPath := slices.BinarySearch(paths, v.Value); isPath {
			continue
		}
		parts = append(parts, v.Key+"="+v.Value)
	}
	if len(parts) == 0 {
		return "", passed
	}
	return textcut.Runes(name+"("+strings.Join(parts, ", ")+")", maxCallRunes), passed
}

// addResult reads a tool's result into its step: the exit status, and what its text names
// (all of it for a shell script's output; file:line locations and failing tests for another
// tool's text); for a call that ran no script, the identifier-like values it returned.
func (p *pendingStep) addResult(resp map[string]any) {
	s, sc := p.step, p.script
	if resp == nil {
		return
	}
	s.Failed = responseError(resp) != ""
	var texts []string
	// Values the call passed are in its line already. A shell's output is all text to read,
	// a one-line output that reads as an identifier too (src/b.py:3:1).
	w := &valueWalk{limit: maxWalkLeaves, texts: &texts, skip: p.passed, allText: sc != nil}
	w.walkResult(resp)
	out := &outputReader{named: map[string]*fileOp{}}
	if sc != nil {
		s.Exit = exitStatus(resp, texts)
		out.paths, out.grepFile, out.dir = true, sc.grepFile, sc.dir
	} else {
		s.Values, s.ValuesOver = w.values, w.over
	}
	for _, t := range texts {
		if sc != nil || strings.Contains(t, "\n") {
			out.read(t)
		}
	}
	s.Files = append(s.Files, out.ops()...)
	s.Failing, s.FilesOver = out.failing, out.over
}

// facts reports whether the step holds anything for the record.
func (s *ledgerStep) facts() bool {
	return s.Command != "" || s.Call != "" || len(s.Files) > 0 || len(s.Failing) > 0 || len(s.Values) > 0 || s.FilesOver > 0 || s.ValuesOver > 0
}

// exitKeys are result fields that hold a process's exit status (the ledger's steps and its errors
// read the same ones; an HTTP status_code is not one).
var exitKeys = []string{"exit_code", "exitCode", "exit_status", "exitStatus", "returncode", "returnCode", "return_code"}

// exitText finds an exit status in an output's first or last lines: "<returncode>1</returncode>",
// "Exit code: 1", "exit status 2", "[Command finished with exit code 0]", "Process exited with
// code 1".
var exitText = regexp.MustCompile(`(?i)(?:<return_?code>\s*(-?\d{1,3})\s*</return_?code>|\b(?:exit(?:ed)?(?:\s+with)?[ _-]?(?:code|status)|return[ _-]?code|returncode)\b\s*[:=]?\s*(-?\d{1,3})\b)`)

// exitStatus is the exit status a shell result reports: a structured field, else the first
// status its text states in its first or last three lines.
func exitStatus(resp map[string]any, texts []string) *int {
	for _, k := range exitKeys {
		if v, ok := resp[k]; ok {
			if n, ok := intOf(v); ok {
				return &n
			}
		}
	}
	for _, t := range texts {
		lines := strings.Split(strings.TrimSpace(t), "\n")
		edge := lines
		if len(lines) > 6 {
			edge = append(slices.Clip(lines[:3]), lines[len(lines)-3:]...)
		}
		for _, l := range edge {
			if m := exitText.FindStringSubmatch(l); m != nil {
				if n, err := strconv.Atoi(cmp.Or(m[1], m[2])); err == nil {
					return &n
				}
			}
		}
	}
	return nil
}

// intOf reads an exit status: an integer of any numeric type, or a string holding one.
func intOf(v any) (int, bool) {
	switch n := v.(type) {
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(n))
		return i, err == nil && i > -1000 && i < 1000
	case json.Number:
		i, err := strconv.Atoi(string(n))
		return i, err == nil && i > -1000 && i < 1000
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if i := r.Int(); i > -1000 && i < 1000 {
			return int(i), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if i := r.Uint(); i < 1000 {
			return int(i), true
		}
	case reflect.Float32, reflect.Float64:
		if f := r.Float(); f == math.Trunc(f) && f > -1000 && f < 1000 {
			return int(f), true
		}
	}
	return 0, false
}

// Shapes an output names files and failing tests in. They are the usual shapes of tools of any
// language, not one tool's: file:line (grep -n hits, compilers, linters, stack traces),
// Python's traceback lines, paths with a slash, a file alone on its line (ls -1, find, grep -l),
// and test runners' failure lines.
var (
	urlText      = regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+`)
	pyFrame      = regexp.MustCompile(`File "([^"\n]{1,300})", line (\d{1,7})`)
	fileLine     = regexp.MustCompile(`(?:^|[\s(\[<'"=,])((?:[\w.@+~-]*/)*[\w@+~-][\w.@+~-]*\.[A-Za-z][\w]{0,7}):(\d{1,7})\b`)
	slashPath    = regexp.MustCompile(`(?:^|[\s(\[<'"=,:])((?:~|\.{1,2})?/?[\w.@+-]+(?:/[\w.@+-]+)+/?)`)
	fileOnLine   = regexp.MustCompile(`^(?:\./)?[\w@+-][\w.@+-]*\.[A-Za-z][\w]{0,7}$`)
	diffHeader   = regexp.MustCompile(`^(?:diff --git a/(\S+) b/\S+|(?:---|\+\+\+) [ab]/(\S+))`)
	grepLineHit  = regexp.MustCompile(`^(\d{1,7})[:-]`)
	goFail       = regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	keywordFail  = regexp.MustCompile(`^\s*(?:FAIL|FAILED|FAILURE|ERROR)[:\s]\s*(\S+(?: \([\w.]+\))?)`)
	verboseFail  = regexp.MustCompile(`^\s*(\S.*?)\s+(?:\.\.\.|-)\s+(?:FAIL|FAILED|ERROR)\s*$`)
	pytestVerbal = regexp.MustCompile(`^\s*(\S+::\S+)\s+(?:FAILED|ERROR)\b`)
	testNamed    = regexp.MustCompile(`(?i)test|spec|::`)
)

// outputReader collects what an output names: paths with the lines named (one op per path, in
// the order first named), failing tests.
type outputReader struct {
	paths    bool   // bare paths too (a shell's output), not only file:line locations
	grepFile string // a line-numbered search of one file: "N:" lines are its lines
	dir      string // the directory the script changed to (cleanPath)
	named    map[string]*fileOp
	order    []string
	failing  []string
	over     int
}

func (o *outputReader) name(p string, line int) {
	p = cleanPath(strings.TrimRight(p, ".,;:)]'\""), o.dir)
	if !fileOperand(p) || utf8.RuneCountInString(p) > 200 || !strings.ContainsFunc(p, isLetter) {
		return
	}
	op, ok := o.named[p]
	if !ok {
		if len(o.order) >= maxStepNamed {
			o.over++
			return
		}
		op = &fileOp{Path: p, Op: opName}
		o.named[p] = op
		o.order = append(o.order, p)
	}
	if line > 0 && len(op.Lines) < maxStepLines && !slices.Contains(op.Lines, line) {
		op.Lines = append(op.Lines, line)
	}
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

func (o *outputReader) ops() []fileOp {
	out := make([]fileOp, 0, len(o.order))
	for _, p := range o.order {
		out = append(out, *o.named[p])
	}
	return out
}

// read reads one text of an output, line by line (the first 3,000 and the last 1,000).
func (o *outputReader) read(text string) {
	lines := strings.Split(text, "\n")
	if len(lines) > maxScanLines {
		lines = append(slices.Clip(lines[:maxScanLines*3/4]), lines[len(lines)-maxScanLines/4:]...)
	}
	for _, line := range lines {
		if len(line) > 4096 {
			line = line[:4096]
		}
		o.line(line)
	}
}

// line reads one line of an output. Each shape is looked for only when a byte it needs is on
// the line: most lines of an output hold none.
func (o *outputReader) line(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	if strings.Contains(line, "FAIL") || strings.Contains(line, "ERROR") {
		o.test(line)
	}
	if strings.Contains(line, "://") {
		line = urlText.ReplaceAllString(line, " ")
	}
	if strings.Contains(line, `File "`) {
		for _, m := range pyFrame.FindAllStringSubmatch(line, 4) {
			n, _ := strconv.Atoi(m[2])
			o.name(m[1], n)
		}
	}
	found := false
	if colonDigit(line) {
		for _, m := range fileLine.FindAllStringSubmatch(line, 8) {
			if n, _ := strconv.Atoi(m[2]); n > 0 {
				o.name(m[1], n)
				found = true
			}
		}
	}
	if o.grepFile != "" && !found {
		if m := grepLineHit.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			o.name(o.grepFile, n)
		}
	}
	if !o.paths {
		return
	}
	if strings.HasPrefix(line, "diff --git ") || strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ") {
		if m := diffHeader.FindStringSubmatch(line); m != nil { // a unified diff's a/ and b/ prefixes
			o.name(cmp.Or(m[1], m[2]), 0)
			return
		}
	}
	if t := strings.TrimSpace(line); strings.IndexByte(t, '.') > 0 && !strings.ContainsAny(t, " \t") &&
		fileOnLine.MatchString(t) && !isNumber(strings.ReplaceAll(t, ".", "")) {
		o.name(t, 0)
		return
	}
	if strings.IndexByte(line, '/') >= 0 {
		for _, m := range slashPath.FindAllStringSubmatch(line, 16) {
			if p := strings.TrimRight(m[1], ".,;:"); bareFilePath(p) {
				o.name(p, 0)
			}
		}
	}
}

// colonDigit reports whether a line holds a colon followed by a digit (where a file:line can be).
func colonDigit(line string) bool {
	for i := strings.IndexByte(line, ':'); i >= 0 && i+1 < len(line); {
		if c := line[i+1]; c >= '0' && c <= '9' {
			return true
		}
		j := strings.IndexByte(line[i+1:], ':')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// bareFilePath reports whether a slashed word of an output is a path rather than prose (and/or,
// 1/2): rooted (/, ./, ../, ~/), two slashes or more, or a file extension.
func bareFilePath(p string) bool {
	switch {
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "~/"):
		return len(p) > 2
	case strings.Count(strings.TrimSuffix(p, "/"), "/") >= 2:
		return true
	}
	base := p[strings.LastIndexByte(p, '/')+1:]
	dot := strings.LastIndexByte(base, '.')
	return dot > 0 && dot < len(base)-1 && isLetter(rune(base[dot+1]))
}

// test records a failing test a line names, in the shapes of the usual runners: Go's
// "--- FAIL: TestX", pytest's "FAILED path::test" and "path::test FAILED", unittest's
// "FAIL: test_x (pkg.Class)" and "test_x (pkg.Class) ... FAIL", Jest's "FAIL src/x.test.js",
// cargo's "test a::b ... FAILED". A name must read as a test's (test, spec or ::).
func (o *outputReader) test(line string) {
	name := ""
	if m := goFail.FindStringSubmatch(line); m != nil {
		name = m[1]
	} else if m := pytestVerbal.FindStringSubmatch(line); m != nil {
		name = m[1]
	} else if m := keywordFail.FindStringSubmatch(line); m != nil && testNamed.MatchString(m[1]) {
		name = m[1]
	} else if m := verboseFail.FindStringSubmatch(line); m != nil && testNamed.MatchString(m[1]) && len(m[1]) < 300 {
		name = strings.TrimPrefix(m[1], "test ") // cargo: "test a::b ... FAILED"
	}
	if name = textcut.Runes(strings.TrimSpace(name), maxTestRunes); name == "" || slices.Contains(o.failing, name) {
		return
	}
	if len(o.failing) < maxStepFailing {
		o.failing = append(o.failing, name)
	}
}

// valueWalk collects the identifier-like values of a JSON value (keys sorted), once each, the
// first key path kept; texts, when set, collects the other strings (outputs to read).
type valueWalk struct {
	values []returnedValue
	seen   map[string]bool
	skip   map[string]bool // values not to collect (a call's own arguments)
	over   int
	limit  int // leaves left to visit
	texts  *[]string
	// allText: every string is a text (a shell's output), none a value.
	allText bool
}

func (w *valueWalk) add(key, value string) {
	if w.seen[value] || w.skip[value] {
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.seen[value] = true
	if len(w.values) >= maxStepValues {
		w.over++
		return
	}
	w.values = append(w.values, returnedValue{Key: keyPath(key), Value: value})
}

// keyPath bounds a key path to its tail.
func keyPath(key string) string {
	if n := utf8.RuneCountInString(key); n > maxKeyRunes {
		r := []rune(key)
		return "…" + string(r[n-maxKeyRunes+1:])
	}
	return key
}

// idKey reports whether a map key is itself an identifier: a code (JFK), a key with 4 digits
// or more (credit_card_7815826), or an identifier-like key of an object (an id-keyed map); not
// address1.
func idKey(k string, v any) bool {
	if !idLike(k) {
		return false
	}
	if _, obj := v.(map[string]any); obj || codeLike.MatchString(k) {
		return true
	}
	digits := 0
	for i := 0; i < len(k); i++ {
		if k[i] >= '0' && k[i] <= '9' {
			digits++
		}
	}
	return digits >= 4
}

// walkResult walks a tool's result: a result holding one value (adk-go wraps a tool's
// non-object result as {"result": …}) is walked without that key.
func (w *valueWalk) walkResult(resp map[string]any) {
	if len(resp) == 1 {
		for _, v := range resp {
			w.walk(v, "", 0)
		}
		return
	}
	w.walk(resp, "", 0)
}

func (w *valueWalk) walk(v any, key string, depth int) {
	if w.limit <= 0 || depth > maxWalkDepth {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			child := k
			if key != "" {
				child = key + "." + k
			}
			if idKey(k, t[k]) {
				w.add(key, k) // an id-keyed map: payment_methods.{credit_card_7815826: …}
			}
			w.walk(t[k], child, depth+1)
		}
		return
	case []any:
		for i, item := range t {
			w.walk(item, key+"["+strconv.Itoa(i)+"]", depth+1)
		}
		return
	}
	w.limit--
	switch t := v.(type) {
	case string:
		if s := strings.TrimSpace(t); len(s) > 1 && (s[0] == '{' || s[0] == '[') && len(s) <= maxJSONText {
			if decoded, ok := decodeJSON(s); ok {
				w.walk(decoded, key, depth+1)
				return
			}
		}
		if idLike(t) && !w.allText {
			w.add(key, t)
		} else if w.texts != nil && t != "" {
			*w.texts = append(*w.texts, t)
		}
	case nil, bool:
	default:
		if s, ok := numberText(t); ok {
			w.add(key, s)
		} else if r := reflect.ValueOf(v); r.Kind() == reflect.Map || r.Kind() == reflect.Slice || r.Kind() == reflect.Struct || r.Kind() == reflect.Pointer {
			// A Go value a tool returned as is: read it as the JSON a model is sent.
			if b, ok := marshalValue(v); ok && len(b) <= maxJSONText {
				if decoded, ok := decodeJSON(string(b)); ok {
					w.walk(decoded, key, depth+1)
				}
			}
		}
	}
}

// marshalValue encodes a Go value a tool returned. A MarshalJSON of the tool's own may panic:
// that value is left out of the ledger, not the compaction.
func marshalValue(v any) (b []byte, ok bool) {
	defer func() {
		if recover() != nil {
			b, ok = nil, false
		}
	}()
	b, err := json.Marshal(v)
	return b, err == nil
}

func decodeJSON(s string) (any, bool) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	if _, err := d.Token(); err == nil { // trailing data: not one JSON value
		return nil, false
	}
	return v, true
}

// numberText is a number with 4 digits or more before its point, as JSON writes it.
func numberText(v any) (string, bool) {
	var s string
	switch n := v.(type) {
	case json.Number:
		s = string(n)
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return "", false
		}
		s = strconv.FormatFloat(n, 'f', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(n), 'f', -1, 32)
	default:
		r := reflect.ValueOf(v)
		switch r.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			s = strconv.FormatInt(r.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			s = strconv.FormatUint(r.Uint(), 10)
		default:
			return "", false
		}
	}
	whole, _, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	return s, len(whole) >= 4 && len(s) <= 40 && isNumber(whole)
}

// Shapes of identifier-like strings.
var (
	dateLike  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$|^\d{1,2}:\d{2}(?::\d{2})?$|^\d{1,2}/\d{1,2}/\d{2,4}$`)
	emailLike = regexp.MustCompile(`^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$`)
	codeLike  = regexp.MustCompile(`^[A-Z][A-Z0-9_-]{2,}$`)
)

// idLike reports whether a string reads as an identifier a later call may pass back: a date or
// time, an email, a code of capitals (JFK, ACTIVE), or a word without spaces holding 4 digits
// or more (credit_card_7815826, 78750) or letters and digits (HAT136, 8ZX5QL); at most
// maxValueRunes, no space (but a date's).
func idLike(s string) bool {
	n := len(s)
	if n < 3 || n > maxValueRunes {
		return false
	}
	if c := s[0]; c >= '0' && c <= '9' && dateLike.MatchString(s) {
		return true
	}
	digits, letters, upper := 0, 0, 0
	for i := 0; i < n; i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'A' && c <= 'Z':
			letters++
			upper++
		case c >= 'a' && c <= 'z':
			letters++
		case c == '@':
			return emailLike.MatchString(s)
		case c == '_' || c == '.' || c == ':' || c == '#' || c == '/' || c == '+' || c == '-':
		default:
			return false // a space, or a character no identifier holds
		}
	}
	if upper == letters && upper >= 3 && s[0] >= 'A' && s[0] <= 'Z' && codeLike.MatchString(s) {
		return true
	}
	return digits >= 4 || (digits > 0 && letters > 0 && n >= 4)
}
