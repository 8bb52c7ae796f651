package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// noEnv is an environment without API keys: the offline model.
func noEnv(string) string { return "" }

func runMain(t *testing.T, stdin string, env func(string) string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb, env)
	return code, out.String(), errb.String()
}

// demoTurns is the short script the tests run (the full demo has 40 turns).
const demoTurns = 12

func TestDemoReport(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no global AGENTS.md from the machine running the test
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	logPath := filepath.Join(dir, "log.jsonl")
	code, stdout, stderr := runMain(t, "", noEnv, "-demo", "-turns", "12", "-report", "json", "-db", db, "-log", logPath)
	if code != 0 {
		t.Fatalf("exit code %d, stderr: %s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr not empty: %q", stderr)
	}
	var rep DemoReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("-report json is not JSON: %v\n%s", err, stdout)
	}
	var keys map[string]any
	if err := json.Unmarshal([]byte(stdout), &keys); err != nil {
		t.Fatal(err)
	}
	for k := range keys {
		if !snakeCase.MatchString(k) {
			t.Errorf("JSON key %q is not snake_case", k)
		}
	}
	t.Logf("with %d, without %d prompt tokens (%.1f%% fewer); largest %d vs %d; compactions %d; truncated %d; soft %d hard %d window %d",
		rep.PromptTokensWith, rep.PromptTokensWithout, rep.ReductionPercent, rep.LargestRequestWith, rep.LargestRequestWithout,
		rep.Compactions, rep.OutputsTruncated, rep.SoftLimit, rep.HardLimit, rep.ContextWindow)

	if rep.Turns != demoTurns || len(rep.PerTurn) != demoTurns {
		t.Fatalf("turns = %d, per_turn = %d, want %d", rep.Turns, len(rep.PerTurn), demoTurns)
	}
	if !rep.Offline || rep.Model != offlineModelName || rep.ContextWindow != offlineWindow {
		t.Errorf("model = %q offline=%v window=%d, want the offline model with a %d window", rep.Model, rep.Offline, rep.ContextWindow, offlineWindow)
	}
	// Bounded with adkctx, far below without.
	if 2*rep.PromptTokensWith > rep.PromptTokensWithout {
		t.Errorf("prompt tokens with adkctx %d > 50%% of without %d", rep.PromptTokensWith, rep.PromptTokensWithout)
	}
	if rep.LargestRequestWith > rep.HardLimit || rep.RequestsOverWindowWith != 0 {
		t.Errorf("largest request with adkctx %d (over window: %d), hard limit %d", rep.LargestRequestWith, rep.RequestsOverWindowWith, rep.HardLimit)
	}
	if rep.LargestRequestWithout <= rep.ContextWindow {
		t.Errorf("largest request without adkctx %d fits the window %d: the demo does not show the problem", rep.LargestRequestWithout, rep.ContextWindow)
	}
	for _, tf := range rep.PerTurn[len(rep.PerTurn)-3:] {
		if tf.LargestRequestWith > rep.SoftLimit {
			t.Errorf("turn %d: largest request with adkctx %d over the soft limit %d", tf.Turn, tf.LargestRequestWith, rep.SoftLimit)
		}
	}
	if rep.Compactions < 1 {
		t.Errorf("compactions = %d, want ≥ 1", rep.Compactions)
	}
	if rep.OutputsTruncated < 1 || rep.TruncatedBytes <= 0 {
		t.Errorf("outputs truncated = %d (%d bytes), want ≥ 1", rep.OutputsTruncated, rep.TruncatedBytes)
	}
	if rep.FullOutputsSaved != rep.OutputsTruncated {
		t.Errorf("full outputs saved = %d, truncated = %d: every cut output must be kept as an artifact", rep.FullOutputsSaved, rep.OutputsTruncated)
	}
	if rep.BudgetDecisions != rep.ModelCallsWith {
		t.Errorf("budget decisions logged = %d, model calls = %d: want one per call", rep.BudgetDecisions, rep.ModelCallsWith)
	}
	if rep.InstructionFiles != 3 {
		t.Errorf("AGENTS.md files = %d, want 3 (root, services, services/billing)", rep.InstructionFiles)
	}
	if rep.DBPath != db || rep.LogPath != logPath {
		t.Errorf("paths = %q, %q", rep.DBPath, rep.LogPath)
	}

	// Storage: a fresh service over the same file holds every original event plus the markers.
	events := reopen(t, db, rep.SessionID)
	var markers, userMessages, others int
	seen := map[string]bool{}
	for _, ev := range events {
		if seen[ev.ID] {
			t.Errorf("event %s stored twice", ev.ID)
		}
		seen[ev.ID] = true
		switch {
		case readMarker(ev) != nil:
			markers++
		case ev.Author == "user" && ev.Content != nil && isUserMessage(ev.Content):
			userMessages++
		default:
			others++
		}
	}
	if markers != rep.Compactions {
		t.Errorf("markers in storage = %d, report says %d", markers, rep.Compactions)
	}
	if userMessages != demoTurns {
		t.Errorf("user messages stored = %d, want %d", userMessages, demoTurns)
	}
	if others != rep.EventsYielded {
		t.Errorf("agent events stored = %d, the runner yielded %d: every yielded event must be stored once", others, rep.EventsYielded)
	}
	if total := markers + userMessages + others; total != rep.EventsStored {
		t.Errorf("events in storage = %d, report says %d", total, rep.EventsStored)
	}

	// The log is JSON lines.
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %d is not JSON: %v", lines, err)
		}
	}
	if lines < rep.ModelCallsWith {
		t.Errorf("log has %d lines, fewer than the %d model calls", lines, rep.ModelCallsWith)
	}
}

