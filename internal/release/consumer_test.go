package release_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/internal/release"
)

// The modules as a user installs them. The working tree is built into a module proxy at the
// candidate version (VERSION); then, in empty modules outside the repository, with only that
// proxy and the public one, a user's commands run: `go get` of the v1 glue and, separately, of
// the v2 glue, each building and running the quickstart program (the README's "Add it to your
// agent" is an excerpt of it); `go run` of the replay command at the version. Each released
// module, unpacked, is tidy as released. No package a consumer builds imports the internal
// packages of another module.
//
// The consumers get a module cache of their own: a candidate must never reach the user's module
// cache, where it would be taken for the published version. It links to what the user's cache
// holds of other modules (linkModuleCache), so nothing is downloaded or unpacked twice, and
// whatever is missing comes from the public proxy, checked against the checksum database as
// usual. Builds use -trimpath, so that the build cache serves them from one run to the next
// whatever the module cache's directory.
func TestConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("the consumer test builds programs through a module proxy: it runs in make test, not with -short")
	}
	repo, err := release.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	proxy := t.TempDir()
	built, err := repo.WriteProxy(proxy)
	if err != nil {
		t.Fatal(err)
	}
	env := consumerEnv(t, proxy)
	quickstart := filepath.Join(repo.Root, "example", "quickstart")
	v := repo.Version

	t.Run("v1", func(t *testing.T) {
		t.Parallel()
		dir := newConsumer(t, quickstart, nil)
		goCmd(t, dir, env, "get", release.CorePath+"/hooks@"+v)
		runQuickstart(t, dir, env)
		checkInternal(t, dir, env, ".")
	})
	t.Run("v2", func(t *testing.T) {
		t.Parallel()
		// The same program on adk-go v2: the import paths of adk-go and of the glue, and the one
		// name adk-go v2 changed that the program spells (a tool's context is agent.Context).
		dir := newConsumer(t, quickstart, []string{
			`"google.golang.org/adk/`, `"google.golang.org/adk/v2/`,
			`"` + release.CorePath + `/hooks`, `"` + release.CorePath + `/adk2/hooks`,
			`agent.ToolContext`, `agent.Context`,
		})
		goCmd(t, dir, env, "get", release.CorePath+"/adk2@"+v)
		runQuickstart(t, dir, env)
		checkInternal(t, dir, env, ".")
	})
	t.Run("replay", func(t *testing.T) {
		t.Parallel()
		// go run pkg@version runs outside any module, and refuses a module with replace
		// directives.
		out := goCmd(t, t.TempDir(), env, "run", release.CorePath+"/cmd/adkctx@"+v,
			"replay", "-quiet", filepath.Join(repo.Root, "cmd", "adkctx", "testdata", "service.json"))
		if !strings.Contains(out, "1 sessions, 28 steps") {
			t.Errorf("adkctx replay of testdata/service.json: no report of its 28 steps:\n%s", out)
		}
		// What that command builds, listed from a module that requires it.
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/consumer\n\ngo 1.25.0\n")
		goCmd(t, dir, env, "get", release.CorePath+"/cmd/adkctx@"+v)
		checkInternal(t, dir, env, release.CorePath+"/cmd/adkctx")
	})
	// Each released module but the core (which requires no sibling), unpacked from its zip as
	// the go command does and checked as a clone of its tag is: go.mod and go.sum tidy as they
	// are released (the siblings' checksums included), everything it lists resolved.
	for _, b := range built {
		if b.Module.Dir == "." {
			continue
		}
		t.Run("tidy "+b.Module.Dir, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			goCmd(t, dir, env, "mod", "download", "-json", b.Module.Path+"@"+v)
			src := filepath.Join(env.modcache, b.Module.Path+"@"+v)
			if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			goCmd(t, dir, env, "mod", "tidy", "-diff")
		})
	}
}

// consumer is the environment of the go command in a consumer module.
type consumer struct {
	vars     []string
	modcache string
}

