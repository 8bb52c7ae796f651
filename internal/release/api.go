package release

import (
	"errors"
	"fmt"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// API is a module's exported API: every exported declaration of its importable packages (not
// internal, not main; test files left out), one per line, sorted, in the form Go records its
// own API (go/api/*.txt):
//
//	pkg github.com/adkctx/adkctx/hooks, func New(adkctx.Config) (*Hooks, error)
//	pkg github.com/adkctx/adkctx/hooks, method (*Hooks) Close(context.Context) error
//	pkg github.com/adkctx/adkctx, type Config struct, Logger *zap.Logger
//
// Types are qualified by their package's name; parameters are unnamed.
type API struct {
	Module Module
	// Lines are the declarations.
	Lines []string
	// Names counts the exported identifiers per package: each exported top-level name and each
	// exported method declared on an exported type (fields and interface methods not counted).
	Names map[string]int
	// Idents are the exported identifiers Names counts, each as "path.Name" or
	// "path.Type.Method".
	Idents []string
	// Unnameable are the declarations that mention a type users cannot name: an unexported type,
	// or a type of an internal package that no public alias re-exports. A user can hold such a
	// value but not declare a variable, a parameter or a field of its type.
	Unnameable []string
}

// Total is the number of exported identifiers across the module's packages.
func (a API) Total() int {
	n := 0
	for _, c := range a.Names {
		n += c
	}
	return n
}

// File is where the module's recorded API lives, relative to the repository root:
// api/adkctx.txt for the core, api/hooks.txt, api/cmd-adkctx.txt.
func (m Module) APIFile() string {
	name := path.Base(CorePath)
	if m.Dir != "." {
		name = strings.ReplaceAll(m.Dir, "/", "-")
	}
	return path.Join("api", name+".txt")
}

// API loads the exported API of module m from the working tree.
func (r *Repo) API(m Module) (API, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes,
		Dir:  filepath.Join(r.Root, filepath.FromSlash(m.Dir)),
		Env:  append(os.Environ(), "GOWORK=off"),
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return API{}, err
	}
	api := API{Module: m, Names: map[string]int{}}
	public := publicNames(pkgs)
	var errs []error
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, fmt.Errorf("%s: %s", p.PkgPath, e))
		}
		if p.Name == "main" || isInternal(p.PkgPath) || p.Types == nil {
			continue
		}
		lines, names, unnameable := packageAPI(p.Types, public)
		api.Lines = append(api.Lines, lines...)
		api.Names[p.PkgPath] = names
		api.Unnameable = append(api.Unnameable, unnameable...)
		api.Idents = append(api.Idents, idents(p.Types)...)
	}
	if len(errs) > 0 {
		return API{}, errors.Join(errs...)
	}
	slices.Sort(api.Lines)
	slices.Sort(api.Unnameable)
	return api, nil
}

// isInternal reports whether importPath is an internal package, importable by its module only.
func isInternal(importPath string) bool {
	return slices.Contains(strings.Split(importPath, "/"), "internal")
}

// publicNames maps each type of an internal package that a public package re-exports by an
// alias to that alias, across pkgs and every package they import: the API names the type by its
// public name, the only one users can write.
func publicNames(pkgs []*packages.Package) map[*types.TypeName]*types.TypeName {
	public := map[*types.TypeName]*types.TypeName{}
	seen := map[*types.Package]bool{}
	var walk func(p *types.Package)
	walk = func(p *types.Package) {
		if p == nil || seen[p] {
			return
		}
		seen[p] = true
		if !isInternal(p.Path()) {
			for _, name := range p.Scope().Names() {
				o, ok := p.Scope().Lookup(name).(*types.TypeName)
				if !ok || !o.Exported() || !o.IsAlias() {
					continue
				}
				if n, ok := types.Unalias(o.Type()).(*types.Named); ok && n.Obj().Pkg() != nil && isInternal(n.Obj().Pkg().Path()) {
					public[n.Obj()] = o
				}
			}
		}
		for _, q := range p.Imports() {
			walk(q)
		}
	}
	for _, p := range pkgs {
		walk(p.Types)
	}
	return public
}

