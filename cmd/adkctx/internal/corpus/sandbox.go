package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// displayRoot is where the sessions say the repository is, whatever temporary directory holds it:
// SWE-bench images keep the repository under /testbed.
const displayRoot = "/testbed"

// fixedTime is every file's modification time in a sandbox, so that `ls -l` prints the same
// thing on every run.
var fixedTime = time.Date(2025, time.March, 3, 9, 41, 0, 0, time.UTC)

// goEnv is what the go command says about this machine, read once per corpus.
type goEnv struct {
	Go         string // the go command
	GOROOT     string
	GOCACHE    string
	GOMODCACHE string
	GOPATH     string
	GOVERSION  string
}

func readGoEnv(ctx context.Context, goCmd string) (goEnv, error) {
	out, err := exec.CommandContext(ctx, goCmd, "env", "-json", "GOROOT", "GOCACHE", "GOMODCACHE", "GOPATH", "GOVERSION").Output()
	if err != nil {
		return goEnv{}, fmt.Errorf("corpus: %s env: %w", goCmd, err)
	}
	e := goEnv{Go: goCmd}
	if err := json.Unmarshal(out, &e); err != nil {
		return goEnv{}, fmt.Errorf("corpus: %s env: %w", goCmd, err)
	}
	if e.GOROOT == "" || e.GOCACHE == "" || e.GOMODCACHE == "" {
		return goEnv{}, fmt.Errorf("corpus: %s env: GOROOT, GOCACHE or GOMODCACHE is empty", goCmd)
	}
	return e, nil
}

// sandbox is a writable copy of a module's source in which a session's commands really run.
type sandbox struct {
	root    string // the real directory
	env     []string
	timeout time.Duration
}

// newSandbox copies the module at src into dir (emptied first: the same directory for every
// session on one module lets the go command reuse its build cache) and makes it a git
// repository with one commit, so that `git diff` and `git status` show the session's changes.
// The caller may change files before calling commit.
func newSandbox(ctx context.Context, ge goEnv, src, dir string, timeout time.Duration) (*sandbox, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		return nil, fmt.Errorf("corpus: copy %s: %w", src, err)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	s := &sandbox{root: root, timeout: timeout}
	path := filepath.Join(ge.GOROOT, "bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	s.env = []string{
		"PATH=" + path,
		"HOME=" + os.Getenv("HOME"),
		"LC_ALL=C",
		"TZ=UTC",
		"TERM=dumb",
		"PAGER=cat",
		"GIT_PAGER=cat",
		"MANPAGER=cat",
		"GOENV=off",
		"GOROOT=" + ge.GOROOT,
		"GOCACHE=" + ge.GOCACHE,
		"GOMODCACHE=" + ge.GOMODCACHE,
		"GOPATH=" + ge.GOPATH,
		// Offline: nothing is fetched, no checksum database is asked, the local toolchain runs.
		// -count=1: a test result is never "(cached)", which would depend on earlier runs.
		// -timeout: an edit that makes a test loop forever fails the test, not the generation.
		"GOFLAGS=-mod=mod -count=1 -timeout=30s",
		"GOPROXY=off",
		"GOSUMDB=off",
		"GOTOOLCHAIN=local",
		"GOWORK=off",
		"CGO_ENABLED=0",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=SWE-bench",
		"GIT_AUTHOR_EMAIL=swe-bench@example.com",
		"GIT_COMMITTER_NAME=SWE-bench",
		"GIT_COMMITTER_EMAIL=swe-bench@example.com",
		"GIT_AUTHOR_DATE=" + fixedTime.Format(time.RFC3339),
		"GIT_COMMITTER_DATE=" + fixedTime.Format(time.RFC3339),
	}
	if err := s.touchAll(); err != nil {
		return nil, err
	}
	return s, nil
}

// commit records the tree as the repository's only commit: the state the task starts from.
func (s *sandbox) commit(ctx context.Context, message string) error {
	out, code, err := s.exec(ctx, "git init -q -b main && git add -A && git commit -q -m "+shellQuote(message))
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("corpus: git init in sandbox: exit %d: %s", code, out)
	}
	return s.touchAll()
}

