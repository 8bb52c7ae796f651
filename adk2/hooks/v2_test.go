package hooks_test

import (
	"bytes"
	"fmt"
	"log"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/agent/workflowagent"
	"google.golang.org/adk/v2/agent/workflowagents/sequentialagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/workflow"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/adk2/internal/llmtest"
	"github.com/adkctx/adkctx/compaction"
)

// workflowRoot is a v2 graph workflow: START → the agent (a chat-mode llmagent node) → a
// function node that emits a routing event and an output, neither with content.
func workflowRoot(t testing.TB, a agent.Agent) agent.Agent {
	t.Helper()
	node, err := workflow.NewAgentNode(a, workflow.NodeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	record := workflow.NewEmittingFunctionNode("record", func(ctx agent.Context, in any, emit func(*session.Event) error) (any, error) {
		ev := session.NewEvent(ctx, ctx.InvocationID())
		ev.Routes = []string{"recorded"}
		if err := emit(ev); err != nil {
			return nil, err
		}
		return map[string]any{"recorded": fmt.Sprint(in)}, nil
	}, workflow.NodeConfig{})
	root, err := workflowagent.New(workflowagent.Config{Name: "flow", Edges: workflow.Chain(workflow.Start, node, record), SubAgents: []agent.Agent{a}})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func sequentialRoot(t testing.TB, a agent.Agent) agent.Agent {
	t.Helper()
	root, err := sequentialagent.New(sequentialagent.Config{AgentConfig: agent.Config{Name: "pipeline", SubAgents: []agent.Agent{a}}})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// The plugin works when the root agent is a v2 graph workflow: every model call of its llmagent
// node is budgeted, tool output truncated, and compaction counts user turns — the workflow's
// own events (routes, outputs, no content) never count as invocations.
func TestWorkflowRoot(t *testing.T) {
	m := &llmtest.Model{UsageScale: 1, Default: chatty}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant.", Mode: llmagent.ModeChat,
		Tools: []tool.Tool{buildTool(t, hugeBuildLog())}})
	if err != nil {
		t.Fatal(err)
	}
	m.Script = []llmtest.Step{llmtest.Call(&genai.FunctionCall{Name: "build", Args: map[string]any{"target": "//app"}})}
	cc := &compaction.Config{Interval: 2, RetainRecentInvocations: 2, Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}}
	s := wireStack(t, m, adkctx.Config{Compaction: cc}, session.InMemoryService(), workflowRoot(t, a))
	const turns = 9
	firstMarkerAfter := -1
	for i := range turns {
		if err := s.send(t, "s1", fmt.Sprintf("turn-%d: describe module %d", i, i)); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if firstMarkerAfter < 0 && slices.ContainsFunc(stored(t, s.base, "s1"), isMarker) {
			firstMarkerAfter = i
		}
	}
	raw := stored(t, s.base, "s1")
	contentless := 0
	for _, e := range raw {
		if e.Content == nil && !isMarker(e) && (len(e.Routes) > 0 || e.Output != nil || e.NodeInfo != nil) {
			contentless++
		}
	}
	if contentless < turns {
		t.Fatalf("%d workflow events without content in %d turns: the workflow does not emit what the test is about", contentless, turns)
	}
	// θ + R completed user turns make the first compaction: turn index 3.
	if firstMarkerAfter != cc.Interval+cc.RetainRecentInvocations-1 {
		t.Errorf("first marker after turn %d, want %d (workflow events counted as invocations?)", firstMarkerAfter, cc.Interval+cc.RetainRecentInvocations-1)
	}
	var last *compaction.Marker
	for _, e := range raw {
		if isMarker(e) {
			if last, err = compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if last == nil || last.Invocations != turns-cc.RetainRecentInvocations-(turns-cc.RetainRecentInvocations)%cc.Interval {
		t.Errorf("last marker covers %+v invocations of %d turns", last, turns)
	}
	reqs := m.Requests()
	if n := len(s.budgetDecisions()); n != len(reqs) {
		t.Errorf("%d budget decisions for %d model calls", n, len(reqs))
	}
	if n := s.logs.FilterMessage("tool output truncated").Len(); n != 1 {
		t.Errorf("%d truncations, want 1", n)
	}
	for i, req := range reqs[2:] { // after the first turn's two calls, one call per turn
		turn := i + 1
		if prev := fmt.Sprintf("turn-%d: describe module %d", turn-1, turn-1); !slices.Contains(userTexts(req), prev) {
			t.Errorf("turn %d: the previous user turn is not raw: %q", turn, userTexts(req))
		}
		if turn > firstMarkerAfter && !hasSummary(req) {
			t.Errorf("turn %d: no summary after the first compaction", turn)
		}
	}
	if r := s.hooks.Usage(appName, "user", "s1"); r.Turns != turns || r.ModelCalls != len(reqs) {
		t.Errorf("usage %+v: want %d turns, %d model calls", r, turns, len(reqs))
	}
	if n := s.logs.FilterLevelExact(zapcore.ErrorLevel).Len(); n != 0 {
		t.Errorf("errors logged: %v", s.logs.FilterLevelExact(zapcore.ErrorLevel).All())
	}
}

// adk-go v2 hands callbacks a unified agent.Context that logs "... is not supported for callback
// context" for the invocation-level methods (Session, IsolationScope, Agent…). adkctx's callbacks
// call none of them, whichever way it is wired and whatever the root agent.
func TestCallbacksUseOnlyTheCallbackContext(t *testing.T) {
	var buf bytes.Buffer
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(&buf)
	t.Cleanup(func() { log.SetOutput(out); log.SetFlags(flags) })

	steps := func() []llmtest.Step {
		return []llmtest.Step{llmtest.Call(&genai.FunctionCall{Name: "build", Args: map[string]any{"target": "//app"}}), llmtest.Text("built")}
	}
	for _, tc := range []struct {
		name string
		s    func(t *testing.T) *stack
	}{
		{"agent callbacks", func(t *testing.T) *stack {
			return newStack(t, &llmtest.Model{UsageScale: 1, Script: steps()}, stackOptions{tools: []tool.Tool{buildTool(t, hugeBuildLog())}})
		}},
		{"plugin and wrapper", func(t *testing.T) *stack {
			m := &llmtest.Model{UsageScale: 1, Script: steps()}
			return newStack(t, m, stackOptions{usePlugin: true, tools: []tool.Tool{buildTool(t, hugeBuildLog())},
				cfg: adkctx.Config{Compaction: &compaction.Config{Interval: 1, RetainRecentInvocations: 1, Synchronous: true}}})
		}},
		{"workflow root", func(t *testing.T) *stack {
			m := &llmtest.Model{UsageScale: 1, Script: steps()}
			a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Mode: llmagent.ModeChat, Tools: []tool.Tool{buildTool(t, hugeBuildLog())}})
			return wireStack(t, m, adkctx.Config{Compaction: &compaction.Config{Interval: 1, RetainRecentInvocations: 1, Synchronous: true}},
				session.InMemoryService(), workflowRoot(t, a))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf.Reset()
			s := tc.s(t)
			for i := range 4 {
				if err := s.send(t, "s1", fmt.Sprintf("build it, take %d", i)); err != nil {
					t.Fatal(err)
				}
			}
			if s.logs.FilterMessage("tool output truncated").Len() != 1 || len(s.budgetDecisions()) == 0 {
				t.Fatal("the callbacks did not run")
			}
			var unsupported []string
			for line := range strings.Lines(buf.String()) {
				if strings.Contains(line, "is not supported for") {
					unsupported = append(unsupported, strings.TrimSpace(line))
				}
			}
			if diff := cmp.Diff([]string(nil), unsupported); diff != "" {
				t.Errorf("adk-go logged unsupported context calls (-want +got):\n%s", diff)
			}
		})
	}
}

