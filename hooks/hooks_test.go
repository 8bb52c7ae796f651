package hooks_test

import (
	"errors"

	"fmt"
	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/google/go-cmp/cmp"
	"math"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/truncate"
)

const appName = "hooks-test"

// stack is one agent + runner wired with adkctx as the README tells users to.
type stack struct {
	hooks     *hooks.Hooks
	model     *llmtest.Model
	runner    *runner.Runner
	sessions  session.Service
	artifacts artifact.Service
	logs      *observer.ObservedLogs
}

type stackOptions struct {
	cfg        adkctx.Config
	tools      []tool.Tool
	usePlugin  bool // register the plugin (runner scope)
	useAgent   bool // register the agent callbacks
	noArtifact bool
}

func newStack(t testing.TB, m *llmtest.Model, opts stackOptions) *stack {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	opts.cfg.Logger = zap.New(core)
	h, err := hooks.New(opts.cfg)
	if err != nil {
		t.Fatalf("hooks.New: %v", err)
	}
	agentCfg := llmagent.Config{
		Name:        "assistant",
		Model:       m,
		Instruction: "You are a careful assistant.",
		Tools:       opts.tools,
	}
	if opts.useAgent || !opts.usePlugin {
		agentCfg.BeforeModelCallbacks = []llmagent.BeforeModelCallback{h.BeforeModel()}
		agentCfg.AfterModelCallbacks = []llmagent.AfterModelCallback{h.AfterModel()}
		agentCfg.AfterToolCallbacks = []llmagent.AfterToolCallback{h.AfterTool()}
	}
	a, err := llmagent.New(agentCfg)
	if err != nil {
		t.Fatalf("llmagent.New: %v", err)
	}
	s := &stack{hooks: h, model: m, logs: logs, sessions: h.SessionService(session.InMemoryService())}
	rc := runner.Config{AppName: appName, Agent: a, SessionService: s.sessions, AutoCreateSession: true}
	if !opts.noArtifact {
		s.artifacts = artifact.InMemoryService()
		rc.ArtifactService = s.artifacts
	}
	if opts.usePlugin {
		p, err := h.Plugin()
		if err != nil {
			t.Fatalf("Plugin: %v", err)
		}
		rc.PluginConfig = runner.PluginConfig{Plugins: []*plugin.Plugin{p}}
	}
	s.runner, err = runner.New(rc)
	if err != nil {
		t.Fatalf("runner.New: %v", err)
	}
	return s
}

