package release

import (
	"go/ast"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/tools/go/packages"
)

// idents lists the identifiers packageAPI counts in pkg, each as "path.Name" or
// "path.Type.Method" (a method of T or *T declared on T: a promoted one is not counted).
func idents(pkg *types.Package) []string {
	var out []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		out = append(out, pkg.Path()+"."+name)
		tn, ok := obj.(*types.TypeName)
		if !ok {
			continue
		}
		named, ok := types.Unalias(tn.Type()).(*types.Named)
		if !ok || (tn.IsAlias() && !isInternal(named.Obj().Pkg().Path())) {
			continue
		}
		if _, ok := named.Underlying().(*types.Interface); ok {
			continue
		}
		ms := types.NewMethodSet(types.NewPointer(named))
		for i := range ms.Len() {
			sel := ms.At(i)
			if m := sel.Obj(); m.Exported() && len(sel.Index()) == 1 {
				out = append(out, pkg.Path()+"."+name+"."+m.Name())
			}
		}
	}
	return out
}

// Uses returns the identifiers (as idents names them) that the files of every module's tests
// holding an Example function use. A type counts as used when its name is, a field or method of it, or a
// constant of it.
func (r *Repo) Uses() (map[string]bool, error) {
	used := map[string]bool{}
	for _, m := range Modules() {
		if err := usesIn(filepath.Join(r.Root, filepath.FromSlash(m.Dir)), used); err != nil {
			return nil, err
		}
	}
	return used, nil
}

// usesIn adds to used what the example files of the module in dir use.
func usesIn(dir string, used map[string]bool) error {
	cfg := &packages.Config{
		Mode:  packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedImports | packages.NeedDeps,
		Dir:   dir,
		Env:   append(os.Environ(), "GOWORK=off"),
		Tests: true,
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return err
	}
	public := publicNames(pkgs)
	for _, p := range pkgs {
		if p.TypesInfo == nil {
			continue
		}
		for _, f := range p.Syntax {
			if hasExample(f) {
				markUses(f, p.TypesInfo, public, used)
			}
		}
	}
	return nil
}

// hasExample reports whether f declares an Example function. Such a file is the example's: the
// types and helpers beside the Example functions (a model of one's own, a store) show users how
// to write theirs.
func hasExample(f *ast.File) bool {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Example") {
			return true
		}
	}
	return false
}

// markUses adds to used every package-level object and method body refers to, and the type of
// every field or method it selects.
func markUses(body ast.Node, info *types.Info, public map[*types.TypeName]*types.TypeName, used map[string]bool) {
	typeKey := func(t types.Type) string {
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if a, ok := t.(*types.Alias); ok && a.Obj().Pkg() != nil {
			return a.Obj().Pkg().Path() + "." + a.Obj().Name()
		}
		n, ok := types.Unalias(t).(*types.Named)
		if !ok || n.Obj().Pkg() == nil {
			return ""
		}
		o := n.Origin().Obj()
		if a, ok := public[o]; ok {
			o = a
		}
		return o.Pkg().Path() + "." + o.Name()
	}
	ast.Inspect(body, func(node ast.Node) bool {
		switch n := node.(type) {
		case *ast.SelectorExpr:
			if sel := info.Selections[n]; sel != nil {
				if k := typeKey(sel.Recv()); k != "" {
					used[k] = true
					if sel.Kind() != types.FieldVal {
						used[k+"."+n.Sel.Name] = true
					}
				}
			}
		case *ast.Ident:
			if v, ok := info.Defs[n].(*types.Var); ok {
				// A variable holding a value of the type (delta := NewLedgerDelta(...)).
				if k := typeKey(v.Type()); k != "" {
					used[k] = true
				}
				return true
			}
			obj := info.Uses[n]
			if obj == nil || obj.Pkg() == nil || obj.Parent() != obj.Pkg().Scope() {
				return true
			}
			switch o := obj.(type) {
			case *types.TypeName:
				if k := typeKey(o.Type()); k != "" {
					used[k] = true
				}
			case *types.Const:
				// A constant of a named type (an enumeration's value) uses the type.
				if k := typeKey(o.Type()); k != "" {
					used[k] = true
				}
			}
			used[obj.Pkg().Path()+"."+obj.Name()] = true
		}
		return true
	})
}

// ReadmeUses reports, for each identifier in ids, whether the repository's README names it, in
// its Go code or its text: "pkg.Name" for a package-level one (pkg its import path's last
// element), ".Method(" for a method of a package it names.
func (r *Repo) ReadmeUses(ids []string) (map[string]bool, error) {
	data, err := os.ReadFile(filepath.Join(r.Root, "README.md"))
	if err != nil {
		return nil, err
	}
	return namedIn(string(data), ids), nil
}

// namedIn reports, for each identifier in ids, whether text names it (see ReadmeUses).
func namedIn(text string, ids []string) map[string]bool {
	used := map[string]bool{}
	for _, id := range ids {
		pkgPath, rest := splitIdent(id)
		if _, method, ok := strings.Cut(rest, "."); ok {
			// A method by its name, of a package the README names.
			used[id] = strings.Contains(text, "."+method+"(") &&
				regexp.MustCompile(`\b`+regexp.QuoteMeta(path.Base(pkgPath))+`\.`).MatchString(text)
			continue
		}
		used[id] = regexp.MustCompile(`\b` + regexp.QuoteMeta(path.Base(pkgPath)+"."+rest) + `\b`).MatchString(text)
	}
	return used
}

// splitIdent splits "github.com/a/b.Type.Method" into the package path and "Type.Method".
func splitIdent(id string) (pkgPath, rest string) {
	slash := strings.LastIndexByte(id, '/')
	dot := strings.IndexByte(id[slash+1:], '.')
	return id[:slash+1+dot], id[slash+2+dot:]
}
