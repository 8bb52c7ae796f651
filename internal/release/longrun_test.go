package release

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every package whose tests call longrun.Test (skipped under -race) is one the Makefile's figures
// step runs without it: otherwise make test would run those tests nowhere.
func TestLongRunsAreRunWithoutRace(t *testing.T) {
	r, err := Open(".")
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(r.Root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := string(makefile)
	if i := strings.Index(recipe, "\nfigures:"); i >= 0 {
		recipe = recipe[i:]
		if j := strings.Index(recipe, "\n\n"); j >= 0 {
			recipe = recipe[:j]
		}
	} else {
		t.Fatal("the Makefile has no figures target")
	}
	// (cd MODULE && [VAR=value ...] $(GO) test $(FIGUREFLAGS) PKG PKG ... >...
	step := regexp.MustCompile(`\(cd (\S+) && (?:\w+=\S* )*\$\(GO\) test \$\(FIGUREFLAGS\) ([^>]*)>`)
	run := map[string]bool{}
	for _, m := range step.FindAllStringSubmatch(recipe, -1) {
		for _, pkg := range strings.Fields(m[2]) {
			run[filepath.Clean(filepath.Join(m[1], pkg))] = true
		}
	}
	if len(run) == 0 {
		t.Fatal("found no go test command in the figures recipe")
	}
	call := regexp.MustCompile(`(?m)^\s+longrun\.Test\(t\)$`)
	found := 0
	err = filepath.WalkDir(r.Root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !call.Match(b) {
			return nil
		}
		found++
		dir, _ := filepath.Rel(r.Root, filepath.Dir(path))
		if !run[dir] {
			t.Errorf("%s calls longrun.Test, but the Makefile's figures step does not test %s", path, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Error("no test calls longrun.Test: is the check still looking for the right call?")
	}
}
