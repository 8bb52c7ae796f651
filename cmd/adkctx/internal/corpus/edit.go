package corpus

import (
	"context"
	"fmt"
	"go/ast"
	"path"
	"regexp"
	"slices"
	"strings"
)

// maxReproLines bounds the failing test the agent copies into its reproduction; a longer one
// is called from a small test of its own instead.
const maxReproLines = 70

// writeRepro creates the agent's reproduction: a scratch test in the package that fails the way
// the issue says, and runs it.
func (a *shellAgent) writeRepro(ctx context.Context) error {
	t := a.testFn
	for _, name := range a.fail.tests {
		for _, f := range a.idx.byName[name] {
			if f.isTest() && f.file.dir == a.focusDir && f.size() <= maxReproLines && (t == nil || t.size() > maxReproLines) {
				t = f
			}
		}
	}
	if t == nil {
		return nil
	}
	a.reproFn = "TestRepro" + strings.TrimPrefix(t.name, "Test")
	a.repro = path.Join(a.focusDir, a.pick("repro_issue_test.go", "issue_repro_test.go", "zz_repro_test.go"))
	src := reproSource(t, a.reproFn)
	if strings.Contains(src, "\n```") {
		return nil // would end the bash block of a text-form reply
	}
	a.scratch = append(a.scratch, a.repro)
	why := fmt.Sprintf("To reproduce the problem in isolation I'll write a small test of my own, based on %s.", code(t.name))
	if t.size() > maxReproLines {
		why = fmt.Sprintf("%s is long; a small test that runs it on its own is enough to reproduce the problem.", code(t.name))
	}
	if _, err := a.run1(ctx, a.thought(why, fmt.Sprintf("I'll put it in %s.", code(a.repro))),
		shellAction{command: a.heredoc(a.at(a.repro), src), kind: "write", file: a.repro}); err != nil {
		return err
	}
	for try := 0; try < 3; try++ {
		run, err := a.run1(ctx, a.thought("", a.pick("Now run it.", "Let me run the reproduction.", "Running the new test:")),
			shellAction{command: a.reproCmd(a.chance(0.5)), kind: "test"})
		if err != nil {
			return err
		}
		fixed, changed := fixImports(src, run.output)
		if !changed {
			return nil
		}
		src = fixed
		if _, err := a.run1(ctx, a.thought("The test file does not compile.", "Let me fix its imports."),
			shellAction{command: a.heredoc(a.at(a.repro), src), kind: "write", file: a.repro}); err != nil {
			return err
		}
	}
	return nil
}

func (a *shellAgent) reproCmd(verbose bool) string {
	v := ""
	if verbose {
		v = " -v"
	}
	return fmt.Sprintf("go test -run '^%s$'%s %s", a.reproFn, v, a.pkgArg(a.focusDir))
}

// reproSource is a test file holding a copy of test t renamed, with the imports it uses; or, for
// a long test, a test that calls it.
func reproSource(t *funcInfo, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\n", t.file.pkgName)
	if t.size() > maxReproLines {
		fmt.Fprintf(&b, "import \"testing\"\n\n// %s runs %s on its own, to see its first failures.\nfunc %s(t *testing.T) {\n\t%s(t)\n}\n", name, t.name, name, t.name)
		return b.String()
	}
	used := map[string]bool{}
	ast.Inspect(t.decl, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	var imps []importSpec
	for _, im := range t.file.imports {
		if used[im.name] && im.name != "_" && im.name != "." {
			imps = append(imps, im)
		}
	}
	writeImports(&b, imps)
	body := strings.Join(t.file.lines[t.declLine-1:t.endLine], "\n")
	body = strings.Replace(body, "func "+t.name+"(", "func "+name+"(", 1)
	fmt.Fprintf(&b, "// %s is %s on its own, reproducing the failure from the issue.\n%s\n", name, t.name, body)
	return b.String()
}

func writeImports(b *strings.Builder, imps []importSpec) {
	spec := func(im importSpec) string {
		if im.name != path.Base(im.path) {
			return im.name + " " + fmt.Sprintf("%q", im.path)
		}
		return fmt.Sprintf("%q", im.path)
	}
	switch len(imps) {
	case 0:
	case 1:
		fmt.Fprintf(b, "import %s\n\n", spec(imps[0]))
	default:
		b.WriteString("import (\n")
		for _, im := range imps {
			fmt.Fprintf(b, "\t%s\n", spec(im))
		}
		b.WriteString(")\n\n")
	}
}

var (
	unusedImportRE = regexp.MustCompile(`"([^"]+)" imported (?:as \w+ )?and not used`)
)

// fixImports drops the imports a compile error calls unused.
func fixImports(src, out string) (string, bool) {
	changed := false
	for _, m := range unusedImportRE.FindAllStringSubmatch(out, -1) {
		lines := strings.Split(src, "\n")
		lines = slices.DeleteFunc(lines, func(l string) bool {
			return strings.HasSuffix(strings.TrimSpace(l), fmt.Sprintf("%q", m[1])) && (strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "import "))
		})
		src = strings.Join(lines, "\n")
		changed = true
	}
	return src, changed
}

