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

// Ask whether adkctx knows a model's window and where its figures come from: the built-in
// table, an application's entry (an entry without a window keeps the built-in one), or the
// fallback for a model nobody named.
func ExampleRegistry_Lookup() {
	reg := budget.NewRegistry(budget.ModelInfo{Name: "gemini-2.5-flash", MaxOutputTokens: 8_192})
	for _, name := range []string{"gemini-2.5-flash-001", "gpt-4.1-mini", "mystery-model"} {
		info, known := reg.Lookup(name)
		fmt.Println(name, known, info.ContextWindow, info.MaxOutputTokens, info.Source)
	}
	// Output:
	// gemini-2.5-flash-001 true 1048576 8192 override
	// gpt-4.1-mini true 1047576 32768 builtin
	// mystery-model false 128000 8192 fallback
}

// Read the usage a model response reports and add it up.
func ExampleUsageFrom() {
	first := budget.UsageFrom(&genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 12_000, CandidatesTokenCount: 300, CachedContentTokenCount: 8_000})
	second := budget.UsageFrom(&genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 12_500, CandidatesTokenCount: 200, CachedContentTokenCount: 12_000})
	sum := first.Add(second)
	fmt.Println(sum.Prompt, sum.Cached, sum.Output, sum.Total)
	// Output:
	// 24500 20000 500 25000
}

// Check a model table and limits read from a file before handing them to adkctx (hooks.New
// checks them too, every invalid field at once): a window below MinContextWindow, or fractions
// out of order, are refused.
func ExampleModelInfo_Validate() {
	for _, m := range []budget.ModelInfo{
		{Name: "my-local-llama", ContextWindow: 32_768},
		{Name: "tiny", ContextWindow: budget.MinContextWindow / 2},
	} {
		fmt.Println(m.Name, "valid:", m.Validate() == nil)
	}
	fmt.Println("soft above hard valid:", budget.LimitConfig{SoftFraction: 0.9, HardFraction: 0.8}.Validate() == nil)
	// Output:
	// my-local-llama valid: true
	// tiny valid: false
	// soft above hard valid: false
}
