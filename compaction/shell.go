package compaction

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/adkctx/adkctx/internal/textcut"
)

// Bounds of reading a shell script.
const (
	maxScriptBytes  = 256 << 10 // longer arguments are not read as scripts
	maxScriptDepth  = 3         // nested `bash -c '…'` scripts read
	maxScriptOps    = 64        // file operations recorded per script
	maxCommandRunes = 200       // runes of a command line kept (head and tail)
)

// Operations a shell command does on a file (fileOp.Op).
const (
	opRead    = "read"   // its content was shown (cat, nl, sed -n, head, tail, less, …)
	opSearch  = "search" // searched (grep, rg, … with the file as operand)
	opWrite   = "write"  // written (a > or >> redirection, tee, sed -i, patch, cp or mv target)
	opCreate  = "create" // created (touch, mkdir)
	opRemove  = "remove" // removed (rm, rmdir, a mv source)
	opUse     = "use"    // passed to another command (python x.py, pytest tests/…, ls dir)
	opName    = "name"   // named by the output (grep hits, tracebacks, compiler errors, listings)
	wholeFile = 0        // lineRange.To of a range that reaches the end of the file
)

// shellScript is what a shell script does, read from its syntax tree: the files it reads (with
// line ranges), writes, creates and removes, whether it runs anything beyond that, and how to
// read its output.
type shellScript struct {
	line string   // the script on one line, heredoc bodies elided, cut to maxCommandRunes
	ops  []fileOp // in the script's order, at most maxScriptOps
	runs bool     // it runs a command other than reading, listing, writing or moving files
	// grepFile is the one file a line-numbered search read: its output's "N:" lines are its lines.
	grepFile string
	// dir is the absolute directory the script changes to first (cd /repo && …): paths under it
	// are recorded relative to it, as the script names them.
	dir string
	// bare: the script is one word (ls, pwd): a script only as a call's only argument or a shell
	// tool's command, not as an option of a structured tool ({"command": "view", "path": …}).
	bare bool
}