// packageAPI returns the declarations of pkg's exported API, its count of exported identifiers
// and the declarations among them that mention a type users cannot name. public maps internal
// types to the aliases that re-export them.
func packageAPI(pkg *types.Package, public map[*types.TypeName]*types.TypeName) (lines []string, names int, unnameable []string) {
	w := &typeWriter{pkg: pkg, public: public}
	emit := func(format string, args ...any) {
		// The arguments are written before emit runs: w.hidden holds what this line mentions.
		line := "pkg " + pkg.Path() + ", " + fmt.Sprintf(format, args...)
		lines = append(lines, line)
		if len(w.hidden) > 0 {
			unnameable = append(unnameable, line+" (names "+strings.Join(w.hidden, ", ")+")")
			w.hidden = nil
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		names++
		switch o := obj.(type) {
		case *types.Const:
			typ := " " + w.typ(o.Type())
			if b, ok := o.Type().(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
				typ = ""
			}
			emit("const %s%s = %s", name, typ, o.Val().ExactString())
		case *types.Var:
			emit("var %s %s", name, w.typ(o.Type()))
		case *types.Func:
			emit("func %s%s", name, w.signature(o.Type().(*types.Signature)))
		case *types.TypeName:
			names += w.typeDecl(o, emit)
		}
	}
	return lines, names, unnameable
}

// typeDecl emits a type's declaration, its fields or interface methods and its methods, and
// returns the number of its exported methods.
func (w *typeWriter) typeDecl(o *types.TypeName, emit func(string, ...any)) int {
	name := o.Name()
	named, ok := o.Type().(*types.Named)
	if o.IsAlias() {
		// An alias of an internal type declares it for users: its fields and methods are this
		// package's API (users reach them by no other name).
		target := types.Unalias(o.Type())
		named, ok = target.(*types.Named)
		if !ok || named.Obj().Pkg() == nil || !isInternal(named.Obj().Pkg().Path()) {
			emit("type %s = %s", name, w.typ(target))
			return 0
		}
	}
	if !ok {
		return 0
	}
	decl := name + w.typeParams(named.TypeParams())
	switch u := named.Underlying().(type) {
	case *types.Struct:
		emit("type %s struct", decl)
		for i := range u.NumFields() {
			switch f := u.Field(i); {
			case f.Embedded():
				emit("type %s struct, embedded %s", decl, w.embedded(f.Type()))
			case f.Exported():
				emit("type %s struct, %s %s", decl, f.Name(), w.typ(f.Type()))
			}
		}
	case *types.Interface:
		var methods []string
		for i := range u.NumExplicitMethods() {
			if m := u.ExplicitMethod(i); m.Exported() {
				methods = append(methods, m.Name())
				emit("type %s interface, %s%s", decl, m.Name(), w.signature(m.Type().(*types.Signature)))
			}
		}
		for i := range u.NumEmbeddeds() {
			emit("type %s interface, embedded %s", decl, w.embedded(u.EmbeddedType(i)))
		}
		if len(methods) == 0 {
			emit("type %s interface {}", decl)
		} else {
			emit("type %s interface { %s }", decl, strings.Join(methods, ", "))
		}
	default:
		emit("type %s %s", decl, w.typ(u))
	}
	if _, ok := named.Underlying().(*types.Interface); ok {
		return 0
	}
	// The methods of T and *T: declared on T, or promoted from an embedded type users cannot
	// name (the others are the embedded type's API).
	recv := name
	if tp := named.TypeParams(); tp.Len() > 0 {
		var ps []string
		for i := range tp.Len() {
			ps = append(ps, tp.At(i).Obj().Name())
		}
		recv += "[" + strings.Join(ps, ", ") + "]"
	}
	values := types.NewMethodSet(named)
	pointers := types.NewMethodSet(types.NewPointer(named))
	declared := 0
	for i := range pointers.Len() {
		sel := pointers.At(i)
		m := sel.Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		promoted := len(sel.Index()) > 1
		if promoted && receiverExported(m) {
			continue
		}
		if !promoted {
			declared++
		}
		r := "*" + recv
		if values.Lookup(m.Pkg(), m.Name()) != nil {
			r = recv
		}
		emit("method (%s) %s%s", r, m.Name(), w.signature(m.Type().(*types.Signature)))
	}
	return declared
}

// receiverExported reports whether a method's receiver type is exported.
func receiverExported(m *types.Func) bool {
	t := m.Type().(*types.Signature).Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Exported()
}

// typeWriter writes types the way Go's API files do: qualified by package name (unqualified in
// their own package), function parameters unnamed.
type typeWriter struct {
	pkg *types.Package
	// public maps internal types to the aliases that re-export them (written by those names).
	public map[*types.TypeName]*types.TypeName
	// hidden are the types users cannot name written since the last declaration was emitted.
	hidden []string
}

func (w *typeWriter) qualifier(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	return p.Name()
}

func (w *typeWriter) typ(t types.Type) string {
	switch t := t.(type) {
	case *types.Pointer:
		return "*" + w.typ(t.Elem())
	case *types.Slice:
		return "[]" + w.typ(t.Elem())
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), w.typ(t.Elem()))
	case *types.Map:
		return "map[" + w.typ(t.Key()) + "]" + w.typ(t.Elem())
	case *types.Chan:
		prefix := map[types.ChanDir]string{types.SendRecv: "chan ", types.SendOnly: "chan<- ", types.RecvOnly: "<-chan "}[t.Dir()]
		return prefix + w.typ(t.Elem())
	case *types.Signature:
		return "func" + w.signature(t)
	case *types.Struct:
		var fields []string
		for i := range t.NumFields() {
			f := t.Field(i)
			if f.Embedded() {
				fields = append(fields, w.typ(f.Type()))
			} else {
				fields = append(fields, f.Name()+" "+w.typ(f.Type()))
			}
		}
		if len(fields) == 0 {
			return "struct{}"
		}
		return "struct{ " + strings.Join(fields, "; ") + " }"
	case *types.Interface:
		if t.Empty() {
			if t.IsImplicit() {
				return "any"
			}
			return "interface{}"
		}
		var elems []string
		for i := range t.NumEmbeddeds() {
			elems = append(elems, w.typ(t.EmbeddedType(i)))
		}
		for i := range t.NumExplicitMethods() {
			m := t.ExplicitMethod(i)
			elems = append(elems, m.Name()+w.signature(m.Type().(*types.Signature)))
		}
		if t.IsImplicit() && len(elems) == 1 {
			return elems[0]
		}
		return "interface{ " + strings.Join(elems, "; ") + " }"
	case *types.Union:
		var terms []string
		for i := range t.Len() {
			term := t.Term(i)
			s := w.typ(term.Type())
			if term.Tilde() {
				s = "~" + s
			}
			terms = append(terms, s)
		}
		return strings.Join(terms, " | ")
	case *types.Named:
		s := types.TypeString(t.Origin(), w.qualifier)
		if i := strings.IndexByte(s, '['); i >= 0 {
			s = s[:i]
		}
		if a, ok := w.public[t.Origin().Obj()]; ok {
			s = a.Name()
			if q := w.qualifier(a.Pkg()); q != "" {
				s = q + "." + s
			}
		} else if o := t.Origin().Obj(); o.Pkg() != nil && (!o.Exported() || isInternal(o.Pkg().Path())) {
			w.hidden = append(w.hidden, s)
		}
		if args := t.TypeArgs(); args.Len() > 0 {
			var as []string
			for i := range args.Len() {
				as = append(as, w.typ(args.At(i)))
			}
			s += "[" + strings.Join(as, ", ") + "]"
		}
		return s
	case *types.Alias:
		s := types.TypeString(t, w.qualifier)
		if o := t.Obj(); o.Pkg() != nil && (!o.Exported() || isInternal(o.Pkg().Path())) {
			// Users cannot write the alias: they write what it stands for.
			n := len(w.hidden)
			w.typ(types.Unalias(t))
			if len(w.hidden) > n {
				w.hidden = append(w.hidden[:n], s)
			}
		} else if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				w.typ(args.At(i))
			}
		}
		return s
	default: // basic types, type parameters
		return types.TypeString(t, w.qualifier)
	}
}

