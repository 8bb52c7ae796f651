package corpus

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
)

// persona is how one kind of model works through a task: how many steps it takes, how much it
// reads at once, how it edits. The two are modelled on the two agents of the recorded sessions.
type persona struct {
	name               string
	model              string
	minSteps, maxSteps int
	window             [2]int  // lines shown per file view
	numbered           float64 // share of file views through nl -ba
	funcRange          float64 // share of function views by a sed address range (/^func/,/^}/)
	absPaths           float64 // share of commands naming files under /testbed
	wrongFix           float64 // share of sessions whose first edit is the wrong one
	heredocFix         float64 // share of fixes that rewrite the function or file in a heredoc
	logFile            float64 // share of sessions saving the first test run to a file
	longThought        float64 // share of thoughts of 3 to 5 sentences
	oldRef             float64 // share of exploration steps returning to something seen ≥ 20 steps back
	parallel           float64 // tool-call form: share of exploration steps sent as two calls
	chain              float64 // share of definition lookups done with the view in one command
}

var personas = [...]persona{
	{
		name: "gemini-3-pro", model: "gemini/gemini-3-pro-preview",
		minSteps: 48, maxSteps: 145, window: [2]int{60, 150},
		numbered: 0.45, funcRange: 0.05, absPaths: 0.15, wrongFix: 0.45, heredocFix: 0.5,
		logFile: 0.35, longThought: 0.4, oldRef: 0.35, parallel: 0, chain: 0.1,
	},
	{
		name: "gpt-5-mini", model: "openai/gpt-5-mini",
		minSteps: 40, maxSteps: 105, window: [2]int{120, 260},
		numbered: 0.85, funcRange: 0.3, absPaths: 0.05, wrongFix: 0.25, heredocFix: 0.65,
		logFile: 0.5, longThought: 0.15, oldRef: 0.35, parallel: 0.2, chain: 0.4,
	},
}

// shellAgent plays one session: a scripted policy that decides each command from the real
// outputs of the commands before it.
type shellAgent struct {
	sb       *sandbox
	idx      *srcIndex
	rng      *rand.Rand
	p        persona
	format   string
	module   cachedModule
	bug      mutation
	fail     failingRun
	focusDir string // the package of the failing tests
	target   int    // steps the session aims at
	steps    []shellStep
	ran      map[string]bool
	mem      memory
	defSeen  map[string]bool // definitions already looked up
	usesSeen map[string]bool // names whose uses were searched
	listed   map[string]bool // directories listed
	helpers  []*funcInfo     // helpers of the buggy function the agent read
	chain    []*funcInfo     // functions read on the way from the failing test to the bug
	reproFn  string          // the agent's reproduction test
	repro    string          // its file
	scratch  []string        // files the agent created and will remove
	testFn   *funcInfo       // the failing test it reads
	task     string
	phase    string // "orient", "investigate", "verify", "post": what the thoughts dwell on
	traced   bool   // the agent has read its way to the bug
	relNames map[string]bool
	relFiles map[string]bool
	// saidRecently: the step at which each extra sentence of the thoughts was last said.
	saidRecently map[string]int
}

type shellStep struct {
	thought string
	actions []shellAction
}

type shellAction struct {
	command string
	output  string
	code    int
	// What the policy meant by it (not part of the trajectory).
	kind     string
	file     string
	from, to int
	name     string
}

func (a *shellAgent) chance(p float64) bool { return a.rng.Float64() < p }
func (a *shellAgent) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + a.rng.IntN(hi-lo+1)
}
func (a *shellAgent) pick(xs ...string) string { return xs[a.rng.IntN(len(xs))] }

// run executes the actions of one step and records them.
func (a *shellAgent) run(ctx context.Context, thought string, acts ...shellAction) ([]shellAction, error) {
	st := shellStep{thought: thought}
	for _, act := range acts {
		out, code, err := a.sb.run(ctx, act.command)
		if err != nil {
			return nil, err
		}
		if isVerboseTest(act.command) {
			// A verbose run prints parallel tests and map-ordered subtests in an order that
			// changes from run to run: such a run is replaced by the same run without -v.
			again, code2, err := a.sb.run(ctx, act.command)
			if err != nil {
				return nil, err
			}
			if again != out || code2 != code {
				act.command = strings.Replace(act.command, " -v", "", 1)
				if out, code, err = a.sb.run(ctx, act.command); err != nil {
					return nil, err
				}
			}
		}
		act.output, act.code = out, code
		a.ran[act.command] = true
		st.actions = append(st.actions, act)
	}
	a.steps = append(a.steps, st)
	for _, act := range st.actions {
		a.mem.observe(a.idx, len(a.steps), act.output, a.focusDir)
	}
	return st.actions, nil
}