// Commands a script is interpreted with. Any other command is run (shellScript.runs); the names
// below also tell a shell script from prose that happens to parse as one (readShell).
var (
	// readCommands show a file's content.
	readCommands = set("cat", "nl", "less", "more", "bat", "batcat", "head", "tail", "sed", "view")
	// searchCommands search the files they are given.
	searchCommands = set("grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep")
	// fileCommands write, create, move or remove files.
	fileCommands = set("tee", "touch", "mkdir", "rm", "rmdir", "cp", "mv", "patch", "truncate", "ln", "install", "chmod")
	// inspectCommands look at the tree without changing it or running code.
	inspectCommands = set("cd", "ls", "pwd", "echo", "printf", "find", "tree", "wc", "file", "stat", "which",
		"true", "false", "sort", "uniq", "cut", "tr", "diff", "cmp", "du", "df", "realpath", "dirname",
		"basename", "readlink", "type", "test", "[", "date", "whoami", "env", "export", "set", "exit", "awk", "xxd", "od", "md5sum", "sha256sum")
	// runCommands are common programs a coding agent runs: with readCommands and the others,
	// the vocabulary that tells a script from prose.
	runCommands = set("bash", "sh", "zsh", "dash", "python", "python3", "pip", "pip3", "pytest", "tox", "uv", "poetry",
		"go", "gofmt", "node", "npm", "npx", "yarn", "pnpm", "deno", "tsc", "jest", "cargo", "rustc", "make", "cmake",
		"gcc", "g++", "cc", "clang", "java", "javac", "mvn", "gradle", "ruby", "bundle", "rake", "perl", "php",
		"git", "curl", "wget", "tar", "unzip", "docker", "kubectl", "apt-get", "apt", "brew", "source", ".", "xargs",
		"timeout", "time", "sudo", "nohup", "nice", "exec", "command", "dotnet", "swift", "kotlinc", "ghc", "stack", "mix", "elixir")
	// shells run the script given with -c.
	shells = set("bash", "sh", "zsh", "dash", "ksh")
	// wrappers run the command that follows them (after their own options).
	wrappers = set("sudo", "nohup", "nice", "exec", "command", "time", "timeout", "env", "xargs", "stdbuf")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func knownCommand(name string) bool {
	return readCommands[name] || searchCommands[name] || fileCommands[name] || inspectCommands[name] || runCommands[name]
}

// scriptPlace is where a string that may be a script was passed: how much its place says it is
// one.
type scriptPlace int

const (
	// besideArgs: one argument among others of a structured tool; only the vocabulary tells a
	// script from prose.
	besideArgs scriptPlace = iota
	// onlyArg: a call's only argument (a shell tool's, or a query's): any program name counts.
	onlyArg
	// shellCommand: a shell tool's command, under a command key beside the options of its run
	// alone (Claude Code's Bash, OpenHands' execute_bash): any program counts as a known one does.
	shellCommand
)

// readShell reads s, passed at place at, as a shell script. ok is false when s does not parse,
// or parses but reads as prose rather than a script (scriptLike).
func readShell(s string, at scriptPlace) (sc *shellScript, ok bool) {
	if len(s) > maxScriptBytes || strings.TrimSpace(s) == "" || strings.ContainsRune(s, 0) {
		return nil, false
	}
	defer func() {
		// The parser is well kept, but a script is anything a model wrote: never let one panic
		// a compaction.
		if recover() != nil {
			sc, ok = nil, false
		}
	}()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil || len(f.Stmts) == 0 || !scriptLike(f, at) {
		return nil, false
	}
	r := &scriptReader{}
	r.file(f, 0)
	sc = &shellScript{line: commandLine(s, f), ops: r.ops, runs: r.runs, grepFile: r.grepFile, dir: r.dir, bare: bareWord(f)}
	if r.searches != 1 || r.calls != r.searchStage+1 {
		sc.grepFile = ""
	}
	return sc, true
}

// scriptLike reports whether a parsed string reads as a script rather than prose: some command
// is one the vocabulary knows or is named by a path (./run.sh), and something is a shell's own:
// a flag, a path argument, an operator (| && ;), a redirection, a substitution, a loop, or a known
// command with fewer than three words after it. "find flights from SFO to JFK" and "change of
// plans; user asked" are prose. When the string is its call's only argument (a shell tool's
// command), any program name counts (mypy src/, ./gradlew test, terraform plan -out p.bin): the
// vocabulary only tells a script from prose beside other arguments. As a shell tool's command
// beside the options of its run, any program counts as a known one (just lint) when every
// command is named as a program is; three words or more after it with nothing of a shell's are
// still prose ("please review the changes").
func scriptLike(f *syntax.File, at scriptPlace) bool {
	only := at >= onlyArg
	// named: commands named by a program's name or path; short: unknown programs with fewer
	// than three words after them.
	var calls, scripty, strong, named, short int
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			args := literalArgs(n.Args)
			if len(args) == 0 {
				if len(n.Assigns) > 0 {
					strong++
				}
				return true
			}
			calls++
			if knownCommand(commandName(args)) {
				scripty++
				named++
				if len(args) < 4 {
					strong++
				}
			} else if executablePath(args[0]) {
				scripty++
				named++
				if only && (strings.HasPrefix(args[0], "./") || strings.HasPrefix(args[0], "../")) {
					strong++ // ./run.sh: a program in the working tree, run as the shell runs it
				}
			} else if programName(args[0]) {
				named++
				if only {
					scripty++
				}
				if len(args) < 4 {
					short++
				}
			}
			for _, a := range args[1:] {
				if isFlag(a) || pathLike(a) || only && (a == "." || a == "..") {
					strong++
				}
			}
		case *syntax.Redirect, *syntax.CmdSubst, *syntax.ProcSubst, *syntax.Subshell, *syntax.IfClause, *syntax.ForClause, *syntax.WhileClause:
			strong++
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.AndStmt || n.Op == syntax.OrStmt {
				strong++
			}
		}
		return true
	})
	// A shell tool's command: unknown programs count as known ones when every command is named
	// as a program is ("Please cancel my booking; thanks" is prose).
	if at == shellCommand && named == calls {
		strong += short
	}
	return calls > 0 && scripty > 0 && strong > 0
}

// bareWord reports whether a script is a single word: one simple command without arguments,
// assignments or redirections.
func bareWord(f *syntax.File) bool {
	if len(f.Stmts) != 1 || len(f.Stmts[0].Redirs) > 0 {
		return false
	}
	c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	return ok && len(c.Args) == 1 && len(c.Assigns) == 0
}

// programName reports whether a word names a program as shells find them: lower-case letters
// first, then letters, digits and . _ + - (mypy, ruff, clang-tidy, python3.12).
func programName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r)) {
			return false
		}
	}
	return true
}

