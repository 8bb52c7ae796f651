package release

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// CorePath is the module path of the core, the repository's root module.
const CorePath = "github.com/adkctx/adkctx"

// Module is one Go module of the repository.
type Module struct {
	// Dir is the module's directory, relative to the repository root and slash-separated ("."
	// for the core).
	Dir string
	// Path is the module path.
	Path string
	// Released modules are published at every version; the others are built from a clone only,
	// and keep their replace directives.
	Released bool
}

// Tag is the git tag of the module at version v: v for the core, "hooks/v0.1.0" for a module in
// the hooks directory (the go command finds a module's version in a tag prefixed with its
// directory).
func (m Module) Tag(v string) string {
	if m.Dir == "." {
		return v
	}
	return m.Dir + "/" + v
}

// Modules are the repository's modules, the released ones in the order they are released: the
// core first, then the glues that require it, then the command that requires the core and the
// v1 glue. The example is the program behind `make run`: it is not a library, and it is tried
// from a clone; the release tooling is a module of its own so that its dependencies stay out of
// the core's.
func Modules() []Module {
	return []Module{
		{Dir: ".", Path: CorePath, Released: true},
		{Dir: "hooks", Path: CorePath + "/hooks", Released: true},
		{Dir: "adk2", Path: CorePath + "/adk2", Released: true},
		{Dir: "cmd/adkctx", Path: CorePath + "/cmd/adkctx", Released: true},
		{Dir: "example", Path: CorePath + "/example"},
		{Dir: "internal/release", Path: CorePath + "/internal/release"},
	}
}

// Repo is a working tree of the repository.
type Repo struct {
	// Root is the repository's root directory.
	Root string
	// Version is the version the modules are released at next, from the VERSION file.
	Version string
}

// VersionFile is the file, at the repository root, holding the version of the next release.
const VersionFile = "VERSION"

// Open finds the repository that holds dir (the nearest directory at or above dir whose go.mod
// declares the core) and reads its version.
func Open(dir string) (*Repo, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && modfile.ModulePath(data) == CorePath {
			return openRoot(d)
		}
		if filepath.Dir(d) == d {
			return nil, fmt.Errorf("no directory at or above %s holds the go.mod of %s", dir, CorePath)
		}
	}
}

func openRoot(root string) (*Repo, error) {
	data, err := os.ReadFile(filepath.Join(root, VersionFile))
	if err != nil {
		return nil, err
	}
	v := strings.TrimSpace(string(data))
	if err := checkVersion(v); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(root, VersionFile), err)
	}
	return &Repo{Root: root, Version: v}, nil
}

// checkVersion accepts a canonical semantic version of major version 0 or 1: the modules'
// paths carry no major version suffix.
func checkVersion(v string) error {
	if !semver.IsValid(v) || semver.Canonical(v) != v || semver.Build(v) != "" {
		return fmt.Errorf("version %q is not a canonical semantic version like v0.1.0", v)
	}
	if m := semver.Major(v); m != "v0" && m != "v1" {
		return fmt.Errorf("version %q: a major version above v1 needs a /%s suffix on every module path", v, m)
	}
	return nil
}

// GoModError is a go.mod file of the repository that does not fit the release rules.
type GoModError struct {
	File    string // the go.mod file, relative to the repository root
	Problem string
}

func (e *GoModError) Error() string { return e.File + ": " + e.Problem }

// goMod reads and parses m's go.mod.
func (r *Repo) goMod(m Module) (*modfile.File, error) {
	name := filepath.Join(r.Root, filepath.FromSlash(m.Dir), "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(name, data, nil)
}

// Check verifies every module's go.mod: it declares the module's path, requires each sibling
// at the repository's version, replaces a sibling only by its directory, and replaces or
// excludes nothing else in a released module. It returns every problem found, as *GoModError
// values.
func (r *Repo) Check() error {
	var errs []error
	for _, m := range Modules() {
		f, err := r.goMod(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, r.checkGoMod(m, f)...)
	}
	return errors.Join(errs...)
}

func (r *Repo) checkGoMod(m Module, f *modfile.File) []error {
	file := path.Join(m.Dir, "go.mod")
	var errs []error
	problem := func(format string, args ...any) {
		errs = append(errs, &GoModError{File: file, Problem: fmt.Sprintf(format, args...)})
	}
	if f.Module == nil || f.Module.Mod.Path != m.Path {
		problem("want module %s", m.Path)
	}
	dirs := map[string]string{}
	for _, s := range Modules() {
		dirs[s.Path] = s.Dir
	}
	for _, req := range f.Require {
		if _, ok := dirs[req.Mod.Path]; ok && req.Mod.Version != r.Version {
			problem("requires %s %s, but %s says %s (go -C internal/release run ./cmd/release set-version %s sets both)",
				req.Mod.Path, req.Mod.Version, VersionFile, r.Version, r.Version)
		}
	}
	for _, rep := range f.Replace {
		dir, sibling := dirs[rep.Old.Path]
		switch {
		case !sibling:
			if m.Released {
				problem("replaces %s: a released module replaces only its siblings, and only inside the repository", rep.Old.Path)
			}
		case rep.Old.Version != "" || !modfile.IsDirectoryPath(rep.New.Path):
			problem("replaces %s by %s: a sibling is replaced, at every version, by its directory", rep.Old.Path, rep.New)
		case path.Clean(path.Join(m.Dir, filepath.ToSlash(rep.New.Path))) != dir:
			problem("replaces %s by %s, which is not its directory %s", rep.Old.Path, rep.New.Path, dir)
		}
	}
	if m.Released && len(f.Exclude) > 0 {
		problem("has exclude directives: a released module must read the same as a main module and as a dependency")
	}
	return errs
}

// siblingPaths are the module paths of the repository.
func siblingPaths() map[string]bool {
	paths := map[string]bool{}
	for _, m := range Modules() {
		paths[m.Path] = true
	}
	return paths
}

// releasedGoMod returns m's go.mod as released: the repository's, without the replace
// directives of its siblings.
func (r *Repo) releasedGoMod(m Module) ([]byte, *modfile.File, error) {
	f, err := r.goMod(m)
	if err != nil {
		return nil, nil, err
	}
	if errs := r.checkGoMod(m, f); len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	siblings := siblingPaths()
	for _, rep := range f.Replace {
		if siblings[rep.Old.Path] {
			if err := f.DropReplace(rep.Old.Path, rep.Old.Version); err != nil {
				return nil, nil, err
			}
		}
	}
	f.Cleanup()
	// A comment before a dropped directive goes with it.
	return modfile.Format(f.Syntax), f, nil
}

// SetVersion makes v the version of the next release: it writes v to the VERSION file and to
// every go.mod requirement of a sibling.
func (r *Repo) SetVersion(v string) error {
	if err := checkVersion(v); err != nil {
		return err
	}
	siblings := siblingPaths()
	for _, m := range Modules() {
		f, err := r.goMod(m)
		if err != nil {
			return err
		}
		changed := false
		for _, req := range f.Require {
			if siblings[req.Mod.Path] && req.Mod.Version != v {
				if err := f.AddRequire(req.Mod.Path, v); err != nil {
					return err
				}
				changed = true
			}
		}
		if !changed {
			continue
		}
		f.Cleanup()
		if err := os.WriteFile(filepath.Join(r.Root, filepath.FromSlash(m.Dir), "go.mod"), modfile.Format(f.Syntax), 0o644); err != nil {
			return err
		}
	}
	r.Version = v
	return os.WriteFile(filepath.Join(r.Root, VersionFile), []byte(v+"\n"), 0o644)
}
