package steps_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/processors/request"
)

func userText(s string) *genai.Content  { return genai.NewContentFromText(s, genai.RoleUser) }
func modelText(s string) *genai.Content { return genai.NewContentFromText(s, genai.RoleModel) }

func modelCall(name string) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: map[string]any{"q": name}}}}}
}

func toolResult(name, out string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: map[string]any{"output": out}}}}}
}

// limitsOf gives hard = soft = n tokens.
func limitsOf(n int) budget.Limits {
	return budget.Limits{Window: 4 * n, Usable: 2 * n, Soft: n, Hard: n}
}

// checkPairs fails when a function response has no call before it in contents, or a call has no
// response after it.
func checkPairs(t *testing.T, contents []*genai.Content) {
	t.Helper()
	open := map[string]int{}
	for _, c := range contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				open[p.FunctionCall.Name]++
			}
			if fr := p.FunctionResponse; fr != nil {
				if open[fr.Name] == 0 {
					t.Fatalf("response of %q without its call", fr.Name)
				}
				open[fr.Name]--
			}
		}
	}
	for name, n := range open {
		if n != 0 {
			t.Fatalf("call of %q without its response", name)
		}
	}
}

func TestEnforceBudgetDropsOldestWholeTurns(t *testing.T) {
	big := strings.Repeat("word ", 400) // ~500 tokens
	req := &request.LLMRequest{Model: "m", Contents: []*genai.Content{
		userText("first " + big), modelCall("a"), toolResult("a", big), modelText("done " + big),
		userText("second " + big), modelText("ok"),
		userText("newest question"),
	}}
	d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(1_000)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != steps.ActionTrimmed || d.TurnsDropped != 1 || d.ExchangesDropped != 0 {
		t.Fatalf("decision %+v, want the first turn dropped", d)
	}
	if got := req.Contents[0].Parts[0].Text; !strings.Contains(got, "1 earlier conversation turns") {
		t.Errorf("marker %q", got)
	}
	if last := req.Contents[len(req.Contents)-1].Parts[0].Text; last != "newest question" {
		t.Errorf("newest user message lost: last content %q", last)
	}
	checkPairs(t, req.Contents)
}

// A turn that is one user message followed by a long tool loop (req.Contents ends with a function
// response) is not refused while the user message and the newest steps fit: the loop's oldest
// steps are left out, never splitting a call from its response.
func TestEnforceBudgetTrimsTheNewestTurnsToolLoop(t *testing.T) {
	big := strings.Repeat("line of build output\n", 100) // ~500 tokens
	contents := []*genai.Content{userText("old question"), modelText("old answer"), userText("build and fix everything")}
	for _, name := range []string{"s1", "s2", "s3", "s4", "s5", "s6"} {
		contents = append(contents, modelCall(name), toolResult(name, big))
	}
	req := &request.LLMRequest{Model: "m", Contents: contents}
	d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(1_500)})
	if err != nil {
		t.Fatalf("refused a tool loop whose newest steps fit: %v", err)
	}
	if d.Action != steps.ActionTrimmed || d.TurnsDropped != 1 || d.ExchangesDropped == 0 {
		t.Fatalf("decision %+v", d)
	}
	if d.FinalTokens > 1_500 {
		t.Errorf("final %d tokens over the hard limit", d.FinalTokens)
	}
	if got := req.Contents[0].Parts[0].Text; got != "build and fix everything" {
		t.Errorf("first content %q, want the newest user message", got)
	}
	if got := req.Contents[1].Parts[0].Text; !strings.Contains(got, "oldest model steps of the current turn") {
		t.Errorf("marker %q", got)
	}
	last := req.Contents[len(req.Contents)-1]
	if fr := last.Parts[0].FunctionResponse; fr == nil || fr.Name != "s6" {
		t.Errorf("newest step lost")
	}
	if prev := req.Contents[len(req.Contents)-2]; prev.Role != genai.RoleModel {
		t.Errorf("the newest call was split from its response")
	}
	checkPairs(t, req.Contents)
}