// opReason says why the changed token is wrong, in the agent's words.
func opReason(m mutation) string {
	op := code(m.newOp)
	switch m.kind {
	case "offset":
		return fmt.Sprintf("%s should be %s: the index arithmetic is off by one", code(m.bugExpr), code(m.expr))
	case "not":
		return "the negation is missing, so the condition is the wrong way round"
	case "bool":
		return fmt.Sprintf("it returns %s where the callers expect %s", op, code(m.oldOp))
	}
	switch m.newOp {
	case "<=", ">=":
		return op + " also lets the boundary value through, while the code around it treats the bound as exclusive"
	case "<", ">":
		return op + " leaves out the boundary value, one short of what the callers expect"
	case "==":
		return op + " inverts the condition compared to what the comments and the callers expect"
	case "!=":
		return op + " inverts the condition: the branch runs exactly when it should not"
	case "||":
		return op + " makes either condition alone enough, but both must hold"
	case "&&":
		return op + " requires both conditions where either one should do"
	}
	return "the comparison is the wrong way round"
}

// fix edits the bug away: sometimes after a wrong first attempt, with sed -i or by rewriting the
// function or the file in a heredoc.
func (a *shellAgent) fix(ctx context.Context) error {
	b := a.bug
	why := fmt.Sprintf("Back in %s, at line %d of %s:", code(b.fn.name), b.line, code(b.file))
	if _, err := a.run1(ctx, a.thought(why, "let me look at that part again with the failure in mind."),
		a.view(b.file, b.line-a.between(6, 12), b.line+a.between(4, 10))); err != nil {
		return err
	}
	if a.chance(a.p.wrongFix) {
		done, err := a.wrongEdit(ctx)
		if err != nil || done {
			return err
		}
	}
	useHeredoc := a.chance(a.p.heredocFix) && b.fn.size() <= 150
	if !useHeredoc {
		cmd := sedFix(b, a.at(b.file))
		what := b.expr
		if what == "" {
			what = strings.TrimSpace(b.origLine)
		}
		reason := fmt.Sprintf("%s on line %d is the bug: %s. It should be %s.", code(orExpr(b.bugExpr, b.bugLine)), b.line, opReason(b), code(what))
		if _, err := a.run1(ctx, a.thought(reason, "Fixing it with sed."), shellAction{command: cmd, kind: "edit", file: b.file}); err != nil {
			return err
		}
		cur, err := a.sb.readFile(b.file)
		if err != nil {
			return err
		}
		if lineOf(cur, b.line) == b.origLine {
			if a.chance(0.6) {
				_, err := a.run1(ctx, a.thought("", "Let me check the edit."), a.view(b.file, b.line-3, b.line+3))
				return err
			}
			return nil
		}
		// The sed expression did not match: rewrite the function instead.
	}
	return a.heredocFix(ctx)
}

func orExpr(expr, line string) string {
	if expr != "" {
		return expr
	}
	return strings.TrimSpace(line)
}

func lineOf(src string, n int) string {
	lines := strings.Split(src, "\n")
	if n-1 < len(lines) {
		return lines[n-1]
	}
	return ""
}