// taskSession plays a coordinator (chat) with a task sub-agent: chat turns, a delegation, the
// task's conversation in its isolation scope (the user's replies are routed into it), the task's
// end, and chat again. Texts are tagged so a request shows whose history it holds.
type taskSession struct {
	coord, worker *llmtest.Model
	s             *stack
}

const taskRequest = "rename the config loader everywhere"

func newTaskSession(t *testing.T, cfg adkctx.Config) *taskSession {
	ts := &taskSession{
		coord: &llmtest.Model{ModelName: "coordinator-model", UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
			last := req.Contents[len(req.Contents)-1]
			switch {
			case last.Parts[0].FunctionResponse != nil:
				return genai.NewContentFromText("chat-answer: the worker is done.", genai.RoleModel), nil
			case strings.HasPrefix(last.Parts[0].Text, "delegate"):
				return llmtest.Call(&genai.FunctionCall{Name: "worker", Args: map[string]any{"request": taskRequest}})(req)
			}
			return genai.NewContentFromText("chat-answer: "+strings.Repeat("the coordinator explains ", 20), genai.RoleModel), nil
		}},
		worker: &llmtest.Model{ModelName: "worker-model", UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
			if last := req.Contents[len(req.Contents)-1]; strings.Contains(last.Parts[0].Text, "that is all") {
				return llmtest.Call(&genai.FunctionCall{Name: "finish_task", Args: map[string]any{"result": "renamed"}})(req)
			}
			return genai.NewContentFromText("task-question: which package next? "+strings.Repeat("the worker asks ", 20), genai.RoleModel), nil
		}},
	}
	worker, err := llmagent.New(llmagent.Config{Name: "worker", Description: "renames things", Model: ts.worker, Mode: llmagent.ModeTask,
		Instruction: "You rename identifiers."})
	if err != nil {
		t.Fatal(err)
	}
	coord, err := llmagent.New(llmagent.Config{Name: "coordinator", Model: ts.coord, Instruction: "You coordinate.", SubAgents: []agent.Agent{worker}})
	if err != nil {
		t.Fatal(err)
	}
	ts.s = wireStack(t, ts.coord, cfg, session.InMemoryService(), coord)
	return ts
}

