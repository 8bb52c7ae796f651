package readback

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/plan"
	"github.com/adkctx/adkctx/internal/marks"
	"github.com/adkctx/adkctx/processors/truncate"

	"github.com/adkctx/adkctx/recall"
)

// cutResult is a tool result as adkctx stores it after truncation: each long leaf cut, its mark
// naming the saved output (OutputNote), as the engine's AfterTool writes it.
func cutResult(t *testing.T, result map[string]any, cfg truncate.Config) (map[string]any, []string) {
	t.Helper()
	var names []string
	v, _ := truncate.Value(result, cfg, func(c truncate.Cut) string {
		name := OutputName("run_tests", "call-7", c.Index, c.Count, true)
		names = append(names, name)
		return OutputNote(name)
	})
	cut, ok := v.(map[string]any)
	if !ok || len(names) == 0 {
		t.Fatalf("nothing was cut: %v", v)
	}
	return cut, names
}

// oneTurn is one invocation whose tool result is result.
func oneTurn(result map[string]any) []compaction.Event {
	ev := turnEvents(1, "", "run the tests", "")
	ev[2].Content = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("run_tests", result)}}
	return ev
}

// Every excerpt read_turn shows of a result truncation cut keeps the cut marks of the part it
// leaves out, which name the saved output and the tool that reads it: the class is one mark in the
// middle of a string, marks of two cut strings, a list's omitted-elements mark inside JSON, a
// mark just past the excerpt's head, and all of them in segments of the previous release, which
// record no marks (read_turn finds them in the text).
func TestReadTurnExcerptKeepsCutMarks(t *testing.T) {
	log := testLog(3000)
	var runs []any
	for i := range 400 {
		runs = append(runs, map[string]any{"name": fmt.Sprintf("TestCase%d", i), "ok": i != 123})
	}
	nearHead := strings.Repeat("x", 700) + "\n" + log
	cfg := truncate.Config{MaxBytes: 10 << 10, MaxLines: 256}
	for _, tc := range []struct {
		name   string
		result map[string]any
		cfg    truncate.Config
	}{
		{"one log", map[string]any{"output": log, "exit_code": 1}, cfg},
		{"stdout and stderr", map[string]any{"stdout": log, "stderr": strings.ReplaceAll(log, "line", "err")}, cfg},
		{"a list of runs", map[string]any{"runs": runs}, cfg},
		{"mark right after the head", map[string]any{"output": nearHead}, truncate.Config{MaxBytes: 1600, MaxLines: 40}},
	} {
		for _, previous := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/previous release %v", tc.name, previous), func(t *testing.T) {
				stored, names := cutResult(t, tc.result, tc.cfg)
				st := newMemStore(1024)
				if previous {
					writePreviousRelease(t, st, 1, oneTurn(stored))
				} else if _, err := WriteHistory(context.Background(), st, oneTurn(stored), 1); err != nil {
					t.Fatal(err)
				}
				label := "turn 1"
				if previous {
					label = "turn 1.1"
				}
				res, err := ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: label}, Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(res.Text, "excerpt") {
					t.Fatalf("the result is not shown as an excerpt:\n%s", res.Text)
				}
				for _, name := range names {
					if !strings.Contains(res.Text, OutputNote(name)) && !strings.Contains(res.Text, jsonQuoted(OutputNote(name))) {
						t.Errorf("the excerpt does not name %s:\n%s", name, res.Text)
					}
				}
				if n := strings.Count(res.Text, truncate.MarkerPrefix); n > len(names)+1 {
					t.Errorf("%d marks shown for %d cuts:\n%s", n, len(names), res.Text)
				}
			})
		}
	}
}

// jsonQuoted is s as it appears inside a JSON string.
func jsonQuoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// writePreviousRelease saves events as the previous release wrote segments: a header without
// this release's fields (format, scope, cut marks, turn numbers and heads).
func writePreviousRelease(t *testing.T, st recall.Store, seq int, events []compaction.Event) {
	t.Helper()
	data := buildSegment(events, 0).encode(seq)
	nl := strings.IndexByte(string(data), '\n')
	var gotSeq, hlen int
	if _, err := fmt.Sscanf(string(data[:nl]), historyMagic+" seq=%d header=%d", &gotSeq, &hlen); err != nil {
		t.Fatal(err)
	}
	var h segmentHeader
	if err := json.Unmarshal(data[nl+1:nl+1+hlen], &h); err != nil {
		t.Fatal(err)
	}
	h.Format, h.Scope = 0, ""
	for i := range h.Entries {
		h.Entries[i].Marks = nil
	}
	for i := range h.Turns {
		h.Turns[i].No, h.Turns[i].Head = 0, ""
	}
	hj, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hj), `"f":`) || strings.Contains(string(hj), `"m":`) || strings.Contains(string(hj), `"no":`) || strings.Contains(string(hj), `"h":`) {
		t.Fatalf("the header still holds this release's fields: %s", hj)
	}
	hj = append(hj, '\n')
	old := fmt.Appendf(nil, "%s seq=%d header=%d\n", historyMagic, seq, len(hj))
	old = append(append(old, hj...), data[nl+1+hlen:]...)
	if _, err := st.Save(context.Background(), HistoryName(seq), old, historyMIME); err != nil {
		t.Fatal(err)
	}
}

