package release_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"

	"github.com/adkctx/adkctx/internal/release"
)

// fixture is a repository with adkctx's layout of modules, a few files each, committed.
var fixture = map[string]string{
	"VERSION":                        "v0.1.0\n",
	"LICENSE":                        "the license\n",
	".gitignore":                     "*.db\n",
	"go.mod":                         "module github.com/adkctx/adkctx\n\ngo 1.25.0\n",
	"doc.go":                         "// Package adkctx.\npackage adkctx\n",
	"glue/internal/engine/engine.go": "package engine\n",
	"hooks/go.mod": "module github.com/adkctx/adkctx/hooks\n\ngo 1.25.0\n\nrequire golang.org/x/text v0.41.0\n\n" +
		"require github.com/adkctx/adkctx v0.1.0\n\n// Inside this repository.\nreplace github.com/adkctx/adkctx => ../\n",
	"hooks/go.sum":   "golang.org/x/text v0.41.0 h1:T\ngolang.org/x/text v0.41.0/go.mod h1:M\n",
	"hooks/hooks.go": "package hooks\n",
	"hooks/old.go":   "package hooks\n",
	"adk2/go.mod": "module github.com/adkctx/adkctx/adk2\n\ngo 1.26.5\n\nrequire github.com/adkctx/adkctx v0.1.0\n\n" +
		"replace github.com/adkctx/adkctx => ../\n",
	"adk2/hooks/hooks.go": "package hooks\n",
	"cmd/adkctx/go.mod": "module github.com/adkctx/adkctx/cmd/adkctx\n\ngo 1.25.0\n\nrequire (\n\tgithub.com/adkctx/adkctx v0.1.0\n\tgithub.com/adkctx/adkctx/hooks v0.1.0\n)\n\n" +
		"replace (\n\tgithub.com/adkctx/adkctx => ../..\n\tgithub.com/adkctx/adkctx/hooks => ../../hooks\n)\n",
	"cmd/adkctx/main.go":           "package main\n\nfunc main() {}\n",
	"cmd/adkctx/testdata/one.json": "{}\n",
	"example/go.mod": "module github.com/adkctx/adkctx/example\n\ngo 1.25.0\n\nrequire github.com/adkctx/adkctx/hooks v0.1.0\n\n" +
		"replace (\n\tgithub.com/adkctx/adkctx/hooks => ../hooks\n\tgolang.org/x/text => ../../text\n)\n",
	"example/main.go":         "package main\n\nfunc main() {}\n",
	"internal/release/go.mod": "module github.com/adkctx/adkctx/internal/release\n\ngo 1.25.0\n",
	"internal/release/doc.go": "package release\n",
}

// newFixture writes fixture with the given files changed ("" deletes one) into a new git
// repository and commits it.
func newFixture(t *testing.T, changes map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{}
	for name, text := range fixture {
		files[name] = text
	}
	for name, text := range changes {
		files[name] = text
	}
	for name, text := range files {
		if text == "" {
			continue
		}
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), text)
	}
	git(t, root, "init", "-q")
	commitAll(t, root)
	return root
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func commitAll(t *testing.T, root string) {
	t.Helper()
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "commit")
}

