package readback

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/plan"
	"github.com/adkctx/adkctx/internal/marks"
	"github.com/adkctx/adkctx/processors/truncate"

	"github.com/adkctx/adkctx/recall"
)

// The truncation note carries the name whole within the cut mark's 200-byte note, for the names
// adkctx gives (tool and call id, as adk-go makes them) and longer ones.
func TestOutputNoteFitsTheCutMark(t *testing.T) {
	for _, name := range []string{
		OutputPrefix + "run_tests-adk-0f8fad5b-d9cb-469f-a165-70867728950e.txt",
		OutputPrefix + "run_tests-adk-0f8fad5b-d9cb-469f-a165-70867728950e-2.bin",
		OutputPrefix + strings.Repeat("t", 64) + "-adk-0f8fad5b-d9cb-469f-a165-70867728950e.txt",
	} {
		cut, st := truncate.Text(strings.Repeat("line of a long output\n", 2000), truncate.Config{}, OutputNote(name))
		if !st.Truncated {
			t.Fatal("not cut")
		}
		if !strings.Contains(cut, fmt.Sprintf("%q", name)) {
			t.Errorf("the cut mark does not hold %q whole:\n%s", name, cut[strings.Index(cut, truncate.MarkerPrefix):][:300])
		}
		if len(name) < 100 && !strings.Contains(cut, recall.ToolReadOutput) {
			t.Errorf("the cut mark does not name %s:\n%s", recall.ToolReadOutput, cut[strings.Index(cut, truncate.MarkerPrefix):][:300])
		}
	}
}

// An excerpt's name depends on the tool and on what the view shows of the result, nothing else;
// every name is one the read tool accepts.
func TestExcerptName(t *testing.T) {
	a := map[string]any{"output": "head\n[... output truncated: 10 lines ...]\ntail", "exit_code": 1.0}
	b := map[string]any{"exit_code": 1.0, "output": "head\n[... output truncated: 10 lines ...]\ntail"}
	c := map[string]any{"output": "head\n[... output truncated: 11 lines ...]\ntail", "exit_code": 1.0}
	if excerptName("run_tests", a) != excerptName("run_tests", b) {
		t.Error("equal results, different names")
	}
	names := map[string]bool{excerptName("run_tests", a): true, excerptName("run_tests", c): true, excerptName("read_file", a): true,
		excerptName("weird/tool name "+strings.Repeat("x", 300), a): true, excerptName("", nil): true}
	if len(names) != 5 {
		t.Errorf("names collide: %v", names)
	}
	for name := range names {
		if err := ValidateOutputName(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}

// excerpted is a tool result shown as an excerpt by the view of a real marker.
func excerpted(t *testing.T, tool, text string) (plan.Excerpted, *genai.Content) {
	t.Helper()
	ev := compaction.Event{ID: "e-" + text[:8], InvocationID: "inv-1", Author: "user", Timestamp: t0,
		Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse(tool, map[string]any{"output": text})}}}
	got := plan.ExcerptsOf([]compaction.Event{ev}, &compaction.Marker{ExcerptedEventIDs: []string{ev.ID}, ExcerptBytes: 1024})
	if len(got) != 1 {
		t.Fatalf("ExcerptsOf = %v", got)
	}
	shown := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse(tool, got[0].Shown)}}
	return got[0], shown
}

func longLog(fact string) string {
	var b strings.Builder
	for i := range 400 {
		if i == 200 {
			b.WriteString(fact + "\n")
		}
		fmt.Fprintf(&b, "=== RUN   TestCase%03d\n--- PASS: TestCase%03d (0.00s)\n", i, i)
	}
	return b.String()
}