// Isolation scopes: compaction and the view work per scope. Each scope is compacted on its own
// (a marker covers events of one scope only), each agent's requests carry its own scope's
// summary and never the other's text, and the task keeps its input; after the task, the user's
// next message is not routed into the finished scope.
func TestIsolationScopesAreCompactedApart(t *testing.T) {
	ts := newTaskSession(t, adkctx.Config{Compaction: &compaction.Config{Interval: 2, RetainRecentInvocations: 1, Synchronous: true,
		Summarizer: &compaction.ExtractiveSummarizer{}}})
	s := ts.s
	var msgs []string
	for i := range 5 {
		msgs = append(msgs, fmt.Sprintf("chat-%d: tell me about part %d", i, i))
	}
	msgs = append(msgs, "delegate the rename")
	for i := range 7 {
		msgs = append(msgs, fmt.Sprintf("reply-%d: do package %d", i, i))
	}
	msgs = append(msgs, "reply-7: that is all")
	for i := 5; i < 8; i++ {
		msgs = append(msgs, fmt.Sprintf("chat-%d: tell me about part %d", i, i))
	}
	for i, msg := range msgs {
		if err := s.send(t, "s1", msg); err != nil {
			t.Fatalf("turn %d (%q): %v", i, msg, err)
		}
	}

	raw := stored(t, s.base, "s1")
	scopeOf := map[string]string{}
	var scope string // the task's
	for _, e := range raw {
		scopeOf[e.ID] = e.IsolationScope
		if e.IsolationScope != "" {
			scope = e.IsolationScope
		}
	}
	if scope == "" {
		t.Fatal("no event in a task scope: the task did not run")
	}
	// Every marker covers one scope only; both scopes were compacted; markers carry no scope.
	compacted := map[string]int{}
	for _, e := range raw {
		if !isMarker(e) {
			continue
		}
		if e.IsolationScope != "" {
			t.Errorf("marker %s carries the isolation scope %q", e.ID, e.IsolationScope)
		}
		m, err := compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata})
		if err != nil {
			t.Fatal(err)
		}
		compacted[m.Scope]++
		for _, id := range m.EventIDs {
			if scopeOf[id] != m.Scope {
				t.Errorf("a marker of scope %q covers event %s of scope %q", m.Scope, id, scopeOf[id])
			}
		}
	}
	if compacted[""] == 0 || compacted[scope] == 0 {
		t.Fatalf("markers by scope: %v; want both the chat and the task compacted", compacted)
	}
	// Each agent sees its own history: the summary of its scope, never the other's text.
	check := func(who string, reqs []*model.LLMRequest, own, other string) {
		summarized := false
		for i, req := range reqs {
			text := llmtest.AllText(req)
			if strings.Contains(text, other) {
				t.Errorf("%s request %d holds %q text of the other scope", who, i, other)
			}
			summarized = summarized || hasSummary(req) && strings.Contains(text, own)
		}
		if !summarized {
			t.Errorf("no %s request carried a summary of its own scope", who)
		}
	}
	check("coordinator", ts.coord.Requests(), "chat-", "reply-")
	check("worker", ts.worker.Requests(), "reply-", "chat-")
	// The task keeps its input (the delegating call's arguments) in every request.
	for i, req := range ts.worker.Requests() {
		if !strings.Contains(req.Contents[0].Parts[0].Text, taskRequest) {
			t.Errorf("worker request %d starts with %q, not the task's input", i, req.Contents[0].Parts[0].Text)
		}
	}
	// The view shows each summary with its scope, and the chat after the task is unscoped.
	var summaryScopes []string
	for _, e := range s.view(t, "s1") {
		if isSummary(e) {
			summaryScopes = append(summaryScopes, e.IsolationScope)
		}
	}
	slices.Sort(summaryScopes)
	if diff := cmp.Diff([]string{"", scope}, summaryScopes); diff != "" {
		t.Errorf("scopes of the summaries in the view (-want +got):\n%s", diff)
	}
	for _, e := range raw {
		if e.Author == "user" && e.Content != nil && strings.HasPrefix(e.Content.Parts[0].Text, "chat-7") && e.IsolationScope != "" {
			t.Errorf("the chat after the task was routed into scope %q", e.IsolationScope)
		}
	}
	if n := s.logs.FilterLevelExact(zapcore.ErrorLevel).Len(); n != 0 {
		t.Errorf("errors logged: %v", s.logs.FilterLevelExact(zapcore.ErrorLevel).All())
	}
}

