package corpus

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testShellSessions is the size of the corpus the tests generate: one session per default
// module, the third in the tool-call form.
const testShellSessions = 3

// testDir holds what the tests generate once for the whole package.
var testDir string

func TestMain(m *testing.M) {
	var err error
	if testDir, err = os.MkdirTemp("", "corpus-test-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(testDir)
	os.Exit(code)
}

// testCommandTimeout bounds each command the tests' sessions run. The recorded sessions do not
// depend on it (their environment says 60 s, mini-swe-agent's); it is longer than the default
// because a loaded machine (make test runs the race suites side by side) can take a minute to
// build and test a module.
const testCommandTimeout = 5 * time.Minute

// shellCorpus generates the test corpus once for all the tests of the package.
var shellCorpus = sync.OnceValues(func() ([]string, error) {
	return Shell(context.Background(), ShellOptions{Seed: 7, Sessions: testShellSessions, Dir: filepath.Join(testDir, "shell"), CommandTimeout: testCommandTimeout})
})

func generatedShell(t *testing.T) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the go command many times")
	}
	files, err := shellCorpus()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestShellDeterministic: the same seed gives the same bytes, whatever the directories used. A
// session depends only on the seed and its index, so the second run writes the first session
// alone (generating runs the go command many times: one session is a third of the cost).
func TestShellDeterministic(t *testing.T) {
	first := generatedShell(t)
	second, err := Shell(context.Background(), ShellOptions{Seed: 7, Sessions: 1, Dir: t.TempDir(), WorkDir: t.TempDir(), Parallel: 1, CommandTimeout: testCommandTimeout})
	if err != nil {
		t.Fatal(err)
	}
	if len(second) != 1 || filepath.Base(first[0]) != filepath.Base(second[0]) {
		t.Fatalf("files %v, then %v", first, second)
	}
	a, _ := os.ReadFile(first[0])
	b, _ := os.ReadFile(second[0])
	if diff := cmp.Diff(string(a), string(b)); diff != "" {
		t.Errorf("%s differs between two runs (-first +second):\n%s", filepath.Base(first[0]), diff)
	}
}

// shellTrajectory is a trajectory file read back strictly.
type shellTrajectory struct {
	Info struct {
		ExitStatus  string         `json:"exit_status"`
		Submission  string         `json:"submission"`
		ModelStats  modelStats     `json:"model_stats"`
		MiniVersion string         `json:"mini_version"`
		Config      map[string]any `json:"config"`
	} `json:"info"`
	Messages         []trajMessage `json:"messages"`
	TrajectoryFormat string        `json:"trajectory_format"`
	InstanceID       string        `json:"instance_id"`
}

func readTrajectory(t *testing.T, file string) shellTrajectory {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var tr shellTrajectory
	if err := dec.Decode(&tr); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return tr
}

var observationRE = regexp.MustCompile(`(?s)^<returncode>-?\d+</returncode>\n(<output>\n.*</output>|<warning>\n.*</warning><output_head>\n.*\n</output_head>\n<elided_chars>\n\d+ characters elided\n</elided_chars>\n<output_tail>\n.*\n</output_tail>)$`)

// shellCommands are the commands of a trajectory, with their observations.
type shellCommand struct {
	thought, command, observation string
}

func trajectoryCommands(t *testing.T, tr shellTrajectory) []shellCommand {
	t.Helper()
	var out []shellCommand
	msgs := tr.Messages
	for i := 2; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role != "assistant" {
			continue
		}
		switch tr.TrajectoryFormat {
		case FormatText:
			c, ok := bashBlock(m.Content)
			if !ok || !strings.HasPrefix(m.Content, "THOUGHT: ") {
				t.Fatalf("message %d is not a THOUGHT with one bash block: %q", i, m.Content)
			}
			obs := ""
			if i+1 < len(msgs) {
				obs = msgs[i+1].Content
			}
			out = append(out, shellCommand{strings.TrimPrefix(strings.SplitN(m.Content, "\n\n```", 2)[0], "THOUGHT: "), c, obs})
		case FormatToolCall:
			if len(m.ToolCalls) == 0 {
				t.Fatalf("message %d calls no tool", i)
			}
			for k, tc := range m.ToolCalls {
				var args map[string]string
				if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil || tc.Function.Name != "bash" || tc.Type != "function" || len(args) != 1 {
					t.Fatalf("message %d: call %+v is not bash({command})", i, tc)
				}
				obs := ""
				if j := i + 1 + k; j < len(msgs) && msgs[j].Role == "tool" {
					if msgs[j].ToolCallID != tc.ID {
						t.Fatalf("message %d answers %s, want %s", j, msgs[j].ToolCallID, tc.ID)
					}
					obs = msgs[j].Content
				}
				out = append(out, shellCommand{m.Content, args["command"], obs})
			}
		default:
			t.Fatalf("trajectory_format %q", tr.TrajectoryFormat)
		}
	}
	return out
}