// heredocFix rewrites the buggy function (or its whole file, when small) from a heredoc.
func (a *shellAgent) heredocFix(ctx context.Context) error {
	b := a.bug
	f := b.fn
	var helperNames []string
	for _, h := range a.helpers {
		helperNames = append(helperNames, code(h.name))
	}
	keep := ""
	if len(helperNames) > 0 {
		keep = fmt.Sprintf(" It keeps using %s as before.", strings.Join(helperNames, " and "))
	}
	reason := fmt.Sprintf("%s in %s is where it goes wrong: %s.", code(orExpr(b.bugExpr, b.bugLine)), code(f.name), opReason(b))
	sf := f.file
	if len(sf.lines) <= 150 && !strings.Contains(sf.src, "\n```") && a.chance(0.5) {
		cmd := a.heredoc(a.at(sf.path), withNewline(sf.src))
		_, err := a.run1(ctx, a.thought(reason, "The file is small, so I'll rewrite it with the corrected condition."+keep), shellAction{command: cmd, kind: "edit", file: sf.path})
		return err
	}
	text := f.text()
	if strings.Contains(text, "\n```") {
		whole := mutation{line: b.line, origLine: b.origLine, bugLine: b.bugLine}
		_, err := a.run1(ctx, a.thought(reason, "Fixing the line with sed."), shellAction{command: sedFix(whole, a.at(b.file)), kind: "edit", file: b.file})
		return err
	}
	scratch := "fix_" + strings.ToLower(f.name) + ".go.txt"
	a.scratch = append(a.scratch, scratch)
	if _, err := a.run1(ctx, a.thought(reason, fmt.Sprintf("I'll write the corrected %s to a scratch file first, then splice it into %s.%s", code(f.name), code(sf.path), keep)),
		shellAction{command: a.heredoc(scratch, text), kind: "write", file: scratch}); err != nil {
		return err
	}
	cmd := fmt.Sprintf("sed -i '%d,%dd' %s && sed -i '%dr %s' %s && nl -ba %s | sed -n '%d,%dp'",
		f.docLine, f.endLine, sf.path, f.docLine-1, scratch, sf.path, sf.path, max(f.docLine-2, 1), min(f.endLine+2, len(sf.lines)))
	_, err := a.run1(ctx, a.thought("", fmt.Sprintf("Replacing lines %d-%d of %s with it.", f.docLine, f.endLine, code(sf.path))), shellAction{command: cmd, kind: "edit", file: sf.path})
	return err
}

// heredoc is a command writing content (ending in a newline) to file, in one of the two ways
// agents spell it.
func (a *shellAgent) heredoc(file, content string) string {
	if a.chance(0.3) {
		return fmt.Sprintf("cat > %s <<'EOF'\n%sEOF", file, content)
	}
	return fmt.Sprintf("cat <<'EOF' > %s\n%sEOF", file, content)
}

func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// wrongEdit changes another comparison of the buggy function, sees that it does not help, and
// reverts it. It reports whether that edit turned out to fix the tests after all.
func (a *shellAgent) wrongEdit(ctx context.Context) (bool, error) {
	b := a.bug
	var alts []mutation
	for _, m := range mutationCandidates(a.idx) {
		if m.fn == b.fn && m.line != b.line && !m.inLoop {
			alts = append(alts, m)
		}
	}
	if len(alts) == 0 || a.reproFn == "" {
		return false, nil
	}
	w := alts[a.rng.IntN(len(alts))]
	// The wrong edit turns w's expression into its swapped form.
	wrong := mutation{line: w.line, expr: w.bugExpr, bugExpr: w.expr, origLine: w.bugLine, bugLine: w.origLine}
	why := fmt.Sprintf("I suspect %s on line %d.", code(orExpr(w.expr, w.origLine)), w.line)
	if _, err := a.run1(ctx, a.thought(why, fmt.Sprintf("Let me try %s there and rerun the reproduction.", code(orExpr(w.bugExpr, w.bugLine)))),
		shellAction{command: sedFix(wrong, a.at(b.file)), kind: "edit", file: b.file}); err != nil {
		return false, err
	}
	run, err := a.run1(ctx, a.thought("", "Rerunning my test."), shellAction{command: a.reproCmd(false), kind: "test"})
	if err != nil {
		return false, err
	}
	if run.code == 0 {
		all, err := a.run1(ctx, a.thought("My test passes now.", "Let me make sure the rest of the package agrees."),
			shellAction{command: "go test " + a.pkgArg(a.focusDir), kind: "test"})
		if err != nil {
			return false, err
		}
		if all.code == 0 {
			return true, nil
		}
	}
	if a.chance(0.5) {
		if _, err := a.run1(ctx, a.thought("That did not fix it.", "Let me look at what I changed."),
			shellAction{command: "git diff", kind: "git"}); err != nil {
			return false, err
		}
	}
	_, err = a.run1(ctx, a.thought("That was the wrong place.", "Reverting the edit."),
		shellAction{command: "git checkout -- " + a.at(b.file) + " && git status --short", kind: "git"})
	return false, err
}

