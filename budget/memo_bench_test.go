package budget

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// chainContents is the history of processors/request's BenchmarkChain:
// user questions, model tool calls, ~1 KB tool outputs and model answers.
func chainContents(n int) *model.LLMRequest {
	req := &model.LLMRequest{Model: "gemini-2.5-flash", Config: &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(strings.Repeat("You are a coding assistant. ", 40), genai.RoleUser),
	}}
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

// BenchmarkEstimatorContent estimates the 1,000 contents of the chain
// benchmark's history one EstimateContent call at a time (as
// processors/request.EnforceBudget does), on a fresh adk-go-style clone
// each iteration (clone not timed): "plain" without an Estimator,
// "estimator" through a long-lived one, "each" through
// Estimator.EstimateEach (one call for all contents). Reports ns per
// content.
//
//	go test -run '^$' -bench BenchmarkEstimatorContent -benchmem ./budget/
func BenchmarkEstimatorContent(b *testing.B) {
	base := chainContents(1000)
	for _, bc := range []struct {
		name string
		e    *Estimator
		each bool
	}{{"plain", nil, false}, {"estimator", NewEstimator(0), false}, {"each", NewEstimator(0), true}} {
		b.Run(bc.name, func(b *testing.B) {
			bc.e.EstimateRequest(base)
			var ns time.Duration
			total := 0
			sizes := make([]int, len(base.Contents))
			for b.Loop() {
				r := cloneRequest(base)
				t0 := time.Now()
				if bc.each {
					total = bc.e.EstimateEach(r.Contents, sizes)
				} else {
					total = 0
					for _, c := range r.Contents {
						total += bc.e.EstimateContent(c)
					}
				}
				ns += time.Since(t0)
			}
			if want := EstimateContents(base.Contents); total < want-len(base.Contents) || total > want+len(base.Contents) {
				b.Fatalf("total %d, want about %d", total, want)
			}
			b.ReportMetric(float64(ns.Nanoseconds())/float64(b.N)/float64(len(base.Contents)), "ns/content")
		})
	}
}
