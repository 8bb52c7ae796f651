package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/readback"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
	"github.com/adkctx/adkctx/recall"
)

// A token compaction comes when the window needs it, not a tool result earlier: a request a
// little under the soft limit schedules none (the next one may stay under it: before, any
// request within one tool result at the truncation limit of the soft limit scheduled one, so at
// small windows, where that result is a large part of the limit, nearly every request did); the
// event that takes the next request past the soft limit schedules one, before that request is
// built (Synchronous: it is built from the new summary), once per request sent.
// triggerSession is an engine over a session of six turns whose seventh turn's first request,
// of a user message of userTokens, is sent about 1,500 tokens under the soft limit; it returns
// the request's estimate and the number of token compactions attempted.
func triggerSession(t *testing.T, userTokens int) (e *Engine, s compactor.Session, call testCall, last int, limits budget.Limits, attempts func() int) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	info := budget.ModelInfo{Name: "m", ContextWindow: 32_768, MaxOutputTokens: 1024}
	e, err := New(adkctx.Config{Logger: zap.New(core), Models: []budget.ModelInfo{info},
		Compaction: &compaction.Config{Synchronous: true, Interval: 50}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store := &memStore{}
	if err := e.UseStore(store); err != nil {
		t.Fatal(err)
	}
	s = compactor.Session{App: "app", User: "user", ID: "s1"}
	limits = e.Limits(info.Name)
	var contents []*genai.Content
	for i := range 6 {
		inv := fmt.Sprint("inv-", i)
		q := genai.NewContentFromText(textOf(fmt.Sprint("question ", i), (limits.Soft-1500-userTokens)/12), genai.RoleUser)
		a := genai.NewContentFromText(textOf(fmt.Sprint("answer ", i), (limits.Soft-1500-userTokens)/12), genai.RoleModel)
		store.events = append(store.events,
			compaction.Event{ID: inv + "-q", InvocationID: inv, Author: "user", Timestamp: time.Unix(int64(100+2*i), 0), Content: q},
			compaction.Event{ID: inv + "-a", InvocationID: inv, Author: "agent", Final: true, Timestamp: time.Unix(int64(101+2*i), 0), Content: a})
		contents = append(contents, q, a)
	}
	question := genai.NewContentFromText(textOf("question 6", userTokens), genai.RoleUser)
	store.events = append(store.events, compaction.Event{ID: "inv-6-q", InvocationID: "inv-6", Author: "user", Timestamp: time.Unix(120, 0), Content: question})
	call = testCall{inv: "inv-6"}
	e.BeforeRun(ctx, s, call.inv, question, true, func() []compaction.Event { return nil })
	req := &request.LLMRequest{Model: info.Name, Contents: append(contents, question)}
	if err := e.BeforeModel(ctx, call, nil, req, nil); err != nil {
		t.Fatal(err)
	}
	st := e.state(s)
	st.mu.Lock()
	last = st.lastEstimate
	st.mu.Unlock()
	if last > limits.Soft-1000 || last < limits.Soft-2500 {
		t.Fatalf("the request is %d tokens, want within 1,000–2,500 of the soft limit %d", last, limits.Soft)
	}
	e.AfterModel(ctx, call, &response.LLMResponse{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(last)}})
	attempts = func() int {
		return logs.FilterMessage("compaction").FilterField(zap.String("trigger", string(compaction.TriggerTokens))).Len()
	}
	return e, s, call, last, limits, attempts
}

func TestTokenCompactionWhenTheNextRequestPassesTheSoftLimit(t *testing.T) {
	e, s, call, last, limits, attempts := triggerSession(t, 20)
	ctx := context.Background()
	if n := attempts(); n != 0 {
		t.Fatalf("a request %d tokens under the soft limit scheduled %d compactions, want none", limits.Soft-last, n)
	}
	result := func(tokens int) *genai.Content {
		return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
			Name: "read_file", Response: map[string]any{"content": textOf("output", tokens)}}}}}
	}
	steps := []struct {
		name    string
		content *genai.Content
		want    int
	}{
		{"the model's call", &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "read_file"}}}}, 0},
		{"a result that keeps the next request under the soft limit", result((limits.Soft - last) / 2), 0},
		{"a result that takes it past the soft limit", result(limits.Soft - last), 1},
		{"another one before the next request", result(200), 1},
	}
	for _, step := range steps {
		e.OnEvent(ctx, s, call.inv, step.content, false)
		if n := attempts(); n != step.want {
			t.Errorf("after %s: %d compactions, want %d", step.name, n, step.want)
		}
	}
}

// The final answer of a turn schedules the token compaction when the next turn's first request,
// with a user message as large as this turn's, passes the soft limit: it is built from the new
// summary (before, nothing projected the next turn's message, and that request went out over the
// soft limit).
func TestTokenCompactionBeforeTheNextTurn(t *testing.T) {
	e, s, call, last, limits, attempts := triggerSession(t, 1200)
	answer := genai.NewContentFromText(textOf("final answer", limits.Soft-last-600), genai.RoleModel)
	e.OnEvent(context.Background(), s, call.inv, answer, true)
	if n := attempts(); n != 1 {
		t.Errorf("%d compactions after the final answer, want 1: the next turn's request passes the soft limit", n)
	}
}