// executablePath reports whether a command name is a path to a program: ./run.sh, /usr/bin/x,
// bin/tool (a letter in it, so a date is not one).
func executablePath(s string) bool {
	return strings.Contains(s, "/") && pathLike(s) && strings.ContainsFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
}

// commandLine is the script on one line, heredoc bodies (and their closing delimiter) elided,
// cut to maxCommandRunes.
func commandLine(s string, f *syntax.File) string {
	type span struct{ from, to int }
	var cut []span
	syntax.Walk(f, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && r.Hdoc != nil && r.Hdoc.Pos().IsValid() && r.Hdoc.End().IsValid() {
			from, to := int(r.Hdoc.Pos().Offset()), int(r.Hdoc.End().Offset())
			if from >= 0 && from <= to && to <= len(s) {
				cut = append(cut, span{from, to})
			}
		}
		return true
	})
	slices.SortFunc(cut, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	at := 0
	for _, c := range cut {
		if c.from < at {
			continue
		}
		b.WriteString(s[at:c.from])
		b.WriteString(" … ")
		at = c.to
	}
	b.WriteString(s[at:])
	return textcut.Runes(oneLine(b.String()), maxCommandRunes)
}

// scriptReader walks a script's statements, collecting what they do to files.
type scriptReader struct {
	ops      []fileOp
	runs     bool
	grepFile string
	dir      string
	searches int // line-numbered searches of one file
	calls    int // simple commands read
	// searchStage is the number of commands before the line-numbered search: its output is
	// the script's only when it is the first, and no command after it changes the lines.
	searchStage int
}

func (r *scriptReader) add(op fileOp) {
	if op.Path = cleanPath(op.Path, r.dir); op.Path == "" || len(r.ops) >= maxScriptOps {
		return
	}
	r.ops = append(r.ops, op)
}

// cleanPath is the form of a path the ledger records: relative to dir (the directory a script
// changed to, "" for none) when under it, without a leading "./" or a trailing "/"; "" when
// nothing is left.
func cleanPath(p, dir string) string {
	if dir != "" {
		if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
			p = rest
		}
	}
	for strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(p[2:], "/")
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	if strings.Trim(p, "./") == "" {
		return ""
	}
	return p
}

func (r *scriptReader) file(f *syntax.File, depth int) {
	for _, st := range f.Stmts {
		r.stmt(st, depth)
	}
}

func (r *scriptReader) stmts(list []*syntax.Stmt, depth int) {
	for _, st := range list {
		r.stmt(st, depth)
	}
}

// stmt reads one statement: a pipeline is read as one, so that a range filter at its end
// narrows what its first command read (nl -ba f | sed -n '10,40p').
func (r *scriptReader) stmt(st *syntax.Stmt, depth int) {
	if st == nil {
		return
	}
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		r.pipeline(pipeStages(st), depth)
	} else {
		r.command(st.Cmd, depth)
	}
	r.redirects(st.Redirs, depth, st.Cmd)
}

// pipeStages flattens a pipeline statement into its stages, in order. A stage with
// redirections of its own stays whole (stmt reads it).
func pipeStages(st *syntax.Stmt) []*syntax.Stmt {
	b, ok := st.Cmd.(*syntax.BinaryCmd)
	if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
		return []*syntax.Stmt{st}
	}
	var out []*syntax.Stmt
	for _, side := range []*syntax.Stmt{b.X, b.Y} {
		if side == nil {
			continue
		}
		if len(side.Redirs) == 0 {
			out = append(out, pipeStages(side)...)
		} else {
			out = append(out, side)
		}
	}
	return out
}

func (r *scriptReader) pipeline(stages []*syntax.Stmt, depth int) {
	first := len(r.ops)
	for i, st := range stages {
		if i == 0 {
			r.stmt(st, depth)
			continue
		}
		// A later stage that filters lines without a file of its own narrows the range of the
		// one file the stages before it showed whole or in a range.
		if call, ok := st.Cmd.(*syntax.CallExpr); ok && len(st.Redirs) == 0 {
			args := literalArgs(call.Args)
			if rng, ok := lineFilter(args); ok {
				r.calls++
				if reads := opsOf(r.ops[first:], opRead); len(reads) == 1 {
					reads[0].narrow(rng)
				}
				continue
			}
		}
		r.stmt(st, depth)
	}
}