// consumerEnv is the environment of a user's go command with the candidate's proxy first.
func consumerEnv(t *testing.T, proxy string) consumer {
	t.Helper()
	var goEnv struct{ GOPROXY, GOMODCACHE string }
	if err := json.Unmarshal([]byte(goCmd(t, ".", consumer{vars: os.Environ()}, "env", "-json", "GOPROXY", "GOMODCACHE")), &goEnv); err != nil {
		t.Fatal(err)
	}
	modcache := filepath.Join(t.TempDir(), "mod")
	if err := linkModuleCache(modcache, goEnv.GOMODCACHE); err != nil {
		t.Fatal(err)
	}
	set := map[string]string{
		"GOPROXY":    "file://" + filepath.ToSlash(proxy) + "," + goEnv.GOPROXY,
		"GOMODCACHE": modcache,
		// The candidate is not in the checksum database (a published version would be, with
		// other checksums); every other module is checked as usual.
		"GONOSUMDB": release.CorePath,
		"GOPRIVATE": "",
		"GONOPROXY": "",
		"GOWORK":    "off",
		"GOFLAGS":   "-modcacherw -trimpath",
	}
	var vars []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok || k == "GOOGLE_API_KEY" || k == "GEMINI_API_KEY" {
			continue // no API key: the quickstart runs on its offline model
		}
		vars = append(vars, kv)
	}
	for k, val := range set {
		vars = append(vars, k+"="+val)
	}
	return consumer{vars: vars, modcache: modcache}
}

// linkModuleCache fills the module cache dir with what the module cache from holds but
// adkctx's own modules: symbolic links to the unpacked modules and to the download cache's
// files, which the go command only reads (it replaces a file by renaming a new one over it),
// and copies of the files it edits in place (the version lists, the checksum database's
// answers). The cache from is left as it was.
func linkModuleCache(dir, from string) error {
	download := filepath.Join("cache", "download")
	// ours reports whether a module path is one of adkctx's modules.
	ours := func(modulePath string) bool {
		modulePath = filepath.ToSlash(modulePath)
		return modulePath == release.CorePath || strings.HasPrefix(modulePath, release.CorePath+"/")
	}
	return filepath.WalkDir(from, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, name)
		if err != nil {
			return err
		}
		inDownload := strings.HasPrefix(rel, download+string(filepath.Separator))
		switch {
		case rel == filepath.Join("cache", "vcs") || d.IsDir() && inDownload && ours(strings.TrimPrefix(rel, download+string(filepath.Separator))):
			return filepath.SkipDir
		case d.IsDir() && !inDownload && strings.Contains(d.Name(), "@"):
			// An unpacked module, unless it is adkctx's or its unpacking is under way or was cut
			// short.
			at := strings.LastIndex(rel, "@")
			if ours(rel[:at]) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(from, download, rel[:at], "@v", rel[at+1:]+".partial")); err == nil {
				return filepath.SkipDir
			}
			if err := link(name, filepath.Join(dir, rel)); err != nil {
				return err
			}
			return filepath.SkipDir
		case d.IsDir() || !inDownload || strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, ".partial"):
			return nil
		case d.Name() == "list" || strings.HasPrefix(rel, filepath.Join(download, "sumdb")+string(filepath.Separator)):
			return copyFile(name, filepath.Join(dir, rel))
		default:
			return link(name, filepath.Join(dir, rel))
		}
	})
}

