package request_test

import (
	"fmt"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/processors/request"
)

func ExampleNormalize() {
	call := func(name string) *genai.Part { return &genai.Part{FunctionCall: &genai.FunctionCall{Name: name}} }
	resp := func(name string) *genai.Part {
		return &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: name, Response: map[string]any{"result": "ok"}}}
	}
	req := &request.LLMRequest{Contents: []*genai.Content{
		{Role: "user", Parts: []*genai.Part{{Text: "check the repo"}}},
		// Three parallel calls (ids blanked by adk-go), answered out of order, one answer missing,
		// one answer to a call that was never made.
		{Role: "model", Parts: []*genai.Part{call("git_status"), call("list_dir"), call("git_log")}},
		{Role: "user", Parts: []*genai.Part{resp("git_log"), resp("git_status"), resp("ghost")}},
		{Role: "model", Parts: []*genai.Part{{Text: "done"}}},
	}}

	rep := request.Normalize(req)
	for _, p := range req.Contents[2].Parts {
		fmt.Println(p.FunctionResponse.Name, p.FunctionResponse.Response)
	}
	fmt.Printf("synthetic %v, orphans %v, reordered %d\n", rep.SyntheticNames, rep.OrphanNames, rep.Reordered)
	again := request.Normalize(req)
	fmt.Printf("second run: %d synthetic, %d orphans, %d reordered\n", again.SyntheticResponses, again.OrphansRemoved, again.Reordered)
	// Output:
	// git_status map[result:ok]
	// list_dir map[error:aborted: no result is available for this call (it was interrupted or its result was lost)]
	// git_log map[result:ok]
	// synthetic [list_dir], orphans [ghost], reordered 1
	// second run: 0 synthetic, 0 orphans, 0 reordered
}
