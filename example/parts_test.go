package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
)

func TestWorkspaceConfinement(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sub", "a.txt"), []byte("alpha\nbeta needle\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "sub", "a.txt"), filepath.Join(root, "inside-link")); err != nil {
		t.Fatal(err)
	}
	w, err := newWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../x", "sub/../../x", filepath.Join(outside, "secret.txt"), "escape/secret.txt", "escape"} {
		if _, err := w.readFile(ReadArgs{Path: p}); !errors.Is(err, errOutside) {
			t.Errorf("read %q: err = %v, want errOutside", p, err)
		}
		if _, err := w.listFiles(ListArgs{Path: p}); !errors.Is(err, errOutside) {
			t.Errorf("list %q: err = %v, want errOutside", p, err)
		}
		if _, err := w.searchText(SearchArgs{Pattern: "needle", Path: p}); !errors.Is(err, errOutside) {
			t.Errorf("search %q: err = %v, want errOutside", p, err)
		}
	}
	got, err := w.readFile(ReadArgs{Path: "inside-link"})
	if err != nil || got.Lines != 3 || got.Bytes != 24 {
		t.Errorf("read via an inside symlink = %+v, %v", got, err)
	}
	if _, err := w.readFile(ReadArgs{Path: "sub"}); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("read of a directory: err = %v", err)
	}
	if _, err := w.readFile(ReadArgs{Path: "missing.txt"}); err == nil {
		t.Errorf("read of a missing file: no error")
	}
	if _, err := w.searchText(SearchArgs{Pattern: "("}); err == nil {
		t.Errorf("bad pattern: no error")
	}

	list, err := w.listFiles(ListArgs{})
	if err != nil {
		t.Fatal(err)
	}
	// The symlinks are not regular files: the listing holds the one real file.
	if list.Entries != 1 || list.TotalBytes != 24 || !strings.Contains(list.Listing, "sub/a.txt") {
		t.Errorf("list = %+v", list)
	}
	search, err := w.searchText(SearchArgs{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SearchResult{Pattern: "needle", Path: ".", Matches: 1, Files: 1, Results: "sub/a.txt:2: beta needle\n"}, search); diff != "" {
		t.Errorf("search (-want +got):\n%s", diff)
	}
}