func isVerboseTest(cmd string) bool {
	return strings.HasPrefix(cmd, "go test ") && strings.Contains(cmd, " -v")
}

func (a *shellAgent) run1(ctx context.Context, thought string, act shellAction) (shellAction, error) {
	acts, err := a.run(ctx, thought, act)
	if err != nil {
		return shellAction{}, err
	}
	return acts[0], nil
}

func (a *shellAgent) last() shellAction {
	if len(a.steps) == 0 {
		return shellAction{}
	}
	st := a.steps[len(a.steps)-1]
	return st.actions[len(st.actions)-1]
}

// calls counts the commands sent so far.
func (a *shellAgent) calls() int {
	n := 0
	for _, st := range a.steps {
		n += len(st.actions)
	}
	return n
}

// at spells a repository path as this command names it.
func (a *shellAgent) at(p string) string {
	if a.chance(a.p.absPaths) {
		return displayRoot + "/" + p
	}
	return p
}

func (a *shellAgent) pkgArg(dir string) string {
	if dir == "." {
		return "."
	}
	return "./" + dir + "/"
}

func (a *shellAgent) fileLen(p string) int {
	if sf := a.idx.byPath[p]; sf != nil {
		return len(sf.lines)
	}
	return 0
}

// view is a command printing lines from..to of a file, in one of the ways agents do.
func (a *shellAgent) view(file string, from, to int) shellAction {
	n := a.fileLen(file)
	from = max(from, 1)
	if n > 0 {
		to = min(to, n)
	}
	f := a.at(file)
	var cmd string
	switch r := a.rng.Float64(); {
	case r < a.p.numbered:
		cmd = fmt.Sprintf("nl -ba %s | sed -n '%d,%dp'", f, from, to)
	case r < a.p.numbered+(1-a.p.numbered)*0.8:
		cmd = fmt.Sprintf("sed -n '%d,%dp' %s", from, to, f)
	default:
		cmd = fmt.Sprintf("awk 'NR>=%d && NR<=%d {printf \"%%d: %%s\\n\", NR, $0}' %s", from, to, f)
	}
	a.mem.markViewed(file, from, to)
	return shellAction{command: cmd, kind: "view", file: file, from: from, to: to}
}

// viewFunc shows a whole function: by line numbers, or by a sed address range on its first line.
func (a *shellAgent) viewFunc(f *funcInfo) shellAction {
	if a.chance(a.p.funcRange) && f.recv == "" && !strings.ContainsAny(f.name, "_") {
		sig := "^func " + f.name + "("
		if strings.HasPrefix(f.signature(), "func "+f.name+"[") {
			sig = "^func " + f.name + "\\["
		}
		a.mem.markViewed(f.file.path, f.declLine, f.endLine)
		return shellAction{
			command: fmt.Sprintf("sed -n '/%s/,/^}/p' %s", sig, a.at(f.file.path)),
			kind:    "view", file: f.file.path, from: f.declLine, to: f.endLine, name: f.name,
		}
	}
	// Agents read a function with some context; those that read large windows print a whole
	// screenful whatever the function's length.
	from := f.docLine - a.between(0, 3)
	to := f.endLine + a.between(0, 2)
	if w := a.between(a.p.window[0], a.p.window[1]); a.p.window[0] >= 100 {
		from = max(1, f.docLine-a.between(0, 30))
		to = max(to, from+w)
	} else if f.size() > a.p.window[1] {
		to = f.docLine + a.p.window[1]
	}
	act := a.view(f.file.path, from, to)
	act.name = f.name
	return act
}

