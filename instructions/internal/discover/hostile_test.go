//go:build unix

package discover

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/agentsmd"
)

// hangGuard is how long the swap tests wait for discoveries that should take
// milliseconds before they declare one blocked. It is a liveness guard, not
// a timing assertion: it only fires when a discovery never returns.
const hangGuard = 30 * time.Second

// swapper replaces one directory entry again and again, until stop, by
// renaming prepared entries in and out: state "real" is the real entry at
// name, state "evil" the prepared replacement. Renames are atomic; between
// them the name is briefly absent.
type swapper struct {
	name, realSpare, evilSpare string
	stop                       chan struct{}
	done                       chan struct{}
	swaps                      atomic.Int64
	err                        error
}

func startSwapper(t *testing.T, name, evilSpare string) *swapper {
	t.Helper()
	s := &swapper{name: name, realSpare: name + ".real", evilSpare: evilSpare, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		step := func(from, to string) bool {
			if err := os.Rename(from, to); err != nil {
				s.err = err
				return false
			}
			return true
		}
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			if !step(s.name, s.realSpare) || !step(s.evilSpare, s.name) {
				return
			}
			runtime.Gosched()
			if !step(s.name, s.evilSpare) || !step(s.realSpare, s.name) {
				return
			}
			runtime.Gosched()
			s.swaps.Add(1)
		}
	}()
	t.Cleanup(s.halt)
	return s
}

// halt stops the swapper and waits until the real entry is back at name.
func (s *swapper) halt() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// TestDiscoverSymlinkSwapRace swaps a directory below the project root with
// a symlink to a directory outside it while discoveries run: the directory
// is on the path to the working directory and holds an imported file. No
// discovery rooted at the project may return text from outside.
func TestDiscoverSymlinkSwapRace(t *testing.T) {
	tmp := realTempDir(t)
	files := map[string]string{
		"repo/.git/":            "",
		"repo/a/AGENTS.md":      "inside a\n",
		"repo/a/b/AGENTS.md":    "inside b\n",
		"repo/a.evil":           "->../outside/a",
		"outside/a/AGENTS.md":   "SECRET a\n",
		"outside/a/b/AGENTS.md": "SECRET b\n",
	}
	// Many imports through the swapped directory: each is one chance for
	// the swap to land between a check and an open.
	var root strings.Builder
	root.WriteString("root\n")
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("a/inc%02d.md", i)
		fmt.Fprintf(&root, "@%s\n", name)
		files["repo/"+name] = fmt.Sprintf("inside %d\n", i)
		files["outside/"+name] = fmt.Sprintf("SECRET %d\n", i)
	}
	files["repo/AGENTS.md"] = root.String()
	writeTree(t, tmp, files)
	repo := filepath.Join(tmp, "repo")
	// The working directory alternates between the root (always rooted
	// there; the swapped directory is reached by imports) and a directory
	// below the swapped one (its files are on the path).
	workDirs := []string{repo, filepath.Join(repo, "a", "b")}
	sw := startSwapper(t, filepath.Join(repo, "a"), filepath.Join(repo, "a.evil"))

	const workers, perWorker = 2, 500
	var rooted, refused atomic.Int64
	var mu sync.Mutex
	var leaks []string
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				d, err := Discover(workDirs[i%len(workDirs)], agentsmd.Config{NoGlobal: true})
				if err != nil || d.Root != repo {
					// The working directory itself was absent or resolved
					// through the symlink: then its files are legitimately
					// elsewhere. Only discoveries rooted at repo count.
					continue
				}
				rooted.Add(1)
				for _, s := range d.Skipped {
					if strings.Contains(s.Reason, "outside the project root") {
						refused.Add(1)
					}
				}
				for _, f := range d.Files {
					if i := strings.Index(f.Content, "SECRET"); i >= 0 {
						line, _, _ := strings.Cut(f.Content[i:], "\n")
						mu.Lock()
						leaks = append(leaks, fmt.Sprintf("%s holds %q", f.RelPath, line))
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	sw.halt()
	if sw.err != nil {
		t.Fatalf("swapper: %v", sw.err)
	}
	t.Logf("%d swaps, %d discoveries rooted at the project, %d refusals of an escaping path", sw.swaps.Load(), rooted.Load(), refused.Load())
	if refused.Load() == 0 {
		t.Error("no discovery rooted at the project met the symlink: the race this test is about did not happen (TestDiscoverSymlinkSwappedBetweenCheckAndOpen injects it)")
	}
	if len(leaks) > 0 {
		t.Errorf("%d of %d discoveries read files outside the project root, e.g. %s", len(leaks), rooted.Load(), leaks[0])
	}
}

// TestDiscoverFIFOSwapNeverBlocks swaps an AGENTS.md with a FIFO while
// discoveries run. Opening a FIFO for reading blocks until a writer comes; a
// discovery must never wait for one. The file is both the working
// directory's AGENTS.md and imported many times by the root's, so that each
// discovery opens it often.
func TestDiscoverFIFOSwapNeverBlocks(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{
		".git/":         "",
		"AGENTS.md":     "root\n" + strings.Repeat("@sub/AGENTS.md\n", 40),
		"sub/AGENTS.md": "regular\n",
	})
	fifo := filepath.Join(tmp, "sub", "AGENTS.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	sw := startSwapper(t, filepath.Join(tmp, "sub", "AGENTS.md"), fifo)

	const workers, perWorker = 2, 500
	var mu sync.Mutex
	var failures []string
	var metFIFO atomic.Int64 // files refused as the FIFO: the swap landed while a discovery ran
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				d, err := Discover(filepath.Join(tmp, "sub"), agentsmd.Config{NoGlobal: true})
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					continue
				}
				for _, f := range d.Files {
					if strings.Contains(f.Content, "\x00") {
						mu.Lock()
						failures = append(failures, "binary content in "+f.RelPath)
						mu.Unlock()
					}
				}
				for _, sk := range d.Skipped {
					if strings.Contains(sk.Reason, "not a regular file") {
						metFIFO.Add(1)
					}
				}
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
		sw.halt()
	case <-time.After(hangGuard):
		sw.halt()
		// Release the blocked readers (a writer's open lets them go) so that
		// the test ends; the swapper has put the FIFO back at its spare name.
		released := 0
		for done := false; !done; {
			select {
			case <-finished:
				done = true
			default:
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
					released++
				}
				time.Sleep(time.Millisecond)
			}
		}
		t.Fatalf("discoveries blocked opening a FIFO swapped in for AGENTS.md (released %d by opening the FIFO for writing)", released)
	}
	if sw.err != nil {
		t.Fatalf("swapper: %v", sw.err)
	}
	t.Logf("%d swaps, %d files refused as the FIFO", sw.swaps.Load(), metFIFO.Load())
	if metFIFO.Load() == 0 {
		t.Error("no discovery met the FIFO: the race this test is about did not happen (TestDiscoverFIFOSwappedBetweenCheckAndOpen injects it)")
	}
	if len(failures) > 0 {
		t.Errorf("%d discoveries failed, e.g. %s", len(failures), failures[0])
	}
}