// TestShellStructure checks the files against the formats and the shape of real runs: the
// message layout, 40 to 150 commands, mostly reads, a failing test with its file:line, a heredoc,
// edits, tests run, scratch files created then removed, git diff, the submission.
func TestShellStructure(t *testing.T) {
	formats := map[string]int{}
	for _, f := range generatedShell(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			formats[checkShellFile(t, f)]++
		})
	}
	if formats[FormatText] == 0 || formats[FormatToolCall] == 0 {
		t.Errorf("formats %v: want both", formats)
	}
}

// checkShellFile checks one trajectory file and returns its format.
func checkShellFile(t *testing.T, f string) string {
	tr := readTrajectory(t, f)
	msgs := tr.Messages
	if msgs[0].Role != "system" || msgs[1].Role != "user" || !strings.Contains(msgs[1].Content, "<pr_description>") {
		t.Fatalf("the first messages are not the system prompt and the task")
	}
	if tr.Info.ExitStatus != "Submitted" || !strings.HasPrefix(tr.Info.Submission, "diff --git ") {
		t.Errorf("exit %q, submission %.40q", tr.Info.ExitStatus, tr.Info.Submission)
	}
	last := msgs[len(msgs)-1]
	wantLast := map[string]string{FormatText: "user", FormatToolCall: "exit"}[tr.TrajectoryFormat]
	if last.Role != wantLast || last.Content != tr.Info.Submission {
		t.Errorf("last message: role %q, content %.40q; want %q holding the submission", last.Role, last.Content, wantLast)
	}
	cmds := trajectoryCommands(t, tr)
	if n := len(cmds); n < 40 || n > 150 {
		t.Errorf("%d commands, want 40 to 150", n)
	}
	if tr.Info.ModelStats.APICalls < 40 || tr.Info.ModelStats.APICalls > len(cmds) {
		t.Errorf("api_calls %d for %d commands", tr.Info.ModelStats.APICalls, len(cmds))
	}
	kinds := map[string]int{}
	var failing, created, removed []string
	for i, c := range cmds {
		if i < len(cmds)-1 && !observationRE.MatchString(c.observation) {
			t.Fatalf("command %d (%q): observation not in the template: %.200q", i, c.command, c.observation)
		}
		if n := sentences(c.thought); n < 1 || n > 6 {
			t.Errorf("command %d: thought of %d sentences: %q", i, n, c.thought)
		}
		kinds[commandKind(c.command)]++
		if strings.Contains(c.observation, "--- FAIL") && goFileLineRE.MatchString(c.observation) {
			failing = append(failing, c.command)
		}
		if m := heredocTargetRE.FindStringSubmatch(c.command); m != nil {
			created = append(created, strings.TrimPrefix(m[1]+m[2], displayRoot+"/"))
		}
		if strings.HasPrefix(c.command, "rm ") {
			removed = append(removed, strings.Fields(c.command)[1:]...)
		}
	}
	t.Logf("%s: %d commands: %v", tr.TrajectoryFormat, len(cmds), kinds)
	reads := kinds["read"] + kinds["search"] + kinds["list"]
	if reads*100 < 60*len(cmds) {
		t.Errorf("%d reads of %d commands, want most", reads, len(cmds))
	}
	if kinds["edit"] < 2 || kinds["test"] < 3 || kinds["git"] < 1 {
		t.Errorf("edits %d, test runs %d, git %d: want at least 2, 3, 1", kinds["edit"], kinds["test"], kinds["git"])
	}
	if len(failing) == 0 {
		t.Errorf("no command shows a failing test with its file:line")
	}
	var createdThenRemoved int
	for _, c := range created {
		if slices.Contains(removed, c) {
			createdThenRemoved++
		}
	}
	if createdThenRemoved == 0 {
		t.Errorf("no file created in a heredoc was removed later (created %v, removed %v)", created, removed)
	}
	if !slices.ContainsFunc(cmds, func(c shellCommand) bool { return c.command == "git diff" }) {
		t.Errorf("no git diff")
	}
	return tr.TrajectoryFormat
}

var goFileLineRE = regexp.MustCompile(`\w\.go:\d+`)

var heredocTargetRE = regexp.MustCompile(`^cat (?:<<'EOF' > (\S+)|> (\S+) <<'EOF')\n`)

// sentences counts the sentences of a thought, code spans aside.
func sentences(s string) int {
	s = regexp.MustCompile("`[^`]*`").ReplaceAllString(s, "X")
	n := 0
	for _, part := range regexp.MustCompile(`[.?!:](\s|$)`).Split(strings.TrimSpace(s), -1) {
		if strings.TrimSpace(part) != "" {
			n++
		}
	}
	return n
}