// embedded writes an embedded type. Users need not name one: they use what it promotes. So
// of one they cannot name, what it promotes is checked instead: its exported fields (through
// the embedded types they cannot name either) and an interface's methods; a struct's methods
// are declared as the embedding type's.
func (w *typeWriter) embedded(t types.Type) string { return w.embeddedIn(t, map[types.Type]bool{}) }

// embeddedIn is embedded, for a type embedded in what another promotes (seen: those checked).
func (w *typeWriter) embeddedIn(t types.Type, seen map[types.Type]bool) string {
	n := len(w.hidden)
	s := w.typ(t)
	if len(w.hidden) > n {
		w.hidden = w.hidden[:n]
		w.promoted(t, seen)
	}
	return s
}

// promoted records the types users cannot name among those of what t promotes.
func (w *typeWriter) promoted(t types.Type, seen map[types.Type]bool) {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if seen[t] {
		return
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Struct:
		for i := range u.NumFields() {
			switch f := u.Field(i); {
			case f.Embedded():
				w.embeddedIn(f.Type(), seen)
			case f.Exported():
				w.typ(f.Type())
			}
		}
	case *types.Interface:
		for i := range u.NumMethods() {
			if m := u.Method(i); m.Exported() {
				w.signature(m.Type().(*types.Signature))
			}
		}
	}
}

// signature is a function's type parameters, parameters and results, unnamed:
// "(context.Context, ...string) (int, error)".
func (w *typeWriter) signature(sig *types.Signature) string {
	var b strings.Builder
	b.WriteString(w.typeParams(sig.TypeParams()))
	b.WriteString("(")
	params := sig.Params()
	for i := range params.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			b.WriteString("...")
			t = t.(*types.Slice).Elem()
		}
		b.WriteString(w.typ(t))
	}
	b.WriteString(")")
	switch res := sig.Results(); res.Len() {
	case 0:
	case 1:
		b.WriteString(" " + w.typ(res.At(0).Type()))
	default:
		var rs []string
		for i := range res.Len() {
			rs = append(rs, w.typ(res.At(i).Type()))
		}
		b.WriteString(" (" + strings.Join(rs, ", ") + ")")
	}
	return b.String()
}

// typeParams is "[K comparable, V any]", or "" for none.
func (w *typeWriter) typeParams(tp *types.TypeParamList) string {
	if tp.Len() == 0 {
		return ""
	}
	var ps []string
	for i := range tp.Len() {
		p := tp.At(i)
		ps = append(ps, p.Obj().Name()+" "+w.typ(p.Constraint()))
	}
	return "[" + strings.Join(ps, ", ") + "]"
}
