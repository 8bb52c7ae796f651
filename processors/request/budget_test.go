package request_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
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
	req := &model.LLMRequest{Model: "m", Contents: []*genai.Content{
		userText("first " + big), modelCall("a"), toolResult("a", big), modelText("done " + big),
		userText("second " + big), modelText("ok"),
		userText("newest question"),
	}}
	d, err := request.EnforceBudget(req, request.BudgetInput{Limits: limitsOf(1_000)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != request.ActionTrimmed || d.TurnsDropped != 1 || d.ExchangesDropped != 0 {
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
	req := &model.LLMRequest{Model: "m", Contents: contents}
	d, err := request.EnforceBudget(req, request.BudgetInput{Limits: limitsOf(1_500)})
	if err != nil {
		t.Fatalf("refused a tool loop whose newest steps fit: %v", err)
	}
	if d.Action != request.ActionTrimmed || d.TurnsDropped != 1 || d.ExchangesDropped == 0 {
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

// When the user message and the newest step alone do not fit, the request is refused unchanged.
func TestEnforceBudgetRefusesWhenNewestStepDoesNotFit(t *testing.T) {
	big := strings.Repeat("line of build output\n", 100)
	contents := []*genai.Content{userText("build"), modelCall("s1"), toolResult("s1", big), modelCall("s2"), toolResult("s2", big+big+big)}
	req := &model.LLMRequest{Model: "m", Contents: contents}
	_, err := request.EnforceBudget(req, request.BudgetInput{Limits: limitsOf(1_000)})
	var tooBig *request.BudgetExceededError
	if !errors.As(err, &tooBig) {
		t.Fatalf("err = %v, want *BudgetExceededError", err)
	}
	if len(req.Contents) != len(contents) {
		t.Errorf("refused request was modified")
	}
}

// Without a user message at the head of the newest turn, nothing inside it is dropped.
func TestEnforceBudgetKeepsALoopWithoutUserMessage(t *testing.T) {
	big := strings.Repeat("line of build output\n", 100)
	contents := []*genai.Content{modelCall("s1"), toolResult("s1", big), modelCall("s2"), toolResult("s2", big), modelCall("s3"), toolResult("s3", big)}
	req := &model.LLMRequest{Model: "m", Contents: contents}
	_, err := request.EnforceBudget(req, request.BudgetInput{Limits: limitsOf(1_000)})
	var tooBig *request.BudgetExceededError
	if !errors.As(err, &tooBig) {
		t.Fatalf("err = %v, want *BudgetExceededError", err)
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
	req := &model.LLMRequest{Model: "m", Contents: []*genai.Content{
		userText("old question " + big), modelText("old answer " + big),
		userText(ask),
		forContext("[router] called tool `transfer_to_agent` with parameters: {\"agent_name\":\"builder\"}"),
		forContext("[router] `transfer_to_agent` tool returned result: {}"),
		modelText("on it"),
	}}
	d, err := request.EnforceBudget(req, request.BudgetInput{Limits: limitsOf(1_000)})
	var tooBig *request.BudgetExceededError
	if errors.As(err, &tooBig) {
		return // refused: the newest turn (user message included) does not fit
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range req.Contents {
		if c.Parts[0].Text == ask {
			return
		}
	}
	t.Errorf("decision %+v: the newest user message was left out while another agent's context was kept", d)
}