// grepDef is a command that finds where a function or type is declared.
func (a *shellAgent) grepDef(name string, method bool, isType bool) shellAction {
	var pat string
	switch {
	case isType:
		pat = "type " + name + " "
	case method:
		pat = "func (.*) " + name + "("
	default:
		pat = "func " + name + "("
	}
	var cmd string
	switch a.rng.IntN(4) {
	case 0:
		cmd = fmt.Sprintf("grep -rn %q --include=\"*.go\" .", pat)
	case 1:
		cmd = fmt.Sprintf("grep -rn %q .", pat)
	case 2:
		cmd = fmt.Sprintf("grep -rn %q %s", pat, a.searchRoot())
	default:
		cmd = fmt.Sprintf("grep -rn %q --include=*.go . | grep -v _test.go", pat)
	}
	return shellAction{command: cmd, kind: "grep", name: name}
}

// searchRoot is where a grep starts: the package under test or the repository.
func (a *shellAgent) searchRoot() string {
	if a.focusDir == "." || a.chance(0.4) {
		return "."
	}
	return a.focusDir + "/"
}

// firstHit is the first "path:line:" of an output: in the package dir if any there, and
// preferring non-test files.
func firstHit(out string, idx *srcIndex, dir string) (string, int, bool) {
	type hit struct {
		path string
		line int
	}
	best, bestScore := hit{}, -1
	for _, sm := range hitRE.FindAllStringSubmatch(out, -1) {
		if idx.byPath[sm[1]] == nil {
			continue
		}
		line, _ := strconv.Atoi(sm[2])
		score := 0
		if path.Dir(sm[1]) == dir {
			score += 2
		}
		if !strings.HasSuffix(sm[1], "_test.go") {
			score++
		}
		if score > bestScore {
			best, bestScore = hit{sm[1], line}, score
		}
	}
	return best.path, best.line, bestScore >= 0
}

// lookUp greps for a function's definition and reads it, in one step or two.
func (a *shellAgent) lookUp(ctx context.Context, f *funcInfo, why string) error {
	a.defSeen[f.name] = true
	if a.chance(a.p.chain) && a.mem.files[f.file.path] > 0 {
		// The file is known: one command finds the line and prints the function.
		fa := a.viewFunc(f)
		grep := fmt.Sprintf("grep -n 'func.*%s(' %s", f.name, a.at(f.file.path))
		fa.command = grep + " && " + fa.command
		_, err := a.run1(ctx, a.thought(why, fmt.Sprintf("%s is in %s; I will print its definition.", code(f.name), code(f.file.path))), fa)
		return err
	}
	g, err := a.run1(ctx, a.thought(why, a.pick(
		fmt.Sprintf("Let me find where %s is defined.", code(f.name)),
		fmt.Sprintf("I need the definition of %s.", code(f.name)),
		fmt.Sprintf("Searching for the declaration of %s.", code(f.name)),
	)), a.grepDef(f.name, f.recv != "", false))
	if err != nil {
		return err
	}
	p, line, ok := firstHit(g.output, a.idx, a.focusDir)
	if !ok {
		return nil
	}
	target := f
	if p != f.file.path || line != f.declLine {
		if g := a.idx.funcAt(p, line); g != nil && g.name == f.name {
			target = g
		}
	}
	_, err = a.run1(ctx, a.thought("", a.pick(
		fmt.Sprintf("%s is defined in %s at line %d. Let me read it.", code(target.name), code(target.file.path), target.declLine),
		fmt.Sprintf("Found it in %s. Reading the function body.", code(target.file.path)),
		fmt.Sprintf("Let me look at %s in %s.", code(target.name), code(target.file.path)),
	)), a.viewFunc(target))
	return err
}

// code quotes a name as agents do in their thoughts.
func code(s string) string { return "`" + s + "`" }

// thought joins a reaction to the last output, the intent, and (for the longer thoughts) a
// sentence of planning fitting the phase of the work.
func (a *shellAgent) thought(why string, intent string) string {
	var parts []string
	if r := a.reaction(); r != "" && a.chance(0.8) {
		parts = append(parts, r)
	}
	if why != "" {
		parts = append(parts, why)
	}
	parts = append(parts, intent)
	if a.chance(a.p.longThought) {
		if extra := a.extraSentence(); extra != "" {
			parts = append(parts, extra)
		}
	}
	return strings.Join(parts, " ")
}

