package corpus

import (
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
)

// mutation is the bug a session's task is about: one token of the module's code changed (an
// operator swapped, an off-by-one, a negation dropped, a boolean result inverted), which makes
// some of the module's own tests fail. The fix is to change it back.
type mutation struct {
	fn       *funcInfo
	file     string
	line     int    // 1-based
	col      int    // byte offset of the changed token in the line
	kind     string // "compare", "logic", "offset", "not", "bool"
	oldOp    string // the token the module had
	newOp    string // the token the task starts with
	origLine string
	bugLine  string
	expr     string // the expression as the module had it, when on one line
	bugExpr  string
	inLoop   bool // in a for statement: changing it may make the code loop forever
}

func (m mutation) key() string { return fmt.Sprintf("%s:%d:%d", m.file, m.line, m.col) }

var swappedOps = map[token.Token]string{
	token.LSS: "<=", token.LEQ: "<", token.GTR: ">=", token.GEQ: ">",
	token.EQL: "!=", token.NEQ: "==", token.LAND: "||", token.LOR: "&&",
	token.ADD: "-", token.SUB: "+",
}

// mutationCandidates lists the tokens that may be changed: in non-test files of packages that
// have tests, outside files with build constraints (their code may not be built).
func mutationCandidates(idx *srcIndex) []mutation {
	var out []mutation
	for _, sf := range idx.files {
		pk := idx.pkgs[sf.dir]
		if sf.test || len(pk.testFiles) == 0 || strings.Contains(sf.src, "//go:build") {
			continue
		}
		for _, fn := range sf.funcs {
			if fn.name == "String" || fn.name == "Error" || fn.name == "init" || fn.size() < 4 {
				continue
			}
			var stack []ast.Node
			ast.Inspect(fn.decl.Body, func(n ast.Node) bool {
				if n == nil {
					stack = stack[:len(stack)-1]
					return true
				}
				stack = append(stack, n)
				inLoop := slices.ContainsFunc(stack, func(n ast.Node) bool {
					_, isFor := n.(*ast.ForStmt)
					_, isRange := n.(*ast.RangeStmt)
					return isFor || isRange
				})
				add := func(kind string, at token.Pos, old, new string, whole ast.Node) {
					pos := idx.fset.Position(at)
					line := sf.lines[pos.Line-1]
					col := pos.Column - 1
					if col+len(old) > len(line) || line[col:col+len(old)] != old {
						return
					}
					m := mutation{
						fn: fn, file: sf.path, line: pos.Line, col: col, kind: kind,
						oldOp: old, newOp: new, origLine: line,
						bugLine: line[:col] + new + line[col+len(old):],
						inLoop:  inLoop,
					}
					start, end := idx.fset.Position(whole.Pos()), idx.fset.Position(whole.End())
					if start.Line == pos.Line && end.Line == pos.Line {
						m.expr = line[start.Column-1 : end.Column-1]
						off := col - (start.Column - 1)
						m.bugExpr = m.expr[:off] + new + m.expr[off+len(old):]
					}
					out = append(out, m)
				}
				switch n := n.(type) {
				case *ast.BinaryExpr:
					newOp, ok := swappedOps[n.Op]
					switch {
					case !ok || isNilCheck(n):
					case n.Op == token.ADD || n.Op == token.SUB:
						// Off by one: only "x + 1", "n - 1" and the like.
						if isSmallInt(n.Y) {
							add("offset", n.OpPos, n.Op.String(), newOp, n)
						}
					case n.Op == token.LAND || n.Op == token.LOR:
						add("logic", n.OpPos, n.Op.String(), newOp, n)
					default:
						add("compare", n.OpPos, n.Op.String(), newOp, n)
					}
				case *ast.UnaryExpr:
					if n.Op == token.NOT {
						add("not", n.OpPos, "!", "", n)
					}
				case *ast.ReturnStmt:
					if len(n.Results) == 1 {
						if id, ok := n.Results[0].(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
							add("bool", id.Pos(), id.Name, map[string]string{"true": "false", "false": "true"}[id.Name], n)
						}
					}
				}
				return true
			})
		}
	}
	return out
}

func isSmallInt(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Kind == token.INT && len(lit.Value) <= 2
}

// isNilCheck: swapping "err != nil" mostly makes every test panic on a nil pointer, a kind of
// failure that says little about where the bug is.
func isNilCheck(be *ast.BinaryExpr) bool {
	for _, e := range []ast.Expr{be.X, be.Y} {
		if id, ok := e.(*ast.Ident); ok && id.Name == "nil" {
			return true
		}
	}
	return false
}

// failingRun is what `go test` printed for a package with the bug in.
type failingRun struct {
	pkgDir string
	output string
	tests  []string // top-level tests that failed, in output order
	where  []string // "file_test.go:NN" locations the output names
}

var (
	failTestRE = regexp.MustCompile(`(?m)^--- FAIL: (Test\w*)`)
	fileLineRE = regexp.MustCompile(`(\w[\w.-]*_test\.go):(\d+)`)
)

// maxFailOutput bounds the output of the failing run: a bug that makes a thousand assertions fail
// is not the kind an issue is written about.
const maxFailOutput = 40000

