package scenario

import (
	"encoding/json"
	"testing"

	"google.golang.org/genai"
)

// The Rereads session's checklist reads and test runs are what the figure needs: outputs of one
// length, with the same first and last 64 bytes, that differ in their middle; and its model reads
// the checklist every other turn and runs the tests every fifth.
func TestRereadsOutputsDifferOnlyInTheMiddle(t *testing.T) {
	s := Rereads()
	ws := NewWorkspace(s)
	var checklists, runs []string
	var contents []*genai.Content
	for i := range 12 {
		contents = append(contents, genai.NewContentFromText(s.Message(i), genai.RoleUser))
		for {
			c := s.Reply(contents)
			contents = append(contents, c)
			fc := c.Parts[0].FunctionCall
			if fc == nil {
				break
			}
			out := ws.Run(fc.Name, fc.Args)
			contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: fc.Name, Response: out}}}})
			switch path, _ := fc.Args["path"].(string); {
			case path == ChecklistPath:
				checklists = append(checklists, out["content"].(string))
			case fc.Name == RunTests:
				b, _ := json.Marshal(out)
				runs = append(runs, string(b))
			}
		}
	}
	if len(checklists) != 6 || len(runs) != 2 {
		t.Fatalf("%d checklist reads and %d test runs in 12 turns, want 6 and 2", len(checklists), len(runs))
	}
	for name, outs := range map[string][]string{"checklist": checklists, "test run": runs} {
		for k := 1; k < len(outs); k++ {
			a, b := outs[k-1], outs[k]
			if len(a) != len(b) || a[:64] != b[:64] || a[len(a)-64:] != b[len(b)-64:] || a == b {
				t.Errorf("%s %d and %d: lengths %d, %d; they must differ only in their middle", name, k-1, k, len(a), len(b))
			}
		}
	}
}