// extraSentence is a sentence of planning or doubt for the longer thoughts, fitting the phase and
// naming what the work is about; none said in the last steps is said again.
func (a *shellAgent) extraSentence() string {
	test := "the failing test"
	if a.testFn != nil {
		test = code(a.testFn.name)
	}
	suspect := "this code path"
	if a.traced {
		suspect = code(a.bug.fn.name)
	} else if c := a.chainTo(); len(c) > 0 {
		suspect = code(c[0].name)
	}
	var bank []string
	switch a.phase {
	case "investigate":
		bank = []string{
			"After that I should have enough context to narrow the problem down.",
			"I want to understand the data flow before changing anything.",
			"This should tell me whether the problem is in this function or further down.",
			"I will keep the change minimal once I know where the bug is.",
			"Whatever goes wrong has to be reachable from " + test + ".",
			suspect + " is still my main suspect.",
			"So far nothing explains what " + test + " reports.",
			"Wait, I should also check how " + suspect + " is called before assuming anything.",
			"The expected output in " + test + " is the spec here.",
			"I'll keep track of the helpers involved, since a fix may need to touch them.",
		}
	case "post":
		bank = []string{
			"I want the fix to be consistent with the rest of the package.",
			"If the same mistake was made elsewhere, it should be fixed too.",
			"This is only a check; " + suspect + " is fixed.",
			"The other callers of " + suspect + " should not depend on the old behaviour.",
		}
	}
	if a.saidRecently == nil {
		a.saidRecently = map[string]int{}
	}
	start := a.rng.IntN(max(len(bank), 1))
	for i := range bank {
		s := bank[(start+i)%len(bank)]
		if last, ok := a.saidRecently[s]; !ok || len(a.steps)-last > 12 {
			a.saidRecently[s] = len(a.steps)
			return s
		}
	}
	return ""
}

// testFailed reads a go test output (possibly piped, so the exit status may be the pipe's).
func testFailed(out string, code int) bool {
	return code != 0 || strings.Contains(out, "--- FAIL") || strings.Contains(out, "\nFAIL") ||
		strings.HasPrefix(out, "FAIL") || strings.Contains(out, "exit: 1")
}

// reaction is a sentence about the last output.
func (a *shellAgent) reaction() string {
	act := a.last()
	if act.command == "" {
		return ""
	}
	out := act.output
	switch act.kind {
	case "test":
		if !testFailed(out, act.code) {
			return a.pick("The tests pass.", "All green.", "That passes now.")
		}
		if m := fileLineRE.FindStringSubmatch(out); m != nil {
			return fmt.Sprintf("The failure is reported at %s.", code(m[1]+":"+m[2]))
		}
		if strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]") {
			return "The package does not build."
		}
		return "The test run fails."
	case "grep":
		hits := hitRE.FindAllStringSubmatch(out, -1)
		switch {
		case strings.TrimSpace(out) == "":
			return a.pick("The search found nothing.", "No matches.")
		case len(hits) == 1:
			return fmt.Sprintf("There is one match: %s line %s.", code(hits[0][1]), hits[0][2])
		case len(hits) > 1:
			files := map[string]bool{}
			for _, h := range hits {
				files[h[1]] = true
			}
			if len(files) == 1 {
				return fmt.Sprintf("%d matches, all in %s.", len(hits), code(hits[0][1]))
			}
			return fmt.Sprintf("%d matches across %d files; the first is %s.", len(hits), len(files), code(hits[0][1]+":"+hits[0][2]))
		}
	case "view":
		var names []string
		if sf := a.idx.byPath[act.file]; sf != nil {
			for _, f := range sf.funcs {
				if f.declLine >= act.from && f.declLine <= act.to {
					names = append(names, code(f.name))
				}
			}
		}
		switch {
		case len(names) == 1:
			return a.pick(fmt.Sprintf("This shows %s.", names[0]), fmt.Sprintf("Here is %s.", names[0]),
				fmt.Sprintf("OK, that is %s.", names[0]), fmt.Sprintf("So that's %s.", names[0]))
		case len(names) > 1:
			if len(names) > 4 {
				names = names[:4]
			}
			return fmt.Sprintf("This part of %s defines %s.", code(path.Base(act.file)), strings.Join(names, ", "))
		}
	}
	return ""
}

