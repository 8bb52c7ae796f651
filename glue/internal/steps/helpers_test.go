package steps

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"
)

func nzCall(id, name string) *genai.Part {
	return &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: map[string]any{"q": name + id}}}
}

func nzResp(id, name string, v string) *genai.Part {
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: map[string]any{"result": v}}}
}

func nzText(s string) *genai.Part { return &genai.Part{Text: s} }

func nzModel(parts ...*genai.Part) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: parts}
}

func nzUser(parts ...*genai.Part) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// snapshot deep-copies contents through JSON, to detect mutation of the originals.
func nzSnapshot(t testing.TB, cs []*genai.Content) string {
	t.Helper()
	b, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nzHistory builds n contents of a tool-using conversation: user text, model call(s), user
// responses, model text. When broken, every 10th response content loses a response, every 7th
// gets an orphan and every 6th has its responses out of order. Every 25th response is a big (20 KB) output.
func nzHistory(n int, broken bool) []*genai.Content {
	cs := make([]*genai.Content, 0, n)
	big := strings.Repeat("log line with some content\n", 20000/27)
	for i := 0; len(cs) < n; i++ {
		switch i % 4 {
		case 0:
			cs = append(cs, nzUser(nzText(fmt.Sprintf("request %d: please look at file_%d.go", i, i))))
		case 1:
			cs = append(cs, nzModel(nzCall("", "read_file"), nzCall("", "grep")))
		case 2:
			out := "package main\n\nfunc main() {}\n"
			if i%25 == 2 {
				out = big
			}
			c := nzUser(nzResp("", "read_file", out), nzResp("", "grep", "3 matches"))
			if broken && i%6 == 2 {
				c.Parts[0], c.Parts[1] = c.Parts[1], c.Parts[0]
			}
			if broken && i%10 == 2 {
				c.Parts = c.Parts[:1]
			}
			if broken && i%7 == 2 {
				c.Parts = append(c.Parts, nzResp("x", "ghost", "?"))
			}
			cs = append(cs, c)
		case 3:
			cs = append(cs, nzModel(nzText("Here is what I found in the file; it looks fine.")))
		}
	}
	return cs
}

func nzJSONCost(b *testing.B, cs []*genai.Content) time.Duration {
	// The fastest of several runs: the machine is shared, and the minimum is the stable figure.
	best := time.Duration(1<<63 - 1)
	for range 15 {
		t0 := time.Now()
		if _, err := json.Marshal(cs); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	return best
}