// zipFiles reads a module zip at v0.1.0: its files, by name without the module@version/ prefix.
func zipFiles(t *testing.T, name string) map[string]string {
	t.Helper()
	r, err := zip.OpenReader(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	files := map[string]string{}
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, err = b.ReadFrom(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		_, rel, _ := strings.Cut(f.Name, "@v0.1.0/")
		files[rel] = b.String()
	}
	return files
}

// A candidate built from the working tree is, byte for byte, what the Go module mirror builds
// from the release commit's tags: the files a commit would hold (untracked ones git does not
// ignore, not the deleted or ignored ones), nested modules left out, the root LICENSE added to
// a module that has none, the released go.mod (the siblings' replace directives dropped) and
// go.sum (the siblings' checksums added). Built again from the release commit, it is the same.
func TestProxyIsWhatTheMirrorBuildsFromTheTag(t *testing.T) {
	root := newFixture(t, nil)
	writeFile(t, filepath.Join(root, "hooks", "new.go"), "package hooks\n\n// New is not committed yet.\nfunc New() {}\n")
	writeFile(t, filepath.Join(root, "hooks", "sessions.db"), "ignored")
	if err := os.Remove(filepath.Join(root, "hooks", "old.go")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "doc.go"), "// Package adkctx, changed.\npackage adkctx\n")

	repo, err := release.Open(filepath.Join(root, "hooks"))
	if err != nil {
		t.Fatal(err)
	}
	candidate := t.TempDir()
	built, err := repo.WriteProxy(candidate)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range built {
		got = append(got, b.Module.Dir)
	}
	if diff := cmp.Diff([]string{".", "hooks", "adk2", "cmd/adkctx"}, got); diff != "" {
		t.Fatalf("released modules, in order (-want +got):\n%s", diff)
	}
	at := func(dir string, b release.Built, ext string) string {
		return filepath.Join(dir, filepath.FromSlash(b.Module.Path), "@v", "v0.1.0"+ext)
	}

	hooks := zipFiles(t, at(candidate, built[1], ".zip"))
	var names []string
	for name := range hooks {
		names = append(names, name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"LICENSE", "go.mod", "go.sum", "hooks.go", "new.go"}, names); diff != "" {
		t.Errorf("hooks zip (-want +got):\n%s", diff)
	}
	wantGoMod := "module github.com/adkctx/adkctx/hooks\n\ngo 1.25.0\n\nrequire golang.org/x/text v0.41.0\n\nrequire github.com/adkctx/adkctx v0.1.0\n"
	if diff := cmp.Diff(wantGoMod, hooks["go.mod"]); diff != "" {
		t.Errorf("released hooks/go.mod (-want +got):\n%s", diff)
	}
	core := built[0]
	wantGoSum := strings.Join(core.SumLines("v0.1.0"), "\n") + "\n" + fixture["hooks/go.sum"]
	if diff := cmp.Diff(wantGoSum, hooks["go.sum"]); diff != "" {
		t.Errorf("released hooks/go.sum (-want +got):\n%s", diff)
	}
	for name := range zipFiles(t, at(candidate, core, ".zip")) {
		if strings.Contains(name, "/") && !strings.HasPrefix(name, "glue/internal/engine/") {
			t.Errorf("the core's zip holds %s, a file of a nested module", name)
		}
	}
	for _, b := range built {
		mod, err := os.ReadFile(at(candidate, b, ".mod"))
		if err != nil {
			t.Fatal(err)
		}
		if zipped := zipFiles(t, at(candidate, b, ".zip"))["go.mod"]; string(mod) != zipped {
			t.Errorf("%s: the .mod file is not the zip's go.mod", b.Module.Path)
		}
		if list, err := os.ReadFile(filepath.Join(filepath.Dir(at(candidate, b, "")), "list")); err != nil || string(list) != "v0.1.0\n" {
			t.Errorf("%s: @v/list = %q, %v", b.Module.Path, list, err)
		}
	}

	// The release commit, and what the mirror makes of its tags.
	if _, err := repo.WriteReleased(); err != nil {
		t.Fatal(err)
	}
	commitAll(t, root)
	for _, b := range built {
		subdir := b.Module.Dir
		if subdir == "." {
			subdir = ""
		}
		mirrored := filepath.Join(t.TempDir(), "m.zip")
		var z bytes.Buffer
		if err := modzip.CreateFromVCS(&z, module.Version{Path: b.Module.Path, Version: "v0.1.0"}, root, "HEAD", subdir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(mirrored, z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		sum, err := dirhash.HashZip(mirrored, dirhash.Hash1)
		if err != nil {
			t.Fatal(err)
		}
		if sum != b.Sum {
			t.Errorf("%s: the candidate's checksum is %s, the tag's %s\ncandidate: %v\ntag: %v",
				b.Module.Path, b.Sum, sum, keys(zipFiles(t, at(candidate, b, ".zip"))), keys(zipFiles(t, mirrored)))
		}
	}
	again, err := repo.WriteProxy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(built, again); diff != "" {
		t.Errorf("built again from the release commit (-before +after):\n%s", diff)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Check reports each go.mod that does not fit the release rules, naming the file and the fix;
// an unreleased module may replace what it wants.
func TestCheck(t *testing.T) {
	hooksGoMod := func(requireCore, replace string) string {
		return "module github.com/adkctx/adkctx/hooks\n\ngo 1.25.0\n\nrequire github.com/adkctx/adkctx " + requireCore + "\n\n" + replace
	}
	for _, tc := range []struct {
		name    string
		changes map[string]string
		want    []string // substrings of the errors, in order; none: no error
	}{
		{"the fixture", nil, nil},
		{"a sibling at another version",
			map[string]string{"hooks/go.mod": hooksGoMod("v0.0.0", "replace github.com/adkctx/adkctx => ../\n")},
			[]string{"hooks/go.mod: requires github.com/adkctx/adkctx v0.0.0, but VERSION says v0.1.0 (go -C internal/release run ./cmd/release set-version v0.1.0"}},
		{"a sibling replaced by another directory",
			map[string]string{"hooks/go.mod": hooksGoMod("v0.1.0", "replace github.com/adkctx/adkctx => ../adk2\n")},
			[]string{"hooks/go.mod: replaces github.com/adkctx/adkctx by ../adk2, which is not its directory ."}},
		{"a sibling replaced by a version",
			map[string]string{"hooks/go.mod": hooksGoMod("v0.1.0", "replace github.com/adkctx/adkctx => github.com/fork/adkctx v0.1.0\n")},
			[]string{"hooks/go.mod: replaces github.com/adkctx/adkctx by github.com/fork/adkctx@v0.1.0: a sibling is replaced, at every version, by its directory"}},
		{"a released module replacing another module",
			map[string]string{"hooks/go.mod": hooksGoMod("v0.1.0", "replace github.com/adkctx/adkctx => ../\n\nreplace golang.org/x/text => ../text\n")},
			[]string{"hooks/go.mod: replaces golang.org/x/text: a released module replaces only its siblings"}},
		{"a released module excluding a version",
			map[string]string{"hooks/go.mod": hooksGoMod("v0.1.0", "replace github.com/adkctx/adkctx => ../\n\nexclude golang.org/x/text v0.40.0\n")},
			[]string{"hooks/go.mod: has exclude directives"}},
		{"a module path not its directory's",
			map[string]string{"adk2/go.mod": "module github.com/adkctx/adkctx/v2\n\ngo 1.26.5\n"},
			[]string{"adk2/go.mod: want module github.com/adkctx/adkctx/adk2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, err := release.Open(newFixture(t, tc.changes))
			if err != nil {
				t.Fatal(err)
			}
			err = repo.Check()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			var gm *release.GoModError
			if !errors.As(err, &gm) {
				t.Errorf("%v is no *release.GoModError", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("errors:\n%s\nwant %d", err, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("error %q does not hold %q", lines[i], w)
				}
			}
			// A released module that breaks the rules is not built.
			if _, err := repo.WriteProxy(t.TempDir()); err == nil {
				t.Error("WriteProxy built a module whose go.mod breaks the release rules")
			}
		})
	}
}

// SetVersion changes the VERSION file and the siblings' requirements, and nothing else.
func TestSetVersion(t *testing.T) {
	root := newFixture(t, nil)
	repo, err := release.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.SetVersion("v0.2.0"); err != nil {
		t.Fatal(err)
	}
	if err := repo.Check(); err != nil {
		t.Fatal(err)
	}
	diff := git(t, root, "diff", "-U0", "--no-color")
	var changed []string
	for _, l := range strings.Split(diff, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
			changed = append(changed, l)
		}
	}
	want := []string{
		"-v0.1.0", "+v0.2.0", // VERSION
		"-require github.com/adkctx/adkctx v0.1.0", "+require github.com/adkctx/adkctx v0.2.0", // adk2
		"-\tgithub.com/adkctx/adkctx v0.1.0", "-\tgithub.com/adkctx/adkctx/hooks v0.1.0",
		"+\tgithub.com/adkctx/adkctx v0.2.0", "+\tgithub.com/adkctx/adkctx/hooks v0.2.0", // cmd/adkctx
		"-require github.com/adkctx/adkctx/hooks v0.1.0", "+require github.com/adkctx/adkctx/hooks v0.2.0", // example
		"-require github.com/adkctx/adkctx v0.1.0", "+require github.com/adkctx/adkctx v0.2.0", // hooks
	}
	if diff := cmp.Diff(want, changed); diff != "" {
		t.Errorf("git diff (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"v0.2", "0.2.0", "v2.0.0", "v0.2.0+build"} {
		if err := repo.SetVersion(bad); err == nil {
			t.Errorf("SetVersion(%q) accepted it", bad)
		}
	}
}

// The repository's go.mod files fit the release rules at its VERSION.
func TestRepositoryFitsTheReleaseRules(t *testing.T) {
	repo, err := release.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Check(); err != nil {
		t.Fatal(err)
	}
}