// play runs the whole session.
func (a *shellAgent) play(ctx context.Context) error {
	if err := a.orient(ctx); err != nil {
		return err
	}
	if err := a.reproduce(ctx); err != nil {
		return err
	}
	if err := a.readFailingTest(ctx); err != nil {
		return err
	}
	// The rest of the budget is spread over the exploration between the phases; what the core
	// phases will take is estimated from the call chain to the bug.
	a.phase = "investigate"
	a.learn(a.testFn)
	core := 14 + 2*len(a.chainTo())
	spare := max(a.target-len(a.steps)-core, 0)
	shares := []int{spare * 15 / 100, spare * 50 / 100, spare * 35 / 100}
	if err := a.explore(ctx, shares[0]); err != nil {
		return err
	}
	if err := a.trace(ctx); err != nil {
		return err
	}
	if err := a.explore(ctx, shares[1]); err != nil {
		return err
	}
	if err := a.writeRepro(ctx); err != nil {
		return err
	}
	if err := a.explore(ctx, shares[2]); err != nil {
		return err
	}
	if err := a.fix(ctx); err != nil {
		return err
	}
	a.phase = "verify"
	if err := a.verify(ctx); err != nil {
		return err
	}
	// A look for the same mistake elsewhere; longer when the session is still short.
	a.phase = "post"
	if err := a.lookAlike(ctx, max(40-a.calls()-4, a.between(0, 3))); err != nil {
		return err
	}
	a.phase = "verify"
	if err := a.cleanup(ctx); err != nil {
		return err
	}
	return a.submit(ctx)
}

func (a *shellAgent) orient(ctx context.Context) error {
	a.phase = "orient"
	intro := a.pick(
		"I'll start by getting an overview of the repository layout.",
		"First, let me see what is in the repository.",
		"Let me explore the repository structure to find the package mentioned in the issue.",
	)
	switch a.rng.IntN(3) {
	case 0:
		if _, err := a.run1(ctx, intro, shellAction{command: "ls -la", kind: "ls"}); err != nil {
			return err
		}
	case 1:
		if _, err := a.run1(ctx, intro, shellAction{command: "ls -la && cat go.mod", kind: "ls"}); err != nil {
			return err
		}
	default:
		cmd := "find . -type f -name \"*.go\" | grep -v _test.go | sort | head -60"
		if _, err := a.run1(ctx, intro, shellAction{command: cmd, kind: "find"}); err != nil {
			return err
		}
	}
	if a.focusDir != "." && a.chance(0.7) {
		a.listed[a.focusDir] = true
		if _, err := a.run1(ctx, a.thought("", fmt.Sprintf("The issue is about the package in %s. Let me list its files.", code(a.focusDir))),
			shellAction{command: "ls -la " + a.at(a.focusDir), kind: "ls"}); err != nil {
			return err
		}
	}
	if a.chance(0.3) {
		if _, err := a.run1(ctx, a.thought("", "Let me check the README for an overview of what the package does."),
			shellAction{command: "head -n 60 README.md", kind: "read", file: "README.md"}); err != nil {
			return err
		}
	}
	return nil
}

func (a *shellAgent) reproduce(ctx context.Context) error {
	pkg := a.pkgArg(a.focusDir)
	if a.chance(a.p.logFile) {
		log := a.pick("test_before.log", "test_output.txt", "before_fix.log")
		a.scratch = append(a.scratch, log)
		cmd := fmt.Sprintf("go test %s > %s 2>&1; echo \"exit: $?\"; grep -n -- \"--- FAIL\" %s | head -20; tail -n 5 %s", pkg, log, log, log)
		_, err := a.run1(ctx, a.thought("", a.pick(
			"Let me run the package's tests and keep the output in a file, so I can come back to it later.",
			"I'll reproduce the failure first, saving the full test output to a log file for reference.",
		)), shellAction{command: cmd, kind: "test"})
		return err
	}
	var cmd string
	if a.chance(0.5) && len(a.fail.tests) > 0 {
		cmd = fmt.Sprintf("go test -run '^%s$' -v %s 2>&1 | head -n 80", a.fail.tests[0], pkg)
	} else {
		cmd = fmt.Sprintf("go test %s 2>&1 | tail -n 60", pkg)
	}
	_, err := a.run1(ctx, a.thought("", a.pick(
		"Let me reproduce the failure first.",
		"First I'll run the failing tests to see the current behaviour.",
		"Let me run the tests mentioned in the issue.",
	)), shellAction{command: cmd, kind: "test"})
	return err
}

// failingTestFn is the failing test the agent reads: the first one the index knows.
func (a *shellAgent) failingTestFn() *funcInfo {
	for _, name := range a.fail.tests {
		for _, f := range a.idx.byName[name] {
			if f.isTest() && f.file.dir == a.focusDir {
				return f
			}
		}
	}
	return nil
}

