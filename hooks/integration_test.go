package hooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glebarez/sqlite"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
	"google.golang.org/adk/session/database"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/internal/llmtest"
)

// pluginStack wires adkctx the way the README does for compaction: agent callbacks off, the plugin
// and the session wrapper on the runner, over the given base session service.
func pluginStack(t *testing.T, m *llmtest.Model, cfg hooks.Config, base session.Service, tools ...tool.Tool) (*stack, session.Service) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Logger = zap.New(core)
	h, err := hooks.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant.", Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.Plugin()
	if err != nil {
		t.Fatal(err)
	}
	svc := h.SessionService(base)
	r, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: svc, AutoCreateSession: true,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{p}}})
	if err != nil {
		t.Fatal(err)
	}
	return &stack{hooks: h, model: m, runner: r, sessions: svc, logs: logs}, base
}

func sqliteService(t *testing.T, path string) session.Service {
	t.Helper()
	svc, err := database.NewSessionService(sqlite.Open(path), &gorm.Config{Logger: gormlogger.Default.LogMode(gormlogger.Silent)})
	if err != nil {
		t.Fatal(err)
	}
	if err := database.AutoMigrate(svc); err != nil {
		t.Fatal(err)
	}
	return svc
}

func rawEvents(t *testing.T, svc session.Service, sessionID string) []*session.Event {
	t.Helper()
	resp, err := svc.Get(t.Context(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	return compaction.RawEvents(resp.Session)
}

// After θ invocations the plugin stores a marker; the next request carries the summary and only
// the recent turns; storage keeps every original event — on the in-memory and SQLite services.
func TestCompactionThroughPlugin(t *testing.T) {
	for _, backend := range []string{"inmemory", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			var base session.Service
			if backend == "inmemory" {
				base = session.InMemoryService()
			} else {
				base = sqliteService(t, filepath.Join(t.TempDir(), "sessions.db"))
			}
			m := &llmtest.Model{UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
				return genai.NewContentFromText("noted", genai.RoleModel), nil
			}}
			s, base := pluginStack(t, m, hooks.Config{Compaction: &compaction.Config{Interval: 3, Overlap: 1}}, base)
			const turns = 7
			for i := range turns {
				if err := s.send(t, "s1", fmt.Sprintf("topic-%d: remember this", i)); err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
			}
			raw := rawEvents(t, base, "s1")
			markers, originals := 0, 0
			for _, e := range raw {
				if compaction.IsCompactionEvent(e) {
					markers++
				} else {
					originals++
				}
			}
			if markers == 0 {
				for _, e := range s.logs.All() {
					if e.Message != "budget decision" {
						t.Logf("%s %v", e.Message, e.ContextMap())
					}
				}
				t.Fatal("no compaction marker stored after 7 invocations with θ=3")
			}
			if originals != 2*turns {
				t.Errorf("stored original events = %d, want %d (nothing lost)", originals, 2*turns)
			}
			last := llmtest.AllText(m.Requests()[turns-1])
			if !strings.Contains(last, compaction.SummaryHeader) {
				t.Errorf("last request has no summary:\n%s", last)
			}
			if strings.Contains(last, "For context:") {
				t.Errorf("summary reached the model as another agent's words")
			}
			// The first turn may be quoted inside the summary (it states the user's goal), but no
			// other content carries it raw.
			for i, c := range m.Requests()[turns-1].Contents {
				if i > 0 && strings.Contains(c.Parts[0].Text, "topic-0") {
					t.Errorf("content %d of the last request carries the first turn raw", i)
				}
			}
			if !strings.Contains(last, fmt.Sprintf("topic-%d", turns-1)) {
				t.Errorf("last request lacks the newest turn")
			}
			if n := len(s.logs.FilterField(zap.String("outcome", compaction.OutcomeCompacted)).All()); n != markers {
				t.Errorf("compaction log entries with outcome compacted = %d, markers = %d", n, markers)
			}
		})
	}
}