func TestDemoRepoIsLarge(t *testing.T) {
	root, wd, err := extractDemoRepo()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	w, err := newWorkspace(wd)
	if err != nil {
		t.Fatal(err)
	}
	list, err := w.listFiles(ListArgs{})
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := w.readFile(ReadArgs{Path: "logs/ci-build.log"})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := w.readFile(ReadArgs{Path: "invoice.go"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(inv.Content, "go:build") {
		t.Errorf("extracted invoice.go still has the build tag")
	}
	// Larger than adkctx's default truncation limits (10 KiB, 256 lines), so truncation matters.
	if len(list.Listing) < 10<<10 || list.Entries < 256 {
		t.Errorf("listing is %d bytes, %d entries: too small to be truncated", len(list.Listing), list.Entries)
	}
	if logFile.Bytes < 50<<10 || !strings.Contains(logFile.Content[len(logFile.Content)-500:], "FAIL") {
		t.Errorf("CI log is %d bytes or lacks the failure at its tail", logFile.Bytes)
	}
	for _, p := range []string{"AGENTS.md", "../AGENTS.md", "../../AGENTS.md"} {
		if _, err := os.Stat(filepath.Join(wd, p)); err != nil {
			t.Errorf("nested AGENTS.md missing: %v", err)
		}
	}
}

func TestPlan(t *testing.T) {
	type call struct {
		Name string
		Args map[string]any
	}
	tests := []struct {
		msg  string
		want []call
	}{
		{"List the files here so I can get my bearings.", []call{{toolList, map[string]any{"path": "."}}}},
		{"List `migrations/`.", []call{{toolList, map[string]any{"path": "migrations/"}}}},
		{"Read `invoice_test.go` and `invoice.go`.", []call{{toolRead, map[string]any{"path": "invoice_test.go"}}, {toolRead, map[string]any{"path": "invoice.go"}}}},
		{"Search for `errors.Is`.", []call{{toolSearch, map[string]any{"pattern": `errors\.Is`}}}},
		{"Search for `invoice_id` in `testdata/`.", []call{{toolSearch, map[string]any{"pattern": "invoice_id", "path": "testdata/"}}}},
		{"Search for `warning` in `logs/ci-build.log`.", []call{{toolSearch, map[string]any{"pattern": "warning", "path": "logs/ci-build.log"}}}},
		{"please read handlers.go", []call{{toolRead, map[string]any{"path": "handlers.go"}}}},
		{"search for Balance", []call{{toolSearch, map[string]any{"pattern": "Balance"}}}},
		{"Summarize what we know so far.", nil},
	}
	for _, tc := range tests {
		var got []call
		for _, c := range plan(tc.msg) {
			got = append(got, call{c.name, c.args})
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("plan(%q) (-want +got):\n%s", tc.msg, diff)
		}
	}
	for i, msg := range demoScript {
		if strings.Contains(msg, "`") && len(plan(msg)) == 0 {
			t.Errorf("demo message %d %q plans no tool call", i+1, msg)
		}
	}
}

// TestOfflineModelSteps drives the offline policy by hand: call, then answer from the result;
// summaries and trim notes are not taken for the user's message.
func TestOfflineModelSteps(t *testing.T) {
	user := genai.NewContentFromText("Read `a.go` and `b.go`.", genai.RoleUser)
	req := &model.LLMRequest{Contents: []*genai.Content{
		genai.NewContentFromText(compaction.SummaryHeader+"\nGoal: x", genai.RoleUser),
		user,
	}}
	first := respond(req)
	if fc := first.Parts[0].FunctionCall; fc == nil || fc.Name != toolRead || fc.Args["path"] != "a.go" {
		t.Fatalf("first step = %+v, want read_file(a.go)", first.Parts[0])
	}
	resp := func(path string, lines int) *genai.Content {
		return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
			Name: toolRead, Response: map[string]any{"path": path, "bytes": 20.0, "lines": float64(lines), "content": "package a\nfunc A() {}\n"},
		}}}}
	}
	req.Contents = append(req.Contents, first, resp("a.go", 2))
	second := respond(req)
	if fc := second.Parts[0].FunctionCall; fc == nil || fc.Args["path"] != "b.go" {
		t.Fatalf("second step = %+v, want read_file(b.go)", second.Parts[0])
	}
	req.Contents = append(req.Contents, second, resp("b.go", 2))
	final := contentText(respond(req))
	for _, want := range []string{"`a.go`: 2 lines, 20 bytes", "`b.go`", "starts with `package a`"} {
		if !strings.Contains(final, want) {
			t.Errorf("answer lacks %q: %s", want, final)
		}
	}
	// The user message compacted away: answer from what is visible, never loop.
	only := &model.LLMRequest{Contents: []*genai.Content{genai.NewContentFromText(compaction.SummaryHeader+"\nGoal: x", genai.RoleUser)}}
	if c := respond(only); c.Parts[0].FunctionCall != nil || !strings.Contains(contentText(c), "summary") {
		t.Errorf("answer without a user message = %+v", c.Parts[0])
	}
}

func TestChart(t *testing.T) {
	turns := []TurnFigures{
		{Turn: 1, PromptTokensWith: 1000, PromptTokensWithout: 1000},
		{Turn: 2, PromptTokensWith: 1200, PromptTokensWithout: 250_000},
		{Turn: 3, PromptTokensWith: 1, PromptTokensWithout: 0},
	}
	var b strings.Builder
	writeChart(&b, turns, 80)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("chart has %d lines, want 7:\n%s", len(lines), b.String())
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line is %d columns: %q", n, l)
		}
	}
	if !strings.Contains(lines[3], strings.Repeat("░", 40)) || !strings.HasSuffix(lines[3], "250,000") {
		t.Errorf("the peak bar is not full width: %q", lines[3])
	}
	if !strings.Contains(lines[4], "▏") {
		t.Errorf("a tiny non-zero value must still show: %q", lines[4])
	}
	if got := thousands(1234567); got != "1,234,567" {
		t.Errorf("thousands = %q", got)
	}
}