// When the newest step does not fit, its tool results are cut (head and tail kept) to the room
// left; only a request whose newest turn does not fit even then is refused, unchanged.
func TestEnforceBudgetCutsTheNewestResultsBeforeRefusing(t *testing.T) {
	big := strings.Repeat("line of build output\n", 100) + "FAILED: exit status 2\n"
	contents := []*genai.Content{userText("build"), modelCall("s1"), toolResult("s1", big), modelCall("s2"), toolResult("s2", big+big+big)}
	req := &request.LLMRequest{Model: "m", Contents: contents}
	d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(1_000)})
	if err != nil {
		t.Fatalf("refused a turn whose results can be cut: %v", err)
	}
	if d.ResponsesCut == 0 || d.FinalTokens > 1_000 {
		t.Fatalf("decision %+v, want results cut under the hard limit", d)
	}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil && !strings.HasSuffix(fr.Response["output"].(string), "FAILED: exit status 2\n") {
				t.Errorf("the tail of %s was lost", fr.Name)
			}
		}
	}
	checkPairs(t, req.Contents)

	huge := []*genai.Content{userText(strings.Repeat("word ", 2_000))}
	req = &request.LLMRequest{Model: "m", Contents: huge}
	_, err = steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(1_000)})
	var tooBig *request.BudgetExceededError
	if !errors.As(err, &tooBig) {
		t.Fatalf("err = %v, want *BudgetExceededError", err)
	}
	if len(req.Contents) != 1 || req.Contents[0] != huge[0] {
		t.Errorf("refused request was modified")
	}
}

// Eight parallel results that each fit the per-result limit but not together share one budget.
func TestEnforceBudgetParallelResultsShareOneBudget(t *testing.T) {
	out := strings.Repeat("x", 9_000) + "\nresult tail"
	call := &genai.Content{Role: genai.RoleModel}
	resp := &genai.Content{Role: genai.RoleUser}
	for k := range 8 {
		name := string(rune('a' + k))
		call.Parts = append(call.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{Name: name}})
		resp.Parts = append(resp.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: name, Response: map[string]any{"output": out}}})
	}
	req := &request.LLMRequest{Model: "m", Contents: []*genai.Content{userText("read them all"), call, resp}}
	d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(8_000)})
	if err != nil {
		t.Fatal(err)
	}
	if d.ResponsesCut != 8 || d.FinalTokens > 8_000 {
		t.Fatalf("decision %+v, want all 8 results cut to fit", d)
	}
	for _, p := range req.Contents[2].Parts {
		if !strings.HasSuffix(p.FunctionResponse.Response["output"].(string), "result tail") {
			t.Errorf("tail of %s lost", p.FunctionResponse.Name)
		}
	}
}

// Without a user message at the head of the newest turn, no step is left out; its results are
// cut instead.
func TestEnforceBudgetKeepsALoopWithoutUserMessage(t *testing.T) {
	big := strings.Repeat("line of build output\n", 100)
	contents := []*genai.Content{modelCall("s1"), toolResult("s1", big), modelCall("s2"), toolResult("s2", big), modelCall("s3"), toolResult("s3", big)}
	req := &request.LLMRequest{Model: "m", Contents: contents}
	d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(1_000)})
	if err != nil {
		t.Fatal(err)
	}
	if d.ExchangesDropped != 0 || d.ResponsesCut != 3 || len(req.Contents) != len(contents) {
		t.Fatalf("decision %+v with %d contents, want every step kept and its result cut", d, len(req.Contents))
	}
	checkPairs(t, req.Contents)
}

func isSummary(c *genai.Content) bool {
	return len(c.Parts) > 0 && strings.HasPrefix(c.Parts[0].Text, "[Summary of earlier conversation]")
}

