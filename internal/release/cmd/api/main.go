// Command api records and checks the exported API of adkctx's released modules, the way Go
// records its own (go/api/*.txt): one declaration per line in api/<module>.txt. Run it from
// anywhere in the repository:
//
//	go -C internal/release run ./cmd/api -check   # fail on any difference with api/*.txt (make test)
//	go -C internal/release run ./cmd/api -w       # rewrite api/*.txt (make api)
//	go -C internal/release run ./cmd/api -count   # exported identifiers per package and module
//
// A change of the API is accepted by rewriting the files and committing them with the change,
// where a reviewer reads the added and removed lines.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/adkctx/adkctx/internal/release"
)

func main() {
	write := flag.Bool("w", false, "rewrite the api/*.txt files")
	check := flag.Bool("check", false, "compare the API with the api/*.txt files; exit 1 on a difference")
	count := flag.Bool("count", false, "print the exported identifiers per package and module")
	long := flag.Int("long", 0, "with -count, also list the functions longer than this many lines (0: none)")
	users := flag.Bool("users", false, "with -count, also list the identifiers no Example function and nothing in the README names")
	flag.Parse()
	if *write == *check && !*count || *write && *check {
		fmt.Fprintln(os.Stderr, "usage: api -check | -w | -count [-long N]")
		os.Exit(2)
	}
	repo, err := release.Open(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(2)
	}
	var apis []release.API
	for _, m := range release.Modules() {
		if !m.Released {
			continue
		}
		a, err := repo.API(m)
		if err != nil {
			fmt.Fprintf(os.Stderr, "api: %s: %v\n", m.Path, err)
			os.Exit(2)
		}
		apis = append(apis, a)
	}
	switch {
	case *count:
		err = printCount(os.Stdout, repo, apis, *long)
		if err == nil && *users {
			err = printUnused(os.Stdout, repo, apis)
		}
	case *write:
		err = writeFiles(repo, apis)
	default:
		var changed bool
		if changed, err = checkFiles(os.Stderr, repo, apis); err == nil && changed {
			os.Exit(1)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(2)
	}
}

// content is a module's API file: its lines, or nothing for a module with no importable package.
func content(a release.API) []byte {
	if len(a.Lines) == 0 {
		return nil
	}
	return []byte(strings.Join(a.Lines, "\n") + "\n")
}

func writeFiles(repo *release.Repo, apis []release.API) error {
	for _, a := range apis {
		name := filepath.Join(repo.Root, filepath.FromSlash(a.Module.APIFile()))
		data := content(a)
		if data == nil {
			if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// checkFiles reports every line added to or removed from a module's API since its file was
// written, every declaration that mentions a type users cannot name, and whether there was any.
func checkFiles(w io.Writer, repo *release.Repo, apis []release.API) (changed bool, err error) {
	for _, a := range apis {
		file := a.Module.APIFile()
		recorded, err := os.ReadFile(filepath.Join(repo.Root, filepath.FromSlash(file)))
		if err != nil && !os.IsNotExist(err) {
			return false, err
		}
		have := content(a)
		if bytes.Equal(recorded, have) {
			continue
		}
		changed = true
		was := lines(recorded)
		now := lines(have)
		fmt.Fprintf(w, "%s: the API of %s differs from the recorded one:\n", file, a.Module.Path)
		for _, l := range now {
			if _, found := slices.BinarySearch(was, l); !found {
				fmt.Fprintf(w, "+%s\n", l)
			}
		}
		for _, l := range was {
			if _, found := slices.BinarySearch(now, l); !found {
				fmt.Fprintf(w, "-%s\n", l)
			}
		}
	}
	if changed {
		fmt.Fprintln(w, "If the change is intended, run `make api` and commit api/*.txt with it: the reviewer reads these lines there.")
	}
	// Every type a declaration mentions is one users can name: otherwise they can hold a value
	// but not declare a variable, a parameter or a field of its type.
	unnameable := false
	for _, a := range apis {
		for _, l := range a.Unnameable {
			if !unnameable {
				fmt.Fprintln(w, "These declarations mention a type users cannot name (unexported, or internal without a public alias):")
			}
			unnameable = true
			fmt.Fprintln(w, l)
		}
	}
	// The v2 glue is generated from the v1 glue: the same declarations, adk-go's types named
	// alike in both versions.
	byDir := map[string][]string{}
	for _, a := range apis {
		byDir[a.Module.Dir] = a.Lines
	}
	v1, v2 := byDir["hooks"], byDir["adk2"]
	var v2AsV1 []string
	for _, l := range v2 {
		v2AsV1 = append(v2AsV1, strings.Replace(l, "pkg "+release.CorePath+"/adk2/hooks", "pkg "+release.CorePath+"/hooks", 1))
	}
	slices.Sort(v2AsV1)
	changed = changed || unnameable
	if !slices.Equal(v1, v2AsV1) {
		changed = true
		fmt.Fprintln(w, "The API of the v2 glue (adk2/hooks/...) is not the v1 glue's: run `go run ./internal/cmd/glue2`, or make the versions' version.go declare the same names.")
	}
	return changed, nil
}

func lines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// printCount prints the exported identifiers per package and per module, and the total a user
// faces: the v2 glue is generated from the v1 glue, the same names, counted once.
func printCount(w io.Writer, repo *release.Repo, apis []release.API, long int) error {
	total := 0
	for _, a := range apis {
		pkgs := make([]string, 0, len(a.Names))
		for p := range a.Names {
			pkgs = append(pkgs, p)
		}
		slices.Sort(pkgs)
		for _, p := range pkgs {
			fmt.Fprintf(w, "  %-50s %4d\n", p, a.Names[p])
		}
		note := ""
		if a.Module.Dir == "adk2" {
			note = "  (generated from the v1 glue: not in the total)"
		} else {
			total += a.Total()
		}
		fmt.Fprintf(w, "%-52s %4d  %d API lines%s\n", a.Module.Path, a.Total(), len(a.Lines), note)
	}
	fmt.Fprintf(w, "%-52s %4d\n", "total", total)
	if long > 0 {
		return printLong(w, repo.Root, long)
	}
	return nil
}

// printUnused lists the identifiers of the released modules (the v2 glue left out: it has the
// v1 glue's names) that no Example function of any module's tests uses and the README does not
// name.
func printUnused(w io.Writer, repo *release.Repo, apis []release.API) error {
	used, err := repo.Uses()
	if err != nil {
		return err
	}
	var ids []string
	for _, a := range apis {
		if a.Module.Dir != "adk2" {
			ids = append(ids, a.Idents...)
		}
	}
	readme, err := repo.ReadmeUses(ids)
	if err != nil {
		return err
	}
	var unused []string
	for _, id := range ids {
		v2 := strings.Replace(id, release.CorePath+"/hooks", release.CorePath+"/adk2/hooks", 1)
		if !used[id] && !used[v2] && !readme[id] && !implicit(id, used) {
			unused = append(unused, strings.TrimPrefix(id, release.CorePath+"/"))
		}
	}
	slices.Sort(unused)
	fmt.Fprintf(w, "\nwithout a use in an Example or a mention in the README: %d of %d\n", len(unused), len(ids))
	for _, id := range unused {
		fmt.Fprintf(w, "  %s\n", id)
	}
	return nil
}

// implicit reports whether id is a method the standard library calls through an interface (an
// error's Error and Unwrap, encoding/json's, fmt's String) of a type an Example uses: whoever
// prints the error or encodes the value calls it.
func implicit(id string, used map[string]bool) bool {
	i := strings.LastIndexByte(id, '.')
	switch id[i+1:] {
	case "Error", "Unwrap", "MarshalJSON", "UnmarshalJSON", "String":
		return used[id[:i]]
	}
	return false
}

// printLong lists the functions of non-test code, in every module, longer than max lines.
func printLong(w io.Writer, root string, max int) error {
	fmt.Fprintf(w, "\nfunctions over %d lines:\n", max)
	return filepath.WalkDir(root, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && name != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, name)
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > max {
					fmt.Fprintf(w, "%5d  %s:%s\n", n, filepath.ToSlash(rel), fd.Name.Name)
				}
			}
		}
		return nil
	})
}