// A request that withholds the recall tools' declarations (nothing to recall yet) gives the
// compactor a token limit that counts them: the summary a compaction stores gives them a use,
// so the requests after it declare them, and the raw tail it keeps must leave room for that.
func TestTokenLimitCountsTheWithheldRecallDeclarations(t *testing.T) {
	info := budget.ModelInfo{Name: "m", ContextWindow: 32_768, MaxOutputTokens: 1024}
	e, err := New(adkctx.Config{Models: []budget.ModelInfo{info}, Compaction: &compaction.Config{Synchronous: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.UseStore(&memStore{}); err != nil {
		t.Fatal(err)
	}
	e.UseRecall(func(compactor.Session) recall.Store { return nil })
	var decls []*genai.FunctionDeclaration
	for _, name := range []string{recall.ToolReadOutput, recall.ToolSearchOutputs, recall.ToolSearchHistory, recall.ToolReadTurn, "grep"} {
		decls = append(decls, &genai.FunctionDeclaration{Name: name, Description: "reads what " + name + " reads, by name, range or query"})
	}
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls}}}
	req := &request.LLMRequest{Model: info.Name, Config: cfg, Contents: []*genai.Content{genai.NewContentFromText("list the files", genai.RoleUser)}}
	call := testCall{inv: "inv-1"}
	if err := e.BeforeModel(context.Background(), call, nil, req, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(req.Config.Tools[0].FunctionDeclarations); n != 1 {
		t.Fatalf("the request declares %d functions, want grep alone (nothing to recall yet)", n)
	}
	st := e.state(compactor.Session{App: "app", User: "user", ID: "s1"})
	st.mu.Lock()
	got := st.tokenLimit
	st.mu.Unlock()
	limits := e.Limits(info.Name)
	if want := limits.Soft - budget.EstimateRequest(nil, cfg); got != want {
		t.Errorf("token limit %d, want %d: the soft limit less the instruction and tools the agent declares (%d sent)",
			got, want, budget.EstimateRequest(nil, req.Config))
	}
}

// TestRecallToolsLeftOutOfASmallWindow: where the recall tools' declarations would take more than
// a quarter of what the soft limit leaves the conversation, no request declares them, even one
// that has something to recall; the token limit is not lowered for them (no later request
// declares them); the decision is logged once per model. In a larger window the same request
// declares the output tools.
func TestRecallToolsLeftOutOfASmallWindow(t *testing.T) {
	long := strings.Repeat("Reads what was cut short or summarized, by name, line range or query, and says where the next page starts. ", 8)
	var decls []*genai.FunctionDeclaration
	for _, name := range []string{recall.ToolReadOutput, recall.ToolSearchOutputs, recall.ToolSearchHistory, recall.ToolReadTurn, "grep"} {
		decls = append(decls, &genai.FunctionDeclaration{Name: name, Description: long})
	}
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls}}}
	without := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls[4:]}}}
	cost := budget.EstimateRequest(nil, cfg) - budget.EstimateRequest(nil, without)
	if cost < 600 {
		t.Fatalf("the declarations cost %d tokens: too little to show anything", cost)
	}
	saved := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "grep", ID: "c1",
		Response: map[string]any{"output": "main.go:1 ... [full output saved as " + readback.OutputPrefix + "grep-c1.txt]"}}}}}
	for _, tc := range []struct {
		window   int
		declares []string
	}{
		{4096, []string{"grep"}},
		{32_768, []string{recall.ToolReadOutput, recall.ToolSearchOutputs, "grep"}},
	} {
		core, logs := observer.New(zap.InfoLevel)
		info := budget.ModelInfo{Name: "m", ContextWindow: tc.window, MaxOutputTokens: 256}
		e, err := New(adkctx.Config{Logger: zap.New(core), Models: []budget.ModelInfo{info}, Compaction: &compaction.Config{Synchronous: true}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.UseStore(&memStore{}); err != nil {
			t.Fatal(err)
		}
		e.UseRecall(func(compactor.Session) recall.Store { return nil })
		for i := range 2 {
			req := &request.LLMRequest{Model: info.Name, Config: cfg, Contents: []*genai.Content{
				genai.NewContentFromText("find main", genai.RoleUser),
				{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "grep", ID: "c1"}}}},
				saved,
			}}
			if err := e.BeforeModel(context.Background(), testCall{inv: fmt.Sprintf("inv-%d", i)}, nil, req, nil); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range req.Config.Tools[0].FunctionDeclarations {
				got = append(got, d.Name)
			}
			if diff := cmp.Diff(tc.declares, got); diff != "" {
				t.Errorf("window %d, request %d declares (-want +got):\n%s", tc.window, i, diff)
			}
		}
		st := e.state(compactor.Session{App: "app", User: "user", ID: "s1"})
		st.mu.Lock()
		limit := st.tokenLimit
		st.mu.Unlock()
		if want := e.Limits(info.Name).Soft - budget.EstimateRequest(nil, without); tc.window == 4096 && limit != want {
			t.Errorf("window %d: token limit %d, want %d (the soft limit less what is declared: the recall tools never are)", tc.window, limit, want)
		}
		entries := logs.FilterMessageSnippet("recall tools not declared").All()
		wantEntries := 0
		if tc.window == 4096 {
			wantEntries = 1
		}
		if len(entries) != wantEntries {
			t.Fatalf("window %d: %d log entries of the recall tools left out, want %d", tc.window, len(entries), wantEntries)
		}
		if wantEntries == 1 {
			if f := entries[0].ContextMap(); f["model"] != "m" || f["declarations_tokens"] != int64(cost) || f["context_window"] != int64(4096) {
				t.Errorf("log fields %v, want model m, declarations_tokens %d, context_window 4096", f, cost)
			}
		}
	}
}