// For a model with the recall tools, the note of an excerpt names the saved output that holds
// the result whole (SaveExcerpts saved it under that name), and the summary says the earlier
// turns can be searched; without them, the bytes stay as they are. The step is copy-on-write,
// idempotent and byte-stable.
func TestRewriteNotes(t *testing.T) {
	ex, shown := excerpted(t, "run_tests", longLog("--- FAIL: TestCheckout order REQ-7f3a9c"))
	summary := genai.NewContentFromText(compaction.SummaryHeader+"\nGoal: ship it.", genai.RoleUser)
	contents := []*genai.Content{summary, genai.NewContentFromText("go on", genai.RoleUser), shown}
	before, _ := json.Marshal(contents)

	same, rep := rewriteNotes(contents, Installed{})
	if fmt.Sprint(same) != fmt.Sprint(contents) || rep != (notesReport{}) {
		t.Errorf("without the tools the contents changed: %+v", rep)
	}
	out, rep := rewriteNotes(contents, Installed{Outputs: true, History: true})
	if after, _ := json.Marshal(contents); string(after) != string(before) {
		t.Error("the step changed its input")
	}
	if rep != (notesReport{Excerpts: 1, Summary: true}) {
		t.Errorf("report %+v", rep)
	}
	name := excerptName("run_tests", ex.Shown)
	text := out[2].Parts[0].FunctionResponse.Response["output"].(string)
	if strings.Contains(text, marks.ExcerptNote) || !strings.Contains(text, excerptNote(name)) {
		t.Errorf("excerpt note not rewritten:\n%s", text)
	}
	if !strings.HasSuffix(out[0].Parts[0].Text, SummaryLine()) || !compaction.IsSummary(out[0]) {
		t.Errorf("summary:\n%s", out[0].Parts[0].Text)
	}
	if out[1] != contents[1] {
		t.Error("an unchanged content was copied")
	}
	again, rep := rewriteNotes(out, Installed{Outputs: true, History: true})
	if diff := cmp.Diff(out, again); diff != "" || rep != (notesReport{}) {
		t.Errorf("not idempotent (%+v):\n%s", rep, diff)
	}
	twice, _ := rewriteNotes(contents, Installed{Outputs: true, History: true})
	if a, b := mustJSON(t, out), mustJSON(t, twice); a != b {
		t.Errorf("two rewrites of one request differ:\n%s\n%s", a, b)
	}
	// Each tool alone rewrites its own notes.
	if o, r := rewriteNotes(contents, Installed{Outputs: true}); r != (notesReport{Excerpts: 1}) || o[0] != summary {
		t.Errorf("outputs only: %+v", r)
	}
	if o, r := rewriteNotes(contents, Installed{History: true}); r != (notesReport{Summary: true}) || o[2] != shown {
		t.Errorf("history only: %+v", r)
	}

	// The saved output the note names holds the result whole.
	st := newMemStore(4096)
	if n, err := SaveExcerpts(context.Background(), st, []plan.Excerpted{ex}); err != nil || n != 1 {
		t.Fatalf("SaveExcerpts = %d, %v", n, err)
	}
	res, err := SearchOutputs(context.Background(), st, SearchRequest{Query: "REQ-7f3a9c", Name: name}, Limits{})
	if err != nil || !strings.Contains(res.Text, "order REQ-7f3a9c") {
		t.Errorf("search of %s: %v\n%v", name, err, res)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// SaveExcerpts saves each result once: equal excerpts of different results share their output
// (both results in it, in order), and a result saved already is not saved again.
func TestSaveExcerpts(t *testing.T) {
	a, _ := excerpted(t, "run_tests", longLog("order REQ-aaaaaa"))
	b, _ := excerpted(t, "run_tests", longLog("order REQ-bbbbbb"))
	b.EventID, b.InvocationID = "e-other", "inv-2"
	if excerptName(a.Tool, a.Shown) != excerptName(b.Tool, b.Shown) {
		t.Fatal("the two excerpts differ: the test needs equal ones")
	}
	st := newMemStore(4096)
	ctx := context.Background()
	if n, err := SaveExcerpts(ctx, st, []plan.Excerpted{a, b}); err != nil || n != 1 {
		t.Fatalf("SaveExcerpts = %d, %v", n, err)
	}
	name := excerptName(a.Tool, a.Shown)
	res, err := SearchOutputs(ctx, st, SearchRequest{Query: "order REQ-", Name: name, Context: 0}, Limits{})
	if err != nil || strings.Count(res.Text, ":order REQ-") != 2 || strings.Index(res.Text, "REQ-aaaaaa") > strings.Index(res.Text, "REQ-bbbbbb") {
		t.Errorf("both results, in order: %v\n%v", err, res)
	}
	page, err := ReadOutput(ctx, st, name, "1-3", Limits{})
	if err != nil || !strings.Contains(page.Text, "run_tests result · invocation inv-1") {
		t.Errorf("the output does not say which result it holds: %v\n%v", err, page)
	}
	if n, err := SaveExcerpts(ctx, st, []plan.Excerpted{a, b}); err != nil || n != 0 {
		t.Errorf("saving again = %d, %v; want nothing saved", n, err)
	}
	if got := len(st.outputs[name]); got != 1 {
		t.Errorf("%d versions, want 1", got)
	}
	if n, err := SaveExcerpts(ctx, st, nil); err != nil || n != 0 {
		t.Errorf("nothing to save = %d, %v", n, err)
	}
}

// Installed reads the request's declarations.
func TestInstalledIn(t *testing.T) {
	decl := func(names ...string) *genai.GenerateContentConfig {
		tool := &genai.Tool{}
		for _, n := range names {
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, &genai.FunctionDeclaration{Name: n})
		}
		return &genai.GenerateContentConfig{Tools: []*genai.Tool{{}, nil, tool}}
	}
	for _, tc := range []struct {
		cfg  *genai.GenerateContentConfig
		want Installed
	}{
		{nil, Installed{}},
		{decl("read_file"), Installed{}},
		{decl(ToolNames()...), Installed{Outputs: true, History: true}},
		{decl("read_file", recall.ToolReadOutput), Installed{Outputs: true}},
		{decl(recall.ToolSearchHistory, recall.ToolReadTurn), Installed{History: true}},
		{decl(recall.ToolSearchHistory), Installed{}},
	} {
		if got := InstalledIn(tc.cfg); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.cfg, got, tc.want)
		}
	}
}