// sedFix is a sed -i command turning line m.line from m.bugLine back into m.origLine.
func sedFix(m mutation, file string) string {
	var script string
	if m.expr != "" && strings.Count(m.bugLine, m.bugExpr) == 1 {
		script = fmt.Sprintf("%ds/%s/%s/", m.line, sedPattern(m.bugExpr), sedReplacement(m.expr))
	} else {
		script = fmt.Sprintf("%ds/.*/%s/", m.line, sedReplacement(m.origLine))
	}
	return "sed -i " + shellQuote(script) + " " + file
}

func sedPattern(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\/.*[]^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func sedReplacement(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\/&`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// verify runs the reproduction and the package's tests, and sometimes vet, gofmt and every test.
func (a *shellAgent) verify(ctx context.Context) error {
	if a.reproFn != "" {
		if _, err := a.run1(ctx, a.thought("", a.pick("Let me rerun my reproduction test.", "Now the reproduction should pass.")),
			shellAction{command: a.reproCmd(a.chance(0.6)), kind: "test"}); err != nil {
			return err
		}
	}
	pkg := a.pkgArg(a.focusDir)
	cmd := "go test " + pkg
	if a.chance(0.4) {
		// The whole verbose run: long, and cut as long outputs are.
		cmd = "go test -v " + pkg + a.pick("", " 2>&1 | tail -n 150")
	}
	if _, err := a.run1(ctx, a.thought("", "And the whole package's tests, which the issue reported as failing."),
		shellAction{command: cmd, kind: "test"}); err != nil {
		return err
	}
	if a.chance(0.35) {
		if _, err := a.run1(ctx, a.thought("", "Let me run every test of the module to be sure nothing else broke."),
			shellAction{command: "go test ./... 2>&1 | tail -n 25", kind: "test"}); err != nil {
			return err
		}
	}
	if a.chance(0.5) {
		if _, err := a.run1(ctx, a.thought("", "Let me also run go vet on the package."),
			shellAction{command: "go vet " + a.pick(pkg, "./..."), kind: "vet"}); err != nil {
			return err
		}
	}
	if a.chance(0.3) {
		if _, err := a.run1(ctx, a.thought("", "And check formatting."),
			shellAction{command: "gofmt -l " + a.bug.file, kind: "vet"}); err != nil {
			return err
		}
	}
	return nil
}

// cleanup removes the agent's scratch files, created many steps before, and shows the change.
func (a *shellAgent) cleanup(ctx context.Context) error {
	if len(a.scratch) > 0 {
		var names []string
		for _, s := range a.scratch {
			names = append(names, code(s))
		}
		if _, err := a.run1(ctx, a.thought("", fmt.Sprintf("The fix works. Let me remove the scratch files I created: %s.", strings.Join(names, ", "))),
			shellAction{command: "rm -f " + strings.Join(a.scratch, " "), kind: "rm"}); err != nil {
			return err
		}
	}
	if a.chance(0.6) {
		if _, err := a.run1(ctx, a.thought("", "Let me check the working tree is clean apart from the fix."),
			shellAction{command: "git status", kind: "git"}); err != nil {
			return err
		}
	}
	_, err := a.run1(ctx, a.thought("", "Let me review the final diff."), shellAction{command: "git diff", kind: "git"})
	return err
}

// submit ends the session as the format does: one command in the text form, a patch file in
// three commands in the tool-call form.
func (a *shellAgent) submit(ctx context.Context) error {
	if a.format == FormatToolCall {
		if _, err := a.run1(ctx, a.thought("", "The change is complete. Let me write the patch of the file I changed."),
			shellAction{command: "git diff -- " + a.bug.file + " > patch.txt", kind: "git"}); err != nil {
			return err
		}
		if _, err := a.run1(ctx, "Checking the patch before submitting.", shellAction{command: "cat patch.txt", kind: "git"}); err != nil {
			return err
		}
		_, err := a.run1(ctx, "The patch holds only the fix. Submitting.", shellAction{command: "echo " + submitSentinel + " && cat patch.txt", kind: "submit"})
		return err
	}
	_, err := a.run1(ctx, a.thought("", "The fix is in place and the tests pass. Submitting."),
		shellAction{command: "echo " + submitSentinel + " && git add -A && git diff --cached", kind: "submit"})
	return err
}