// opsOf returns pointers to the ops of kind op in ops.
func opsOf(ops []fileOp, op string) []*fileOp {
	var out []*fileOp
	for i := range ops {
		if ops[i].Op == op {
			out = append(out, &ops[i])
		}
	}
	return out
}

func (r *scriptReader) command(cmd syntax.Command, depth int) {
	switch c := cmd.(type) {
	case *syntax.CallExpr:
		r.call(c, depth)
	case *syntax.BinaryCmd:
		r.stmt(c.X, depth)
		r.stmt(c.Y, depth)
	case *syntax.Subshell:
		r.stmts(c.Stmts, depth)
	case *syntax.Block:
		r.stmts(c.Stmts, depth)
	case *syntax.IfClause:
		for ; c != nil; c = c.Else {
			r.stmts(c.Cond, depth)
			r.stmts(c.Then, depth)
		}
	case *syntax.WhileClause:
		r.stmts(c.Cond, depth)
		r.stmts(c.Do, depth)
	case *syntax.ForClause:
		r.stmts(c.Do, depth)
	case *syntax.CaseClause:
		for _, it := range c.Items {
			r.stmts(it.Stmts, depth)
		}
	case *syntax.FuncDecl:
		r.stmt(c.Body, depth)
	case *syntax.TimeClause:
		r.stmt(c.Stmt, depth)
	case nil:
	default:
		r.runs = true // arithmetic, tests, declarations, coprocesses: something ran
	}
}

// redirects records the files a statement's redirections write and read, and the files a
// patch given as a heredoc changes.
func (r *scriptReader) redirects(redirs []*syntax.Redirect, depth int, cmd syntax.Command) {
	for _, rd := range redirs {
		switch rd.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
			if p, ok := wordText(rd.Word); ok && fileOperand(p) && !strings.HasPrefix(p, "/dev/") {
				r.add(fileOp{Path: p, Op: opWrite})
			}
		case syntax.RdrIn:
			if p, ok := wordText(rd.Word); ok && fileOperand(p) && !strings.HasPrefix(p, "/dev/") {
				r.add(fileOp{Path: p, Op: opUse})
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if call, ok := cmd.(*syntax.CallExpr); ok && rd.Hdoc != nil && patchCommand(literalArgs(call.Args)) {
				if body, ok := wordText(rd.Hdoc); ok {
					for _, p := range patchTargets(body) {
						r.add(fileOp{Path: p, Op: opWrite})
					}
				}
			}
		}
	}
}

// patchCommand reports whether args apply a patch read from standard input.
func patchCommand(args []string) bool {
	name := commandName(args)
	return name == "patch" || (name == "git" && slices.Contains(args, "apply"))
}

// patchTarget finds the files a unified diff changes.
var patchTarget = regexp.MustCompile(`(?m)^\+\+\+ (?:b/)?(\S+)`)

func patchTargets(diff string) []string {
	var out []string
	for _, m := range patchTarget.FindAllStringSubmatch(diff, maxScriptOps) {
		if m[1] != "/dev/null" && fileOperand(m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

func (r *scriptReader) call(c *syntax.CallExpr, depth int) {
	// Command substitutions run too: $(cat x) reads x.
	for _, w := range c.Args {
		r.substitutions(w, depth)
	}
	for _, a := range c.Assigns {
		if a.Value != nil {
			r.substitutions(a.Value, depth)
		}
	}
	args := literalArgs(c.Args)
	if len(args) == 0 {
		return
	}
	r.calls++
	args = unwrap(args)
	if len(args) == 0 {
		return
	}
	name := path.Base(args[0])
	// A nested shell: read its -c script.
	if shells[name] && depth < maxScriptDepth {
		for i, a := range args[1:] {
			if isFlag(a) && strings.Contains(a, "c") && !strings.HasPrefix(a, "--") && i+2 < len(args) {
				if sub, ok := parseScript(args[i+2]); ok {
					r.file(sub, depth+1)
					return
				}
			}
		}
	}
	switch {
	case name == "cd" || name == "pushd":
		if len(args) == 2 && r.dir == "" && strings.HasPrefix(args[1], "/") && fileOperand(args[1]) {
			r.dir = strings.TrimRight(args[1], "/")
		}
	case readCommands[name]:
		r.read(name, args)
	case searchCommands[name]:
		r.search(name, args)
	case fileCommands[name]:
		r.fileCommand(name, args)
	default:
		if !inspectCommands[name] {
			r.runs = true
		}
		if name == "git" {
			r.git(args)
			return
		}
		for _, a := range args[1:] {
			if p, ok := usedPath(a); ok {
				r.add(fileOp{Path: p, Op: opUse})
			}
		}
	}
}

func (r *scriptReader) substitutions(w *syntax.Word, depth int) {
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			r.stmts(n.Stmts, depth)
			return false
		case *syntax.ProcSubst:
			r.stmts(n.Stmts, depth)
			return false
		}
		return true
	})
}