// send runs one user message and returns the error the run ended with, if any.
func (s *stack) send(t testing.TB, sessionID, text string) error {
	t.Helper()
	for _, err := range s.runner.Run(t.Context(), "user", sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *stack) events(t *testing.T, sessionID string) []*session.Event {
	t.Helper()
	resp, err := s.sessions.Get(t.Context(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: sessionID})
	if err != nil {
		t.Fatalf("Get session: %v", err)
	}
	var out []*session.Event
	for e := range resp.Session.Events().All() {
		out = append(out, e)
	}
	return out
}

func (s *stack) budgetDecisions() []observer.LoggedEntry {
	return s.logs.FilterMessage("budget decision").All()
}

type buildArgs struct {
	Target string `json:"target"`
}

func buildTool(t *testing.T, output string) tool.Tool {
	t.Helper()
	bt, err := functiontool.New(functiontool.Config{Name: "build", Description: "builds a target"},
		func(_ agent.ToolContext, a buildArgs) (map[string]any, error) {
			return map[string]any{"output": output, "target": a.Target}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

// hugeBuildLog is a 2 MB build log whose first and last lines are the ones that matter.
func hugeBuildLog() string {
	var b strings.Builder
	b.WriteString("BUILD START target=//app\n")
	for i := 0; b.Len() < 2<<20; i++ {
		fmt.Fprintf(&b, "compiling package %05d ... ok\n", i)
	}
	b.WriteString("main.go:42: undefined: frobnicate\nFAILED: exit status 2")
	return b.String()
}

func TestLargeToolOutputIsStoredAndSentTruncated(t *testing.T) {
	for _, mode := range []string{"agent-callbacks", "plugin"} {
		t.Run(mode, func(t *testing.T) {
			log := hugeBuildLog()
			m := &llmtest.Model{Script: []llmtest.Step{
				llmtest.Call(&genai.FunctionCall{Name: "build", Args: map[string]any{"target": "//app"}}),
				llmtest.Text("The build failed: frobnicate is undefined."),
			}}
			s := newStack(t, m, stackOptions{tools: []tool.Tool{buildTool(t, log)}, usePlugin: mode == "plugin"})
			if err := s.send(t, "s1", "build the app"); err != nil {
				t.Fatalf("run: %v", err)
			}

			// Stored: the function response event holds the truncated output.
			var stored string
			for _, e := range s.events(t, "s1") {
				if e.Content == nil {
					continue
				}
				for _, p := range e.Content.Parts {
					if p.FunctionResponse != nil && p.FunctionResponse.Name == "build" {
						stored, _ = p.FunctionResponse.Response["output"].(string)
					}
				}
			}
			if stored == "" {
				t.Fatal("no stored build response")
			}
			if len(stored) > 12<<10 {
				t.Errorf("stored output is %d bytes, want ≤ 12 KiB", len(stored))
			}
			for _, want := range []string{"BUILD START", "FAILED: exit status 2", "adkctx-tool-output-build-"} {
				if !strings.Contains(stored, want) {
					t.Errorf("stored output lacks %q", want)
				}
			}

			// Sent: the second request carries the same truncated output, tail included.
			reqs := m.Requests()
			if len(reqs) != 2 {
				t.Fatalf("model calls = %d, want 2", len(reqs))
			}
			sent := llmtest.AllText(reqs[1])
			if !strings.Contains(sent, "FAILED: exit status 2") || strings.Contains(sent, "compiling package 20000") {
				t.Errorf("second request does not carry the truncated output (len %d)", len(sent))
			}
			if len(sent) > 16<<10 {
				t.Errorf("second request text is %d bytes, want the output truncated", len(sent))
			}

			// Nothing lost: the full output is an artifact named in the marker.
			list, err := s.artifacts.List(t.Context(), &artifact.ListRequest{AppName: appName, UserID: "user", SessionID: "s1"})
			if err != nil || len(list.FileNames) != 1 {
				t.Fatalf("artifacts = %v, %v; want one", list, err)
			}
			got, err := s.artifacts.Load(t.Context(), &artifact.LoadRequest{AppName: appName, UserID: "user", SessionID: "s1", FileName: list.FileNames[0]})
			if err != nil {
				t.Fatal(err)
			}
			if got.Part.InlineData == nil || string(got.Part.InlineData.Data) != log || got.Part.InlineData.MIMEType != "text/plain; charset=utf-8" {
				t.Errorf("artifact does not hold the full output as text")
			}
			if !strings.Contains(stored, list.FileNames[0]) {
				t.Errorf("marker does not name the artifact %q", list.FileNames[0])
			}

			entries := s.logs.FilterMessage("tool output truncated").All()
			if len(entries) != 1 {
				t.Fatalf("truncation log entries = %d, want 1", len(entries))
			}
			f := entries[0].ContextMap()
			if f["original_bytes"].(int64) < 2<<20 || f["tool"] != "build" || fmt.Sprint(f["artifacts"]) != fmt.Sprint([]string{list.FileNames[0]}) {
				t.Errorf("truncation log fields = %v", f)
			}
			if n := len(s.budgetDecisions()); n != m.Calls() {
				t.Errorf("budget decision entries = %d, want one per model call (%d)", n, m.Calls())
			}
		})
	}
}

func TestWithoutArtifactServiceTruncationStillWorks(t *testing.T) {
	m := &llmtest.Model{Script: []llmtest.Step{
		llmtest.Call(&genai.FunctionCall{Name: "build", Args: map[string]any{"target": "//app"}}),
	}}
	s := newStack(t, m, stackOptions{tools: []tool.Tool{buildTool(t, hugeBuildLog())}, noArtifact: true})
	if err := s.send(t, "s1", "build"); err != nil {
		t.Fatal(err)
	}
	sent := llmtest.AllText(m.Requests()[1])
	if !strings.Contains(sent, "FAILED: exit status 2") || strings.Contains(sent, "artifact") {
		t.Errorf("want truncated output without an artifact note")
	}
}

// A tiny-window model: 60 turns never send a request above the hard limit, as the model itself
// counts it (its tokenizer counts 30% more than our estimate), and only a newest turn that cannot
// fit on its own ends with a clear, typed error.
func TestSmallWindowNeverExceedsHardLimit(t *testing.T) {
	m := &llmtest.Model{ModelName: "tiny-model", UsageScale: 1.3, Default: func(req *model.LLMRequest) (*genai.Content, error) {
		return genai.NewContentFromText(strings.Repeat("Here is a considered answer. ", 12), genai.RoleModel), nil
	}}
	cfg := adkctx.Config{Models: []budget.ModelInfo{{Name: "tiny-model", ContextWindow: 4000, MaxOutputTokens: 400}}}
	s := newStack(t, m, stackOptions{cfg: cfg})
	limits := s.hooks.Limits("tiny-model")
	if !limits.Known || limits.Hard <= 0 {
		t.Fatalf("limits = %+v", limits)
	}

	for turn := range 60 {
		if err := s.send(t, "s1", fmt.Sprintf("Question %d: %s", turn, strings.Repeat("please explain the design in detail. ", 15))); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
	}
	reqs := m.Requests()
	if len(reqs) != 60 {
		t.Fatalf("model calls = %d, want 60", len(reqs))
	}
	trimmed := 0
	for i, r := range reqs {
		counted := int(1.3 * float64(budget.EstimateRequest(r.Contents, r.Config)))
		if i > 0 && counted > limits.Hard { // the first call has no calibration yet
			t.Errorf("call %d: model counted %d tokens, hard limit %d", i, counted, limits.Hard)
		}
		if strings.Contains(llmtest.AllText(r), "earlier conversation turns") {
			trimmed++
		}
		if last := r.Contents[len(r.Contents)-1]; !strings.Contains(last.Parts[0].Text, fmt.Sprintf("Question %d:", i)) {
			t.Errorf("call %d: newest user turn missing", i)
		}
	}
	if trimmed < 30 {
		t.Errorf("only %d of 60 requests were trimmed; the test does not reach the hard limit", trimmed)
	}
	decisions := s.budgetDecisions()
	if len(decisions) != 60 {
		t.Fatalf("budget decisions = %d, want 60", len(decisions))
	}
	last := decisions[len(decisions)-1].ContextMap()
	if last["action"] != "trimmed" || last["model"] != "tiny-model" || last["hard_limit"].(int64) != int64(limits.Hard) {
		t.Errorf("last decision = %v", last)
	}
	for _, e := range decisions {
		for k, v := range e.ContextMap() {
			if str, ok := v.(string); ok && strings.Contains(str, "explain the design") {
				t.Errorf("decision log field %s carries conversation text", k)
			}
		}
	}
	if r := s.hooks.Usage(appName, "user", "s1"); r.Turns != 60 || r.Last.Prompt <= 0 {
		t.Errorf("usage report = %+v", r)
	}

	// A newest turn that alone is bigger than the hard limit: the model is not called.
	calls := m.Calls()
	err := s.send(t, "s1", strings.Repeat("an enormous paste ", 2000))
	var tooBig *request.BudgetExceededError
	if !errors.As(err, &tooBig) {
		t.Fatalf("err = %v, want *request.BudgetExceededError", err)
	}
	if tooBig.HardLimit != limits.Hard || tooBig.NewestTurnTokens <= limits.Hard || tooBig.Model != "tiny-model" {
		t.Errorf("error = %+v", tooBig)
	}
	if m.Calls() != calls {
		t.Errorf("the model was called for a request that cannot fit")
	}
	if n := len(s.logs.FilterMessage("budget decision").FilterField(zap.String("action", "rejected")).All()); n != 1 {
		t.Errorf("rejected decisions logged = %d, want 1", n)
	}
}

// A call whose response never made it into the session reaches the model answered.
func TestHistoryWithMissingResponseIsSentValid(t *testing.T) {
	m := &llmtest.Model{}
	s := newStack(t, m, stackOptions{})
	ctx := t.Context()
	created, err := s.sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: "user", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	appendEvent := func(author string, c *genai.Content) {
		ev := session.NewEventWithContext(ctx, "old-invocation")
		ev.Author = author
		ev.Content = c
		if err := s.sessions.AppendEvent(ctx, created.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	appendEvent("user", genai.NewContentFromText("list the files", genai.RoleUser))
	appendEvent("assistant", &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{FunctionCall: &genai.FunctionCall{ID: "call-1", Name: "list_files", Args: map[string]any{"dir": "."}}},
	}})
	// The process died here: no response was ever stored.
	if err := s.send(t, "s1", "are you still there?"); err != nil {
		t.Fatal(err)
	}
	req := m.Requests()[0]
	var call, resp int
	for i, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				call = i
			}
			if p.FunctionResponse != nil {
				resp = i
				if p.FunctionResponse.Name != "list_files" {
					t.Errorf("synthetic response for %q", p.FunctionResponse.Name)
				}
			}
		}
	}
	if resp != call+1 {
		t.Errorf("call at %d, response at %d; want the response right after the call", call, resp)
	}
	f := s.budgetDecisions()[0].ContextMap()
	if f["synthetic_responses"].(int64) != 1 {
		t.Errorf("synthetic_responses = %v, want 1", f["synthetic_responses"])
	}
}

// Registering both the plugin and the agent callbacks processes each request once.
func TestPluginAndAgentCallbacksProcessOnce(t *testing.T) {
	m := &llmtest.Model{UsageScale: 1, Script: []llmtest.Step{
		llmtest.Call(&genai.FunctionCall{Name: "build", Args: map[string]any{"target": "x"}}),
	}}
	s := newStack(t, m, stackOptions{usePlugin: true, useAgent: true, tools: []tool.Tool{buildTool(t, "ok")}})
	if err := s.send(t, "s1", "go"); err != nil {
		t.Fatal(err)
	}
	if got, want := len(s.budgetDecisions()), m.Calls(); got != want {
		t.Errorf("budget decisions = %d, want %d (one per model call)", got, want)
	}
	if r := s.hooks.Usage(appName, "user", "s1"); r.ModelCalls != m.Calls() || r.Turns != 1 {
		t.Errorf("usage: %d model calls in %d turns, want %d in 1", r.ModelCalls, r.Turns, m.Calls())
	}
}

// Many sessions and parallel tool calls at once (run with -race).
func TestConcurrentSessionsAndParallelTools(t *testing.T) {
	m := &llmtest.Model{UsageScale: 1.1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
		last := req.Contents[len(req.Contents)-1]
		if last.Role == genai.RoleUser && last.Parts[0].FunctionResponse == nil {
			return llmtest.Call(
				&genai.FunctionCall{Name: "build", Args: map[string]any{"target": "a"}},
				&genai.FunctionCall{Name: "build", Args: map[string]any{"target": "b"}},
				&genai.FunctionCall{Name: "build", Args: map[string]any{"target": "c"}},
			)(req)
		}
		return genai.NewContentFromText("all built", genai.RoleModel), nil
	}}
	s := newStack(t, m, stackOptions{usePlugin: true, tools: []tool.Tool{buildTool(t, hugeBuildLog()[:64<<10])}})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := range 3 {
				if err := s.send(t, fmt.Sprintf("s%d", i), fmt.Sprintf("turn %d", turn)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := len(s.logs.FilterMessage("tool output truncated").All()); got != 8*3*3 {
		t.Errorf("truncations = %d, want %d", got, 8*3*3)
	}
	for i := range 8 {
		if r := s.hooks.Usage(appName, "user", fmt.Sprintf("s%d", i)); r.Turns != 3 || r.ModelCalls != 6 {
			t.Errorf("session s%d: %d turns, %d model calls; want 3 and 6", i, r.Turns, r.ModelCalls)
		}
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	missing := t.TempDir() + "/missing"
	for name, tc := range map[string]struct {
		cfg    adkctx.Config
		fields []string
	}{
		"soft above hard":       {adkctx.Config{Limits: budget.LimitConfig{SoftFraction: 0.9, HardFraction: 0.5}}, []string{"Limits.SoftFraction"}},
		"negative bytes":        {adkctx.Config{Truncation: truncateConfig(-1)}, []string{"Truncation.MaxBytes"}},
		"model without name":    {adkctx.Config{Models: []budget.ModelInfo{{ContextWindow: 5}}}, []string{"Models[0].Name", "Models[0].ContextWindow"}},
		"work dir missing":      {adkctx.Config{Instructions: &adkctx.InstructionsConfig{WorkDir: missing}}, []string{"Instructions.WorkDir"}},
		"bad compaction values": {adkctx.Config{Compaction: &compaction.Config{Interval: -1, Timeout: -1}}, []string{"Compaction.Interval", "Compaction.Timeout"}},
		"several at once": {adkctx.Config{Truncation: truncateConfig(-1), Compaction: &compaction.Config{Interval: -2}},
			[]string{"Truncation.MaxBytes", "Compaction.Interval"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := hooks.New(tc.cfg)
			var got []string
			for _, e := range leaves(err) {
				var ce *adkctx.ConfigError
				if !errors.As(e, &ce) {
					t.Fatalf("error %v is not an *adkctx.ConfigError", e)
				}
				got = append(got, ce.Field)
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Errorf("New = %v; fields (-want +got):\n%s", err, diff)
			}
		})
	}
	// A model override without a window is valid: it keeps the built-in (or fallback) window.
	h, err := hooks.New(adkctx.Config{Models: []budget.ModelInfo{{Name: "gemini-2.5-flash", MaxOutputTokens: 1_000}}})
	if err != nil {
		t.Fatalf("override without window refused: %v", err)
	}
	if l := h.Limits("gemini-2.5-flash"); l.Window != 1_048_576 || l.ReservedOutput != 1_000 || l.Source != budget.SourceOverride {
		t.Errorf("limits %+v", l)
	}
}

func truncateConfig(maxBytes int) truncate.Config { return truncate.Config{MaxBytes: maxBytes} }

// leaves returns the errors err joins (errors.Join, nested), or err alone.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}

// A tool result holding NaN or an infinity, which JSON cannot hold, is stored by every session
// store, small as it is: adkctx's AfterTool writes each as its text ("NaN", "+Inf", "-Inf"), so
// adk-go's database service does not fail the turn on it (json: unsupported value) and leave the
// call stored without its response.
func TestNonFiniteToolResultIsStored(t *testing.T) {
	measure, err := functiontool.New(functiontool.Config{Name: "measure", Description: "measures a run"},
		func(_ agent.ToolContext, _ struct{}) (map[string]any, error) {
			return map[string]any{"ratio": math.NaN(), "peak": math.Inf(1), "floor": float32(math.Inf(-1)),
				"runs": []any{1.5, math.NaN()}, "ok": 2.0}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	// functiontool stores a map result under "result".
	want := map[string]any{"result": map[string]any{"ratio": "NaN", "peak": "+Inf", "floor": "-Inf", "runs": []any{1.5, "NaN"}, "ok": 2.0}}
	for name, newStore := range wiringStores(t) {
		t.Run(name, func(t *testing.T) {
			base := newStore()
			h, logs := wiringHooks(t, adkctx.Config{})
			m := &llmtest.Model{Script: []llmtest.Step{
				llmtest.Call(&genai.FunctionCall{Name: "measure", Args: map[string]any{}}),
				llmtest.Text("The ratio is undefined."),
			}}
			rc, err := h.Wire(runner.Config{Agent: wiringAgent(t, h, m, false, measure), SessionService: base})
			if err != nil {
				t.Fatal(err)
			}
			if err := turn(t, newRunner(t, rc), "s1", "measure the run"); err != nil {
				t.Fatalf("the turn failed: %v", err)
			}
			var responses []map[string]any
			final := ""
			for _, e := range wiringEvents(t, base, "s1") {
				if e.Content == nil {
					continue
				}
				for _, p := range e.Content.Parts {
					if p.FunctionResponse != nil {
						responses = append(responses, p.FunctionResponse.Response)
					}
					if e.Author == "assistant" && p.Text != "" {
						final = p.Text
					}
				}
			}
			if diff := cmp.Diff([]map[string]any{want}, responses); diff != "" {
				t.Errorf("stored responses (-want +got):\n%s", diff)
			}
			if final != "The ratio is undefined." {
				t.Errorf("final answer stored: %q", final)
			}
			var sent []map[string]any
			for _, c := range m.Requests()[len(m.Requests())-1].Contents {
				for _, p := range c.Parts {
					if p.FunctionResponse != nil {
						sent = append(sent, p.FunctionResponse.Response)
					}
				}
			}
			if diff := cmp.Diff([]map[string]any{want}, sent); diff != "" {
				t.Errorf("responses sent to the model (-want +got):\n%s", diff)
			}
			entries := logs.FilterMessage("tool output truncated").All()
			if len(entries) != 1 || entries[0].ContextMap()["numbers_replaced"] != int64(4) {
				t.Errorf("tool output logs: %v; want one, numbers_replaced 4", entries)
			}
		})
	}
}
