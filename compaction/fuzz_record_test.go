package compaction

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/fixtures"
)

// maxNoteRunes bounds the note textcut.Runes puts in a cut text.
const maxNoteRunes = 40

// FuzzReadShell: any string read as a shell script never panics, reads the same twice, and
// gives a bounded record: at most maxScriptOps operations on non-empty paths, a command line of
// at most maxCommandRunes runes (and a cut's note).
func FuzzReadShell(f *testing.F) {
	_, steps := fixtures.ShellSession()
	for _, s := range steps {
		f.Add(s.Command)
	}
	for _, s := range []string{
		"nl -ba a.py | sed -n '10,50p' | head -5", "bash -lc 'bash -c \"cat x\"'", "sed -n '1,$p;5p' f", "tail -n +0 f", "head -n -5 f",
		"cat <<EOF\n$(rm -rf /)\nEOF", "a=$(cat x) b=`cat y`", "f() { cat a.py; }; f", "case x in a) cat b;; esac", "(( i++ ))",
		"find flights from SFO to JFK", "echo \"unterminated", "x\x00y", "cd /r && cp -t dst a b", "git mv a b c/", "tee", "sed -i", "mv x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		at := scriptPlace(len(s) % 3) // every place, by the input
		a, okA := readShell(s, at)
		b, okB := readShell(s, at)
		if okA != okB || !cmp.Equal(a, b, cmp.AllowUnexported(shellScript{})) {
			t.Fatalf("readShell(%q) differs between two reads", s)
		}
		if !okA {
			return
		}
		if len(a.ops) > maxScriptOps {
			t.Fatalf("%d ops", len(a.ops))
		}
		for _, op := range a.ops {
			if op.Path == "" || len(op.Path) > 300 {
				t.Fatalf("op on path %q", op.Path)
			}
		}
		if n := utf8.RuneCountInString(a.line); n > maxCommandRunes+maxNoteRunes {
			t.Fatalf("command line of %d runes", n)
		}
	})
}

// FuzzToolStep: any call and result (a shell script and its output, or JSON arguments and a
// JSON result) give the same delta twice, bounded per step, that survives a JSON round trip;
// the ledger it builds renders within its bounds.
func FuzzToolStep(f *testing.F) {
	_, steps := fixtures.ShellSession()
	for _, s := range steps {
		f.Add(true, s.Command, s.Observation())
	}
	_, calls := fixtures.ServiceSession()
	for _, c := range calls {
		b, _ := json.Marshal(c.Args)
		f.Add(false, string(b), c.Result)
	}
	f.Add(true, "go test ./...", "--- FAIL: TestX (0.0s)\n    x_test.go:3: bad\nFAIL\nexit status 1")
	f.Add(false, `{"id": 12345678901234567890}`, `{"a": [[[[[[[[[[[["deep_1234"]]]]]]]]]]]]}`)
	f.Add(false, `{}`, `"{\"nested\": \"{\\\"x\\\": \\\"AB123\\\"}\"}"`)
	f.Add(false, `{"command": "just check 2>&1", "description": "Run checks", "timeout": 120000}`, "src/b.py:3:1\nExit code 1")
	f.Add(false, `{"command": "create", "path": "/repo/run.sh", "file_text": "#!/bin/bash\npython -m pytest tests/ -x"}`, `{"result": "ok"}`)
	f.Add(false, `{"patch": "--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n"}`, `"ok"`)
	f.Fuzz(func(t *testing.T, shell bool, arg, result string) {
		args := map[string]any{"command": arg}
		if !shell {
			args = map[string]any{}
			if json.Unmarshal([]byte(arg), &args) != nil {
				args = map[string]any{"query": arg}
			}
		}
		resp := map[string]any{"output": result}
		if !shell {
			var v any
			if json.Unmarshal([]byte(result), &v) == nil {
				if m, ok := v.(map[string]any); ok {
					resp = m
				} else {
					resp = map[string]any{"result": v}
				}
			}
		}
		events := []Event{
			{ID: "c", Author: "agent", Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "1", Name: "tool", Args: args}}}}},
			{ID: "r", Author: "agent", Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "1", Name: "tool", Response: resp}}}}},
		}
		d1, d2 := NewLedgerDelta(events, 1), NewLedgerDelta(events, 1)
		j1, err := json.Marshal(d1)
		if err != nil {
			t.Fatal(err)
		}
		if j2, _ := json.Marshal(d2); string(j1) != string(j2) {
			t.Fatalf("two deltas of the same events differ:\n%s\n%s", j1, j2)
		}
		var back LedgerDelta
		if err := json.Unmarshal(j1, &back); err != nil {
			t.Fatal(err)
		}
		if j3, _ := json.Marshal(&back); string(j3) != string(j1) {
			t.Fatalf("the delta does not survive a JSON round trip:\n%s\n%s", j1, j3)
		}
		for _, s := range d1.steps {
			if len(s.Files) > maxScriptOps+maxStepNamed || len(s.Values) > maxStepValues || len(s.Failing) > maxStepFailing {
				t.Fatalf("step over its bounds: %d files, %d values, %d failing", len(s.Files), len(s.Values), len(s.Failing))
			}
			if utf8.RuneCountInString(s.Call) > maxCallRunes+maxNoteRunes || utf8.RuneCountInString(s.Command) > maxCommandRunes+maxNoteRunes {
				t.Fatalf("call or command over its bound: %q %q", s.Call, s.Command)
			}
			for _, v := range s.Values {
				if utf8.RuneCountInString(v.Value) > maxValueRunes || utf8.RuneCountInString(v.Key) > maxKeyRunes+1 {
					t.Fatalf("value over its bound: %+v", v)
				}
			}
			for _, name := range s.Failing {
				if utf8.RuneCountInString(name) > maxTestRunes+maxNoteRunes {
					t.Fatalf("test name over its bound: %q", name)
				}
			}
		}
		l1, l2 := &Ledger{}, &Ledger{}
		l1.apply(d1)
		l2.apply(&back)
		a, b := l1.render(renderLimits{bytes: 4 << 10}, false), l2.render(renderLimits{bytes: 4 << 10}, false)
		if a != b || len(a) > 4<<10 {
			t.Fatalf("renders: %d and %d bytes, equal %v", len(a), len(b), a == b)
		}
		if facts := l1.render(renderLimits{tokens: 200}, true); !strings.HasPrefix(facts, secRecord) {
			t.Fatalf("facts render does not start with the record title: %q", facts)
		}
	})
}