func parseScript(s string) (f *syntax.File, ok bool) {
	if len(s) > maxScriptBytes {
		return nil, false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	return f, err == nil
}

// unwrap drops the wrappers before the command they run (sudo, timeout 10, env A=b, …).
func unwrap(args []string) []string {
	for range 4 {
		if len(args) == 0 || !wrappers[path.Base(args[0])] {
			return args
		}
		name := path.Base(args[0])
		args = args[1:]
		for len(args) > 0 {
			a := args[0]
			switch {
			case isFlag(a):
				args = args[1:]
				// Options of these wrappers that take a value.
				if (name == "sudo" && (a == "-u" || a == "-g")) || (name == "timeout" && (a == "-s" || a == "-k")) || (name == "nice" && a == "-n") || (name == "xargs" && (a == "-I" || a == "-n" || a == "-P" || a == "-d")) {
					if len(args) > 0 {
						args = args[1:]
					}
				}
				continue
			case name == "env" && strings.Contains(a, "="):
				args = args[1:]
				continue
			case name == "timeout" && a != "" && (a[0] >= '0' && a[0] <= '9'):
				args = args[1:]
				continue
			}
			break
		}
	}
	return args
}

// commandName is the name of the command args run, wrappers skipped, without its directory.
func commandName(args []string) string {
	args = unwrap(args)
	if len(args) == 0 {
		return ""
	}
	return path.Base(args[0])
}

// operands splits a command's arguments (after its name) into flags and operands. valued says
// which short flags take a value (given separately, or joined: -n20); long flags take one only
// when joined by "=", or when listed in valued. "--" ends the flags.
func operands(args []string, valued string, longValued ...string) (flags map[string]string, ops []string) {
	flags = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flags, append(ops, args[i+1:]...)
		case strings.HasPrefix(a, "--"):
			k, v, hasV := strings.Cut(a, "=")
			if !hasV && slices.Contains(longValued, k) && i+1 < len(args) {
				i++
				v = args[i]
			}
			flags[k] = v
		case len(a) > 1 && a[0] == '-' && !isNumber(a[1:]):
			// A cluster of short flags; the first that takes a value ends it.
			for j := 1; j < len(a); j++ {
				f := string(a[j])
				if strings.Contains(valued, f) {
					v := a[j+1:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i]
					}
					flags["-"+f] = v
					break
				}
				flags["-"+f] = ""
			}
		case len(a) > 1 && a[0] == '-':
			flags["-N"] = a[1:] // head -20, tail -5
		default:
			ops = append(ops, a)
		}
	}
	return flags, ops
}

