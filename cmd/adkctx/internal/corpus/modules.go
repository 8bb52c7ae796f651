package corpus

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// DefaultModules are the modules the shell sessions work on when ShellOptions.Modules is empty:
// modules without requirements (so that a copy builds and tests offline) that this repository's
// own builds put in the module cache, with tests that catch a changed operator and print the
// same thing on every run.
func DefaultModules() []string {
	return []string{
		"github.com/google/go-cmp",
		"github.com/google/uuid",
		"github.com/go-logr/logr",
	}
}

// cachedModule is one module version extracted in the module cache.
type cachedModule struct {
	Path    string // module path
	Version string
	Dir     string
}

// findCachedModule returns the highest version of the module at path extracted in modCache.
func findCachedModule(modCache, path string) (cachedModule, bool) {
	esc := escapeModulePath(path)
	parent := filepath.Join(modCache, filepath.FromSlash(esc))
	base := filepath.Base(parent)
	entries, err := os.ReadDir(filepath.Dir(parent))
	if err != nil {
		return cachedModule{}, false
	}
	var best cachedModule
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, base+"@") {
			continue
		}
		v := strings.TrimPrefix(name, base+"@")
		if !strings.HasPrefix(v, "v") || strings.ContainsRune(v, '!') {
			continue
		}
		dir := filepath.Join(filepath.Dir(parent), name)
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
			continue
		}
		if best.Version == "" || compareSemver(v, best.Version) > 0 {
			best = cachedModule{Path: path, Version: v, Dir: dir}
		}
	}
	return best, best.Version != ""
}

// hasRequirements reports whether a go.mod requires other modules: a copy of such a module
// may not build offline.
func hasRequirements(gomod string) bool {
	for _, line := range strings.Split(gomod, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "require" {
			return true
		}
	}
	return false
}

// escapeModulePath is the module cache's spelling of a path: "!" and the lower-case letter for
// each upper-case letter.
func escapeModulePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// compareSemver orders semantic versions "vMAJOR.MINOR.PATCH[-pre][+build]"; a pre-release
// sorts before its release.
func compareSemver(a, b string) int {
	na, pa := splitSemver(a)
	nb, pb := splitSemver(b)
	for i := range 3 {
		if na[i] != nb[i] {
			if na[i] < nb[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case pa == pb:
		return 0
	case pa == "":
		return 1
	case pb == "":
		return -1
	case pa < pb:
		return -1
	}
	return 1
}

func splitSemver(v string) ([3]int, string) {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i]
	}
	pre := ""
	if i := strings.IndexByte(v, '-'); i >= 0 {
		v, pre = v[:i], v[i+1:]
	}
	var n [3]int
	for i, part := range strings.SplitN(v, ".", 3) {
		n[i], _ = strconv.Atoi(part)
	}
	return n, pre
}