// An excerpt of a result truncation cut names the output truncation saved, with the sizes of
// that output, whichever note the cut carries (with the recall tools or without), and
// SaveExcerpts saves no copy of it; a result holding a text truncation did not cut keeps its own
// saved excerpt for that text. The rewrite is a pure function of what the view shows.
func TestExcerptOfCutResultNamesTheCutsOutput(t *testing.T) {
	long, other := testLog(3000), strings.ReplaceAll(testLog(150), "line", "err")
	withTools := func(name string) string { return OutputNote(name) }
	withoutTools := func(name string) string { return fmt.Sprintf("full output saved as artifact %q", name) }
	for _, tc := range []struct {
		name   string
		result map[string]any
		note   func(string) string
		// cut: the keys truncation cuts; own: whether the excerpt needs its own saved output.
		cut []string
		own bool
	}{
		{"one output, recall tools", map[string]any{"output": long, "exit_code": 1}, withTools, []string{"output"}, false},
		{"one output, no recall tools", map[string]any{"output": long}, withoutTools, []string{"output"}, false},
		{"two outputs cut", map[string]any{"stdout": long, "stderr": long + "tail"}, withTools, []string{"stderr", "stdout"}, false},
		{"one output cut, one whole", map[string]any{"stdout": long, "stderr": other}, withTools, []string{"stdout"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			cfg := truncate.Config{MaxBytes: 16 << 10, MaxLines: 400}
			v, _ := truncate.Value(tc.result, cfg, func(c truncate.Cut) string {
				name := OutputName("run_tests", "call-7", c.Index, c.Count, true)
				names = append(names, name)
				return tc.note(name)
			})
			stored := v.(map[string]any)
			if len(names) != len(tc.cut) {
				t.Fatalf("truncation cut %d texts, want %d", len(names), len(tc.cut))
			}
			ev := compaction.Event{ID: "e-1", InvocationID: "inv-1", Author: "user", Timestamp: t0,
				Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("run_tests", stored)}}}
			got := plan.ExcerptsOf([]compaction.Event{ev}, &compaction.Marker{ExcerptedEventIDs: []string{ev.ID}, ExcerptBytes: 1024})
			if len(got) != 1 {
				t.Fatalf("ExcerptsOf = %v", got)
			}
			shown := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("run_tests", got[0].Shown)}}
			out := RewriteNotes([]*genai.Content{shown}, Installed{Outputs: true})
			resp := out[0].Parts[0].FunctionResponse.Response
			for i, key := range tc.cut {
				text, _ := resp[key].(string)
				orig := tc.result[key].(string)
				found := marks.Find(text)
				if len(found) != 1 {
					t.Fatalf("%s: %d marks, want 1:\n%s", key, len(found), text)
				}
				m := found[0]
				if m.Note != excerptNote(names[i]) {
					t.Errorf("%s: note %q, want %q", key, m.Note, excerptNote(names[i]))
				}
				lines := strings.Count(orig, "\n")
				if !strings.HasSuffix(orig, "\n") {
					lines++
				}
				if m.OriginalLines != lines || m.OriginalBytes != len(orig) {
					t.Errorf("%s: original %d lines, %d bytes; want %d, %d", key, m.OriginalLines, m.OriginalBytes, lines, len(orig))
				}
				// The excerpt keeps its text but the mark and the newlines around it (one of
				// them added when the head ends mid-line).
				if kept := len(text) - (m.End - m.Start) - 1; m.OmittedBytes < len(orig)-kept || m.OmittedBytes > len(orig)-kept+1 {
					t.Errorf("%s: %d bytes omitted; the excerpt keeps %d of %d", key, m.OmittedBytes, kept, len(orig))
				}
			}
			own := excerptName("run_tests", got[0].Shown)
			if s := mustJSON(t, resp); strings.Contains(s, own) != tc.own {
				t.Errorf("the excerpt names its own output %s: %v, want %v\n%s", own, !tc.own, tc.own, s)
			}
			st := newMemStore(4096)
			n, err := SaveExcerpts(context.Background(), st, got)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{false: 0, true: 1}[tc.own]; n != want {
				t.Errorf("SaveExcerpts saved %d outputs, want %d", n, want)
			}
			// Equal stored results, equal bytes; the rewrite is idempotent.
			again := plan.ExcerptsOf([]compaction.Event{ev}, &compaction.Marker{ExcerptedEventIDs: []string{ev.ID}, ExcerptBytes: 1024})
			shown2 := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("run_tests", again[0].Shown)}}
			if a, b := mustJSON(t, out), mustJSON(t, RewriteNotes([]*genai.Content{shown2}, Installed{Outputs: true})); a != b {
				t.Errorf("two views of one result differ:\n%s\n%s", a, b)
			}
			if a, b := mustJSON(t, out), mustJSON(t, RewriteNotes(out, Installed{Outputs: true})); a != b {
				t.Errorf("not idempotent:\n%s\n%s", a, b)
			}
		})
	}
}