// run executes a command as a session records it: paths under /testbed are the sandbox's, the
// output is stdout and stderr interleaved as the shell wrote them, with what differs from run to
// run (the sandbox's path, test timings) made fixed.
func (s *sandbox) run(ctx context.Context, command string) (string, int, error) {
	out, code, err := s.exec(ctx, strings.ReplaceAll(command, displayRoot, s.root))
	if err != nil {
		return "", 0, err
	}
	if err := s.touchAll(); err != nil {
		return "", 0, err
	}
	return s.normalize(out), code, nil
}

func (s *sandbox) exec(ctx context.Context, command string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = s.root
	cmd.Env = s.env
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", 0, fmt.Errorf("corpus: command did not finish in %s: %q", s.timeout, firstLine(command))
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return "", 0, fmt.Errorf("corpus: run %q: %w", firstLine(command), err)
		}
		code = ee.ExitCode()
	}
	return strings.ToValidUTF8(buf.String(), "\uFFFD"), code, nil
}

var (
	// "ok  \tpkg\t0.012s", "FAIL\tpkg\t0.012s"
	pkgTimingRE = regexp.MustCompile(`(?m)^(ok  |FAIL)\t(\S+)\t\d+\.\d+s`)
	// "--- PASS: TestX (0.00s)", also for subtests and benchmarks
	testTimingRE = regexp.MustCompile(`(--- (?:PASS|FAIL|SKIP): \S+(?: \S+)*?) \(\d+\.\d+s\)`)
)

func (s *sandbox) normalize(out string) string {
	out = strings.ReplaceAll(out, s.root, displayRoot)
	out = pkgTimingRE.ReplaceAllStringFunc(out, func(m string) string {
		sub := pkgTimingRE.FindStringSubmatch(m)
		return sub[1] + "\t" + sub[2] + "\t" + fakeDuration(sub[2])
	})
	out = testTimingRE.ReplaceAllString(out, "$1 (0.00s)")
	out = s.fixClock(out)
	// go-cmp's reporter picks, per process, either spaces or non-breaking spaces so that nobody
	// depends on its output: the sessions keep spaces.
	return strings.ReplaceAll(out, "\u00a0", " ")
}

// clockRE matches a date and time of day as logs print them: "2025-03-03 09:41:00.123456",
// "2025-03-03T09:41:00Z".
var clockRE = regexp.MustCompile(`\b(\d{4}-\d{2}-\d{2})([T ])(\d{2}:\d{2}:\d{2})(\.\d+)?`)

// fixClock replaces the times of the last days, which a program printed from the clock, by the
// sandbox's fixed time; dates in code and test data are older or newer and stay.
func (s *sandbox) fixClock(out string) string {
	now := time.Now().UTC()
	return clockRE.ReplaceAllStringFunc(out, func(m string) string {
		sub := clockRE.FindStringSubmatch(m)
		d, err := time.Parse(dateLayout, sub[1])
		if err != nil || d.Before(now.AddDate(0, 0, -2)) || d.After(now.AddDate(0, 0, 2)) {
			return m
		}
		frac := ""
		if sub[4] != "" {
			frac = "." + strings.Repeat("0", len(sub[4])-1)
		}
		return fixedTime.Format(dateLayout) + sub[2] + fixedTime.Format("15:04:05") + frac
	})
}

// fakeDuration is a plausible test duration that depends only on the package.
func fakeDuration(pkg string) string {
	h := fnv.New32a()
	h.Write([]byte(pkg))
	return fmt.Sprintf("%.3fs", 0.004+float64(h.Sum32()%900)/1000)
}

// touchAll gives every file and directory the same modification time, the copy's parent
// directory included (ls -la shows it as "..").
func (s *sandbox) touchAll() error {
	if err := os.Chtimes(filepath.Dir(s.root), fixedTime, fixedTime); err != nil {
		return err
	}
	return filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && p != s.root {
			// Only .git's own time shows (in ls -la); its insides do not.
			if err := os.Chtimes(p, fixedTime, fixedTime); err != nil {
				return err
			}
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		return os.Chtimes(p, fixedTime, fixedTime)
	})
}

// readFile reads a file of the sandbox by its repository path.
func (s *sandbox) readFile(rel string) (string, error) {
	b, err := os.ReadFile(filepath.Join(s.root, filepath.FromSlash(rel)))
	return string(b), err
}

func (s *sandbox) writeFile(rel, content string) error {
	return os.WriteFile(filepath.Join(s.root, filepath.FromSlash(rel)), []byte(content), 0o644)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