// TestDiscoverSpecialFiles: only regular files are read. A special file
// named AGENTS.md is refused without being opened; one reached through a
// symlink is opened without waiting and refused by the opened handle's
// type. Either way the next candidate name is used.
func TestDiscoverSpecialFiles(t *testing.T) {
	tests := []struct {
		name   string
		make   func(t *testing.T, dir, p string) // makes p (dir/AGENTS.md)
		reason string
		opened int // files opened, the fallback included
	}{
		{"FIFO", func(t *testing.T, _, p string) { mkfifo(t, p) }, "not a regular file (p---------)", 1},
		{"symlink to a FIFO", func(t *testing.T, dir, p string) {
			mkfifo(t, filepath.Join(dir, "pipe"))
			symlink(t, "pipe", p)
		}, "not a regular file (p---------)", 2},
		{"socket", func(t *testing.T, _, p string) { listenUnix(t, p) }, "not a regular file (S---------)", 1},
		{"symlink to a socket", func(t *testing.T, dir, p string) {
			listenUnix(t, filepath.Join(dir, "sock"))
			symlink(t, "sock", p)
		}, "unreadable: open: no such device or address", 1},
		{"character device", func(t *testing.T, _, p string) { mknodNull(t, p) }, "not a regular file (Dc---------)", 1},
		{"symlink to a character device", func(t *testing.T, dir, p string) {
			mknodNull(t, filepath.Join(dir, "null"))
			symlink(t, "null", p)
		}, "not a regular file (Dc---------)", 2},
		{"directory", func(t *testing.T, _, p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (d---------)", 1},
		{"symlink to a directory", func(t *testing.T, dir, p string) { symlink(t, ".", p) }, "not a regular file (d---------)", 2},
		{"symlink to /dev/null", func(t *testing.T, _, p string) { symlink(t, "/dev/null", p) }, "symlink resolves outside the project root", 1},
		{"absolute symlink into the root, to a FIFO", func(t *testing.T, dir, p string) {
			mkfifo(t, filepath.Join(dir, "pipe"))
			symlink(t, filepath.Join(dir, "pipe"), p)
		}, "not a regular file (p---------)", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := realTempDir(t)
			writeTree(t, dir, map[string]string{".git/": "", "CLAUDE.md": "fallback\n"})
			p := filepath.Join(dir, "AGENTS.md")
			tc.make(t, dir, p)
			d, err := Discover(dir, agentsmd.Config{NoGlobal: true, FallbackNames: []string{"CLAUDE.md"}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]agentsmd.Skip{{Path: p, Reason: tc.reason}}, d.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			if len(d.Files) != 1 || d.Files[0].Content != "fallback\n" {
				t.Errorf("files = %+v", d.Files)
			}
			if d.Stats.FilesOpened != tc.opened {
				t.Errorf("FilesOpened = %d, want %d", d.Stats.FilesOpened, tc.opened)
			}
		})
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func listenUnix(t *testing.T, p string) {
	t.Helper()
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	t.Cleanup(func() { l.Close() })
}

// mknodNull makes a character device like /dev/null (1, 3); it needs
// privileges, so the case is skipped without them.
func mknodNull(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod: %v (needs privileges)", err)
	}
}