func (a *shellAgent) readFailingTest(ctx context.Context) error {
	t := a.testFn
	if t == nil {
		return nil
	}
	grep := fmt.Sprintf("grep -n \"func %s\" %s*_test.go", t.name, a.focusDirSlash())
	if _, err := a.run1(ctx, a.thought("", fmt.Sprintf("Let me find %s to see what it checks.", code(t.name))),
		shellAction{command: grep, kind: "grep", name: t.name}); err != nil {
		return err
	}
	w := a.between(a.p.window[0], a.p.window[1])
	to := min(t.endLine, t.declLine+w)
	if _, err := a.run1(ctx, a.thought("", fmt.Sprintf("Reading %s in %s.", code(t.name), code(t.file.path))), a.view(t.file.path, t.docLine, to)); err != nil {
		return err
	}
	// The failing line, when the first view did not reach it.
	for _, w := range a.fail.where {
		file, line := splitWhere(w)
		p := path.Join(a.focusDir, file)
		if a.idx.byPath[p] == nil || a.mem.seenLines(p, line, line) {
			continue
		}
		act := a.view(p, line-a.between(8, 20), line+a.between(5, 15))
		_, err := a.run1(ctx, a.thought("", fmt.Sprintf("The assertion that fails is at %s. Let me see the code around it.", code(w))), act)
		return err
	}
	return nil
}

func (a *shellAgent) focusDirSlash() string {
	if a.focusDir == "." {
		return ""
	}
	return a.focusDir + "/"
}

func splitWhere(w string) (string, int) {
	i := strings.LastIndexByte(w, ':')
	n, _ := strconv.Atoi(w[i+1:])
	return w[:i], n
}

// chainTo is the chain of functions from the failing test to the buggy function, the test
// excluded; when the call graph by names does not connect them, the functions of the module the
// test calls and then the buggy function.
func (a *shellAgent) chainTo() []*funcInfo {
	if a.chain != nil {
		return a.chain
	}
	if a.testFn != nil {
		if c := a.idx.callPath(a.testFn, a.bug.fn); len(c) > 1 {
			a.chain = c[1:]
			if len(a.chain) > 5 {
				a.chain = append(a.chain[:2], a.chain[len(a.chain)-3:]...)
			}
			return a.chain
		}
		for _, name := range a.testFn.calls {
			if fs := a.idx.funcsNamed(name); len(fs) > 0 && fs[0] != a.bug.fn {
				a.chain = append(a.chain, fs[0])
				break
			}
		}
	}
	a.chain = append(a.chain, a.bug.fn)
	return a.chain
}

// trace reads along the chain from the test to the buggy function, then the helpers the buggy
// function calls.
func (a *shellAgent) trace(ctx context.Context) error {
	chain := a.chainTo()
	prev := a.testFn
	for _, f := range chain {
		why := ""
		if prev != nil {
			why = fmt.Sprintf("%s calls %s.", code(prev.name), code(f.name))
		}
		if f == a.bug.fn && prev != nil && !slices.Contains(prev.calls, f.name) {
			why = fmt.Sprintf("The failure must come from further down; %s is on the way.", code(f.name))
		}
		if err := a.lookUp(ctx, f, why); err != nil {
			return err
		}
		prev = f
	}
	// Long functions are read in a second window.
	if f := a.bug.fn; f.size() > a.p.window[1] {
		from := f.docLine + a.p.window[1] + 1
		if _, err := a.run1(ctx, a.thought("", fmt.Sprintf("The rest of %s:", code(f.name))), a.view(f.file.path, from, f.endLine+1)); err != nil {
			return err
		}
	}
	a.traced = true
	for _, f := range chain {
		a.learn(f)
	}
	var helpers []*funcInfo
	for _, name := range a.bug.fn.calls {
		for _, g := range a.idx.funcsNamed(name) {
			if g != a.bug.fn && !a.defSeen[g.name] && g.size() < 80 {
				helpers = append(helpers, g)
				break
			}
		}
	}
	n := min(len(helpers), a.between(1, 3))
	for _, h := range helpers[:n] {
		why := fmt.Sprintf("%s relies on %s.", code(a.bug.fn.name), code(h.name))
		if err := a.lookUp(ctx, h, why); err != nil {
			return err
		}
		a.helpers = append(a.helpers, h)
		a.learn(h)
	}
	return nil
}