// commandKind classifies a command as the mix of real runs is described: reads, searches,
// listings, edits, test runs, git.
func commandKind(c string) string {
	first := strings.Fields(c)[0]
	switch {
	case strings.HasPrefix(c, "go test"), strings.HasPrefix(c, "go vet"), strings.HasPrefix(c, "gofmt"):
		return "test"
	case strings.HasPrefix(c, "sed -i"), heredocTargetRE.MatchString(c):
		return "edit"
	case first == "git" || strings.HasPrefix(c, "echo "+submitSentinel):
		return "git"
	case first == "grep", first == "find":
		return "search"
	case first == "ls", first == "wc":
		return "list"
	case first == "rm":
		return "rm"
	}
	return "read"
}

// TestShellReferences: calls reuse values of outputs seen long before, in every session (issue
// 28's definition of a reference, with distances counted in steps, one step per command).
func TestShellReferences(t *testing.T) {
	var all refStats
	for _, f := range generatedShell(t) {
		var s refStats
		ev := sessionEvents(t, f)
		s.add(ev, 20, false)
		all.add(ev, 20, false)
		t.Logf("%s: %s", filepath.Base(f), &s)
		if want := max(4, s.calls/12); s.callsWithFar < want {
			t.Errorf("%s: %d calls reference something seen 20 or more steps before, want at least %d", filepath.Base(f), s.callsWithFar, want)
		}
		var farPaths int
		for _, r := range references(ev) {
			if r.steps >= 20 && strings.Contains(r.token, "/") || strings.HasSuffix(r.token, ".go") && r.steps >= 20 {
				farPaths++
			}
		}
		if farPaths == 0 {
			t.Errorf("%s: no path is used 20 or more steps after it was seen", filepath.Base(f))
		}
	}
	t.Logf("all: %s", &all)
	if all.far*100 < 15*all.refs {
		t.Errorf("%d of %d references are 20 or more steps back, want at least 15%%", all.far, all.refs)
	}
}

// TestShellOutputsReal runs again, in a fresh copy of the module, commands of the sessions that
// read files the session did not change, and compares with what the session recorded.
func TestShellOutputsReal(t *testing.T) {
	files := generatedShell(t)
	ctx := context.Background()
	ge, err := readGoEnv(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		tr := readTrajectory(t, f)
		var mod cachedModule
		for _, p := range DefaultModules() {
			if m, ok := findCachedModule(ge.GOMODCACHE, p); ok && strings.Contains(tr.InstanceID, "__"+path.Base(p)+"-") {
				mod = m
			}
		}
		if mod.Dir == "" {
			t.Fatalf("%s: no module for instance %s", f, tr.InstanceID)
		}
		sb, err := newSandbox(ctx, ge, mod.Dir, filepath.Join(t.TempDir(), "m"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		changed := changedFiles(tr.Info.Submission)
		n := 0
		for _, c := range trajectoryCommands(t, tr) {
			if n == 4 || !strings.HasPrefix(c.command, "nl -ba ") && !strings.HasPrefix(c.command, "sed -n") && !strings.HasPrefix(c.command, "head -n") {
				continue
			}
			if slices.ContainsFunc(changed, func(p string) bool { return strings.Contains(c.command, p) }) || strings.Contains(c.command, "EOF") {
				continue
			}
			out, code, err := sb.run(ctx, c.command)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.observation, renderObservation(out, code)); diff != "" {
				t.Errorf("%s: %q recorded and run again differ (-recorded +now):\n%s", filepath.Base(f), c.command, diff)
			}
			n++
		}
		checked += n
	}
	if checked == 0 {
		t.Fatal("no command checked")
	}
}

// changedFiles are the files a diff changes.
func changedFiles(diff string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^diff --git a/(\S+) `).FindAllStringSubmatch(diff, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestShellOptionsErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Shell(ctx, ShellOptions{Sessions: 1}); err == nil {
		t.Error("no error without Dir")
	}
	_, err := Shell(ctx, ShellOptions{Sessions: 1, Dir: t.TempDir(), Modules: []string{"example.com/not/in/the/cache"}})
	if !errors.Is(err, ErrNoModule) {
		t.Errorf("module not in the cache: %v, want ErrNoModule", err)
	}
}

// BenchmarkShell reports the time to write one session (mostly the go commands it runs), and its
// commands.
func BenchmarkShell(b *testing.B) {
	dir := b.TempDir()
	sessions, calls := 0, 0
	for i := 0; b.Loop(); i++ {
		files, err := Shell(context.Background(), ShellOptions{Seed: int64(i), Sessions: 3, Dir: dir, CommandTimeout: testCommandTimeout})
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			for _, e := range sessionEvents(b, f) {
				if e.call {
					calls++
				}
			}
		}
		sessions += len(files)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(sessions), "s/session")
	b.ReportMetric(float64(calls)/float64(sessions), "commands/session")
	b.ReportMetric(0, "ns/op")
}