// The summary of earlier conversation is pinned: trimming leaves out the oldest raw turns after
// it, and the decision says it was present.
func TestEnforceBudgetKeepsTheSummary(t *testing.T) {
	big := strings.Repeat("word ", 400) // ~500 tokens
	summary := userText("[Summary of earlier conversation]\nGoal: fix the build. User instructions: never touch vendor/")
	req := &request.LLMRequest{Model: "m", Contents: []*genai.Content{
		summary,
		userText("turn one " + big), modelText("answer one " + big),
		userText("turn two " + big), modelText("answer two"),
		userText("newest question"),
	}}
	d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(1_000), Pinned: isSummary})
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != steps.ActionTrimmed || !d.SummaryPresent || d.SummaryCut || d.TurnsDropped != 1 {
		t.Fatalf("decision %+v, want one raw turn dropped and the summary kept whole", d)
	}
	if req.Contents[0] != summary {
		t.Fatalf("first content is %q, want the summary", req.Contents[0].Parts[0].Text)
	}
	if got := req.Contents[1].Parts[0].Text; !strings.Contains(got, "1 earlier conversation turns") {
		t.Errorf("trim note %q after the summary", got)
	}
}

// When the summary and the newest turn alone do not fit, the summary is cut head and tail with a
// visible marker, never left out.
func TestEnforceBudgetCutsTheSummaryLast(t *testing.T) {
	summary := userText("[Summary of earlier conversation]\nGoal: fix the build.\n" + strings.Repeat("- a fact we learned\n", 400) + "Open tasks: run the tests")
	req := &request.LLMRequest{Model: "m", Contents: []*genai.Content{summary, userText("old"), modelText("old answer"), userText("newest question")}}
	d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(1_000), Pinned: isSummary})
	if err != nil {
		t.Fatal(err)
	}
	if !d.SummaryCut || d.FinalTokens > 1_000 {
		t.Fatalf("decision %+v, want the summary cut to fit", d)
	}
	text := req.Contents[0].Parts[0].Text
	if !strings.HasPrefix(text, "[Summary of earlier conversation]") || !strings.HasSuffix(text, "Open tasks: run the tests") || !strings.Contains(text, "summary cut to fit") {
		t.Errorf("summary head, tail or marker lost:\n%s", text)
	}
	if last := req.Contents[len(req.Contents)-1].Parts[0].Text; last != "newest question" {
		t.Errorf("newest message lost")
	}
}

// A request that still fits leaving out the turns the previous request left out leaves out the
// same turns (same prefix, served from a provider's cache); a new cut goes down to halfway between
// the soft and the hard limit.
func TestEnforceBudgetTrimsInLargeSteps(t *testing.T) {
	big := strings.Repeat("word ", 400) // ~500 tokens per turn
	var contents []*genai.Content
	for i := range 12 {
		contents = append(contents, userText(fmt.Sprint("turn ", i, " ", big)), modelText("ok"))
	}
	contents = append(contents, userText("newest"))
	limits := budget.Limits{Window: 8_000, Usable: 7_000, Soft: 3_000, Hard: 5_000}
	req := &request.LLMRequest{Model: "m", Contents: slices.Clone(contents)}
	d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	if d.FinalTokens > (limits.Soft+limits.Hard)/2 {
		t.Fatalf("new cut left %d tokens, want ≤ %d", d.FinalTokens, (limits.Soft+limits.Hard)/2)
	}
	// One more turn: the same cut still fits and is kept.
	grown := append(slices.Clone(contents), modelText("answer"), userText("one more"))
	req2 := &request.LLMRequest{Model: "m", Contents: grown}
	d2, err := steps.EnforceBudget(req2, steps.BudgetInput{Limits: limits, PreviousTurnsDropped: d.TurnsDropped})
	if err != nil {
		t.Fatal(err)
	}
	if d2.TurnsDropped != d.TurnsDropped {
		t.Fatalf("second request dropped %d turns, first %d: the prefix moved", d2.TurnsDropped, d.TurnsDropped)
	}
	for i := range req.Contents {
		if req.Contents[i] != req2.Contents[i] && req.Contents[i].Parts[0].Text != req2.Contents[i].Parts[0].Text {
			t.Fatalf("content %d differs between the two requests", i)
		}
	}
}

