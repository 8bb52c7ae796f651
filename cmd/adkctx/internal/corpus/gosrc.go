package corpus

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// srcIndex is what the scripted agent "knows" about a source tree: the files, packages and
// functions it may grep for and read. Everything it names comes from the real tree.
type srcIndex struct {
	fset   *token.FileSet
	files  []*srcFile
	byPath map[string]*srcFile
	funcs  []*funcInfo
	byName map[string][]*funcInfo // function and method names
	types  map[string]*srcFile    // type name → declaring file (first one)
	pkgs   map[string]*pkgInfo    // package directory → package
}

type srcFile struct {
	path    string // repository path, slash-separated
	ast     *ast.File
	dir     string
	pkgName string
	test    bool
	src     string
	lines   []string
	imports []importSpec
	funcs   []*funcInfo
}

type importSpec struct {
	name string // the name the file uses
	path string
}

type pkgInfo struct {
	dir       string
	name      string
	files     []*srcFile // non-test files
	testFiles []*srcFile
}

type funcInfo struct {
	name     string
	recv     string // receiver type name, without '*'
	file     *srcFile
	docLine  int // first line of the doc comment, or declLine
	declLine int // the "func" line
	endLine  int
	calls    []string // names called in the body, in order, without repeats
	idents   []string // other identifiers of the body (types, fields, constants), without repeats
	decl     *ast.FuncDecl
}

func (f *funcInfo) isTest() bool {
	return f.file.test && f.recv == "" && strings.HasPrefix(f.name, "Test") && f.name != "TestMain"
}

// signature is the function's first line as the source spells it.
func (f *funcInfo) signature() string { return f.file.lines[f.declLine-1] }

// text is the function's source, doc comment included.
func (f *funcInfo) text() string {
	return strings.Join(f.file.lines[f.docLine-1:f.endLine], "\n") + "\n"
}

func (f *funcInfo) size() int { return f.endLine - f.declLine + 1 }

func indexSource(root string) (*srcIndex, error) {
	idx := &srcIndex{
		byPath: map[string]*srcFile{},
		byName: map[string][]*funcInfo{},
		types:  map[string]*srcFile{},
		pkgs:   map[string]*pkgInfo{},
	}
	fset := token.NewFileSet()
	idx.fset = fset
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, rel, b, parser.ParseComments)
		if err != nil {
			return nil // files that do not parse are not the agent's business
		}
		idx.add(fset, filepath.ToSlash(rel), string(b), f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(idx.files, func(a, b *srcFile) int { return strings.Compare(a.path, b.path) })
	return idx, nil
}

func (idx *srcIndex) add(fset *token.FileSet, rel, src string, f *ast.File) {
	sf := &srcFile{
		path:    rel,
		dir:     path.Dir(rel),
		pkgName: f.Name.Name,
		test:    strings.HasSuffix(rel, "_test.go"),
		ast:     f,
		src:     src,
		lines:   strings.Split(strings.TrimSuffix(src, "\n"), "\n"),
	}
	for _, im := range f.Imports {
		p := strings.Trim(im.Path.Value, `"`)
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		} else if strings.HasPrefix(name, "v") && strings.Count(p, "/") > 0 && isDigits(name[1:]) {
			name = path.Base(path.Dir(p))
		}
		sf.imports = append(sf.imports, importSpec{name: name, path: p})
	}
	idx.files = append(idx.files, sf)
	idx.byPath[rel] = sf
	pk := idx.pkgs[sf.dir]
	if pk == nil {
		pk = &pkgInfo{dir: sf.dir}
		idx.pkgs[sf.dir] = pk
	}
	if sf.test {
		pk.testFiles = append(pk.testFiles, sf)
	} else {
		pk.files = append(pk.files, sf)
		pk.name = sf.pkgName
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok != token.TYPE || sf.test {
				continue
			}
			for _, s := range d.Specs {
				ts := s.(*ast.TypeSpec)
				if _, ok := idx.types[ts.Name.Name]; !ok {
					idx.types[ts.Name.Name] = sf
				}
			}
		case *ast.FuncDecl:
			if d.Body == nil {
				continue
			}
			fi := &funcInfo{
				name:     d.Name.Name,
				file:     sf,
				declLine: fset.Position(d.Pos()).Line,
				endLine:  fset.Position(d.End()).Line,
				decl:     d,
			}
			fi.docLine = fi.declLine
			if d.Doc != nil {
				fi.docLine = fset.Position(d.Doc.Pos()).Line
			}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				fi.recv = recvName(d.Recv.List[0].Type)
			}
			fi.calls, fi.idents = bodyNames(d.Body)
			sf.funcs = append(sf.funcs, fi)
			idx.funcs = append(idx.funcs, fi)
			idx.byName[fi.name] = append(idx.byName[fi.name], fi)
		}
	}
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// bodyNames lists the names a function body calls and the other names it uses.
func bodyNames(body *ast.BlockStmt) (calls, idents []string) {
	seenCall := map[string]bool{}
	seenIdent := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			var name string
			switch fn := n.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			case *ast.IndexExpr:
				if id, ok := fn.X.(*ast.Ident); ok {
					name = id.Name
				}
			}
			if name != "" && !seenCall[name] {
				seenCall[name] = true
				calls = append(calls, name)
			}
		case *ast.SelectorExpr:
			if name := n.Sel.Name; !seenIdent[name] {
				seenIdent[name] = true
				idents = append(idents, name)
			}
		case *ast.Ident:
			if name := n.Name; len(name) >= 4 && !seenIdent[name] {
				seenIdent[name] = true
				idents = append(idents, name)
			}
		}
		return true
	})
	return calls, idents
}

