package hooks_test

// The recall tools as Hooks.RecallTools gives them, through adk-go's runner with SQLite sessions
// and saved outputs in the same database. The adk-go v2 glue runs the same tests
// (adk2/hooks/recall_test.go is generated from this file).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/adkctx/adkctx/hooks/internal/sqlitetest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/dbartifact"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/scenario"
	"github.com/adkctx/adkctx/recall"
)

// The note of an excerpt's cut mark, as the model reads it: excerptHead starts every one, and
// excerptNote is the whole note when the recall tools are off.
const (
	excerptHead = "older tool result shortened when the history was summarized"
	excerptNote = excerptHead + "; call the tool again for all of it"
)

// recallTools are the recall tools' names.
var recallTools = []string{recall.ToolReadOutput, recall.ToolSearchOutputs, recall.ToolSearchHistory, recall.ToolReadTurn}

// summaryLine is the line a summary ends with when the recall tools are declared.
const summaryLine = "Earlier turns and tool outputs are kept word for word: search_history(query=…) finds an exact name, id, " +
	"path or error in the turns (read one with read_turn(turn=…)), search_saved_outputs(query=…) in the saved outputs."

const recallApp = "recall-app"

// recallStack is a Hooks with compaction (every 2 invocations beyond the 2 kept raw, on the
// turn, extractive summaries) over SQLite sessions and the saved outputs in the same database.
type recallStack struct {
	h         *hooks.Hooks
	sessions  session.Service
	artifacts artifact.Service
	logs      *observer.ObservedLogs
}

