package request_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/truncate"
)

// chainRequest builds a realistic request of n contents: user questions, model tool calls, tool
// outputs of ~1 KB (within the truncation limits, as they are once stored through AfterTool) and
// model answers.
func chainRequest(n int) *model.LLMRequest {
	req := &model.LLMRequest{
		Model: "gemini-2.5-flash",
		Config: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText(strings.Repeat("You are a coding assistant. ", 40), genai.RoleUser),
		},
	}
	output := strings.Repeat("drwxr-xr-x  2 dev dev  4096 Nov 22 03:44 pkg\n", 22)
	for i := 0; len(req.Contents) < n; i++ {
		req.Contents = append(req.Contents,
			genai.NewContentFromText(fmt.Sprintf("Question %d: what does the package at pkg/%d do, and why?", i, i), genai.RoleUser),
			&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
				Name: "list_files", Args: map[string]any{"dir": fmt.Sprintf("pkg/%d", i), "recursive": true}}}}},
			&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				Name: "list_files", Response: map[string]any{"output": output, "entries": 22}}}}},
			genai.NewContentFromText(fmt.Sprintf("Package %d holds the storage layer; it lists 22 entries.", i), genai.RoleModel),
		)
	}
	req.Contents = req.Contents[:n]
	return req
}

// BenchmarkChain runs the BeforeModel processors (instructions, truncate, normalize, budget) on a
// 1,000-content request and reports their cost beside json.Marshal of the same request — the
// work any model adapter does anyway. Target: chain_vs_json ≤ 0.10.
func BenchmarkChain(b *testing.B) {
	base := chainRequest(1000)
	limits := budget.LimitsFor(budget.NewRegistry(), "gemini-2.5-flash", budget.LimitConfig{})
	instructions := strings.Repeat("Follow the repository's conventions. ", 200)
	cfg := truncate.Config{}
	estimator := budget.NewEstimator(0) // long-lived, as in hooks

	var chain, marshal time.Duration
	b.ReportAllocs()
	for b.Loop() {
		req := *base
		start := time.Now()
		request.InjectInstructions(&req, instructions)
		request.TruncateFunctionResponses(&req, cfg)
		request.Normalize(&req)
		if _, err := request.EnforceBudget(&req, request.BudgetInput{Limits: limits, Estimator: estimator}); err != nil {
			b.Fatal(err)
		}
		chain += time.Since(start)

		start = time.Now()
		if _, err := json.Marshal(base.Contents); err != nil {
			b.Fatal(err)
		}
		marshal += time.Since(start)
	}
	b.ReportMetric(float64(chain.Nanoseconds())/float64(b.N), "chain_ns/op")
	b.ReportMetric(float64(marshal.Nanoseconds())/float64(b.N), "json_ns/op")
	b.ReportMetric(float64(chain)/float64(marshal), "chain_vs_json")
}