// funcsNamed returns the non-test functions and methods of the module with this name.
func (idx *srcIndex) funcsNamed(name string) []*funcInfo {
	var out []*funcInfo
	for _, f := range idx.byName[name] {
		if !f.file.test {
			out = append(out, f)
		}
	}
	return out
}

// funcAt returns the function whose lines hold line of file.
func (idx *srcIndex) funcAt(file string, line int) *funcInfo {
	sf := idx.byPath[file]
	if sf == nil {
		return nil
	}
	for _, f := range sf.funcs {
		if f.docLine <= line && line <= f.endLine {
			return f
		}
	}
	return nil
}

// maxDefinitions: a name declared more often than this (String, Len, Type…) says nothing about
// which function is called, so the name-based call graph does not follow it.
const maxDefinitions = 2

// callees are the module functions a function refers to: those it calls and, for tests, those
// it names (table tests list functions as values).
func (idx *srcIndex) callees(f *funcInfo) []*funcInfo {
	names := f.calls
	if f.file.test {
		names = append(slices.Clip(names), f.idents...)
	}
	var out []*funcInfo
	seen := map[*funcInfo]bool{}
	for _, n := range names {
		fs := idx.funcsNamed(n)
		if len(fs) == 0 || len(fs) > maxDefinitions {
			continue
		}
		// Of two functions of one name, the one in the caller's package.
		if local := slices.DeleteFunc(slices.Clone(fs), func(g *funcInfo) bool { return g.file.dir != f.file.dir }); len(local) > 0 {
			fs = local
		}
		for _, g := range fs {
			if g != f && !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// callPath finds a chain of calls, by name, from one function to another inside the module:
// what an agent follows reading from a failing test to the code it exercises.
func (idx *srcIndex) callPath(from, to *funcInfo) []*funcInfo {
	prev := map[*funcInfo]*funcInfo{from: nil}
	queue := []*funcInfo{from}
	for len(queue) > 0 && len(prev) < 5000 {
		f := queue[0]
		queue = queue[1:]
		if f == to {
			var chain []*funcInfo
			for ; f != nil; f = prev[f] {
				chain = append(chain, f)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, g := range idx.callees(f) {
			if _, ok := prev[g]; !ok {
				prev[g] = f
				queue = append(queue, g)
			}
		}
	}
	return nil
}

// testDistance is, for each function, the fewest calls from a test of package dir to it.
func (idx *srcIndex) testDistance(dir string, maxDepth int) map[*funcInfo]int {
	dist := map[*funcInfo]int{}
	var frontier []*funcInfo
	for _, sf := range idx.pkgs[dir].testFiles {
		for _, f := range sf.funcs {
			if f.isTest() {
				frontier = append(frontier, f)
			}
		}
	}
	for d := 1; d <= maxDepth && len(frontier) > 0; d++ {
		var next []*funcInfo
		for _, f := range frontier {
			for _, g := range idx.callees(f) {
				if _, ok := dist[g]; !ok && !g.file.test {
					dist[g] = d
					next = append(next, g)
				}
			}
		}
		frontier = next
	}
	return dist
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