func newRecallStack(t *testing.T, models ...budget.ModelInfo) *recallStack {
	t.Helper()
	store := sqlitetest.Open(t, sqlitetest.TempDSN(t))
	sessions := store.Sessions
	artifacts := dbartifact.NewService(store.DB, dbartifact.Config{})
	if err := dbartifact.Migrate(context.Background(), store.DB); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.DebugLevel)
	h, err := hooks.New(adkctx.Config{Logger: zap.New(core), Models: models,
		Compaction: &compaction.Config{Synchronous: true, Interval: 2, Summarizer: &compaction.ExtractiveSummarizer{}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return &recallStack{h: h, sessions: sessions, artifacts: artifacts, logs: logs}
}

// runner returns a runner of agent "coder" on m with tools, wired with s's hooks, sessions and
// saved outputs (artifacts: false leaves the runner without an artifact service).
func (s *recallStack) runner(t *testing.T, m model.LLM, tools []tool.Tool, artifacts bool) *runner.Runner {
	t.Helper()
	a, err := llmagent.New(llmagent.Config{Name: "coder", Model: m, Instruction: "You are a careful coding assistant.", Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	rc := runner.Config{AppName: recallApp, Agent: a, SessionService: s.sessions, AutoCreateSession: true}
	if artifacts {
		rc.ArtifactService = s.artifacts
	}
	if rc, err = s.h.Wire(rc); err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func recallSend(t *testing.T, r *runner.Runner, sessionID, text string) {
	t.Helper()
	for _, err := range r.Run(context.Background(), "user", sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// scenarioTools are the session's read_file, list_files and run_tests, plus extra.
func scenarioTools(t *testing.T, extra ...tool.Tool) []tool.Tool {
	t.Helper()
	tools, err := llmtest.ScenarioTools()
	if err != nil {
		t.Fatal(err)
	}
	return append(tools, extra...)
}

// readTurn is a turn reading the file of step i, then answering.
func readTurn(i int) []llmtest.Step {
	return []llmtest.Step{
		llmtest.Call(&genai.FunctionCall{Name: scenario.ReadFile, Args: map[string]any{"path": scenario.Path(i)}}),
		llmtest.Text(fmt.Sprintf("Decision %s: %s is fine.", scenario.Decision(i), scenario.Path(i))),
	}
}

// responseTexts returns the JSON of every function response of req, in order.
func responseTexts(req *model.LLMRequest) []string {
	var out []string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p != nil && p.FunctionResponse != nil {
				b, _ := json.Marshal(p.FunctionResponse.Response)
				out = append(out, p.FunctionResponse.Name+" "+string(b))
			}
		}
	}
	return out
}

// summaryText returns the text of req's summary ("" when it has none).
func summaryText(req *model.LLMRequest) string {
	for _, c := range req.Contents {
		if compaction.IsSummary(c) {
			var b strings.Builder
			for _, p := range c.Parts {
				b.WriteString(p.Text)
			}
			return b.String()
		}
	}
	return ""
}

var excerptSavedAs = regexp.MustCompile(`full text saved as \\"(adkctx-tool-output-[^"\\]+)\\"`)

// recallResults returns the results (or errors) of the recall calls stored in the session.
func (s *recallStack) recallResults(t *testing.T, sessionID string) []string {
	t.Helper()
	resp, err := s.sessions.Get(context.Background(), &session.GetRequest{AppName: recallApp, UserID: "user", SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for ev := range resp.Session.Events().All() {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if p.FunctionResponse != nil && slices.Contains(recallTools, p.FunctionResponse.Name) {
				r, _ := p.FunctionResponse.Response["result"].(string)
				if e, ok := p.FunctionResponse.Response["error"].(string); ok {
					r = "error: " + e
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// extends reports whether b's contents start with a's, byte for byte (a provider's prompt cache
// serves a's part of b).
func extends(a, b *model.LLMRequest) bool {
	if len(b.Contents) < len(a.Contents) {
		return false
	}
	x, _ := json.Marshal(a.Contents)
	y, _ := json.Marshal(b.Contents[:len(a.Contents)])
	return string(x) == string(y)
}

// With the recall tools installed, the model is told: the truncation note names the tool and
// the output, an excerpt's note names its saved result, the summary says the earlier turns can
// be searched; the requests between two compactions still extend each other byte for byte; the
// agent reaches the excerpted result, the summarized turns and their words with the tools; its
// recall calls count nowhere in the ledger; nothing it asked or read is logged.
func TestRecallToolsThroughWire(t *testing.T) {
	s := newRecallStack(t)
	recallTools, err := s.h.RecallTools()
	if err != nil {
		t.Fatal(err)
	}
	m := &llmtest.Model{}
	r := s.runner(t, m, scenarioTools(t, recallTools...), true)
	for i := range 5 {
		m.Script = append(m.Script, readTurn(i)...)
		recallSend(t, r, "s1", scenario.UserMessage(i))
	}
	reqs := m.Requests()
	// The truncation note of turn 0's file names the tool.
	if got := responseTexts(reqs[1]); len(got) != 1 || !strings.Contains(got[0], `full output saved as \"adkctx-tool-output-read_file-`) ||
		!strings.Contains(got[0], "read it with "+recall.ToolReadOutput) {
		t.Errorf("truncation note: %.300v", got)
	}
	// Turn 4's first request: the summary of turns 0 and 1 (stored after turn 3) with its line,
	// turn 2's result as an excerpt naming its saved result, turn 3's whole.
	first := reqs[8]
	if sum := summaryText(first); !strings.HasSuffix(sum, summaryLine) {
		t.Fatalf("summary without its line:\n%s", sum)
	}
	var excerptName string
	for _, resp := range responseTexts(first) {
		if strings.Contains(resp, excerptNote) {
			t.Errorf("an excerpt keeps the view's note: %.300s", resp)
		}
		if mm := excerptSavedAs.FindStringSubmatch(resp); mm != nil {
			excerptName = mm[1]
		}
	}
	if excerptName == "" {
		t.Fatalf("no excerpt names its saved result: %v", responseTexts(first))
	}
	if !extends(reqs[8], reqs[9]) {
		t.Error("turn 4's second request does not extend its first")
	}

	// The agent reads the excerpted result, searches the summarized turns and reads one.
	m.Script = append(m.Script,
		llmtest.Call(&genai.FunctionCall{Name: recall.ToolReadOutput, Args: map[string]any{"name": excerptName, "range": "1-5"}}),
		llmtest.Call(&genai.FunctionCall{Name: recall.ToolSearchHistory, Args: map[string]any{"query": scenario.Identifier(0)}}),
		llmtest.Call(&genai.FunctionCall{Name: recall.ToolReadTurn, Args: map[string]any{"turn": "turn 1"}}),
		llmtest.Text("found them"),
	)
	recallSend(t, r, "s1", "[step 5] What did the files of steps 0 and 2 say?")
	got := s.recallResults(t, "s1")
	if len(got) != 3 {
		t.Fatalf("recall results: %q", got)
	}
	if !strings.Contains(got[0], "// Package mod02 implements "+scenario.Identifier(2)) {
		t.Errorf("read_saved_output of the excerpt:\n%s", got[0])
	}
	// The turn the identifier was read in is the user's first message: turn 1.
	if !strings.Contains(got[1], "[1] turn 1, entry 3 · read_file result") || !strings.Contains(got[1], scenario.Identifier(0)) {
		t.Errorf("search_history:\n%s", got[1])
	}
	if !strings.Contains(got[2], "read_file result") || !strings.Contains(got[2], scenario.UserMessage(0)) {
		t.Errorf("read_turn:\n%s", got[2])
	}
	all := m.Requests()
	for k := 9; k < len(all); k++ {
		if !extends(all[k-1], all[k]) {
			t.Errorf("request %d does not extend request %d", k, k-1)
		}
	}

	// Two more turns: the recall turn is summarized, and the ledger counts no recall call.
	for i := 6; i < 9; i++ {
		m.Script = append(m.Script, readTurn(i)...)
		recallSend(t, r, "s1", scenario.UserMessage(i))
	}
	last := m.Requests()[len(m.Requests())-1]
	sum := strings.TrimSuffix(summaryText(last), summaryLine)
	if !strings.Contains(sum, "read_file ×") || strings.Contains(sum, recall.ToolReadOutput) || strings.Contains(sum, recall.ToolSearchHistory) ||
		strings.Contains(sum, recall.ToolReadTurn) {
		t.Errorf("the ledger counts recall calls, or lost read_file:\n%s", sum)
	}
	for _, e := range s.logs.All() {
		text := fmt.Sprint(e.Message, e.ContextMap())
		if strings.Contains(text, scenario.Identifier(0)) || strings.Contains(text, scenario.Identifier(2)) {
			t.Errorf("a log entry holds a query or a result: %s", text)
		}
	}
	list, err := s.artifacts.List(context.Background(), &artifact.ListRequest{AppName: recallApp, UserID: "user", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(list.FileNames, "adkctx-history-000001.txt") || !slices.Contains(list.FileNames, excerptName) {
		t.Errorf("saved: %v", list.FileNames)
	}

	// Later segments go on counting as the user does: the file of step 3 was read in the user's
	// fourth message, the recall turn was the sixth.
	m.Script = append(m.Script,
		llmtest.Call(&genai.FunctionCall{Name: recall.ToolSearchHistory, Args: map[string]any{"query": scenario.Identifier(3)}}),
		llmtest.Call(&genai.FunctionCall{Name: recall.ToolReadTurn, Args: map[string]any{"turn": "turn 4"}}),
		llmtest.Call(&genai.FunctionCall{Name: recall.ToolReadTurn, Args: map[string]any{"turn": "turn 6"}}),
		llmtest.Text("found it"),
	)
	recallSend(t, r, "s1", "[step 9] What did the file of step 3 say?")
	got = s.recallResults(t, "s1")[3:]
	if len(got) != 3 {
		t.Fatalf("recall results: %q", got)
	}
	if !strings.Contains(got[0], "[1] turn 4, entry 3 · read_file result") {
		t.Errorf("search_history of step 3:\n%s", got[0])
	}
	if !strings.Contains(got[1], scenario.UserMessage(3)) || !strings.Contains(got[2], "[step 5] What did the files") {
		t.Errorf("read_turn of turns 4 and 6:\n%s\n%s", got[1], got[2])
	}
}

// An agent without the recall tools sees today's bytes, request for request, also when another
// agent of the application has them (one view serves every agent): the same session played by
// a Hooks that never gave out the tools sends the same requests.
func TestRecallOffKeepsTodaysBytes(t *testing.T) {
	play := func(giveTools bool) []*model.LLMRequest {
		s := newRecallStack(t)
		if giveTools {
			if _, err := s.h.RecallTools(); err != nil {
				t.Fatal(err)
			}
		}
		m := &llmtest.Model{}
		r := s.runner(t, m, scenarioTools(t), true)
		for i := range 8 {
			m.Script = append(m.Script, readTurn(i)...)
			recallSend(t, r, "s1", scenario.UserMessage(i))
		}
		return m.Requests()
	}
	with, without := play(true), play(false)
	if len(with) != len(without) {
		t.Fatalf("%d requests, want %d", len(with), len(without))
	}
	excerpts := 0
	for k := range with {
		// Call ids, and so the names of saved outputs, differ from run to run.
		a := callIDs.ReplaceAllString(mustJSONOf(t, with[k].Contents), "adk-ID")
		b := callIDs.ReplaceAllString(mustJSONOf(t, without[k].Contents), "adk-ID")
		if a != b {
			i := 0
			for i < min(len(a), len(b)) && a[i] == b[i] {
				i++
			}
			t.Fatalf("request %d differs at byte %d:\n%.300s\n%.300s", k, i, a[i:], b[i:])
		}
		excerpts += strings.Count(a, excerptHead)
		if strings.Contains(a, recall.ToolReadOutput) || strings.Contains(a, recall.ToolSearchHistory) {
			t.Fatalf("request %d names a recall tool:\n%s", k, a)
		}
	}
	if excerpts == 0 {
		t.Error("no request showed an excerpt: the test shows nothing")
	}
}

var callIDs = regexp.MustCompile(`adk-[0-9a-f-]{36}`)

func mustJSONOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The tools read through what Wire captured: once they are given out, Wire refuses a runner
// without an artifact service (more in wiring_test.go); on a runner wired by hand, where none is
// captured, a call is an error the model reads; a second, different artifact service is refused.
func TestRecallToolsNeedWiring(t *testing.T) {
	s := newRecallStack(t)
	recallTools, err := s.h.RecallTools()
	if err != nil {
		t.Fatal(err)
	}
	m := &llmtest.Model{Script: []llmtest.Step{
		llmtest.Call(&genai.FunctionCall{Name: recall.ToolSearchOutputs, Args: map[string]any{"query": "FAIL"}}),
		llmtest.Text("nothing"),
	}}
	coder, err := llmagent.New(llmagent.Config{Name: "coder", Model: m, Tools: scenarioTools(t, recallTools...)})
	if err != nil {
		t.Fatal(err)
	}
	var w *adkctx.WiringError
	if _, err := s.h.Wire(runner.Config{AppName: recallApp, Agent: coder, SessionService: s.sessions}); !errors.As(err, &w) ||
		w.Problem != "recall_without_artifacts" {
		t.Errorf("Wire without an artifact service: %v, want the recall_without_artifacts *adkctx.WiringError", err)
	}
	p, err := s.h.Plugin()
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Config{AppName: recallApp, Agent: coder, SessionService: s.h.SessionService(s.sessions), AutoCreateSession: true,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{p}}})
	if err != nil {
		t.Fatal(err)
	}
	recallSend(t, r, "s1", "find the failure")
	if got := s.recallResults(t, "s1"); len(got) != 1 || !strings.Contains(got[0], "error: ") || !strings.Contains(got[0], "artifact service") {
		t.Errorf("a call without an artifact service: %q", got)
	}
	s.runner(t, &llmtest.Model{}, scenarioTools(t, recallTools...), true) // captures it
	a, err := llmagent.New(llmagent.Config{Name: "other", Model: &llmtest.Model{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.h.Wire(runner.Config{AppName: recallApp, Agent: a, SessionService: s.sessions, ArtifactService: artifact.InMemoryService()})
	if err == nil || !strings.Contains(err.Error(), "another artifact service") {
		t.Errorf("Wire with a second artifact service: %v", err)
	}
	again, err := s.h.RecallTools()
	if err != nil || len(again) != len(recallTools) || again[0] != recallTools[0] {
		t.Errorf("RecallTools again: %v, %v; want the same tools", again, err)
	}
}

// declaredRecall returns the recall tools req declares, in recallTools' order.
func declaredRecall(req *model.LLMRequest) []string {
	var out []string
	for _, name := range recallTools {
		if req.Config == nil {
			break
		}
		for _, tl := range req.Config.Tools {
			if tl != nil && slices.ContainsFunc(tl.FunctionDeclarations, func(d *genai.FunctionDeclaration) bool { return d != nil && d.Name == name }) {
				out = append(out, name)
			}
		}
	}
	return out
}

// The recall tools are declared once the conversation gives them a use, not before: no request
// pays their declarations (about 900 tokens) while nothing was cut or summarized. The output
// tools come with the first output cut and saved, every tool with the first summary, and stay.
// A model that calls a tool not declared yet still reaches it.
func TestRecallToolsDeclaredOnceUseful(t *testing.T) {
	s := newRecallStack(t)
	tools, err := s.h.RecallTools()
	if err != nil {
		t.Fatal(err)
	}
	m := &llmtest.Model{}
	r := s.runner(t, m, scenarioTools(t, tools...), true)
	outputs := []string{recall.ToolReadOutput, recall.ToolSearchOutputs}
	// Turn 0 lists files (a short result); turns 1–4 read one (cut at the truncation limit, saved).
	m.Script = append(m.Script,
		llmtest.Call(&genai.FunctionCall{Name: scenario.ListFiles, Args: map[string]any{"path": "."}}),
		llmtest.Text("Listed."))
	recallSend(t, r, "s1", scenario.UserMessage(0))
	for i := 1; i < 5; i++ {
		m.Script = append(m.Script, readTurn(i)...)
		recallSend(t, r, "s1", scenario.UserMessage(i))
	}
	reqs := m.Requests()
	if len(reqs) != 10 {
		t.Fatalf("%d requests, want 10", len(reqs))
	}
	summarized := false
	for k, req := range reqs {
		var want []string
		switch {
		case summaryText(req) != "":
			summarized, want = true, recallTools
		case k >= 3: // turn 1's read cut and saved: its note names read_saved_output
			want = outputs
		}
		if diff := cmp.Diff(want, declaredRecall(req), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("request %d declares (-want +got):\n%s", k, diff)
		}
		if k == 3 && !strings.Contains(strings.Join(responseTexts(req), " "), "read it with "+recall.ToolReadOutput) {
			t.Errorf("the truncation note of the first cut does not name the tool: %.300v", responseTexts(req))
		}
	}
	if !summarized {
		t.Fatal("no request holds a summary: the test shows nothing of the history tools")
	}

	// Another session: the model calls search_history before anything was summarized.
	m.Script = append(m.Script,
		llmtest.Call(&genai.FunctionCall{Name: recall.ToolSearchHistory, Args: map[string]any{"query": "anything"}}),
		llmtest.Text("Nothing yet."))
	recallSend(t, r, "s2", "Have we talked before?")
	all := m.Requests()
	if got := declaredRecall(all[len(all)-2]); len(got) != 0 {
		t.Errorf("the first request of a new session declares %v", got)
	}
	if got := s.recallResults(t, "s2"); len(got) != 1 || strings.Contains(got[0], "unknown tool") {
		t.Errorf("a call of a tool not declared yet: %q", got)
	}
	if got := declaredRecall(all[len(all)-1]); !slices.Equal(got, []string{recall.ToolSearchHistory, recall.ToolReadTurn}) {
		t.Errorf("after the model called search_history, the request declares %v", got)
	}
}

// TestRecallToolsLeftOutOfASmallWindow: in a window where the recall tools' declarations would
// take more than a quarter of what the soft limit leaves the conversation, no request declares
// them, though outputs are cut and saved and earlier turns summarized, and the truncation notes
// do not name them; the decision is logged once. Through adk-go's runner on SQLite.
func TestRecallToolsLeftOutOfASmallWindow(t *testing.T) {
	m := &llmtest.Model{ModelName: "small-model"}
	s := newRecallStack(t, budget.ModelInfo{Name: m.Name(), ContextWindow: 4096, MaxOutputTokens: 256})
	tools, err := s.h.RecallTools()
	if err != nil {
		t.Fatal(err)
	}
	r := s.runner(t, m, scenarioTools(t, tools...), true)
	for i := 1; i < 5; i++ {
		m.Script = append(m.Script, readTurn(i)...)
		recallSend(t, r, "s1", scenario.UserMessage(i))
	}
	summarized, cut := false, false
	for k, req := range m.Requests() {
		if got := declaredRecall(req); len(got) != 0 {
			t.Errorf("request %d declares %v", k, got)
		}
		summarized = summarized || summaryText(req) != ""
		for _, r := range responseTexts(req) {
			cut = cut || strings.Contains(r, "full output saved as")
			if strings.Contains(r, recall.ToolReadOutput) {
				t.Errorf("request %d: a note names %s, which is not declared: %.200s", k, recall.ToolReadOutput, r)
			}
		}
	}
	if !summarized || !cut {
		t.Fatalf("summarized %v, an output cut and saved %v: the test shows nothing", summarized, cut)
	}
	if n := s.logs.FilterMessageSnippet("recall tools not declared").Len(); n != 1 {
		t.Errorf("%d log entries of the recall tools left out, want 1", n)
	}
}

// longLogTool is a tool "dump_logs" whose output is log: long enough for truncation to cut it
// and save it whole.
func longLogTool(t *testing.T, log string) tool.Tool {
	t.Helper()
	lt, err := llmtest.PathTool("dump_logs", func(string) map[string]any { return map[string]any{"output": log} })
	if err != nil {
		t.Fatal(err)
	}
	return lt
}

var outputSavedAs = regexp.MustCompile(`full output saved as \\"(adkctx-tool-output-[^"\\]+)\\"`)

// A tool result truncation cut, then shown as an excerpt once its turn is behind a compaction,
// points the model at the output truncation saved whole, with the sizes of that output: one read
// reaches all of it, and no copy of the cut text is saved beside it. The class: outputs over the
// byte limit, over the line limit, and over both.
func TestExcerptOfCutResultNamesItsOutput(t *testing.T) {
	for _, tc := range []struct {
		name         string
		lines, width int
	}{
		{"over both limits", 400, 70},
		{"over the line limit only", 300, 20},
		{"over the byte limit only", 120, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for i := range tc.lines {
				line := fmt.Sprintf("2026-11-28T10:00:%02d LOGLINE-%03d ", i%60, i)
				b.WriteString(line + strings.Repeat("x", max(tc.width-len(line), 0)) + "\n")
			}
			log := b.String()
			s := newRecallStack(t)
			recallTools, err := s.h.RecallTools()
			if err != nil {
				t.Fatal(err)
			}
			m := &llmtest.Model{}
			r := s.runner(t, m, scenarioTools(t, append(recallTools, longLogTool(t, log))...), true)
			for i := range 5 {
				if i == 2 {
					m.Script = append(m.Script, llmtest.Call(&genai.FunctionCall{Name: "dump_logs", Args: map[string]any{"path": "service.log"}}), llmtest.Text("logs read"))
				} else {
					m.Script = append(m.Script, readTurn(i)...)
				}
				recallSend(t, r, "s1", scenario.UserMessage(i))
			}
			reqs := m.Requests()
			logsResponse := func(req *model.LLMRequest) string {
				for _, resp := range responseTexts(req) {
					if strings.HasPrefix(resp, "dump_logs ") {
						return resp
					}
				}
				t.Fatalf("no dump_logs result in the request: %.300v", responseTexts(req))
				return ""
			}
			// Turn 2's second request: the result as truncation cut it, naming the output it saved.
			mm := outputSavedAs.FindStringSubmatch(logsResponse(reqs[5]))
			if mm == nil {
				t.Fatalf("the truncation note names no saved output: %.600s", logsResponse(reqs[5]))
			}
			saved := mm[1]
			// Turn 4's first request: the same result as an excerpt.
			excerpt := logsResponse(reqs[8])
			if !strings.Contains(excerpt, "older tool result shortened") {
				t.Fatalf("the result is not shown as an excerpt: %.600s", excerpt)
			}
			mm = excerptSavedAs.FindStringSubmatch(excerpt)
			if mm == nil || mm[1] != saved {
				t.Errorf("the excerpt's note names %q, want the output truncation saved, %q:\n%s", mm, saved, excerpt)
			}
			if want := fmt.Sprintf("original %d lines, %d bytes", tc.lines, len(log)); !strings.Contains(excerpt, want) || strings.Count(excerpt, "original ") != 1 {
				t.Errorf("the excerpt does not state the original's size (%s) once:\n%s", want, excerpt)
			}
			if !extends(reqs[8], reqs[9]) {
				t.Error("turn 4's second request does not extend its first")
			}

			// One read of the named output reaches the end of the original output.
			m.Script = append(m.Script,
				llmtest.Call(&genai.FunctionCall{Name: recall.ToolReadOutput, Args: map[string]any{"name": saved, "range": fmt.Sprintf("%d-%d", tc.lines-2, tc.lines)}}),
				llmtest.Text("read it"))
			recallSend(t, r, "s1", "[step 5] What did the last log line say?")
			got := s.recallResults(t, "s1")
			if len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf("LOGLINE-%03d", tc.lines-1)) {
				t.Errorf("read_saved_output of %s: %q", saved, got)
			}
			ctx := context.Background()
			whole, err := s.artifacts.Load(ctx, &artifact.LoadRequest{AppName: recallApp, UserID: "user", SessionID: "s1", FileName: saved})
			if err != nil {
				t.Fatal(err)
			}
			if text := whole.Part.Text + string(partBytes(whole.Part)); text != log {
				t.Errorf("%s holds %d bytes, want the original's %d", saved, len(text), len(log))
			}
			// No excerpt output holds a copy of the result.
			list, err := s.artifacts.List(ctx, &artifact.ListRequest{AppName: recallApp, UserID: "user", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range list.FileNames {
				if !strings.Contains(name, "-excerpt-") {
					continue
				}
				a, err := s.artifacts.Load(ctx, &artifact.LoadRequest{AppName: recallApp, UserID: "user", SessionID: "s1", FileName: name})
				if err != nil {
					t.Fatal(err)
				}
				if text := a.Part.Text + string(partBytes(a.Part)); strings.Contains(text, "LOGLINE-") || strings.Contains(name, "dump_logs") {
					t.Errorf("%s holds a copy of the cut result", name)
				}
			}
		})
	}
}

// partBytes is the inline data of p, if any.
func partBytes(p *genai.Part) []byte {
	if p == nil || p.InlineData == nil {
		return nil
	}
	return p.InlineData.Data
}
