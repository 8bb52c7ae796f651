package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/processors/request"
)

// middleTwins returns two texts of equal length, with equal first and last 200 bytes, that differ
// only in the middle: before and after are what differs (of equal length).
func middleTwins(before, after string) (string, string) {
	head := strings.Repeat("=== RUN   TestHandler\n--- PASS: TestHandler (0.00s)\n", 8)
	tail := strings.Repeat("ok  \texample.com/service\t0.012s\n", 8)
	return head + before + tail, head + after + tail
}

// A summary on the agent's model is sent a request the agent sent, byte for byte, whatever its
// tool outputs: two outputs of equal length that differ only in their middle (a test run that
// passed, then failed; two reads of one file; truncation notes naming different saved outputs)
// are two contents. Before, the session's log of sent requests took contents with equal prints
// for the same content, and the prints looked at a text's length and edges only: the summarizer
// was sent the first output twice (the tests passed) and a prompt no request held, which no
// prompt cache serves.
func TestSummaryPromptIsARequestTheAgentSent(t *testing.T) {
	pass, fail := middleTwins("--- PASS: TestService (0.01s)\n", "--- FAIL: TestService (0.01s)\n")
	v1, v2 := middleTwins("\treturn process(ctx, req, 7)\n", "\treturn process(ctx, req, 9)\n")
	note := func(name string) string {
		return strings.Repeat("line of the file\n", 20) + "[... 12,288 bytes omitted; whole output saved as " + name + " ...]\n" + strings.Repeat("end of the file\n", 20)
	}
	for _, tc := range []struct {
		name    string
		tool    string
		outputs [2]map[string]any // turn 0's and turn 1's result
	}{
		{"test run passed then failed", "run_tests", [2]map[string]any{{"output": pass, "exit_code": 0.0}, {"output": fail, "exit_code": 0.0}}},
		{"one file read twice", "read_file", [2]map[string]any{{"content": v1}, {"content": v2}}},
		{"truncation notes", "read_file", [2]map[string]any{{"content": note("read_file-call-0041")}, {"content": note("read_file-call-0042")}}},
		{"nested values", "inspect", [2]map[string]any{{"result": map[string]any{"items": []any{pass, 1.0}}}, {"result": map[string]any{"items": []any{fail, 1.0}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if a, b := jsonText(tc.outputs[0]), jsonText(tc.outputs[1]); a == b || len(a) != len(b) {
				t.Fatalf("the outputs must differ in their middle only:\n%s\n%s", a, b)
			}
			sent, prompts := runToolTurns(t, tc.tool, tc.outputs[:])
			if len(prompts) == 0 {
				t.Fatal("no summary was asked for")
			}
			for k, p := range prompts {
				if !isPrefixOfSent(p.Contents[:len(p.Contents)-1], sent) {
					t.Errorf("summary prompt %d (%d contents) is no request the agent sent, byte for byte", k+1, len(p.Contents))
				}
				for turn, out := range tc.outputs {
					if !strings.Contains(jsonText(p.Contents), jsonText(out)) {
						t.Errorf("summary prompt %d lacks turn %d's output", k+1, turn)
					}
				}
			}
		})
	}
}

// runToolTurns plays three invocations on an engine whose summarizer is an LLM on the agent's
// model (every 2 invocations, 1 kept raw): in invocation k the model calls tool, which returns
// outputs[k%len(outputs)], and answers. It returns the agent's requests as sent (JSON of their
// contents) and the summary prompts.
func runToolTurns(t *testing.T, tool string, outputs []map[string]any) (sent []string, prompts []*request.LLMRequest) {
	t.Helper()
	model := &summaryModel{}
	info := budget.ModelInfo{Name: model.Name(), ContextWindow: 1_048_576, MaxOutputTokens: 8192}
	e, err := New(adkctx.Config{Models: []budget.ModelInfo{info},
		Compaction: &compaction.Config{Synchronous: true, Interval: 2, RetainRecentInvocations: 1, Summarizer: &compaction.LLMSummarizer{Model: model}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer e.Close(ctx)
	store := &memStore{}
	if err := e.UseStore(store); err != nil {
		t.Fatal(err)
	}
	s := compactor.Session{App: "app", User: "user", ID: "s1"}
	var contents []*genai.Content
	at := time.Unix(1000, 0)
	event := func(inv, author string, final bool, c *genai.Content) {
		at = at.Add(time.Second)
		store.mu.Lock()
		store.events = append(store.events, compaction.Event{ID: fmt.Sprint("ev-", len(store.events)), InvocationID: inv, Author: author,
			Final: final, Timestamp: at, Content: c})
		store.mu.Unlock()
		contents = append(contents, c)
	}
	ask := func(inv string) {
		// adk-go builds every request afresh from the events: new contents, equal values.
		var fresh []*genai.Content
		for _, c := range contents {
			fresh = append(fresh, cloneContent(t, c))
		}
		req := &request.LLMRequest{Model: info.Name, Contents: fresh}
		if err := e.BeforeModel(ctx, testCall{inv: inv, agent: "agent"}, nil, req, nil); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, jsonText(req.Contents))
	}
	for k := range 3 {
		inv := fmt.Sprint("inv-", k)
		e.BeforeRun(ctx, s, inv, nil, true, func() []compaction.Event { return nil })
		event(inv, "user", false, genai.NewContentFromText(fmt.Sprintf("turn %d: run %s and tell me what you see", k, tool), genai.RoleUser))
		ask(inv)
		event(inv, "agent", false, &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: tool, Args: map[string]any{"target": "./..."}}}}})
		event(inv, "agent", false, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: tool, Response: outputs[k%len(outputs)]}}}})
		ask(inv)
		event(inv, "agent", true, genai.NewContentFromText(fmt.Sprintf("turn %d: I read what %s returned.", k, tool), genai.RoleModel))
		e.AfterRun(ctx, s, inv, nil)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	return sent, model.reqs
}

// isPrefixOfSent reports whether contents, as JSON, are the first contents of one of the sent
// requests (JSON arrays of contents).
func isPrefixOfSent(contents []*genai.Content, sent []string) bool {
	p := strings.TrimSuffix(jsonText(contents), "]")
	for _, s := range sent {
		if s == p+"]" || strings.HasPrefix(s, p+",") {
			return true
		}
	}
	return false
}

func cloneContent(t *testing.T, c *genai.Content) *genai.Content {
	t.Helper()
	var out genai.Content
	if err := json.Unmarshal([]byte(jsonText(c)), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
