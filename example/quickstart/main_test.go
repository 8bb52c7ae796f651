package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/glebarez/sqlite"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/example/internal/geminitest"
	"github.com/adkctx/adkctx/hooks/dbartifact"
)

// TestMain fails the package's tests when a goroutine one of them started outlives it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// offlineEnv is the test's environment without API keys: the offline model.
func offlineEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOOGLE_API_KEY=") && !strings.HasPrefix(kv, "GEMINI_API_KEY=") {
			env = append(env, kv)
		}
	}
	return env
}

// build builds the quickstart into dir, as a user's `go build` does, and returns the binary.
func build(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "quickstart")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The quickstart as a user runs it: built, then run as a process of its own, twice on one SQLite
// file. It exits 0; stdout shows the run, the tools and the answers; stderr holds only the zap
// log (no gorm line); the database is closed (no write-ahead log left) and holds the session and
// the test output saved whole, which the second run, reopening the file, finds again.
func TestQuickstartRuns(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir)
	db := filepath.Join(dir, "q.db")
	run := func(args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-db", db}, args...)...)
		cmd.Env = offlineEnv()
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("quickstart %v: %v (exit code %d)\nstdout:\n%s\nstderr:\n%s", args, err, cmd.ProcessState.ExitCode(), o.String(), e.String())
		}
		return o.String(), e.String()
	}

	stdout, stderr := run()
	// The transcript, with what changes run to run (session id, call ids) masked.
	mask := regexp.MustCompile(`quickstart-\d{8}-\d{6}\.\d{3}|adk-[0-9a-f-]{36}|in /\S+|\d+ prompt tokens in all \(the last request: \d+`)
	var got []string
	for _, l := range strings.Split(mask.ReplaceAllString(stdout, "…"), "\n") {
		if strings.HasPrefix(l, "user:") || strings.HasPrefix(l, "assistant:") || strings.HasPrefix(l, "  call") ||
			strings.Contains(l, "FAIL: TestRefundRounding") || strings.Contains(l, "turns,") || strings.HasPrefix(l, "saved whole") {
			got = append(got, l)
		}
	}
	want := []string{
		"user: Run the tests and tell me what failed.",
		"  call   run_tests map[package:./...]",
		"  call   search_saved_outputs map[query:--- FAIL]",
		"assistant: From the saved test output:",
		"196:--- FAIL: TestRefundRounding (0.00s)",
		"user: Show me the log around that failure.",
		"  call   read_saved_output map[name:adkctx-tool-output-run_tests-….txt range:193-200]",
		"assistant: Here is that part of the log:",
		"196\t--- FAIL: TestRefundRounding (0.00s)",
		"user: Thanks, that is all.",
		"assistant: You are welcome.",
		"3 turns, 6 model calls, …; soft limit 20644)",
		"saved whole … adkctx-tool-output-run_tests-….txt",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transcript (-want +got):\n%s\nstdout:\n%s", diff, stdout)
	}

	// stderr: the zap log alone, one JSON entry a line; one budget decision per model call.
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var e struct {
			Msg string `json:"msg"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Errorf("stderr line is not a zap JSON entry: %q", line)
			continue
		}
		counts[e.Msg]++
	}
	if counts["budget decision"] != 6 || counts["tool output truncated"] != 1 || counts["session index created"] != 1 {
		t.Errorf("log entries %v: want 6 budget decisions, 1 truncation, the session index created", counts)
	}
	if strings.Contains(stdout+stderr, "record not found") {
		t.Errorf("gorm's logger reached the console")
	}
	for _, f := range []string{db + "-wal", db + "-shm"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s left behind: the database was not closed", filepath.Base(f))
		}
	}

	// The file holds the session and the whole test output.
	sessionID := regexp.MustCompile(`session (quickstart-\S+)`).FindStringSubmatch(stdout)
	if sessionID == nil {
		t.Fatalf("stdout names no session:\n%s", stdout)
	}
	gdb, err := gorm.Open(sqlite.Open(db), &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := gdb.DB()
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx := context.Background()
	sessions, err := database.NewSessionService(&sqlite.Dialector{Conn: pool}, &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := sessions.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sessionID[1]})
	if err != nil {
		t.Fatal(err)
	}
	// Three user messages; turn 1: call, result, call, result, answer; turn 2: call, result,
	// answer; turn 3: answer.
	if n := stored.Session.Events().Len(); n != 12 {
		t.Errorf("stored events: %d, want 12", n)
	}
	arts := dbartifact.NewService(gdb, dbartifact.Config{})
	list, err := arts.List(ctx, &artifact.ListRequest{AppName: appName, UserID: userID, SessionID: sessionID[1]})
	if err != nil || len(list.FileNames) != 1 {
		t.Fatalf("saved outputs %v, %v: want one", list, err)
	}
	saved, err := arts.Load(ctx, &artifact.LoadRequest{AppName: appName, UserID: userID, SessionID: sessionID[1], FileName: list.FileNames[0]})
	if err != nil {
		t.Fatal(err)
	}
	if text := string(saved.Part.InlineData.Data); strings.Count(text, "\n") != 403 || !strings.Contains(text, "refund_test.go:42") {
		t.Errorf("saved output: %d lines, want the whole 403-line log", strings.Count(text, "\n"))
	}

	// Again on the same file, with a turn of the user's own: the index and tables are there.
	stdout, _ = run("Run the tests")
	if !strings.Contains(stdout, "1 turns, 3 model calls") {
		t.Errorf("second run:\n%s", stdout)
	}
}

// With an API key the quickstart runs on adk-go's Gemini model (the genai client against a
// loopback fake of the Gemini REST API, named by GOOGLE_GEMINI_BASE_URL): the model's tool call
// runs, the cut result goes back to it, and its answer is printed.
func TestQuickstartOnGemini(t *testing.T) {
	const key = "quickstart-key"
	srv := geminitest.NewServer(t, geminitest.Options{APIKey: key, Models: []string{"gemini-2.5-flash"},
		Handler: func(r *geminitest.Request) *geminitest.Reply {
			last := r.Contents[len(r.Contents)-1]
			if last.Parts[0].FunctionResponse != nil {
				return geminitest.Text("TestRefundRounding fails: a rounding error in refunds.")
			}
			return geminitest.Calls(&genai.FunctionCall{Name: "run_tests", Args: map[string]any{"package": "./..."}})
		}})
	dir := t.TempDir()
	bin := build(t, dir)
	cmd := exec.Command(bin, "-db", filepath.Join(dir, "q.db"), "Run the tests and tell me what failed.")
	cmd.Env = append(offlineEnv(), "GEMINI_API_KEY="+key, "GOOGLE_GEMINI_BASE_URL="+srv.URL())
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("quickstart: %v\nstdout:\n%s\nstderr:\n%s", err, o.String(), e.String())
	}
	for _, want := range []string{"model gemini-2.5-flash", "call   run_tests", "assistant: TestRefundRounding fails", "1 turns, 2 model calls"} {
		if !strings.Contains(o.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, o.String())
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests to the fake: %d, want 2", len(reqs))
	}
	// The recall tools are declared once there is something to recall: the output tools with the
	// cut test output, the history tools not before a summary.
	for k, want := range [][]string{{"run_tests"}, {"run_tests", "read_saved_output", "search_saved_outputs"}} {
		var declared []string
		for _, tl := range reqs[k].Tools {
			for _, d := range tl.FunctionDeclarations {
				declared = append(declared, d.Name)
			}
		}
		if !cmp.Equal(want, declared) {
			t.Errorf("request %d declares %v, want %v", k, declared, want)
		}
	}
	if sent, _ := json.Marshal(reqs[1].Contents); len(sent) > 16<<10 || !bytes.Contains(sent, []byte("read_saved_output")) {
		t.Errorf("the second request (%d bytes) does not carry the cut test output with its note", len(sent))
	}
}

// The README's "Add it to your agent" is an excerpt of this program: its code lines (comments
// aside, `if err != nil { return err }` written on one line) appear here, in the same order.
func TestREADMEExcerptsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	i := strings.Index(section, "## Add it to your agent")
	if i < 0 {
		t.Fatal(`README has no "Add it to your agent" section`)
	}
	section = section[i:]
	start := strings.Index(section, "```go\n")
	end := strings.Index(section[start+6:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the section has no Go code block")
	}
	snippet := section[start+6 : start+6+end]
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	var source []string
	for _, l := range strings.Split(string(src), "\n") {
		if l = codeOf(l); l != "" {
			source = append(source, l)
		}
	}
	at := 0
	for _, l := range strings.Split(snippet, "\n") {
		code := codeOf(l)
		if code == "" {
			continue
		}
		code = strings.TrimSuffix(code, " return err }")
		for at < len(source) && source[at] != code {
			at++
		}
		if at == len(source) {
			t.Errorf("README line %q is not in main.go (after the lines matched before it)", strings.TrimSpace(l))
			return
		}
		at++
	}
}

// codeOf is a line's code: its comment cut (a "//" outside string literals), its spaces
// collapsed; "" for a comment line or an empty one.
func codeOf(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote == 0 && (r == '"' || r == '`'):
			quote = r
		case quote == r && (r == '`' || i == 0 || line[i-1] != '\\'):
			quote = 0
		case quote == 0 && strings.HasPrefix(line[i:], "//"):
			return strings.Join(strings.Fields(line[:i]), " ")
		}
	}
	return strings.Join(strings.Fields(line), " ")
}