// TestRecallTooCostlyKeepsAGroupDeclaredInPart: in a window too small for the recall tools, the
// groups the agent declares whole are left out and a group it declares in part (the
// application's own tool) is kept, as the withholding keeps it.
func TestRecallTooCostlyKeepsAGroupDeclaredInPart(t *testing.T) {
	long := strings.Repeat("Reads what was cut short or summarized, by name, line range or query. ", 12)
	var decls []*genai.FunctionDeclaration
	for _, name := range []string{recall.ToolReadOutput, recall.ToolSearchOutputs, recall.ToolReadTurn, "grep"} {
		decls = append(decls, &genai.FunctionDeclaration{Name: name, Description: long})
	}
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls}}}
	agent := readback.InstalledIn(cfg)
	if agent != (readback.Installed{Outputs: true}) {
		t.Fatalf("installed %+v, want the output tools alone", agent)
	}
	limits := budget.Limits{Model: "m", Window: 4096, Soft: 2000}
	without, full, rest := recallCost(cfg, agent)
	costly := tooCostly(full-rest, rest, limits)
	if !costly {
		t.Fatal("not too costly in a 2,000-token soft limit")
	}
	var got []string
	for _, d := range without.Tools[0].FunctionDeclarations {
		got = append(got, d.Name)
	}
	if d := cmp.Diff([]string{recall.ToolReadTurn, "grep"}, got); d != "" {
		t.Errorf("declared (-want +got):\n%s", d)
	}
}

// TestRecallToolsLeftOutBesideALargeAgentsMD: the AGENTS.md text the instructions step adds later
// in the chain counts as instruction: a window with room for the recall tools beside the agent's
// own instruction has none once a large AGENTS.md joins it.
func TestRecallToolsLeftOutBesideALargeAgentsMD(t *testing.T) {
	long := strings.Repeat("Reads what was cut short or summarized, by name, line range or query. ", 8)
	var decls []*genai.FunctionDeclaration
	for _, name := range []string{recall.ToolReadOutput, recall.ToolSearchOutputs, recall.ToolSearchHistory, recall.ToolReadTurn, "grep"} {
		decls = append(decls, &genai.FunctionDeclaration{Name: name, Description: long})
	}
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls}}}
	info := budget.ModelInfo{Name: "m", ContextWindow: 8192, MaxOutputTokens: 256}
	saved := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "grep", ID: "c1",
		Response: map[string]any{"output": "[full output saved as " + readback.OutputPrefix + "grep-c1.txt]"}}}}}
	for _, tc := range []struct {
		agentsMD string
		declares int
	}{
		{"", 3}, // grep and the output tools
		{strings.Repeat("Run the tests before you commit. ", 350), 1}, // about 2,900 tokens of AGENTS.md: grep alone
	} {
		dir := t.TempDir()
		if tc.agentsMD != "" {
			if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(tc.agentsMD), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		e, err := New(adkctx.Config{Models: []budget.ModelInfo{info}, Instructions: &adkctx.InstructionsConfig{WorkDir: dir},
			Compaction: &compaction.Config{Synchronous: true}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.UseStore(&memStore{}); err != nil {
			t.Fatal(err)
		}
		e.UseRecall(func(compactor.Session) recall.Store { return nil })
		req := &request.LLMRequest{Model: info.Name, Config: cfg, Contents: []*genai.Content{
			genai.NewContentFromText("find main", genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "grep", ID: "c1"}}}},
			saved,
		}}
		if err := e.BeforeModel(context.Background(), testCall{inv: "inv-1"}, nil, req, nil); err != nil {
			t.Fatal(err)
		}
		if n := len(req.Config.Tools[0].FunctionDeclarations); n != tc.declares {
			t.Errorf("AGENTS.md of %d bytes: the request declares %d functions, want %d", len(tc.agentsMD), n, tc.declares)
		}
	}
}
