package hooks_test

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"log"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
)

// echoModel stands in for a real model (gemini.NewModel(...) in an application): it answers
// every request with "ok" (or its answer) and reports usage as a real model does.
type echoModel struct{ answer string }

func (echoModel) Name() string { return "echo-model" }

func (m echoModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		prompt := int32(0)
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				prompt += int32(len(p.Text)/4 + 1)
			}
		}
		yield(&model.LLMResponse{
			Content:       genai.NewContentFromText(cmp.Or(m.answer, "ok"), genai.RoleModel),
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

// Without Wire: the plugin and the session wrapper are the two halves a runner needs for the
// whole of adkctx (compaction included). A runner built by a framework that takes plugins and a
// session service separately gets them this way.
func ExampleHooks_Plugin() {
	h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{}})
	if err != nil {
		log.Fatal(err)
	}
	p, err := h.Plugin()
	if err != nil {
		log.Fatal(err)
	}
	assistant, err := llmagent.New(llmagent.Config{Name: "assistant", Model: echoModel{}})
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(runner.Config{
		AppName:           "demo",
		Agent:             assistant,
		SessionService:    h.SessionService(session.InMemoryService()),
		PluginConfig:      runner.PluginConfig{Plugins: []*plugin.Plugin{p}},
		AutoCreateSession: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, err := range r.Run(context.Background(), "user", "s1", genai.NewContentFromText("hello", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("wiring mistakes:", h.Check())
	// Output:
	// wiring mistakes: <nil>
}

// The model and tool callbacks alone, for one llmagent.Config: budgets, tool-output truncation,
// call/response normalization and AGENTS.md work without the plugin; compaction needs it.
func ExampleHooks_BeforeModel() {
	h, err := hooks.New(adkctx.Config{})
	if err != nil {
		log.Fatal(err)
	}
	assistant, err := llmagent.New(llmagent.Config{
		Name:                 "assistant",
		Model:                echoModel{},
		BeforeModelCallbacks: []llmagent.BeforeModelCallback{h.BeforeModel()},
		AfterModelCallbacks:  []llmagent.AfterModelCallback{h.AfterModel()},
		AfterToolCallbacks:   []llmagent.AfterToolCallback{h.AfterTool()},
	})
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(runner.Config{AppName: "demo", Agent: assistant, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, err := range r.Run(context.Background(), "user", "s1", genai.NewContentFromText("hello", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("model calls:", h.Usage("demo", "user", "s1").ModelCalls)
	// Output:
	// model calls: 1
}

// The limits a model's requests are held to, and where its window comes from: adkctx's
// registry of known models, Config.Models, or the fallback for a model it does not know.
func ExampleHooks_Limits() {
	h, err := hooks.New(adkctx.Config{Models: []budget.ModelInfo{{Name: "my-tuned-model", ContextWindow: 32_768}}})
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"gemini-2.5-flash", "my-tuned-model", "unknown-model"} {
		l := h.Limits(name)
		fmt.Printf("%s: %d tokens (%s), builtin %t, override %t, fallback %t\n", name, l.Window, l.Source,
			l.Source == budget.SourceBuiltin, l.Source == budget.SourceOverride, l.Source == budget.SourceFallback)
	}
	// Output:
	// gemini-2.5-flash: 1048576 tokens (builtin), builtin true, override false, fallback false
	// my-tuned-model: 32768 tokens (override), builtin false, override true, fallback false
	// unknown-model: 128000 tokens (fallback), builtin false, override false, fallback true
}

// Compacting a session now, as an application's "/compact" command would: the marker appended
// says what it covers and why, and the model's view of the session starts with its summary.
func ExampleHooks_Compact() {
	ctx := context.Background()
	// A manual compaction keeps a raw tail of RetainRecentTokens (by default 70% of the model's
	// soft limit, which this short session fits in): here only the newest invocation.
	h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{RetainRecentInvocations: 1, RetainRecentTokens: 1}})
	if err != nil {
		log.Fatal(err)
	}
	// Long answers: what a summary replaces must be larger than the summary.
	answer := strings.Repeat("I changed the grammar and checked every rule against the tests. ", 60)
	assistant, err := llmagent.New(llmagent.Config{Name: "assistant", Model: echoModel{answer: answer}})
	if err != nil {
		log.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: "demo", Agent: assistant, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		log.Fatal(err)
	}
	for _, text := range []string{"Fix the parser.", "Now the lexer.", "Run the tests."} {
		for _, err := range r.Run(ctx, "user", "s1", genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				log.Fatal(err)
			}
		}
	}
	marker, err := h.Compact(ctx, "demo", "user", "s1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("trigger:", marker.Trigger, marker.Trigger == compaction.TriggerManual)
	fmt.Println("invocations summarized:", marker.Invocations)

	got, err := rc.SessionService.Get(ctx, &session.GetRequest{AppName: "demo", UserID: "user", SessionID: "s1"})
	if err != nil {
		log.Fatal(err)
	}
	view := hooks.ModelView(got.Session)
	fmt.Println("the model reads first:", compaction.IsSummary(view[0].Content))
	fmt.Println("it stands for a marker:", view[0].CustomMetadata[compaction.SummaryMetadataKey] != nil)
	if err := h.Close(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// trigger: manual true
	// invocations summarized: 2
	// the model reads first: true
	// it stands for a marker: true
}

// The AGENTS.md files a run in a directory gets, merged, with where each came from.
func ExampleHooks_Instructions() {
	root, err := os.MkdirTemp("", "repo")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	service := filepath.Join(root, "services", "api")
	if err := os.MkdirAll(service, 0o755); err != nil {
		log.Fatal(err)
	}
	for dir, text := range map[string]string{root: "Run go vet before you commit.", service: "This service listens on 8443."} {
		if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(text+"\n"), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		log.Fatal(err)
	}
	h, err := hooks.New(adkctx.Config{Instructions: &adkctx.InstructionsConfig{Discovery: agentsmd.Config{NoGlobal: true}}})
	if err != nil {
		log.Fatal(err)
	}
	merged, err := h.Instructions(context.Background(), service)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range merged.Sources {
		fmt.Println(s.Path, s.Scope == agentsmd.ScopeProject)
	}
	// Output:
	// AGENTS.md true
	// services/api/AGENTS.md true
}