// The call that delegated a task which is still open stays raw however old it gets: adk-go v2
// resumes the task, and reads its input, through that unanswered call.
func TestOpenTaskDelegationStaysRaw(t *testing.T) {
	s := newStack(t, &llmtest.Model{}, stackOptions{usePlugin: true, cfg: adkctx.Config{Compaction: &compaction.Config{RetainRecentInvocations: 1,
		Summarizer: &compaction.ExtractiveSummarizer{}}}})
	ctx := t.Context()
	created, err := s.sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: "user", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	add := func(inv, author, scope string, c *genai.Content) {
		ev := session.NewEvent(ctx, inv)
		ev.Author, ev.IsolationScope, ev.Content = author, scope, c
		if err := s.sessions.AppendEvent(ctx, created.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	text := func(role, s string) *genai.Content {
		return &genai.Content{Role: role, Parts: []*genai.Part{{Text: s}}}
	}
	chat := func(i int) {
		inv := fmt.Sprintf("inv-%d", i)
		add(inv, "user", "", text(genai.RoleUser, fmt.Sprintf("chat-%d %s", i, strings.Repeat("words ", 50))))
		add(inv, "coordinator", "", text(genai.RoleModel, strings.Repeat("answer ", 50)))
	}
	for i := range 4 {
		chat(i)
	}
	add("inv-4", "user", "", text(genai.RoleUser, "delegate"))
	add("inv-4", "coordinator", "", &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
		ID: "task-1", Name: "worker", Args: map[string]any{"request": taskRequest}}}}})
	add("inv-4", "worker", "task-1", text(genai.RoleModel, "task-question: which package?"))
	for i := 5; i < 9; i++ {
		chat(i)
	}
	if m, err := s.hooks.Compact(ctx, appName, "user", "s1"); err != nil || m == nil || m.Scope != "" {
		t.Fatalf("Compact = %+v, %v; want a marker of the unscoped history", m, err)
	}
	var calls []string
	summary := false
	for _, e := range s.view(t, "s1") {
		summary = summary || isSummary(e) && e.IsolationScope == ""
		for _, p := range partsOf(e) {
			if p.FunctionCall != nil {
				calls = append(calls, p.FunctionCall.ID)
			}
			if strings.HasPrefix(p.Text, "chat-0") {
				t.Error("the oldest chat turn is still raw: nothing was compacted")
			}
		}
	}
	if !summary || !slices.Equal(calls, []string{"task-1"}) {
		t.Errorf("view: summary %v, calls %v; want a summary and the open delegation raw", summary, calls)
	}
	if got := s.logs.FilterMessage("compaction").FilterField(zap.String("outcome", "compacted")).Len(); got != 1 {
		t.Errorf("%d compactions logged, want 1", got)
	}
}
