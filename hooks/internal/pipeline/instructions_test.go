package pipeline_test

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/instructions"
)

// instrScriptedLLM replays responses in order and records the system
// instruction texts of every request it receives.
type instrScriptedLLM struct {
	mu        sync.Mutex
	responses []*model.LLMResponse
	calls     [][]string
}

func (m *instrScriptedLLM) Name() string { return "scripted" }

func (m *instrScriptedLLM) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	m.mu.Lock()
	var si *genai.Content
	if req.Config != nil {
		si = req.Config.SystemInstruction
	}
	m.calls = append(m.calls, instrTexts(si))
	i := len(m.calls) - 1
	m.mu.Unlock()
	return func(yield func(*model.LLMResponse, error) bool) {
		if i >= len(m.responses) {
			yield(&model.LLMResponse{Content: genai.NewContentFromText("out of script", genai.RoleModel)}, nil)
			return
		}
		yield(m.responses[i], nil)
	}
}

func instrWrite(t *testing.T, p, content string, bump bool) {
	t.Helper()
	var prev time.Time
	if fi, err := os.Stat(p); err == nil {
		prev = fi.ModTime()
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if bump { // move the mtime past the previous one: same-second edits are seen
		next := prev.Add(2 * time.Second)
		if err := os.Chtimes(p, next, next); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInstructionsEndToEnd runs adk-go's real runner and llmagent with a BeforeModel callback
// that loads the merged AGENTS.md text (Loader.Load) and appends it to the system instruction,
// as the glue does.
func TestInstructionsEndToEnd(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	workDir := filepath.Join(root, "svc")
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	braces := "Template-looking text: {name}, {user:id}, {artifact.x}, {{double}}, {app:missing?}\n```go\nfunc f() map[string]int { return map[string]int{} }\n```\n"
	instrWrite(t, filepath.Join(root, "AGENTS.md"), braces, false)
	instrWrite(t, filepath.Join(workDir, "AGENTS.md"), "Service rule v1.\n", false)

	core, logs := observer.New(zap.InfoLevel)
	loader, err := instructions.NewLoader(agentsmd.Config{NoGlobal: true}, instructions.Config{}, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	var injectedMu sync.Mutex
	var injected []string // the merged text injected on each call
	before := func(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
		m, err := loader.Load(t.Context(), workDir)
		if err != nil {
			return nil, err
		}
		appendInstruction(req, m.Text)
		injectedMu.Lock()
		injected = append(injected, m.Text)
		injectedMu.Unlock()
		return nil, nil
	}

	type echoArgs struct {
		Text string `json:"text"`
	}
	echo, err := functiontool.New(functiontool.Config{Name: "echo", Description: "echoes text"},
		func(_ agent.ToolContext, a echoArgs) (map[string]any, error) {
			return map[string]any{"echo": a.Text}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	llm := &instrScriptedLLM{responses: []*model.LLMResponse{
		{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "echo", Args: map[string]any{"text": "hi"}}}}}},
		{Content: genai.NewContentFromText("turn 1 done", genai.RoleModel)},
		{Content: genai.NewContentFromText("turn 2 done", genai.RoleModel)},
	}}
	const own = "You are the agent. Your own instruction comes first."
	a, err := llmagent.New(llmagent.Config{
		Name:                 "helper",
		Model:                llm,
		Instruction:          own,
		Tools:                []tool.Tool{echo},
		BeforeModelCallbacks: []llmagent.BeforeModelCallback{before},
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: svc})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(msg string) []string {
		var texts []string
		for ev, err := range r.Run(ctx, "u", created.Session.ID(), genai.NewContentFromText(msg, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("run %q: %v", msg, err)
			}
			if ev.Content != nil {
				for _, p := range ev.Content.Parts {
					if p.Text != "" {
						texts = append(texts, p.Text)
					}
				}
			}
		}
		return texts
	}

	if got := run("first"); !slicesContain(got, "turn 1 done") {
		t.Fatalf("turn 1 texts = %q", got)
	}
	instrWrite(t, filepath.Join(workDir, "AGENTS.md"), "Service rule v2.\n", true)
	if got := run("second"); !slicesContain(got, "turn 2 done") {
		t.Fatalf("turn 2 texts = %q", got)
	}

	if len(llm.calls) != 3 || len(injected) != 3 {
		t.Fatalf("model calls = %d, injections = %d, want 3 each (tool round trip + second turn)", len(llm.calls), len(injected))
	}
	for i, parts := range llm.calls {
		if len(parts) < 2 {
			t.Fatalf("call %d: system instruction parts = %q", i, parts)
		}
		ownAt := -1
		for j, p := range parts {
			if strings.Contains(p, own) {
				ownAt = j
				break
			}
		}
		last := parts[len(parts)-1]
		if ownAt < 0 || ownAt == len(parts)-1 {
			t.Errorf("call %d: the agent's instruction is missing or not before the merged text: %q", i, parts)
		}
		if last != injected[i] {
			t.Errorf("call %d: last part is not the merged text:\n%s", i, last)
		}
		if !strings.Contains(last, braces[:len(braces)-1]) {
			t.Errorf("call %d: braces were not passed through literally:\n%s", i, last)
		}
		wantRule, notRule := "Service rule v1.", "Service rule v2."
		if i == 2 {
			wantRule, notRule = notRule, wantRule
		}
		if !strings.Contains(last, wantRule) || strings.Contains(last, notRule) {
			t.Errorf("call %d: want %q and not %q in:\n%s", i, wantRule, notRule, last)
		}
	}
	// The same text through the templated Instruction fails (fact 10): this
	// is why the merged text must go through the SystemInstruction.
	templated, err := llmagent.New(llmagent.Config{Name: "templated", Model: &instrScriptedLLM{}, Instruction: braces})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := runner.New(runner.Config{AppName: "app2", Agent: templated, SessionService: svc, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	var runErr error
	for _, err := range r2.Run(ctx, "u", "s2", genai.NewContentFromText("hi", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			runErr = err
			break
		}
	}
	if runErr == nil {
		t.Error("a templated Instruction with {name} unexpectedly worked; fact 10 no longer holds")
	} else {
		t.Logf("templated Instruction error (expected): %v", runErr)
	}
	// One entry on the first load, one after the edit, none for the unchanged loads between (that
	// those are cache hits, with no discovery, is counted in package instructions' tests).
	if n := logs.FilterMessage("instructions: AGENTS.md instructions changed").Len(); n != 2 {
		t.Errorf("instructions changed %d times, want 2 (first load + after the edit)", n)
	}
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// appendInstruction appends text to req's system instruction as a new part, after the agent's
// own parts, never through the templated Instruction. The config and the content are copied:
// adk-go may share them between requests.
func appendInstruction(req *model.LLMRequest, text string) {
	cfg := genai.GenerateContentConfig{}
	if req.Config != nil {
		cfg = *req.Config
	}
	si := genai.Content{Role: genai.RoleUser}
	if cfg.SystemInstruction != nil {
		si = *cfg.SystemInstruction
	}
	si.Parts = append(slices.Clip(si.Parts), genai.NewPartFromText(text))
	cfg.SystemInstruction = &si
	req.Config = &cfg
}