// forContext is what adk-go sends for another agent's event (a transfer, in a multi-agent app).
func forContext(line string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "For context:"}, {Text: line}}}
}

// Another agent's output, rewritten by adk-go as "For context:" user content, does not start a
// turn: trimming never keeps it while leaving out the user message that started the turn.
func TestEnforceBudgetKeepsTheUserMessageBeforeForeignContext(t *testing.T) {
	big := strings.Repeat("word ", 400) // ~500 tokens
	ask := "please fix the build: " + big + big + big
	req := &request.LLMRequest{Model: "m", Contents: []*genai.Content{
		userText("old question " + big), modelText("old answer " + big),
		userText(ask),
		forContext("[router] called tool `transfer_to_agent` with parameters: {\"agent_name\":\"builder\"}"),
		forContext("[router] `transfer_to_agent` tool returned result: {}"),
		modelText("on it"),
	}}
	d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(1_000)})
	var tooBig *request.BudgetExceededError
	if errors.As(err, &tooBig) {
		return // refused: the newest turn (user message included) does not fit
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range req.Contents {
		if c.Parts[0].Text == ask || d.MessageCut && strings.HasPrefix(c.Parts[0].Text, "please fix the build: word word") {
			return
		}
	}
	t.Errorf("decision %+v: the newest user message was left out while another agent's context was kept", d)
}

// The floor is what a request keeps before anything it needs is cut: the system instruction and
// tools, the pinned summary, the newest turn's first content (the task) and its newest step.
func TestEnforceBudgetReportsTheFloor(t *testing.T) {
	summary := userText("Summary of the conversation so far: " + strings.Repeat("fact ", 60))
	pinned := func(c *genai.Content) bool { return c == summary }
	task := userText("Fix the failing test in " + strings.Repeat("pkg/", 10))
	older := []*genai.Content{userText(strings.Repeat("earlier question ", 40)), modelText(strings.Repeat("earlier answer ", 40))}
	step1 := []*genai.Content{modelCall("grep"), toolResult("grep", strings.Repeat("a.go:1: x\n", 80))}
	step2 := []*genai.Content{modelCall("cat"), toolResult("cat", strings.Repeat("func f() {}\n", 30))}
	est := func(cs ...*genai.Content) int {
		n := 0
		for _, c := range cs {
			n += budget.EstimateContent(c)
		}
		return n
	}
	cfg := &genai.GenerateContentConfig{SystemInstruction: userText("You are a careful agent.")}
	fixed := budget.EstimateRequest(nil, cfg)
	cases := []struct {
		name     string
		contents []*genai.Content
		want     int
	}{
		{"summary, task and newest step", concat([]*genai.Content{summary}, older, []*genai.Content{task}, step1, step2), fixed + est(summary, task) + est(step2...)},
		{"no summary", concat(older, []*genai.Content{task}, step1, step2), fixed + est(task) + est(step2...)},
		{"the task alone", []*genai.Content{summary, task}, fixed + est(summary, task)},
		{"a final answer is the newest step", concat([]*genai.Content{task}, step1, []*genai.Content{modelText("done")}), fixed + est(task) + est(modelText("done"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := &request.LLMRequest{Contents: slices.Clone(tc.contents), Config: cfg}
			d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(1 << 20), Pinned: pinned})
			if err != nil {
				t.Fatal(err)
			}
			if d.FloorTokens != tc.want {
				t.Errorf("FloorTokens = %d, want %d", d.FloorTokens, tc.want)
			}
		})
	}
}

