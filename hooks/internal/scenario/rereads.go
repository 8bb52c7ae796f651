package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// ChecklistPath is the review checklist of the Rereads session: the user keeps one line per
// module in it, and the model reads it every other turn.
const ChecklistPath = "REVIEW.md"

// Rereads is the coding session of the figures with outputs that differ only in their middle
// (issue 26): the Default session, in which the model also reads the review checklist every
// other turn (one file, read again and again: each read as long as the last, with the same
// first and last lines, the lines of the modules reviewed since changed) and runs the tests
// every fifth turn (each run's output as long as the last, with the same first and last lines,
// another failure in its middle). A content print that looked at a text's length and edges took
// each such output for the one before.
func Rereads() Session {
	s := Default()
	s.Rereads = true
	return s
}

// Workspace answers a session's tool calls and keeps what they change: the review checklist
// counts the reads of each module's file. It is safe for concurrent use.
type Workspace struct {
	rereads bool // the Rereads session's tests (TestRun)
	mu      sync.Mutex
	reviews [modules]int
}

// modules is how many modules the session's files cycle through (Path).
const modules = 40

// NewWorkspace returns the workspace of session s, in which no module was read yet.
func NewWorkspace(s Session) *Workspace { return &Workspace{rereads: s.Rereads} }

// Run answers a tool call (see the package-level Run), reading the checklist as it is now.
func (w *Workspace) Run(name string, args map[string]any) map[string]any {
	path, _ := args["path"].(string)
	switch {
	case name == RunTests && w.rereads:
		i, _ := strconv.Atoi(strings.TrimPrefix(path, "step-"))
		return TestRun(i)
	case name != ReadFile:
		return Run(name, args)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if path == ChecklistPath {
		return map[string]any{"content": checklist(w.reviews)}
	}
	var i int
	if _, err := fmt.Sscanf(path, "internal/mod%02d/", &i); err == nil && i >= 0 && i < modules {
		w.reviews[i]++
	}
	return Run(name, args)
}

// checklist is the review checklist after the given reads of each module: about 2.5 KB, always
// of the same length, with the same first and last lines.
func checklist(reviews [modules]int) string {
	var b strings.Builder
	b.WriteString("# Review checklist\n\nOne line per module: checked once it was reviewed, with the reviews so far.\n\n")
	for i, n := range reviews {
		mark := " "
		if n > 0 {
			mark = "x"
		}
		fmt.Fprintf(&b, "- [%s] internal/mod%02d/service.go  reviews: %03d\n", mark, i, n%1000)
	}
	b.WriteString("\nUpdate a module's line after each review; keep the modules in this order.\n")
	return b.String()
}

// TestRun is what run_tests returns at turn i of the Rereads session: about 20 KB of passing
// tests, a failure with turn i's code, and the same closing lines every time; every run's output
// has the same length.
func TestRun(i int) map[string]any {
	var b strings.Builder
	for n := 0; b.Len() < 20<<10; n++ {
		fmt.Fprintf(&b, "=== RUN   TestHandler%03d\n--- PASS: TestHandler%03d (0.00s)\n", n, n)
	}
	fmt.Fprintf(&b, "--- FAIL: TestService (0.01s)\n    service_test.go:88: status E%03d-%04d: want 200\n", i%1000, hash(fmt.Sprint(i))%10000)
	b.WriteString("FAIL\nexit status 1\nFAIL\texample.com/app/internal/service\t0.412s\nFAIL\n")
	return map[string]any{"output": b.String(), "exit_code": 1.0}
}