// Whatever a tool result holds around the view's note, the rewrite neither panics nor changes
// its input, leaves no view note behind, and is idempotent.
func FuzzRewriteNotes(f *testing.F) {
	f.Add("head\n[... output truncated: 3 lines; ", " ...]\ntail", "run_tests")
	f.Add("", "", "")
	f.Add("\xff\xfe", marks.ExcerptNote, "weird/tool name")
	f.Fuzz(func(t *testing.T, before, after, tool string) {
		resp := map[string]any{"output": before + marks.ExcerptNote + after, "items": []any{after, map[string]any{"x": before}}, "n": 1.0}
		contents := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse(tool, resp)}}}
		in := mustJSON(t, contents)
		out, rep := rewriteNotes(contents, Installed{Outputs: true, History: true})
		if mustJSON(t, contents) != in {
			t.Fatal("the input changed")
		}
		if rep.Excerpts != 1 || strings.Contains(mustJSON(t, out), mustJSON(t, marks.ExcerptNote)[1:len(mustJSON(t, marks.ExcerptNote))-1]) {
			t.Fatalf("report %+v, result %s", rep, mustJSON(t, out))
		}
		again, rep := rewriteNotes(out, Installed{Outputs: true, History: true})
		if mustJSON(t, again) != mustJSON(t, out) || rep.Excerpts != 0 {
			t.Fatal("not idempotent")
		}
	})
}

// A truncation cut's name is one the read tool accepts, whatever the tool's name and call id
// hold (dots, slashes, spaces, non-ASCII, hundreds of bytes), and distinct per cut.
func TestOutputNameIsAlwaysValid(t *testing.T) {
	for _, tc := range []struct{ tool, call string }{
		{"run_tests", "adk-1f2e"},
		{"fs.read..file", "a..b"},
		{"../../etc/passwd", "/x y"},
		{"générer_rapport", "call-é"},
		{strings.Repeat("t", 500), strings.Repeat("c", 500)},
		{"", ""},
	} {
		one := OutputName(tc.tool, tc.call, 0, 1, true)
		first, second := OutputName(tc.tool, tc.call, 0, 2, false), OutputName(tc.tool, tc.call, 1, 2, false)
		for _, name := range []string{one, first, second} {
			if err := ValidateOutputName(name); err != nil {
				t.Errorf("OutputName(%.20q, %.20q) = %q: %v", tc.tool, tc.call, name, err)
			}
		}
		if first == second || one == first {
			t.Errorf("cuts of one result share a name: %q, %q, %q", one, first, second)
		}
	}
}
