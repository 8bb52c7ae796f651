package recalltools_test

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adkctx/adkctx/hooks/internal/sqlitetest"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/dbartifact"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/recalltools"
	"github.com/adkctx/adkctx/recall"
)

// outputPrefix starts the names of the tool outputs adkctx saves.
const outputPrefix = "adkctx-tool-output-"

// recallTools are the recall tools' names.
var recallTools = []string{recall.ToolReadOutput, recall.ToolSearchOutputs, recall.ToolSearchHistory, recall.ToolReadTurn}

const appName = "app"

// testLog is a go test log of n lines with fact on line at (from 1).
func testLog(n, at int, fact string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i == at {
			b.WriteString(fact + "\n")
			continue
		}
		fmt.Fprintf(&b, "=== RUN   TestPackage%d/case_%d\n--- PASS: TestPackage%d/case_%d (0.%02ds)\n", i%40, i, i%40, i, i%100)
	}
	return b.String()
}

// env is a runner wired with adkctx, a SQLite session store, the database artifact service on the
// same file, a run_tests tool and the recall tools.
type env struct {
	runner    *runner.Runner
	sessions  session.Service
	artifacts artifact.Service
	model     *llmtest.Model
}

func newEnv(t *testing.T, m *llmtest.Model, cfg adkctx.Config, runTests func(session string) string) *env {
	t.Helper()
	store := sqlitetest.Open(t, sqlitetest.TempDSN(t))
	sessions := store.Sessions
	artifacts := dbartifact.NewService(store.DB, dbartifact.Config{})
	if err := dbartifact.Migrate(context.Background(), store.DB); err != nil {
		t.Fatal(err)
	}
	type noArgs struct{}
	run, err := functiontool.New(functiontool.Config{Name: "run_tests", Description: "runs the tests"},
		func(tc toolCtx, _ noArgs) (map[string]any, error) {
			return map[string]any{"output": runTests(tc.SessionID()), "exit_code": 1}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	// The tools as the hooks give them: they read through the artifact service Wire captures.
	h, err := hooks.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	recallTools, err := h.RecallTools()
	if err != nil {
		t.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "coder", Model: m, Tools: append([]tool.Tool{run}, recallTools...)})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: sessions, ArtifactService: artifacts, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &env{runner: r, sessions: sessions, artifacts: artifacts, model: m}
}

func (e *env) send(t *testing.T, sessionID, text string) {
	t.Helper()
	for _, err := range e.runner.Run(context.Background(), "user", sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// responses returns the session's stored function responses of the recall tools, in order.
func (e *env) responses(t *testing.T, sessionID string) []map[string]any {
	t.Helper()
	resp, err := e.sessions.Get(context.Background(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for ev := range resp.Session.Events().All() {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if p.FunctionResponse != nil && slices.Contains(recallTools, p.FunctionResponse.Name) {
				out = append(out, p.FunctionResponse.Response)
			}
		}
	}
	return out
}

// savedAs finds the name in a truncation note, which names the tool that reads it (the agent
// declares the recall tools).
var savedAs = regexp.MustCompile(`full output saved as "([^"]+)"; read it with ` + recall.ToolReadOutput)

// savedName returns the saved output a request's newest truncation note names.
func savedName(req *model.LLMRequest) string {
	var name string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse == nil {
				continue
			}
			if s, _ := p.FunctionResponse.Response["output"].(string); s != "" {
				if m := savedAs.FindStringSubmatch(s); m != nil {
					name = m[1]
				}
			}
		}
	}
	return name
}

func call(name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{Name: name, Args: args}
}

// callWith returns a step calling a recall tool with args built from the request.
func callWith(name string, args func(req *model.LLMRequest) map[string]any) llmtest.Step {
	return func(req *model.LLMRequest) (*genai.Content, error) {
		return llmtest.Call(call(name, args(req)))(req)
	}
}

// Through adk-go's runner with adkctx wired: a 2 MB test log is truncated and saved in the
// database; the agent reads the line in its middle by the name the note gives, finds it by
// search, and every hostile call (another session's output, paths, a huge range, a pathological
// regexp, binary output) gets a clear error or safe text — never another session's data.
func TestRecallToolsThroughRunner(t *testing.T) {
	const fact = "--- FAIL: TestCheckout (0.31s) order id=REQ-7f3a9c expected 200 got 500"
	const other = "--- FAIL: TestOther secret-of-s2=ZX81"
	logs := func(sessionID string) string {
		if sessionID == "s2" {
			return testLog(30000, 15000, other)
		}
		return testLog(30000, 20000, fact)
	}
	core, observed := observer.New(zap.DebugLevel)
	var s2Name string
	m := &llmtest.Model{}
	e := newEnv(t, m, adkctx.Config{Logger: zap.New(core)}, logs)

	// Session s2 saves its own output first.
	m.Script = []llmtest.Step{
		llmtest.Call(call("run_tests", map[string]any{})),
		func(req *model.LLMRequest) (*genai.Content, error) {
			s2Name = savedName(req)
			return genai.NewContentFromText("s2 done", genai.RoleModel), nil
		},
	}
	e.send(t, "s2", "run the tests")
	if s2Name == "" {
		t.Fatal("s2's truncation note names no saved output")
	}
	if _, err := e.artifacts.Save(context.Background(), binaryOutput("s1")); err != nil {
		t.Fatal(err)
	}

	var s1Name string
	steps := []llmtest.Step{
		llmtest.Call(call("run_tests", map[string]any{})),
		callWith(recall.ToolReadOutput, func(req *model.LLMRequest) map[string]any {
			s1Name = savedName(req)
			return map[string]any{"name": s1Name, "range": "39998-40000"}
		}),
		callWith(recall.ToolSearchOutputs, func(*model.LLMRequest) map[string]any { return map[string]any{"query": "req-7f3a9c"} }),
		callWith(recall.ToolSearchOutputs, func(*model.LLMRequest) map[string]any {
			return map[string]any{"query": `id=REQ-[0-9a-f]+ expected`, "regexp": true, "name": s1Name, "context": 1}
		}),
	}
	followed := map[int]bool{2: true, 3: true} // searches whose cursor the agent follows (below)
	hostile := []map[string]any{
		{"name": s2Name},
		{"name": "../" + s2Name},
		{"name": "/etc/passwd"},
		{"name": ""},
		{"name": "user:" + s2Name},
		{"name": strings.Repeat("a", 4000)},
		{"name": "adkctx-tool-output-x.bin", "range": "1-10"},
	}
	for _, args := range hostile {
		steps = append(steps, llmtest.Call(call(recall.ToolReadOutput, args)))
	}
	steps = append(steps,
		callWith(recall.ToolReadOutput, func(*model.LLMRequest) map[string]any {
			return map[string]any{"name": s1Name, "range": "1-99999999999"}
		}),
		llmtest.Call(call(recall.ToolSearchOutputs, map[string]any{"query": "(a*)*(b+)+$", "regexp": true})),
		llmtest.Call(call(recall.ToolSearchOutputs, map[string]any{"query": "ZX81"})),
		llmtest.Call(call(recall.ToolReadOutput, map[string]any{"name": "adkctx-tool-output-x.bin", "range": "bytes=0-63"})),
		llmtest.Text("done"),
	)
	followed[len(steps)-3] = true // ZX81
	// A search the time bound stops (a loaded machine: -race, make test's steps at once) ends
	// with a cursor; for the searches above the agent calls again with it, as a model does, and
	// their results are read together.
	next, continued := 0, make([]int, len(steps))
	m.Default = func(req *model.LLMRequest) (*genai.Content, error) {
		if next > 0 && followed[next-1] {
			if fc := continuation(req); fc != nil {
				continued[next-1]++
				return llmtest.Call(fc)(req)
			}
		}
		if next == len(steps) {
			return genai.NewContentFromText("ok", genai.RoleModel), nil
		}
		next++
		return steps[next-1](req)
	}
	e.send(t, "s1", "run the tests and find the failing order id")
	raw := e.responses(t, "s1")
	for i, r := range raw {
		if res, _ := r["result"].(string); len(res) > 8<<10 {
			t.Errorf("response %d is %d bytes: it would be truncated again", i, len(res))
		}
	}
	if n := slices.Max(continued); n > 0 {
		t.Logf("searches continued with their cursor (the time bound stopped them): %v", continued)
	}
	var got []map[string]any // one per step: a followed search's results joined
	for k := 1; k < len(steps)-1 && len(raw) > 0; k++ {
		n := min(1+continued[k], len(raw))
		r := raw[0]
		if n > 1 {
			var parts []string
			for j, c := range raw[:n] {
				res, ok := c["result"].(string)
				if !ok {
					t.Errorf("step %d, page %d: %v, want a result (the cursor the time bound gave)", k, j, c)
				}
				parts = append(parts, res)
			}
			r = map[string]any{"result": strings.Join(parts, "\n")}
		}
		got, raw = append(got, r), raw[n:]
	}
	if len(got) != len(steps)-2 || len(raw) > 0 {
		t.Fatalf("%d recall responses (%d left over), want %d", len(got), len(raw), len(steps)-2)
	}
	ok := func(i int, wants ...string) {
		t.Helper()
		res, _ := got[i]["result"].(string)
		if res == "" {
			t.Errorf("response %d is not a result: %v", i, got[i])
			return
		}
		for _, w := range wants {
			if !strings.Contains(res, w) {
				t.Errorf("response %d lacks %q:\n%.1500s", i, w, res)
			}
		}
		if strings.Contains(res, "ZX81") && i != 10 {
			t.Errorf("response %d shows another session's data:\n%.500s", i, res)
		}
	}
	failed := func(i int, want string) {
		t.Helper()
		msg, _ := got[i]["error"].(string)
		if !strings.Contains(msg, want) || strings.Contains(msg, "ZX81") {
			t.Errorf("response %d = %v; want an error saying %q", i, got[i], want)
		}
	}
	// The fact is on line 39999: 19,999 two-line cases come before it.
	ok(0, "lines 39998-40000 of 59999", "39999\t"+fact)
	ok(1, "39999:"+fact, "1 outputs searched", "39997-")
	ok(2, "39999:"+fact, "39998-", "40000-")
	failed(3, "no saved output named")
	failed(4, "not a saved tool output")
	failed(5, "not a saved tool output")
	failed(6, "name is empty")
	failed(7, "not a saved tool output")
	failed(8, "at most 255")
	failed(9, "binary")
	ok(10, "[next page: range=")
	// A pathological pattern runs in linear time; on a slow machine (-race) the time bound may
	// stop it first, with a cursor.
	if res, _ := got[11]["result"].(string); !strings.Contains(res, "[no match]") && !strings.Contains(res, "stopped early: the time bound") {
		t.Errorf("pathological regexp: %v", got[11])
	}
	if res, _ := got[12]["result"].(string); !strings.Contains(res, "[no match]") || strings.Contains(res, "secret-of-s2") {
		t.Errorf("search of s1 found s2's data: %v", got[12])
	}
	ok(13, "00000000  ff fe 00")
	// Recall results are never truncated and saved again, and nothing the agent asked or read
	// is logged.
	list, err := e.artifacts.List(context.Background(), &artifact.ListRequest{AppName: appName, UserID: "user", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range list.FileNames {
		if strings.Contains(name, "read_saved_output") || strings.Contains(name, "search_") {
			t.Errorf("a recall result was saved as %s", name)
		}
	}
	for _, entry := range observed.All() {
		text := fmt.Sprint(entry.Message, entry.ContextMap())
		if strings.Contains(text, "REQ-7f3a9c") || strings.Contains(strings.ToLower(text), "req-7f3a9c") || strings.Contains(text, "ZX81") {
			t.Errorf("a log entry holds a query or a result: %s", text)
		}
	}
}

// stoppedByTime is the note of a search the time bound stopped, with its cursor.
var stoppedByTime = regexp.MustCompile(`stopped early: the time bound \([^)]*\) was reached; continue with the same query and cursor="([^"]+)"`)

// continuation is the call that continues the newest search of req when the time bound stopped
// it: the same arguments and its cursor. Nil when the newest result is not such a search's.
func continuation(req *model.LLMRequest) *genai.FunctionCall {
	var last *genai.FunctionCall
	result := ""
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				last = p.FunctionCall
			}
			if p.FunctionResponse != nil {
				result, _ = p.FunctionResponse.Response["result"].(string)
			}
		}
	}
	m := stoppedByTime.FindStringSubmatch(result)
	if last == nil || last.Name != recall.ToolSearchOutputs || m == nil {
		return nil
	}
	args := maps.Clone(last.Args)
	args["cursor"] = m[1]
	return call(last.Name, args)
}

func binaryOutput(sessionID string) *artifact.SaveRequest {
	return &artifact.SaveRequest{AppName: appName, UserID: "user", SessionID: sessionID, FileName: "adkctx-tool-output-x.bin",
		Part: genai.NewPartFromBytes([]byte{0xff, 0xfe, 0, 1, 2, 3}, "application/octet-stream")}
}

// The history tools read the segment the compactor writes, by the caller's session only.
func TestHistoryToolsThroughRunner(t *testing.T) {
	core, observed := observer.New(zap.DebugLevel)
	m := &llmtest.Model{}
	e := newEnv(t, m, historyConfig(zap.New(core)), func(string) string { return testLog(50, 25, "config: timeout_ms=7125 for the payments client") })
	m.Script = []llmtest.Step{llmtest.Call(call("run_tests", map[string]any{})), llmtest.Text("the tests ran")}
	e.send(t, "s1", "run the tests; remember the codeword PELICAN")
	m.Script = append(m.Script, llmtest.Text("other"))
	e.send(t, "s2", "the codeword in s2 is OSPREY")

	e.summarizeFirstTurn(t, "s1")
	e.summarizeFirstTurn(t, "s2")
	m.Script = append(m.Script,
		llmtest.Call(call(recall.ToolSearchHistory, map[string]any{"query": "what was the timeout_ms"})),
		llmtest.Call(call(recall.ToolSearchHistory, map[string]any{"query": "PELICAN"})),
		llmtest.Call(call(recall.ToolSearchHistory, map[string]any{"query": "OSPREY"})),
		llmtest.Call(call(recall.ToolReadTurn, map[string]any{"turn": "turn 1"})),
		llmtest.Call(call(recall.ToolReadTurn, map[string]any{"turn": "turn 1, entry 3", "whole": true})),
		llmtest.Call(call(recall.ToolReadTurn, map[string]any{"turn": "turn 7"})),
		llmtest.Text("done"),
	)
	e.send(t, "s1", "what was the timeout and the codeword?")
	got := e.responses(t, "s1")
	if len(got) != 6 {
		t.Fatalf("%d recall responses, want 6: %v", len(got), got)
	}
	text := func(i int) string { s, _ := got[i]["result"].(string); return s }
	if !strings.Contains(text(0), "turn 1, entry 3") || !strings.Contains(text(0), "timeout_ms=7125") {
		t.Errorf("search_history timeout:\n%s", text(0))
	}
	if !strings.Contains(text(1), "turn 1, entry 1 · ") || !strings.Contains(text(1), "PELICAN") {
		t.Errorf("search_history PELICAN:\n%s", text(1))
	}
	if strings.Contains(text(2), "] turn") {
		t.Errorf("s1's history search reached s2's turn:\n%s", text(2))
	}
	if !strings.Contains(text(3), "run_tests result") || !strings.Contains(text(3), "excerpt") {
		t.Errorf("read_turn:\n%s", text(3))
	}
	if !strings.Contains(text(4), "timeout_ms=7125") {
		t.Errorf("read_turn whole:\n%s", text(4))
	}
	if msg, _ := got[5]["error"].(string); !strings.Contains(msg, "turn 7 is not summarized") {
		t.Errorf("read_turn of a missing turn: %v", got[5])
	}
	if slices.ContainsFunc(observed.All(), func(e observer.LoggedEntry) bool { return strings.Contains(fmt.Sprint(e.ContextMap()), "PELICAN") }) {
		t.Error("a log entry holds a query")
	}
}

// A call past its timeout (here: a search of a 350 KB output in the in-memory service) is a
// clear error for the model and one log entry without the query.
func TestTimeout(t *testing.T) {
	core, observed := observer.New(zap.DebugLevel)
	artifacts := artifact.InMemoryService()
	tools, err := recalltools.New(recalltools.Config{Engine: newEngine(t, adkctx.Config{Logger: zap.New(core)}),
		Artifacts: func() artifact.Service { return artifacts }, Timeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := artifacts.Save(context.Background(), &artifact.SaveRequest{AppName: appName, UserID: "user", SessionID: "s1",
		FileName: outputPrefix + "t-c1.txt", Part: genai.NewPartFromBytes([]byte(testLog(5000, 0, "")), "text/plain")}); err != nil {
		t.Fatal(err)
	}
	m := &llmtest.Model{Script: []llmtest.Step{
		llmtest.Call(call(recall.ToolSearchOutputs, map[string]any{"query": "SECRETWORD"})),
		llmtest.Text("done"),
	}}
	a, err := llmagent.New(llmagent.Config{Name: "coder", Model: m, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: sessions, ArtifactService: artifacts, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range r.Run(context.Background(), "user", "s1", genai.NewContentFromText("go", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	e := &env{sessions: sessions}
	got := e.responses(t, "s1")
	if len(got) != 1 {
		t.Fatalf("responses: %v", got)
	}
	if msg, _ := got[0]["error"].(string); !strings.Contains(msg, "took longer than 1ns") {
		t.Errorf("response %v; want the timeout error", got[0])
	}
	logs := observed.FilterMessage("recall tool failed").All()
	if len(logs) != 1 || logs[0].ContextMap()["tool"] != recall.ToolSearchOutputs || strings.Contains(fmt.Sprint(logs[0].ContextMap()), "SECRETWORD") {
		t.Errorf("logs: %v", observed.All())
	}
}

// A search whose tool Timeout is shorter than its scan bound (5 s) stops before the timeout with
// what it found and a cursor, not with the timeout's error, and the cursor continues it: here a
// costly pattern over 8 MB of base64 lines, which would take minutes whole.
func TestSearchStopsBeforeTimeout(t *testing.T) {
	artifacts := artifact.InMemoryService()
	tools, err := recalltools.New(recalltools.Config{Engine: newEngine(t, adkctx.Config{}),
		Artifacts: func() artifact.Service { return artifacts }, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const name = outputPrefix + "run_tests-c1.txt"
	if _, err := artifacts.Save(context.Background(), &artifact.SaveRequest{AppName: appName, UserID: "user", SessionID: "s1",
		FileName: name, Part: genai.NewPartFromBytes([]byte(strings.Repeat(strings.Repeat("bG9nIGxpbmUgb2YgYmFzZTY0", 170)+"\n", 2000)), "text/plain")}); err != nil {
		t.Fatal(err)
	}
	const query = `[A-Za-z0-9+/=]{300}#`
	cursor := regexp.MustCompile(`cursor="([^"]+)"`)
	m := &llmtest.Model{Script: []llmtest.Step{
		llmtest.Call(call(recall.ToolSearchOutputs, map[string]any{"query": query, "regexp": true, "name": name})),
		callWith(recall.ToolSearchOutputs, func(req *model.LLMRequest) map[string]any {
			args := map[string]any{"query": query, "regexp": true, "name": name}
			last := req.Contents[len(req.Contents)-1].Parts[0].FunctionResponse.Response
			if res, _ := last["result"].(string); cursor.MatchString(res) {
				args["cursor"] = cursor.FindStringSubmatch(res)[1]
			}
			return args
		}),
		llmtest.Text("done"),
	}}
	a, err := llmagent.New(llmagent.Config{Name: "coder", Model: m, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: sessions, ArtifactService: artifacts, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range r.Run(context.Background(), "user", "s1", genai.NewContentFromText("go", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := (&env{sessions: sessions}).responses(t, "s1")
	if len(got) != 2 {
		t.Fatalf("responses: %v", got)
	}
	var cursors []string
	for i, resp := range got {
		res, _ := resp["result"].(string)
		mm := cursor.FindStringSubmatch(res)
		if mm == nil || !strings.Contains(res, "stopped early: the time bound") {
			t.Fatalf("search %d: %v; want a result stopped by the time bound, with a cursor", i, resp)
		}
		cursors = append(cursors, mm[1])
	}
	if cursors[0] == cursors[1] {
		t.Errorf("the second search did not move on from cursor %s", cursors[0])
	}
}

// historyConfig compacts after each turn, synchronously, every turn but the newest: a turn is in
// a history segment once the next one ended.
func historyConfig(logger *zap.Logger) adkctx.Config {
	return adkctx.Config{Logger: logger, Compaction: &compaction.Config{Interval: 1, RetainRecentInvocations: 1, Synchronous: true}}
}

// summarizeFirstTurn runs a second turn of the session, after which (historyConfig) a
// compaction summarizes the first one and saves it as a history segment.
func (e *env) summarizeFirstTurn(t *testing.T, sessionID string) {
	t.Helper()
	e.model.Script = append(e.model.Script, llmtest.Text("noted"))
	e.send(t, sessionID, "thanks")
	list, err := e.artifacts.List(context.Background(), &artifact.ListRequest{AppName: appName, UserID: "user", SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(list.FileNames, "adkctx-history-000001.txt") {
		t.Fatalf("session %s: no history segment after its second turn: %v", sessionID, list.FileNames)
	}
}

// newEngine returns an engine for the tools alone (no hooks).
func newEngine(t *testing.T, cfg adkctx.Config) *glue.Engine {
	t.Helper()
	e, err := glue.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// read_turn's default excerpt of a result truncation cut keeps the cut mark naming the saved
// output: the model's next call reads the output by that name, without asking read_turn for the
// whole result first (the extra hop the report found).
func TestReadTurnExcerptNamesSavedOutput(t *testing.T) {
	const fact = "--- FAIL: TestCheckout (0.31s) order id=REQ-7f3a9c expected 200 got 500"
	m := &llmtest.Model{}
	e := newEnv(t, m, historyConfig(zap.NewNop()), func(string) string { return testLog(30000, 20000, fact) })
	m.Script = []llmtest.Step{llmtest.Call(call("run_tests", map[string]any{})), llmtest.Text("the tests ran")}
	e.send(t, "s1", "run the tests")
	e.summarizeFirstTurn(t, "s1")
	var fromTurn string
	m.Script = append(m.Script,
		llmtest.Call(call(recall.ToolReadTurn, map[string]any{"turn": "turn 1"})),
		callWith(recall.ToolReadOutput, func(req *model.LLMRequest) map[string]any {
			last := req.Contents[len(req.Contents)-1].Parts[0].FunctionResponse.Response
			res, _ := last["result"].(string)
			if mm := savedAs.FindStringSubmatch(res); mm != nil {
				fromTurn = mm[1]
			}
			return map[string]any{"name": fromTurn, "range": "39998-40000"}
		}),
		llmtest.Text("found it"),
	)
	e.send(t, "s1", "which order failed?")
	got := e.responses(t, "s1")
	if len(got) != 2 {
		t.Fatalf("recall responses: %v", got)
	}
	turn, _ := got[0]["result"].(string)
	if !strings.Contains(turn, "run_tests result") || !strings.Contains(turn, "excerpt") || fromTurn == "" {
		t.Fatalf("read_turn's excerpt names no saved output:\n%s", turn)
	}
	if res, _ := got[1]["result"].(string); !strings.Contains(res, "39999\t"+fact) {
		t.Errorf("read_saved_output(%q) right after read_turn: %v", fromTurn, got[1])
	}
}