func link(target, name string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.Symlink(target, name)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// goCmd runs the go command in dir and returns its standard output; a failure fails the test
// with both outputs.
func goCmd(t *testing.T, dir string, env consumer, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env.vars
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("go %s: %.1fs", strings.Join(args, " "), time.Since(start).Seconds())
	if err != nil {
		t.Fatalf("go %s (in %s): %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), dir, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String()
}

// newConsumer is an empty module outside the repository holding the quickstart program's
// source files, each with the replacements (old, new, old, new…) applied; every replacement
// must apply.
func newConsumer(t *testing.T, quickstart string, replacements []string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/consumer\n\ngo 1.25.0\n")
	sources, err := filepath.Glob(filepath.Join(quickstart, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	applied := make([]bool, len(replacements)/2)
	for _, src := range sources {
		if strings.HasSuffix(src, "_test.go") {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for i := 0; i+1 < len(replacements); i += 2 {
			if strings.Contains(text, replacements[i]) {
				text = strings.ReplaceAll(text, replacements[i], replacements[i+1])
				applied[i/2] = true
			}
		}
		writeFile(t, filepath.Join(dir, filepath.Base(src)), text)
	}
	for i, ok := range applied {
		if !ok {
			t.Fatalf("the quickstart's sources hold no %q any more: update the test's replacements", replacements[2*i])
		}
	}
	return dir
}

// runQuickstart resolves the consumer's imports, builds it and runs it offline, as a user
// does, and checks that it answered and saved the tool output whole.
func runQuickstart(t *testing.T, dir string, env consumer) {
	t.Helper()
	goCmd(t, dir, env, "mod", "tidy")
	bin := filepath.Join(t.TempDir(), "quickstart")
	goCmd(t, dir, env, "build", "-o", bin, ".")
	cmd := exec.Command(bin, "-db", filepath.Join(t.TempDir(), "q.db"))
	cmd.Env = env.vars
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("quickstart: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	for _, want := range []string{
		"assistant: From the saved test output:",
		"196:--- FAIL: TestRefundRounding",
		"3 turns, 6 model calls",
		"saved whole in ",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("quickstart's output has no %q:\n%s", want, stdout.Bytes())
		}
	}
}

// listedPackage is what checkInternal reads of `go list -json`.
type listedPackage struct {
	ImportPath string
	Standard   bool
	Module     *struct{ Path string }
	Imports    []string
}

// checkInternal fails the test for every import, in the build of the packages pattern names,
// of an internal package of one of the repository's modules by a package of another module.
func checkInternal(t *testing.T, dir string, env consumer, pattern string) {
	t.Helper()
	out := goCmd(t, dir, env, "list", "-deps", "-json=ImportPath,Standard,Module,Imports", pattern)
	module := map[string]string{}
	var pkgs []listedPackage
	for d := json.NewDecoder(strings.NewReader(out)); ; {
		var p listedPackage
		if err := d.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Standard || p.Module == nil {
			continue
		}
		module[p.ImportPath] = p.Module.Path
		pkgs = append(pkgs, p)
	}
	var bad []string
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			m, ok := module[imp]
			if ok && isInternal(imp) && m != p.Module.Path && strings.HasPrefix(m, release.CorePath) {
				bad = append(bad, fmt.Sprintf("%s (module %s) imports %s (internal to module %s)", p.ImportPath, p.Module.Path, imp, m))
			}
		}
	}
	slices.Sort(bad)
	if len(bad) > 0 {
		t.Errorf("go list -deps %s: %d imports of another module's internal packages (a module's internal packages are not part of what it promises: another release of it can change or remove them):\n\t%s",
			pattern, len(bad), strings.Join(bad, "\n\t"))
	}
}

// isInternal reports whether an import path names an internal package.
func isInternal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// The consumers' module cache holds every module of the user's but adkctx's own, at any
// version: a published adkctx module there must never stand in for the candidate.
func TestLinkModuleCacheLeavesAdkctxOut(t *testing.T) {
	from := t.TempDir()
	for _, name := range []string{
		"github.com/adkctx/adkctx@v0.1.0/go.mod",
		"github.com/adkctx/adkctx/hooks@v0.1.0/go.mod",
		"github.com/adkctx/adkctx/cmd/adkctx@v0.0.9/go.mod",
		"github.com/adkctx/other@v1.0.0/go.mod",
		"golang.org/x/text@v0.41.0/go.mod",
		"golang.org/x/sys@v0.47.0/go.mod",
		"cache/download/github.com/adkctx/adkctx/@v/v0.1.0.zip",
		"cache/download/github.com/adkctx/adkctx/hooks/@v/v0.1.0.mod",
		"cache/download/github.com/adkctx/adkctx/hooks/@v/list",
		"cache/download/github.com/adkctx/other/@v/v1.0.0.zip",
		"cache/download/golang.org/x/text/@v/v0.41.0.zip",
		"cache/download/golang.org/x/text/@v/v0.41.0.lock",
		"cache/download/golang.org/x/text/@v/list",
		"cache/download/golang.org/x/sys/@v/v0.47.0.partial",
		"cache/download/sumdb/sum.golang.org/lookup/golang.org/x/text@v0.41.0",
		"cache/vcs/abc/HEAD",
	} {
		writeFile(t, filepath.Join(from, filepath.FromSlash(name)), name)
	}
	dir := t.TempDir()
	if err := linkModuleCache(dir, from); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, name)
		kind := "copy"
		if d.Type()&fs.ModeSymlink != 0 {
			kind = "link"
		}
		got[filepath.ToSlash(rel)] = kind
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"github.com/adkctx/other@v1.0.0":                                       "link",
		"golang.org/x/text@v0.41.0":                                            "link",
		"cache/download/github.com/adkctx/other/@v/v1.0.0.zip":                 "link",
		"cache/download/golang.org/x/text/@v/v0.41.0.zip":                      "link",
		"cache/download/golang.org/x/text/@v/list":                             "copy",
		"cache/download/sumdb/sum.golang.org/lookup/golang.org/x/text@v0.41.0": "copy",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the consumers' module cache (-want +got):\n%s", diff)
	}
}