// read records what a command showing files reads, with the line range it shows.
func (r *scriptReader) read(name string, args []string) {
	rng := lineRange{From: 1, To: wholeFile}
	var files []string
	switch name {
	case "head", "tail":
		flags, ops := operands(args[1:], "nc", "--lines", "--bytes")
		files = ops
		if rr, ok := headTail(name, flags); ok {
			rng = rr
		}
	case "sed":
		flags, ops := operands(args[1:], "efl", "--expression", "--file")
		script, hasE := flags["-e"]
		if !hasE {
			script, hasE = flags["--expression"]
		}
		if !hasE && len(ops) > 0 {
			script, ops = ops[0], ops[1:]
		}
		files = ops
		_, inPlace := flags["-i"]
		if _, ok := flags["--in-place"]; ok {
			inPlace = true
		}
		for k := range flags {
			if strings.HasPrefix(k, "--in-place") {
				inPlace = true
			}
		}
		if inPlace {
			for _, f := range files {
				if fileOperand(f) {
					r.add(fileOp{Path: f, Op: opWrite})
				}
			}
			return
		}
		_, quiet := flags["-n"]
		if quiet {
			if rr, ok := sedRange(script); ok {
				rng = rr
			} else {
				rng = lineRange{} // lines by pattern: no range known
			}
		}
	case "nl":
		_, files = operands(args[1:], "bdfhilnsvw")
	case "bat", "batcat":
		flags, ops := operands(args[1:], "lrpmH", "--line-range", "--language", "--style", "--theme", "--paging")
		files = ops
		if v, ok := cmpOr(flags["-r"], flags["--line-range"]); ok {
			if a, b, ok := strings.Cut(v, ":"); ok {
				from, err1 := strconv.Atoi(cmpStr(a, "1"))
				to, err2 := strconv.Atoi(cmpStr(b, "0"))
				if err1 == nil && err2 == nil && from > 0 && to >= 0 {
					rng = lineRange{From: from, To: to}
				}
			}
		}
	default: // cat, less, more, view
		_, files = operands(args[1:], "")
		if name == "less" || name == "more" || name == "view" {
			files = slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(f, "+") }) // +G, +/pattern: commands
		}
	}
	for _, f := range files {
		if fileOperand(f) {
			r.add(fileOp{Path: f, Op: opRead, Range: rng})
		}
	}
}

func cmpOr(a, b string) (string, bool) {
	if a != "" {
		return a, true
	}
	return b, b != ""
}

func cmpStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// headTail is the range head or tail shows: the first N lines, the last N (From -N) or from
// line K on (tail -n +K). ok is false for byte counts and counts it cannot read.
func headTail(name string, flags map[string]string) (lineRange, bool) {
	if _, bytes := flags["-c"]; bytes {
		return lineRange{}, false
	}
	if _, bytes := flags["--bytes"]; bytes {
		return lineRange{}, false
	}
	n, ok := flags["-n"]
	if !ok {
		if n, ok = flags["--lines"]; !ok {
			n, ok = flags["-N"]
		}
	}
	if !ok {
		n = "10"
	}
	from := strings.HasPrefix(n, "+")
	count, err := strconv.Atoi(strings.TrimPrefix(n, "+"))
	switch {
	case err != nil || count < 0 || count > 1e8:
		return lineRange{}, false
	case name == "head":
		if count == 0 {
			return lineRange{}, false
		}
		return lineRange{From: 1, To: count}, true
	case from:
		return lineRange{From: max(count, 1), To: wholeFile}, true
	case count == 0:
		return lineRange{}, false
	}
	return lineRange{From: -count}, true
}

// sedCommand is one `sed -n` command printing an address range: N, N,M or N,$ then p.
var sedCommand = regexp.MustCompile(`^\s*(\d+)\s*(?:,\s*(\d+|\$)\s*)?p\s*$`)

// sedRange is the range a `sed -n` script prints, when it prints one: "10,40p", "5p",
// "100,$p"; several ranges (10,20p;30,40p) give the span from the first to the last.
func sedRange(script string) (lineRange, bool) {
	var out lineRange
	for i, part := range strings.Split(script, ";") {
		m := sedCommand.FindStringSubmatch(part)
		if m == nil {
			if strings.TrimSpace(part) == "" && i > 0 {
				continue
			}
			return lineRange{}, false
		}
		from, err := strconv.Atoi(m[1])
		if err != nil || from < 1 {
			return lineRange{}, false
		}
		to := from
		switch m[2] {
		case "":
		case "$":
			to = wholeFile
		default:
			if to, err = strconv.Atoi(m[2]); err != nil || to < from {
				return lineRange{}, false
			}
		}
		if out.From == 0 {
			out = lineRange{From: from, To: to}
			continue
		}
		out.From = min(out.From, from)
		if out.To != wholeFile && (to == wholeFile || to > out.To) {
			out.To = to
		}
	}
	return out, out.From > 0
}

// lineFilter is the range a pipeline stage without a file of its own keeps of its input:
// head, tail, sed -n with a range.
func lineFilter(args []string) (lineRange, bool) {
	args = unwrap(args)
	if len(args) == 0 {
		return lineRange{}, false
	}
	switch name := path.Base(args[0]); name {
	case "head", "tail":
		flags, ops := operands(args[1:], "nc", "--lines", "--bytes")
		if len(ops) > 0 {
			return lineRange{}, false
		}
		return headTail(name, flags)
	case "sed":
		flags, ops := operands(args[1:], "efl", "--expression", "--file")
		script, hasE := flags["-e"]
		if !hasE && len(ops) > 0 {
			script, ops = ops[0], ops[1:]
		}
		if _, quiet := flags["-n"]; !quiet || len(ops) > 0 {
			return lineRange{}, false
		}
		return sedRange(script)
	}
	return lineRange{}, false
}