// One user turn with dozens of tool calls: the token trigger compacts mid-invocation, so no
// request passes the hard limit although the newest turn alone would not fit.
func TestLongInvocationStaysBounded(t *testing.T) {
	const calls = 30
	m := &llmtest.Model{ModelName: "small-model", UsageScale: 1}
	for i := range calls {
		m.Script = append(m.Script, llmtest.Call(&genai.FunctionCall{Name: "build", Args: map[string]any{"target": fmt.Sprint(i)}}))
	}
	m.Script = append(m.Script, llmtest.Text("all targets built"))
	out := strings.Repeat("step output line with some detail\n", 90) // ~3 KB, under the truncation limit
	cfg := hooks.Config{
		Models:     []budget.ModelInfo{{Name: "small-model", ContextWindow: 8000, MaxOutputTokens: 500}},
		Compaction: &compaction.Config{},
	}
	s, base := pluginStack(t, m, cfg, session.InMemoryService(), buildTool(t, out))
	if err := s.send(t, "s1", "build all thirty targets"); err != nil {
		t.Fatalf("run: %v", err)
	}
	limits := s.hooks.Limits("small-model")
	reqs := m.Requests()
	if len(reqs) != calls+1 {
		t.Fatalf("model calls = %d, want %d", len(reqs), calls+1)
	}
	for i, r := range reqs {
		n := budget.EstimateRequest(r.Contents, r.Config)
		if n > limits.Hard {
			t.Errorf("call %d: %d tokens above the hard limit %d", i, n, limits.Hard)
		}
	}
	markers := 0
	for _, e := range rawEvents(t, base, "s1") {
		if compaction.IsCompactionEvent(e) {
			markers++
		}
	}
	if markers == 0 {
		t.Error("no mid-invocation compaction happened")
	}
	// Compaction alone kept the requests under the limit: none had to be trimmed or refused.
	for _, action := range []string{"trimmed", "rejected"} {
		if n := len(s.logs.FilterMessage("budget decision").FilterField(zap.String("action", action)).All()); n != 0 {
			t.Errorf("%d requests were %s; compaction should have kept them under the hard limit", n, action)
		}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// AGENTS.md text reaches every model call after the agent's own instruction; the working
// directory can come from session state, so one process serves two repositories.
func TestInstructionsPerSessionWorkDir(t *testing.T) {
	repoA, repoB := t.TempDir(), t.TempDir()
	for _, r := range []string{repoA, repoB} {
		if err := os.Mkdir(filepath.Join(r, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(repoA, "AGENTS.md"), "Repo A: run `make test`; templates look like {name}.")
	writeFile(t, filepath.Join(repoB, "svc", "AGENTS.md"), "Repo B service: never edit generated files.")
	m := &llmtest.Model{}
	cfg := hooks.Config{Instructions: &hooks.InstructionsConfig{
		WorkDir:         repoA,
		WorkDirStateKey: "work_dir",
		Discovery:       agentsmd.Config{NoGlobal: true},
	}}
	s := newStack(t, m, stackOptions{cfg: cfg})
	if _, err := s.sessions.Create(t.Context(), &session.CreateRequest{AppName: appName, UserID: "user", SessionID: "b",
		State: map[string]any{"work_dir": filepath.Join(repoB, "svc")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.send(t, "a", "hello"); err != nil {
		t.Fatal(err)
	}
	if err := s.send(t, "b", "hello"); err != nil {
		t.Fatal(err)
	}
	sys := func(i int) string {
		var b strings.Builder
		for _, p := range m.Requests()[i].Config.SystemInstruction.Parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	a, b := sys(0), sys(1)
	if !strings.Contains(a, "Repo A: run `make test`; templates look like {name}.") || strings.Contains(a, "Repo B") {
		t.Errorf("session a system instruction:\n%s", a)
	}
	if !strings.Contains(b, "Repo B service") || strings.Contains(b, "Repo A") {
		t.Errorf("session b system instruction:\n%s", b)
	}
	if strings.Index(a, "careful assistant") > strings.Index(a, "Repo A") {
		t.Errorf("AGENTS.md text comes before the agent's own instruction")
	}
	if f := s.budgetDecisions()[0].ContextMap(); f["instruction_bytes"].(int64) == 0 {
		t.Errorf("budget decision does not count the instructions: %v", f)
	}
}

// rawTool returns its result map as it is: functiontool would JSON-encode and decode it, turning
// invalid UTF-8 into U+FFFD before any callback sees it.
type rawTool struct {
	name   string
	result map[string]any
}

func (r *rawTool) Name() string        { return r.name }
func (r *rawTool) Description() string { return "returns raw output" }
func (r *rawTool) IsLongRunning() bool { return false }
func (r *rawTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: r.name, Description: r.Description()}
}
func (r *rawTool) Run(agent.ToolContext, any) (map[string]any, error) { return r.result, nil }

// ProcessRequest registers the tool for the request, as adk-go's own tools do.
func (r *rawTool) ProcessRequest(_ agent.ToolContext, req *model.LLMRequest) error {
	if req.Tools == nil {
		req.Tools = map[string]any{}
	}
	req.Tools[r.name] = r
	return nil
}

// Each cut leaf of a tool result is saved as its own artifact holding its original bytes exactly
// (binary included), named in that leaf's marker.
func TestFullOutputArtifactsAreByteExact(t *testing.T) {
	binary := make([]byte, 40_960)
	for i := range binary {
		binary[i] = byte(i*131 + i/256) // not valid UTF-8
	}
	buildLog := hugeBuildLog()
	for _, tc := range []struct {
		name   string
		result map[string]any
		// want maps each artifact name suffix (after the call ID) to the result key whose marker
		// names it, its original bytes and MIME type.
		want map[string]wantArtifact
	}{
		{
			name:   "one binary leaf",
			result: map[string]any{"data": string(binary), "exit_code": 0.0},
			want:   map[string]wantArtifact{".bin": {"data", binary, "application/octet-stream"}},
		},
		{
			name:   "a []byte and a text leaf",
			result: map[string]any{"raw": binary, "stdout": buildLog},
			want: map[string]wantArtifact{
				"-1.bin": {"raw", binary, "application/octet-stream"},
				"-2.txt": {"stdout", []byte(buildLog), "text/plain; charset=utf-8"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &llmtest.Model{Script: []llmtest.Step{
				llmtest.Call(&genai.FunctionCall{Name: "dump", Args: map[string]any{}}),
				llmtest.Text("done"),
			}}
			s := newStack(t, m, stackOptions{tools: []tool.Tool{&rawTool{name: "dump", result: tc.result}}})
			if err := s.send(t, "s1", "dump it"); err != nil {
				t.Fatal(err)
			}
			var stored map[string]any
			var callID string
			for _, e := range s.events(t, "s1") {
				for _, p := range e.Content.Parts {
					if p.FunctionResponse != nil {
						stored, callID = p.FunctionResponse.Response, p.FunctionResponse.ID
					}
				}
			}
			list, err := s.artifacts.List(t.Context(), &artifact.ListRequest{AppName: appName, UserID: "user", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for suffix := range tc.want {
				names = append(names, "adkctx-tool-output-dump-"+callID+suffix)
			}
			if diff := cmp.Diff(names, list.FileNames, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Fatalf("artifacts (-want +got):\n%s", diff)
			}
			for suffix, w := range tc.want {
				name := "adkctx-tool-output-dump-" + callID + suffix
				got, err := s.artifacts.Load(t.Context(), &artifact.LoadRequest{AppName: appName, UserID: "user", SessionID: "s1", FileName: name})
				if err != nil {
					t.Fatal(err)
				}
				if b := got.Part.InlineData; b == nil || !bytes.Equal(b.Data, w.data) || b.MIMEType != w.mime {
					t.Errorf("%s: not the original bytes (%d bytes, MIME %q; want %d bytes, %q)", name, len(b.Data), b.MIMEType, len(w.data), w.mime)
				}
				if marker, _ := stored[w.key].(string); !strings.Contains(marker, fmt.Sprintf("full output saved as artifact %q", name)) {
					t.Errorf("stored %q does not name %s: %.300q", w.key, name, stored[w.key])
				}
			}
		})
	}
}

type wantArtifact struct {
	key  string // result key whose marker names the artifact
	data []byte
	mime string
}

// Elements left out of a long list are saved too, as JSON, and named in their marker: kept and
// saved elements together rebuild the list.
func TestOmittedElementsAreSaved(t *testing.T) {
	files := make([]any, 500)
	for i := range files {
		files[i] = fmt.Sprintf("pkg/%03d/file.go: %s", i, strings.Repeat("x", 80))
	}
	m := &llmtest.Model{Script: []llmtest.Step{
		llmtest.Call(&genai.FunctionCall{Name: "list", Args: map[string]any{}}),
		llmtest.Text("done"),
	}}
	s := newStack(t, m, stackOptions{tools: []tool.Tool{&rawTool{name: "list", result: map[string]any{"files": files}}}})
	if err := s.send(t, "s1", "list the files"); err != nil {
		t.Fatal(err)
	}
	var kept []any
	var callID string
	for _, e := range s.events(t, "s1") {
		for _, p := range e.Content.Parts {
			if p.FunctionResponse != nil {
				kept, _ = p.FunctionResponse.Response["files"].([]any)
				callID = p.FunctionResponse.ID
			}
		}
	}
	name := "adkctx-tool-output-list-" + callID + ".txt"
	at := -1
	for i, e := range kept {
		if str, _ := e.(string); strings.Contains(str, fmt.Sprintf("full output saved as artifact %q", name)) {
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no marker naming %s in the stored list of %d elements", name, len(kept))
	}
	got, err := s.artifacts.Load(t.Context(), &artifact.LoadRequest{AppName: appName, UserID: "user", SessionID: "s1", FileName: name})
	if err != nil {
		t.Fatal(err)
	}
	var omitted []any
	if err := json.Unmarshal(got.Part.InlineData.Data, &omitted); err != nil {
		t.Fatal(err)
	}
	rebuilt := append(append(append([]any{}, kept[:at]...), omitted...), kept[at+1:]...)
	if diff := cmp.Diff(files, rebuilt); diff != "" {
		t.Errorf("kept and saved elements do not rebuild the list (-want +got):\n%.2000s", diff)
	}
}