// introduceBug tries the candidates in a seeded order and keeps the first mutation that makes the
// package's tests fail the same way twice. It leaves the bug in the sandbox. Mutations in used
// (tried by an earlier session) are not tried; those tried now are added to it.
func introduceBug(ctx context.Context, sb *sandbox, idx *srcIndex, rng *rand.Rand, maxTries int, used map[string]bool) (mutation, failingRun, error) {
	cands := slices.DeleteFunc(mutationCandidates(idx), func(m mutation) bool { return used[m.key()] })
	if len(cands) == 0 {
		return mutation{}, failingRun{}, fmt.Errorf("corpus: no operator to change in the module")
	}
	// Group by package, pick packages in a seeded order; within a package, try first the
	// operators of functions the tests call directly, then those one call further.
	byPkg := map[string][]mutation{}
	var dirs []string
	for _, c := range cands {
		d := c.fn.file.dir
		if byPkg[d] == nil {
			dirs = append(dirs, d)
		}
		byPkg[d] = append(byPkg[d], c)
	}
	slices.Sort(dirs)
	rng.Shuffle(len(dirs), func(i, j int) { dirs[i], dirs[j] = dirs[j], dirs[i] })
	for _, d := range dirs {
		cs := byPkg[d]
		rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		dist := idx.testDistance(d, 3)
		rank := func(m mutation) int {
			if n, ok := dist[m.fn]; ok {
				return n
			}
			return 9
		}
		slices.SortStableFunc(cs, func(a, b mutation) int { return rank(a) - rank(b) })
	}
	tries := 0
	for round := 0; tries < maxTries; round++ {
		progressed := false
		for _, d := range dirs {
			cs := byPkg[d]
			if round >= len(cs) || tries >= maxTries {
				continue
			}
			progressed = true
			m := cs[round]
			tries++
			run, ok, err := tryMutation(ctx, sb, m)
			if err != nil {
				return mutation{}, failingRun{}, err
			}
			// Tried, kept or not: the module's next sessions need not try it again.
			used[m.key()] = true
			if ok {
				return m, run, nil
			}
		}
		if !progressed {
			break
		}
	}
	return mutation{}, failingRun{}, fmt.Errorf("corpus: no changed operator made a test fail in %d tries", tries)
}

// firstOfTwo returns the output of one run out of the output of go test -count=2, if the two runs
// printed the same.
func firstOfTwo(out string) (string, bool) {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	end := len(lines)
	for end > 0 && (lines[end-1] == "FAIL" || strings.HasPrefix(lines[end-1], "FAIL\t") || strings.HasPrefix(lines[end-1], "exit status")) {
		end--
	}
	body, tail := lines[:end], lines[end:]
	if len(body) == 0 || len(body)%2 != 0 || !slices.Equal(body[:len(body)/2], body[len(body)/2:]) {
		return "", false
	}
	return strings.Join(append(slices.Clip(body[:len(body)/2]), tail...), "\n") + "\n", true
}

func tryMutation(ctx context.Context, sb *sandbox, m mutation) (failingRun, bool, error) {
	orig, err := sb.readFile(m.file)
	if err != nil {
		return failingRun{}, false, err
	}
	lines := strings.Split(orig, "\n")
	lines[m.line-1] = m.bugLine
	if err := sb.writeFile(m.file, strings.Join(lines, "\n")); err != nil {
		return failingRun{}, false, err
	}
	restore := func() error { return sb.writeFile(m.file, orig) }
	// -count=2 runs the tests twice in one process: a failure that prints differently the second
	// time (random values, map order) would make the sessions differ from run to run.
	// -vet=off: this run is not part of any session, and vet's findings do not change.
	cmd := "go test -count=2 -vet=off -timeout 10s ./" + m.fn.file.dir + "/"
	if m.fn.file.dir == "." {
		cmd = "go test -count=2 -vet=off -timeout 10s ."
	}
	out, code, err := sb.run(ctx, cmd)
	if err != nil {
		return failingRun{}, false, err
	}
	if code == 0 || len(out) > 2*maxFailOutput || !failTestRE.MatchString(out) ||
		strings.Contains(out, "[build failed]") || strings.Contains(out, "test timed out") ||
		!fileLineRE.MatchString(out) {
		return failingRun{}, false, restore()
	}
	out1, ok := firstOfTwo(out)
	if !ok && strings.Contains(out, "panic: ") {
		// A panic ends the process after the first run: compare with a second process.
		out2, _, err := sb.run(ctx, cmd)
		if err != nil {
			return failingRun{}, false, err
		}
		out1, ok = out, out == out2
	}
	if !ok {
		return failingRun{}, false, restore()
	}
	run := failingRun{pkgDir: m.fn.file.dir, output: out1}
	for _, sm := range failTestRE.FindAllStringSubmatch(out1, -1) {
		if !slices.Contains(run.tests, sm[1]) {
			run.tests = append(run.tests, sm[1])
		}
	}
	for _, sm := range fileLineRE.FindAllStringSubmatch(out1, -1) {
		w := sm[1] + ":" + sm[2]
		if !slices.Contains(run.where, w) {
			run.where = append(run.where, w)
		}
	}
	return run, true, nil
}
