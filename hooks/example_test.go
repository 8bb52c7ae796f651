package hooks_test

import (
	"context"
	"fmt"
	"iter"
	"log"

	"go.uber.org/zap"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
)

// echoModel stands in for a real model (gemini.NewModel(...) in an application): it answers
// every request with "ok" and reports usage as a real model does.
type echoModel struct{}

func (echoModel) Name() string { return "echo-model" }

func (echoModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		prompt := int32(0)
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				prompt += int32(len(p.Text)/4 + 1)
			}
		}
		yield(&model.LLMResponse{
			Content:       genai.NewContentFromText("ok", genai.RoleModel),
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: prompt, CandidatesTokenCount: 1, TotalTokenCount: prompt + 1},
			TurnComplete:  true,
		}, nil)
	}
}

// Wiring adkctx into an adk-go runner with one call: Wire adds adkctx's plugin and wraps the
// session service. A complete program (SQLite sessions, saved outputs, the recall tools) is
// example/quickstart in the repository. Summaries are written by the agent's own model (its
// prompt cache serves them); the extractive summarizer, which needs no model, is the fallback.
func Example() {
	ctx := context.Background()
	llm := echoModel{} // your model.LLM
	h, err := hooks.New(adkctx.Config{
		Logger: zap.NewNop(), // your *zap.Logger
		Compaction: &compaction.Config{
			Summarizer: &compaction.LLMSummarizer{Model: hooks.SummarizerModel(llm)},
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	assistant, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Instruction: "Be brief."})
	if err != nil {
		log.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{
		AppName:           "demo",
		Agent:             assistant,
		SessionService:    session.InMemoryService(), // or database.NewSessionService(...)
		AutoCreateSession: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		log.Fatal(err)
	}

	for ev, err := range r.Run(ctx, "user", "s1", genai.NewContentFromText("hello", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.Author+":", ev.Content.Parts[0].Text)
	}
	usage := h.Usage("demo", "user", "s1")
	fmt.Println("user turns:", usage.Turns, "model calls:", usage.ModelCalls, "prompt tokens reported:", usage.Last.Prompt > 0)
	// Close lets background compactions finish and returns wiring mistakes, also without a
	// logger: check its error.
	if err := h.Close(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// assistant: ok
	// user turns: 1 model calls: 1 prompt tokens reported: true
}
