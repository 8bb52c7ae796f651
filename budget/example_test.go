package budget_test

import (
	"fmt"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// Look a model up (version suffixes and "models/" prefixes are fine) and
// derive its limits.
func ExampleLimitsFor() {
	reg := budget.NewRegistry(budget.ModelInfo{Name: "my-local-llama", ContextWindow: 32_768, MaxOutputTokens: 4_096})
	for _, name := range []string{"models/gemini-2.5-flash-preview-05-20", "claude-sonnet-4-5-20250929", "my-local-llama", "mystery-model"} {
		l := budget.LimitsFor(reg, name, budget.LimitConfig{})
		fmt.Printf("%s known=%v window=%d reserved=%d soft=%d hard=%d\n", name, l.Known, l.Window, l.ReservedOutput, l.Soft, l.Hard)
	}
	// Output:
	// models/gemini-2.5-flash-preview-05-20 known=true window=1048576 reserved=65536 soft=688128 hard=933888
	// claude-sonnet-4-5-20250929 known=true window=200000 reserved=20000 soft=126000 hard=171000
	// my-local-llama known=true window=32768 reserved=3276 soft=20644 hard=28017
	// mystery-model known=false window=128000 reserved=8192 soft=83865 hard=113817
}

// Estimate a request: system instruction, tool declarations and contents
// (with adk-go: budget.EstimateRequest(req.Contents, req.Config)).
func ExampleEstimateRequest() {
	config := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("You are a helpful assistant.", genai.RoleUser),
	}
	contents := []*genai.Content{
		genai.NewContentFromText("List the files in the repository.", genai.RoleUser),
		genai.NewContentFromFunctionCall("run_shell", map[string]any{"cmd": "ls"}, genai.RoleModel),
		genai.NewContentFromFunctionResponse("run_shell", map[string]any{"output": "README.md\ngo.mod\nmain.go\n"}, genai.RoleUser),
	}
	fmt.Println("text:", budget.EstimateText("List the files in the repository."))
	fmt.Println("request:", budget.EstimateRequest(contents, config))
	// Output:
	// text: 9
	// request: 66
}

// Account usage per user turn and estimate how many turns remain before the soft limit.
func ExampleTally() {
	var t budget.Tally
	limits := budget.LimitsFor(nil, "my-test-model", budget.LimitConfig{}) // fallback: soft 83,865
	for i, prompt := range []int32{10_000, 14_000, 18_000} {
		md := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: prompt, CandidatesTokenCount: 500}
		t.Add(fmt.Sprint("inv-", i), budget.UsageFrom(md))
	}
	r := t.Report(limits)
	fmt.Printf("turns=%d calls=%d last_prompt=%d avg_growth=%.0f turns_remaining=%d\n", r.Turns, r.ModelCalls, r.Last.Prompt, r.AvgTurnGrowth, r.TurnsRemaining)
	// Output:
	// turns=3 calls=3 last_prompt=18000 avg_growth=4000 turns_remaining=16
}

// Estimate one content, a history (no config) and a whole request with its system instruction,
// as a budget check that may drop the oldest contents needs.
func ExampleEstimateContent() {
	history := []*genai.Content{
		genai.NewContentFromText("List the files of the repository.", genai.RoleUser),
		genai.NewContentFromFunctionCall("list_files", map[string]any{"dir": "."}, genai.RoleModel),
		genai.NewContentFromFunctionResponse("list_files", map[string]any{"output": "go.mod\nmain.go\nREADME.md\n"}, genai.RoleUser),
	}
	system := genai.NewContentFromText("You are a careful coding assistant.", genai.RoleUser)
	fmt.Println(budget.EstimateContent(history[2]), budget.EstimateRequest(history, nil),
		budget.EstimateRequest(history, &genai.GenerateContentConfig{SystemInstruction: system}))
	// Output:
	// 26 53 66
}