// narrow applies a filter's range to what op read.
func (op *fileOp) narrow(f lineRange) {
	r := op.Range
	switch {
	case r.From == 0 || f.From == 0: // unknown
		op.Range = lineRange{}
	case r.From < 0: // the last lines: a filter of them has no absolute range
		if f.From < 0 {
			op.Range = lineRange{From: -min(-f.From, -r.From)}
		} else if f.From == 1 && f.To != wholeFile {
			op.Range = lineRange{}
		}
	case f.From < 0: // tail of a range
		if r.To == wholeFile {
			op.Range = f
		} else {
			op.Range = lineRange{From: max(r.From, r.To+f.From+1), To: r.To}
		}
	default:
		from := r.From + f.From - 1
		to := wholeFile
		if f.To != wholeFile {
			to = r.From + f.To - 1
		}
		if r.To != wholeFile && (to == wholeFile || to > r.To) {
			to = r.To
		}
		if to != wholeFile && to < from {
			op.Range = lineRange{}
			return
		}
		op.Range = lineRange{From: from, To: to}
	}
}

// search records the files a search reads and, for a line-numbered search of one file, that
// file: its output's "N:" lines are its lines.
func (r *scriptReader) search(name string, args []string) {
	valued, long := "efABCmdD", []string{"--regexp", "--file", "--max-count", "--context", "--after-context", "--before-context"}
	if name == "rg" || name == "ag" || name == "ack" {
		valued, long = "efABCmgtTjM", append(long, "--glob", "--type", "--type-not", "--threads", "--max-columns")
	}
	flags, ops := operands(args[1:], valued, long...)
	_, hasE := flags["-e"]
	if _, ok := flags["--regexp"]; ok {
		hasE = true
	}
	_, hasF := flags["-f"]
	if !hasE && !hasF && len(ops) > 0 {
		ops = ops[1:] // the pattern
	}
	var files []string
	for _, f := range ops {
		if fileOperand(f) {
			files = append(files, f)
			r.add(fileOp{Path: f, Op: opSearch})
		}
	}
	_, numbered := flags["-n"]
	if _, ok := flags["--line-number"]; ok {
		numbered = true
	}
	_, recursive := flags["-r"]
	_, recursiveR := flags["-R"]
	_, withName := flags["-H"]
	if numbered && len(files) == 1 && !recursive && !recursiveR && !withName && !strings.HasSuffix(files[0], "/") {
		r.searches++
		r.searchStage = r.calls - 1
		r.grepFile = files[0]
	}
}

// fileCommand records what a command that writes, creates, moves or removes files does.
func (r *scriptReader) fileCommand(name string, args []string) {
	switch name {
	case "tee":
		_, ops := operands(args[1:], "")
		r.addAll(ops, opWrite)
	case "touch":
		_, ops := operands(args[1:], "dtr", "--date", "--reference")
		r.addAll(ops, opCreate)
	case "mkdir":
		_, ops := operands(args[1:], "m", "--mode")
		r.addAll(ops, opCreate)
	case "rm", "rmdir":
		_, ops := operands(args[1:], "")
		r.addAll(ops, opRemove)
	case "truncate":
		_, ops := operands(args[1:], "sr", "--size", "--reference")
		r.addAll(ops, opWrite)
	case "cp", "mv", "ln", "install":
		flags, ops := operands(args[1:], "tSmog", "--target-directory", "--suffix", "--mode", "--owner", "--group")
		target, ok := cmpOr(flags["-t"], flags["--target-directory"])
		if !ok && len(ops) > 1 {
			target, ops = ops[len(ops)-1], ops[:len(ops)-1]
		}
		if target == "" {
			return
		}
		src := opUse
		if name == "mv" {
			src = opRemove
		}
		r.addAll(ops, src)
		if fileOperand(target) {
			r.add(fileOp{Path: target, Op: opWrite})
		}
	case "patch":
		flags, ops := operands(args[1:], "pidoBDFrVxYz", "--input", "--directory", "--output")
		if in, ok := cmpOr(flags["-i"], flags["--input"]); ok && fileOperand(in) {
			r.add(fileOp{Path: in, Op: opUse})
		}
		if len(ops) > 0 && fileOperand(ops[0]) {
			r.add(fileOp{Path: ops[0], Op: opWrite})
		}
		if len(ops) > 1 && fileOperand(ops[1]) {
			r.add(fileOp{Path: ops[1], Op: opUse})
		}
	case "chmod":
		_, ops := operands(args[1:], "")
		if len(ops) > 1 {
			r.addAll(ops[1:], opUse)
		}
	}
}

