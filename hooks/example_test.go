package hooks_test

import (
	"context"
	"fmt"
	"log"

	"go.uber.org/zap"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/internal/llmtest"
)

// Wiring adkctx into an adk-go agent, as the README shows: the callbacks go into
// llmagent.Config, the plugin and the session wrapper into runner.Config.
func Example() {
	ctx := context.Background()
	llm := &llmtest.Model{UsageScale: 1} // any model.LLM, e.g. gemini.NewModel(...)

	h, err := hooks.New(hooks.Config{
		Logger:     zap.NewNop(), // your *zap.Logger
		Compaction: &compaction.Config{Interval: 5, Overlap: 2},
	})
	if err != nil {
		log.Fatal(err)
	}
	assistant, err := llmagent.New(llmagent.Config{
		Name: "assistant", Model: llm, Instruction: "Be brief.",
		BeforeModelCallbacks: []llmagent.BeforeModelCallback{h.BeforeModel()},
		AfterModelCallbacks:  []llmagent.AfterModelCallback{h.AfterModel()},
		AfterToolCallbacks:   []llmagent.AfterToolCallback{h.AfterTool()},
	})
	if err != nil {
		log.Fatal(err)
	}
	adkctxPlugin, err := h.Plugin()
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(runner.Config{
		AppName:           "demo",
		Agent:             assistant,
		SessionService:    h.SessionService(session.InMemoryService()),
		PluginConfig:      runner.PluginConfig{Plugins: []*plugin.Plugin{adkctxPlugin}},
		AutoCreateSession: true,
	})
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
	fmt.Println("model calls:", usage.Turns, "prompt tokens:", usage.Last.Prompt > 0)
	// Output:
	// assistant: ok
	// model calls: 1 prompt tokens: true
}
