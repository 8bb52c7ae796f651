package hooks_test

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"testing"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
)

// turnModel is a model that keeps nothing: it calls read_file once per turn, then answers.
type turnModel struct{}

func (turnModel) Name() string { return "turn-model" }

func (turnModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	content := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": "main.go"}}}}}
	if last := req.Contents[len(req.Contents)-1]; last.Parts[0].FunctionResponse != nil {
		content = genai.NewContentFromText("main.go starts the server.", genai.RoleModel)
	}
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: content, TurnComplete: true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 200, CandidatesTokenCount: 20}}, nil)
	}
}

// BenchmarkHeapKeptPerDeletedSession runs n invocations, each on a new session that is deleted
// through the wrapped service right after (the turn calls a tool and answers), through adk-go's
// runner wired with Hooks.Wire (compaction on), and reports the heap still in use afterwards,
// after a garbage collection, per invocation (kept_B/invocation). A session deleted leaves
// nothing behind: the figure is flat from 1,000 to 10,000 invocations.
//
//	go test -run '^$' -bench BenchmarkHeapKeptPerDeletedSession -benchtime 1x .   (in hooks/)
func BenchmarkHeapKeptPerDeletedSession(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var kept float64
			for b.Loop() {
				kept += heapKeptPerDeletedSession(b, n)
			}
			b.ReportMetric(kept/float64(b.N), "kept_B/invocation")
		})
	}
}

// heapKeptPerDeletedSession returns the heap kept per invocation after n invocations on
// sessions deleted after their turn.
func heapKeptPerDeletedSession(b *testing.B, n int) float64 {
	b.StopTimer()
	h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{}})
	if err != nil {
		b.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "coder", Model: turnModel{}, Instruction: "You are a careful coding assistant.",
		Tools: []tool.Tool{&rawTool{name: "read_file", result: map[string]any{"content": "package main\n\nfunc main() {}\n"}}}})
	if err != nil {
		b.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		b.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		b.Fatal(err)
	}
	before := heapInUse()
	b.StartTimer()
	ctx := b.Context()
	for i := range n {
		id := fmt.Sprint("s-", i)
		for _, err := range r.Run(ctx, "user", id, genai.NewContentFromText("What does main.go do?", genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := rc.SessionService.Delete(ctx, &session.DeleteRequest{AppName: appName, UserID: "user", SessionID: id}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := h.Close(ctx); err != nil {
		b.Fatal(err)
	}
	kept := float64(heapInUse()) - float64(before)
	runtime.KeepAlive(r)
	runtime.KeepAlive(h)
	b.StartTimer()
	return kept / float64(n)
}

// heapInUse is the heap in use after a full garbage collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