func TestDemoText(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runMain(t, "", func(k string) string {
		if k == "COLUMNS" {
			return "100"
		}
		return ""
	}, "-demo", "-turns", "3", "-db", filepath.Join(dir, "s.db"), "-log", filepath.Join(dir, "l.jsonl"))
	if code != 0 {
		t.Fatalf("exit code %d, stderr: %s", code, stderr)
	}
	for _, want := range []string{"OFFLINE model", "█", "░", "prompt tokens, total", "compactions done", "outputs truncated", "zap log (JSON lines): " + filepath.Join(dir, "l.jsonl")} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for i, line := range strings.Split(stdout, "\n") {
		if strings.ContainsAny(line, "█░") && len([]rune(line)) > 100 {
			t.Errorf("chart line %d is %d columns wide, want ≤ 100: %q", i, len([]rune(line)), line)
		}
	}
}

func TestREPL(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	in := strings.Join([]string{
		"What are the rules for working in this directory?",
		"List the files here",
		"Open `logs/ci-build.log` — why did the nightly build fail?",
		"Search for `TODO`",
		"Read `../../../../etc/passwd`",
		"Read `README.md`",
		"Search for `FIXME`",
		"Read `vendor/acme.example/money/money.go`",
		"Search for `invoice_id` in `testdata/`",
		"/tokens",
		"/compact",
		"/compaction-status",
		"/instructions",
		"/help",
		"/bogus",
		"/quit",
		"this line is never read",
	}, "\n") + "\n"
	code, out, stderr := runMain(t, in, noEnv, "-db", filepath.Join(dir, "s.db"), "-log", filepath.Join(dir, "l.jsonl"), "-session", "repl-test")
	if code != 0 {
		t.Fatalf("exit code %d, stderr: %s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr not empty (the progress indicator must stay off without a terminal): %q", stderr)
	}
	for _, want := range []string{
		"OFFLINE model",
		"new session repl-test",
		"Billing rounds half-even", // the answer quotes the nested AGENTS.md
		"→ list_files(path=.)",     // tool calls are shown
		"→ read_file(path=logs/ci-build.log)",
		"TestTotalRoundsHalfEvenOnce", // the answer quotes the log's tail
		"→ search_text(pattern=TODO)",
		"outside the working directory", // confinement, as a tool error the model reports
		"9 user turns, ",                // /tokens
		"model calls",
		"limits for offline-coder: window 32,768",
		"user turns remaining before the soft limit",
		"#1 at event ", // /compaction-status: a compaction happened during the 8 questions
		"× smaller), trigger ",
		"storage: ",
		"AGENTS.md for ",
		"services/billing/AGENTS.md",
		"----- merged text -----",
		"/compaction-status  compaction markers", // /help
		"unknown command /bogus",
		"bye",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("REPL output lacks %q", want)
		}
	}
	if !strings.Contains(out, "compacted: seq ") && !strings.Contains(out, "nothing to compact") {
		t.Errorf("/compact printed neither a marker nor \"nothing to compact\"")
	}
	if strings.Contains(out, "this line is never read") {
		t.Errorf("input after /quit was processed")
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}

	// Resuming the session from the same file: /tokens reports the stored session's accounting
	// (the hooks restore it from the newest model call stored) before any new turn.
	code, out, stderr = runMain(t, "/tokens\n/compaction-status\n", noEnv, "-db", filepath.Join(dir, "s.db"), "-log", filepath.Join(dir, "l.jsonl"), "-session", "repl-test")
	if code != 0 {
		t.Fatalf("resume: exit code %d, stderr: %s", code, stderr)
	}
	for _, want := range []string{"resumed session repl-test", "storage: "} {
		if !strings.Contains(out, want) {
			t.Errorf("resumed REPL output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`session repl-test: [1-9][0-9]* user turns, [1-9][0-9]* model calls`).MatchString(out) {
		t.Errorf("resumed REPL's /tokens does not report the stored turns and model calls:\n%s", out)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("this is not an SQLite database\n"), 200), 0o644); err != nil {
		t.Fatal(err)
	}
	withKey := func(k string) string {
		if k == "GOOGLE_API_KEY" {
			return "test-key"
		}
		return ""
	}
	tests := []struct {
		name string
		args []string
		env  func(string) string
		want string
	}{
		{"missing dir", []string{"-dir", filepath.Join(dir, "nope")}, noEnv, "no such directory"},
		{"dir is a file", []string{"-dir", garbage}, noEnv, "no such directory"},
		{"db in a missing directory", []string{"-db", filepath.Join(dir, "nope", "s.db")}, noEnv, "does not exist"},
		{"db is a directory", []string{"-db", dir}, noEnv, "not a regular file"},
		{"db is not SQLite", []string{"-db", garbage}, noEnv, "not a usable SQLite database"},
		{"postgres DSN", []string{"-db", "postgres://app:secret@db.example:5432/adk"}, noEnv, "gorm.io/driver/postgres"},
		{"unknown model with a key", []string{"-model", "gemini-9-ultra-nonexistent", "-db", filepath.Join(dir, "m.db")}, withKey, "unknown model"},
		{"bad report format", []string{"-demo", "-report", "xml"}, noEnv, "want text or json"},
		{"bad turns", []string{"-demo", "-turns", "0"}, noEnv, "-turns 0"},
		{"unknown flag", []string{"-bogus"}, noEnv, "bogus"},
		{"stray argument", []string{"extra"}, noEnv, "unexpected argument"},
		{"demo and the launcher", []string{"-demo", "web"}, noEnv, "exclude each other"},
		{"metrics address taken", []string{"-metrics-addr", "256.0.0.1:1"}, noEnv, "-metrics-addr"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, "/quit\n", tc.env, tc.args...)
			if code != 2 {
				t.Errorf("exit code %d, want 2 (stdout %q, stderr %q)", code, stdout, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", stderr, tc.want)
			}
			if strings.Contains(stderr, "secret") || strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
				t.Errorf("stderr leaks a password or a stack: %q", stderr)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runMain(t, "", noEnv, "-h")
	if code != 0 || !strings.Contains(stdout, "-demo") {
		t.Errorf("-h: code %d, output %q", code, stdout)
	}
}

// TestDemoRepeats: two runs of the demo report the same figures, so what the README quotes is
// what `make run` prints. What differs by design is blanked first: the session's id and the
// run's files.
func TestDemoRepeats(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var reports [2]DemoReport
	for i := range reports {
		dir := t.TempDir()
		code, stdout, stderr := runMain(t, "", noEnv, "-demo", "-turns", "8", "-report", "json",
			"-db", filepath.Join(dir, "sessions.db"), "-log", filepath.Join(dir, "log.jsonl"))
		if code != 0 {
			t.Fatalf("run %d: exit code %d, stderr: %s", i, code, stderr)
		}
		if err := json.Unmarshal([]byte(stdout), &reports[i]); err != nil {
			t.Fatal(err)
		}
		r := &reports[i]
		if r.PromptTokensWith == 0 || r.Compactions == 0 {
			t.Fatalf("run %d: %d prompt tokens, %d compactions: the demo did not run", i, r.PromptTokensWith, r.Compactions)
		}
		r.SessionID, r.WorkDir, r.DBPath, r.LogPath = "", "", "", ""
	}
	if diff := cmp.Diff(reports[0], reports[1]); diff != "" {
		t.Errorf("the second run's report differs (-first +second):\n%s", diff)
	}
}
