package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"
)

// This file holds the stand-ins: a test tool whose output is too long to send whole, and the
// offline model. An application has its own tools and a real model.

type runTestsArgs struct {
	Package string `json:"package" jsonschema:"the package pattern to test, like ./..."`
}

// newRunTestsTool is a tool that "runs the tests": 400 lines of go test -v output with one
// failure in the middle, past what adkctx sends of a tool result (10 KiB, 256 lines by default):
// the model gets the head and the tail, and the whole output is saved for the recall tools.
func newRunTestsTool() (tool.Tool, error) {
	return functiontool.New(functiontool.Config{Name: "run_tests", Description: "Runs go test -v on a package pattern and returns its output."},
		func(_ agent.ToolContext, a runTestsArgs) (map[string]any, error) {
			var b strings.Builder
			for i := range 200 {
				if i == 97 {
					b.WriteString("=== RUN   TestRefundRounding\n--- FAIL: TestRefundRounding (0.00s)\n" +
						"    refund_test.go:42: refund of 10.005 EUR rounded to 10.00, want 10.01 (half-even)\n")
					continue
				}
				fmt.Fprintf(&b, "=== RUN   TestInvoiceLine%03d\n--- PASS: TestInvoiceLine%03d (0.00s)\n", i, i)
			}
			fmt.Fprintf(&b, "FAIL\nFAIL\texample.com/shop/billing [%s]\t0.412s\n", a.Package)
			return map[string]any{"output": b.String()}, nil
		})
}

// offlineModelName names the offline model (adkctx is told its window).
const offlineModelName = "quickstart-offline"

// offlineModel answers like a model that follows a plan: asked about the tests, it runs them;
// given a cut test log, it searches the saved whole output for the failure; given the search's
// result, it reports the failure. It reports usage as a model does (about 4 bytes per token),
// which calibrates adkctx's budget.
type offlineModel struct{}

func (offlineModel) Name() string { return offlineModelName }

func (offlineModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		answer := offlineAnswer(req)
		in, _ := json.Marshal(req.Contents)
		cfg, _ := json.Marshal(req.Config)
		out, _ := json.Marshal(answer)
		prompt, output := int32((len(in)+len(cfg))/4), int32(len(out)/4)
		yield(&model.LLMResponse{
			Content:      answer,
			FinishReason: genai.FinishReasonStop,
			TurnComplete: true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount: prompt, CandidatesTokenCount: output, TotalTokenCount: prompt + output,
			},
		}, nil)
	}
}

// offlineAnswer is the next step of the plan for the request's newest content.
func offlineAnswer(req *model.LLMRequest) *genai.Content {
	if len(req.Contents) == 0 {
		return genai.NewContentFromText("Hello.", genai.RoleModel)
	}
	last := req.Contents[len(req.Contents)-1]
	var question string
	for _, p := range last.Parts {
		if r := p.FunctionResponse; r != nil {
			switch r.Name {
			case "run_tests":
				return genai.NewContentFromFunctionCall("search_saved_outputs", map[string]any{"query": "--- FAIL"}, genai.RoleModel)
			case "search_saved_outputs":
				found, _ := r.Response["result"].(string)
				return genai.NewContentFromText(reportFailure(found), genai.RoleModel)
			case "read_saved_output":
				page, _ := r.Response["result"].(string)
				return genai.NewContentFromText("Here is that part of the log:\n"+page, genai.RoleModel)
			}
		}
		question += p.Text
	}
	q := strings.ToLower(question)
	switch {
	case strings.Contains(q, "test"):
		return genai.NewContentFromFunctionCall("run_tests", map[string]any{"package": "./..."}, genai.RoleModel)
	case strings.Contains(q, "log"):
		if name, line := failureSeen(req.Contents); name != "" {
			return genai.NewContentFromFunctionCall("read_saved_output",
				map[string]any{"name": name, "range": fmt.Sprintf("%d-%d", max(line-3, 1), line+4)}, genai.RoleModel)
		}
		return genai.NewContentFromText("I have not seen a test log yet.", genai.RoleModel)
	default:
		return genai.NewContentFromText("You are welcome.", genai.RoleModel)
	}
}

var (
	savedName   = regexp.MustCompile(`adkctx-tool-output-[A-Za-z0-9_-]+\.txt`)
	matchedLine = regexp.MustCompile(`(?m)^(\d+):--- FAIL`)
)

// failureSeen returns the name of the newest saved output the conversation mentions and the
// line of the failure a search found in it (0: none found).
func failureSeen(contents []*genai.Content) (name string, line int) {
	for _, c := range contents {
		for _, p := range c.Parts {
			if p.FunctionResponse == nil {
				continue
			}
			text := fmt.Sprint(p.FunctionResponse.Response)
			if n := savedName.FindAllString(text, -1); n != nil {
				name = n[len(n)-1]
			}
			if m := matchedLine.FindStringSubmatch(text); m != nil {
				line, _ = strconv.Atoi(m[1])
			}
		}
	}
	return name, line
}

// reportFailure quotes the failing test's lines of a search result.
func reportFailure(found string) string {
	var lines []string
	for _, l := range strings.Split(found, "\n") {
		if strings.Contains(l, "FAIL: ") || strings.Contains(l, "_test.go:") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) == 0 {
		return "The saved test output shows no failure."
	}
	return "From the saved test output:\n" + strings.Join(lines, "\n")
}