func concat(parts ...[]*genai.Content) []*genai.Content {
	var out []*genai.Content
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// A long task beside a long instruction in a small window (an agent's whole session is one
// turn): once the model has acted on the task, rather than refuse, the request keeps the task's
// head and tail, the newest step and the summary, each cut to a share of what the instruction
// leaves, so the agent goes on. A request is refused when the model has not seen the task yet,
// or when the instruction and tools leave too little.
func TestEnforceBudgetCutsTheTaskBeforeRefusing(t *testing.T) {
	const head = "Fix the bug in /testbed/src/pydicom/dataset.py: "
	const tail = " Do not change the tests."
	task := func(words int) string { return head + strings.Repeat("the issue text goes on ", words) + tail }
	step := func(k, lines int) []*genai.Content {
		name := fmt.Sprintf("s%d", k)
		return []*genai.Content{modelCall(name), toolResult(name, strings.Repeat(fmt.Sprintf("line %d of the output\n", k), lines)+"exit status 1\n")}
	}
	summary := userText(strings.Repeat("summary fact ", 300))
	for _, tc := range []struct {
		name                 string
		instruction, taskLen int // words
		steps, lines         int
		summary              bool
		hard                 int
	}{
		{"the task and one step", 1_200, 900, 1, 200, false, 3_500},
		{"the task and six steps", 1_000, 700, 6, 150, false, 3_500},
		{"a summary, the task and a step", 1_000, 600, 1, 300, true, 3_500},
		{"a short task, a long step", 2_000, 20, 1, 2_000, false, 3_500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			contents := []*genai.Content{}
			if tc.summary {
				contents = append(contents, summary)
			}
			contents = append(contents, userText(task(tc.taskLen)))
			for k := range tc.steps {
				contents = append(contents, step(k, tc.lines)...)
			}
			req := &request.LLMRequest{Model: "m", Contents: contents,
				Config: &genai.GenerateContentConfig{SystemInstruction: userText(strings.Repeat("rule ", tc.instruction))}}
			d, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(tc.hard), Pinned: func(c *genai.Content) bool { return c == summary }})
			if err != nil {
				t.Fatalf("refused (fixed %d tokens of %d): %v", d.FixedTokens, tc.hard, err)
			}
			if d.Action != steps.ActionTrimmed || d.FinalTokens > tc.hard {
				t.Fatalf("decision %+v: want trimmed under %d", d, tc.hard)
			}
			text := ""
			for _, c := range req.Contents {
				for _, p := range c.Parts {
					text += p.Text
				}
			}
			if !strings.Contains(text, head) || !strings.Contains(text, tail) {
				t.Errorf("the task's head or tail was lost (message cut %v)", d.MessageCut)
			}
			if d.MessageCut && !strings.Contains(text, "message cut to fit the context window") {
				t.Error("the task was cut without a visible marker")
			}
			if tc.steps > 0 {
				last := contents[len(contents)-2]
				if !slices.Contains(req.Contents, last) {
					t.Error("the newest step's call was left out")
				}
			}
			checkPairs(t, req.Contents)
		})
	}

	for _, tc := range []struct {
		name        string
		contents    []*genai.Content
		instruction int
	}{
		{"the model has not seen the task", []*genai.Content{userText(task(900))}, 1_200},
		{"the instruction leaves under 64 tokens", append([]*genai.Content{userText(task(900))}, step(0, 200)...), 3_150},
	} {
		req := &request.LLMRequest{Model: "m", Contents: slices.Clone(tc.contents),
			Config: &genai.GenerateContentConfig{SystemInstruction: userText(strings.Repeat("rule ", tc.instruction))}}
		_, err := steps.EnforceBudget(req, steps.BudgetInput{Limits: limitsOf(3_500)})
		var tooBig *request.BudgetExceededError
		if !errors.As(err, &tooBig) || !slices.Equal(req.Contents, tc.contents) {
			t.Errorf("%s: err = %v, want *BudgetExceededError and the request as it was", tc.name, err)
		}
	}
}
