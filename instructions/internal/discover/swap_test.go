//go:build unix

package discover

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adkctx/adkctx/agentsmd"
)

// swapOnOpen returns an openFunc that, on the first open of name, runs swap and then opens:
// the swap lands after the discovery's Lstat of the file saw it as it was and before its open,
// the window a check-then-open reader loses. *swapped reports that it did.
func swapOnOpen(t *testing.T, name string, swapped *bool, swap func() error) openFunc {
	return func(tr *tree, n string) (openedFile, error) {
		if filepath.ToSlash(n) == name && !*swapped {
			if err := swap(); err != nil {
				t.Errorf("swap before opening %s: %v", name, err)
			}
			*swapped = true
		}
		return openNoWait(tr, n)
	}
}

// renames renames each pair in order.
func renames(pairs ...[2]string) func() error {
	return func() error {
		for _, p := range pairs {
			if err := os.Rename(p[0], p[1]); err != nil {
				return err
			}
		}
		return nil
	}
}

// A directory on an import's path swapped for a symlink leading outside the project between the
// discovery's check of the import and its open: the interleaving TestDiscoverSymlinkSwapRace
// hopes for, injected. The import is refused, nothing from outside is read.
func TestDiscoverSymlinkSwappedBetweenCheckAndOpen(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{
		"repo/.git/":        "",
		"repo/AGENTS.md":    "root\n@a/inc.md\n",
		"repo/a/inc.md":     "inside\n",
		"repo/a.evil":       "->../outside/a",
		"outside/a/inc.md":  "SECRET\n",
		"outside/AGENTS.md": "SECRET root\n",
	})
	repo := filepath.Join(tmp, "repo")
	a := filepath.Join(repo, "a")
	var swapped bool
	open := swapOnOpen(t, "a/inc.md", &swapped, renames([2]string{a, a + ".real"}, [2]string{a + ".evil", a}))
	d := discover(repo, withDefaults(agentsmd.Config{NoGlobal: true}), open)
	if !swapped {
		t.Fatal("the import was never opened: the interleaving did not happen")
	}
	if d.Root != repo {
		t.Fatalf("root %s, want %s", d.Root, repo)
	}
	for _, f := range d.Files {
		if strings.Contains(f.Content, "SECRET") {
			t.Errorf("%s holds text from outside the project: %q", f.RelPath, f.Content)
		}
	}
	want := agentsmd.Skip{Path: filepath.Join(a, "inc.md"), Reason: "import @a/inc.md in " + filepath.Join(repo, "AGENTS.md") +
		": resolves outside the project root through a symlinked directory"}
	if !slices.Contains(d.Skipped, want) {
		t.Errorf("skips %v, want %v among them", d.Skipped, want)
	}
}

// An AGENTS.md swapped for a FIFO between the discovery's check (a regular file) and its open:
// the interleaving TestDiscoverFIFOSwapNeverBlocks hopes for, injected. The open does not wait
// for a writer, and the file is refused by the opened handle's type.
func TestDiscoverFIFOSwappedBetweenCheckAndOpen(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{
		".git/":         "",
		"AGENTS.md":     "root\n",
		"sub/AGENTS.md": "regular\n",
	})
	name, fifo := filepath.Join(tmp, "sub", "AGENTS.md"), filepath.Join(tmp, "sub", "AGENTS.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	var swapped bool
	open := swapOnOpen(t, "sub/AGENTS.md", &swapped, renames([2]string{name, name + ".real"}, [2]string{fifo, name}))
	done := make(chan *Discovery, 1)
	go func() {
		done <- discover(filepath.Join(tmp, "sub"), withDefaults(agentsmd.Config{NoGlobal: true}), open)
	}()
	var d *Discovery
	select {
	case d = <-done:
	case <-time.After(hangGuard):
		// Release the blocked open (a writer lets it go) so that the test ends.
		if w, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("the discovery blocked opening a FIFO swapped in for AGENTS.md")
	}
	if !swapped {
		t.Fatal("sub/AGENTS.md was never opened: the interleaving did not happen")
	}
	want := agentsmd.Skip{Path: name, Reason: "not a regular file (p---------)"}
	if !slices.Contains(d.Skipped, want) {
		t.Errorf("skips %v, want %v among them", d.Skipped, want)
	}
	if len(d.Files) != 1 || d.Files[0].Content != "root\n" {
		t.Errorf("files %v, want the root's AGENTS.md alone", d.Files)
	}
}