func (r *scriptReader) addAll(files []string, op string) {
	for _, f := range files {
		if fileOperand(f) {
			r.add(fileOp{Path: f, Op: op})
		}
	}
}

// git reads the git subcommands that act on files: rm and mv remove, checkout/restore write
// (back), apply writes what its patch names (in a heredoc, read by redirects); the paths of
// other subcommands are used.
func (r *scriptReader) git(args []string) {
	_, ops := operands(args[1:], "Cc", "--git-dir", "--work-tree")
	if len(ops) == 0 {
		return
	}
	sub, rest := ops[0], ops[1:]
	switch sub {
	case "rm":
		r.addAll(pathsOnly(rest), opRemove)
	case "mv":
		if len(rest) > 1 {
			r.addAll(pathsOnly(rest[:len(rest)-1]), opRemove)
			r.addAll(pathsOnly(rest[len(rest)-1:]), opWrite)
		}
	case "checkout", "restore":
		r.addAll(pathsOnly(rest), opWrite)
	default:
		for _, a := range rest {
			if p, ok := usedPath(a); ok {
				r.add(fileOp{Path: p, Op: opUse})
			}
		}
	}
}

func pathsOnly(args []string) []string {
	var out []string
	for _, a := range args {
		if p, ok := usedPath(a); ok {
			out = append(out, p)
		}
	}
	return out
}

// literalArgs returns the words of a command as the shell would pass them, for the words it
// can know without running anything: a word with an expansion ($x, $(…)) is left out after the
// first (a command name with one gives none).
func literalArgs(words []*syntax.Word) []string {
	out := make([]string, 0, len(words))
	for i, w := range words {
		s, ok := wordText(w)
		if !ok {
			if i == 0 {
				return nil
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// wordText is a word's value when it holds no expansion: literals, quotes, escapes.
func wordText(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		if !partText(&b, p, false) {
			return "", false
		}
	}
	return b.String(), true
}

func partText(b *strings.Builder, p syntax.WordPart, quoted bool) bool {
	switch p := p.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(p.Value, quoted))
	case *syntax.SglQuoted:
		if p.Dollar {
			return false
		}
		b.WriteString(p.Value)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			if !partText(b, q, true) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// unescape removes the backslashes the shell removes: before any character outside quotes,
// before $ ` " \ and a line break inside double quotes.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !quoted || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isFlag reports whether a word is an option (-n, --lines=5), not a negative number or "-".
func isFlag(a string) bool {
	return len(a) > 1 && a[0] == '-' && !isNumber(a[1:])
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// fileOperand reports whether a command's operand names a file: not "-" (standard input), not
// a glob, not empty, one line, at most 300 bytes.
func fileOperand(s string) bool {
	return s != "" && s != "-" && len(s) <= 300 && !strings.ContainsAny(s, "*?[\n\r\t") && !isFlag(s) && strings.Trim(s, "./") != ""
}

// pathLike reports whether a word looks like a path: it has a slash or a file extension.
func pathLike(s string) bool {
	return len(s) <= 300 && looksLikePath.MatchString(s) && strings.Trim(s, "./") != "" && !isNumber(strings.ReplaceAll(s, ".", ""))
}

// usedPath is the path an argument of a command names, if it looks like one: a test id's file
// (tests/x.py::test_y), a Go package pattern's directory (./pkg/...), a flag's value
// (--config=x.toml).
func usedPath(a string) (string, bool) {
	if strings.HasPrefix(a, "-") {
		_, v, ok := strings.Cut(a, "=")
		if !ok {
			return "", false
		}
		a = v
	}
	a, _, _ = strings.Cut(a, "::")
	a = strings.TrimSuffix(a, "/...")
	if !fileOperand(a) || !pathLike(a) || strings.Contains(a, "://") {
		return "", false
	}
	return a, true
}
