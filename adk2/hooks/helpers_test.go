package hooks_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adkctx/adkctx/adk2/internal/sqlitetest"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/artifact"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/adk2/hooks"
	"github.com/adkctx/adkctx/adk2/internal/llmtest"
	"github.com/adkctx/adkctx/compaction"
)

const appName = "adk2-hooks-test"

// stack is a runner over one agent, wired with adkctx.
type stack struct {
	hooks     *hooks.Hooks
	model     *llmtest.Model
	runner    *runner.Runner
	sessions  session.Service // the runner's (wrapped when compaction is on)
	base      session.Service // the stored one
	artifacts artifact.Service
	logs      *observer.ObservedLogs
}

type stackOptions struct {
	cfg        adkctx.Config
	tools      []tool.Tool
	usePlugin  bool // register the plugin only (no agent callbacks)
	useBoth    bool // the plugin and the agent callbacks
	noArtifact bool
	base       session.Service // default: in-memory
}

// newStack builds an llmagent and a runner wired by hand: the agent callbacks (budgets,
// truncation, AGENTS.md without compaction) and/or the plugin with the wrapped session service.
func newStack(t testing.TB, m *llmtest.Model, opts stackOptions) *stack {
	t.Helper()
	h, logs := newHooks(t, opts.cfg)
	agentCfg := llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant.", Tools: opts.tools}
	if !opts.usePlugin || opts.useBoth {
		agentCfg.BeforeModelCallbacks = []llmagent.BeforeModelCallback{h.BeforeModel()}
		agentCfg.AfterModelCallbacks = []llmagent.AfterModelCallback{h.AfterModel()}
		agentCfg.AfterToolCallbacks = []llmagent.AfterToolCallback{h.AfterTool()}
	}
	a, err := llmagent.New(agentCfg)
	if err != nil {
		t.Fatalf("llmagent.New: %v", err)
	}
	s := &stack{hooks: h, model: m, logs: logs, base: opts.base}
	if s.base == nil {
		s.base = session.InMemoryService()
	}
	s.sessions = h.SessionService(s.base)
	rc := runner.Config{AppName: appName, Agent: a, SessionService: s.sessions, AutoCreateSession: true}
	if !opts.noArtifact {
		s.artifacts = artifact.InMemoryService()
		rc.ArtifactService = s.artifacts
	}
	if opts.usePlugin || opts.useBoth {
		p, err := h.Plugin()
		if err != nil {
			t.Fatal(err)
		}
		rc.PluginConfig = runner.PluginConfig{Plugins: []*plugin.Plugin{p}}
	}
	if s.runner, err = runner.New(rc); err != nil {
		t.Fatalf("runner.New: %v", err)
	}
	return s
}

// wireStack builds a runner over root (default: an llmagent on m with tools) wired with
// Hooks.Wire, as the README shows.
func wireStack(t testing.TB, m model.LLM, cfg adkctx.Config, base session.Service, root agent.Agent, tools ...tool.Tool) *stack {
	t.Helper()
	h, logs := newHooks(t, cfg)
	if root == nil {
		var err error
		if root, err = llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant.", Tools: tools}); err != nil {
			t.Fatal(err)
		}
	}
	rc, err := h.Wire(runner.Config{AppName: appName, Agent: root, SessionService: base, AutoCreateSession: true, ArtifactService: artifact.InMemoryService()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	lm, _ := m.(*llmtest.Model)
	return &stack{hooks: h, model: lm, runner: r, sessions: rc.SessionService, base: base, artifacts: rc.ArtifactService, logs: logs}
}

// newHooks builds hooks logging to an observer, closed when the test ends.
func newHooks(t testing.TB, cfg adkctx.Config) (*hooks.Hooks, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Logger = zap.New(core)
	h, err := hooks.New(cfg)
	if err != nil {
		t.Fatalf("hooks.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// Tests that store events by hand, without a runner, are reported as run without the
		// plugin: wiring is checked by the tests that mean to.
		var wiring *adkctx.WiringError
		if err := h.Close(ctx); err != nil && !errors.As(err, &wiring) {
			t.Errorf("Close: %v", err)
		}
	})
	return h, logs
}

// send runs one user message; it returns the error the run ended with, if any.
func (s *stack) send(t testing.TB, sessionID, text string) error {
	t.Helper()
	return run(t, s.runner, sessionID, genai.NewContentFromText(text, genai.RoleUser))
}

func run(t testing.TB, r *runner.Runner, sessionID string, msg *genai.Content) error {
	t.Helper()
	for _, err := range r.Run(t.Context(), "user", sessionID, msg, agent.RunConfig{}) {
		if err != nil {
			return err
		}
	}
	return nil
}

// view returns the events of a session as the runner reads them (the compacted view).
func (s *stack) view(t testing.TB, sessionID string) []*session.Event {
	t.Helper()
	resp, err := s.sessions.Get(t.Context(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	return hooks.ModelView(resp.Session)
}

func (s *stack) budgetDecisions() []observer.LoggedEntry {
	return s.logs.FilterMessage("budget decision").All()
}

// stored returns every event of a session read through svc.
func stored(t testing.TB, svc session.Service, sessionID string) []*session.Event {
	t.Helper()
	resp, err := svc.Get(t.Context(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Collect(resp.Session.Events().All())
}

// sqliteService is adk-go's database service over an SQLite file, its connections closed when
// the test ends (adk-go's service has no Close).
func sqliteService(t testing.TB, path string) session.Service {
	t.Helper()
	return sqlitetest.Open(t, path).Sessions
}

func backends(t testing.TB) map[string]func() session.Service {
	return map[string]func() session.Service{
		"inmemory": session.InMemoryService,
		"sqlite":   func() session.Service { return sqliteService(t, filepath.Join(t.TempDir(), "sessions.db")) },
	}
}

func isMarker(e *session.Event) bool {
	return e.Content == nil && e.CustomMetadata[compaction.MetadataKey] != nil
}

func isSummary(e *session.Event) bool {
	_, ok := e.CustomMetadata[compaction.SummaryMetadataKey]
	return ok
}

func userTexts(req *model.LLMRequest) []string {
	var out []string
	for _, c := range req.Contents {
		if c.Role == genai.RoleUser && len(c.Parts) > 0 && c.Parts[0].Text != "" {
			out = append(out, c.Parts[0].Text)
		}
	}
	return out
}

func hasSummary(req *model.LLMRequest) bool {
	return slices.ContainsFunc(req.Contents, compaction.IsSummary)
}

// waitIdle waits until no background compaction is scheduled or running.
func waitIdle(t testing.TB, h *hooks.Hooks) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if !hooks.WaitIdle(ctx, h) {
		t.Fatal("background compaction did not finish")
	}
}

// chatty answers every call with a paragraph, so sessions grow.
func chatty(*model.LLMRequest) (*genai.Content, error) {
	return genai.NewContentFromText("noted: "+strings.Repeat("detail ", 40), genai.RoleModel), nil
}

type buildArgs struct {
	Target string `json:"target"`
}

func buildTool(t testing.TB, output string) tool.Tool {
	t.Helper()
	bt, err := functiontool.New(functiontool.Config{Name: "build", Description: "builds a target"},
		func(_ agent.Context, a buildArgs) (map[string]any, error) {
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

// slowSummarizer takes its time — of a synctest bubble's clock, where a test runs in one — and
// may ignore its context. It counts the calls that started and the ones that finished.
type slowSummarizer struct {
	delay             time.Duration
	ignoreCtx         bool
	started, finished atomic.Int32
}

func (s *slowSummarizer) Summarize(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	s.started.Add(1)
	defer s.finished.Add(1)
	if s.ignoreCtx {
		time.Sleep(s.delay)
	} else {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return (&compaction.ExtractiveSummarizer{}).Summarize(ctx, in)
}

// gatedSummarizer summarizes once release is closed; started receives once per call.
type gatedSummarizer struct {
	release chan struct{}
	started chan struct{}
}

func newGatedSummarizer() *gatedSummarizer {
	return &gatedSummarizer{release: make(chan struct{}), started: make(chan struct{}, 16)}
}

func (g *gatedSummarizer) Summarize(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	g.started <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return (&compaction.ExtractiveSummarizer{}).Summarize(ctx, in)
}

// hangGuard bounds the waits of the tests that hold a goroutine until another reaches a point:
// a liveness guard that fires only when that point is never reached, not a timing assertion.
const hangGuard = 30 * time.Second

// appendRecord is one append to a session store: the event, the outcome.
type appendRecord struct {
	id, invocation, text string
	marker               bool
	err                  error
}

// recordingStore is a session service that records every append in order and closes
// markerStored once a marker is stored: a test sees the interleaving of a turn's appends and a
// background compaction's, and can hold a turn until the marker is in.
type recordingStore struct {
	session.Service
	markerStored chan struct{}
	once         sync.Once

	mu      sync.Mutex
	appends []appendRecord
}

func newRecordingStore(base session.Service) *recordingStore {
	return &recordingStore{Service: base, markerStored: make(chan struct{})}
}

func (s *recordingStore) AppendEvent(ctx context.Context, sess session.Session, ev *session.Event) error {
	err := s.Service.AppendEvent(ctx, sess, ev)
	if ev.Partial {
		return err
	}
	r := appendRecord{id: ev.ID, invocation: ev.InvocationID, marker: isMarker(ev), err: err}
	if ev.Content != nil && len(ev.Content.Parts) > 0 {
		r.text = ev.Content.Parts[0].Text
	}
	s.mu.Lock()
	s.appends = append(s.appends, r)
	s.mu.Unlock()
	if err == nil && r.marker {
		s.once.Do(func() { close(s.markerStored) })
	}
	return err
}

func (s *recordingStore) records() []appendRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.appends)
}

// assertMarkerRefusedTheTurnOnce checks, in a store's appends, that a marker was stored while
// the invocation whose user message starts with prefix ran (after its message, before its
// answer), that the answer was refused as stale once, and that it was then stored once.
func assertMarkerRefusedTheTurnOnce(t *testing.T, records []appendRecord, prefix string) {
	t.Helper()
	user := slices.IndexFunc(records, func(r appendRecord) bool { return r.err == nil && strings.HasPrefix(r.text, prefix) })
	if user < 0 {
		t.Fatalf("the user message %q... was never stored", prefix)
	}
	inv := records[user].invocation
	marker := slices.IndexFunc(records, func(r appendRecord) bool { return r.err == nil && r.marker })
	refused := slices.IndexFunc(records, func(r appendRecord) bool { return r.err != nil && r.invocation == inv && !r.marker })
	if marker < user || refused < marker {
		t.Fatalf("appends (user message %d, marker %d, refusal %d): the marker was not stored while the turn ran, or no append of the turn was refused after it",
			user, marker, refused)
	}
	if !strings.Contains(records[refused].err.Error(), "stale session") {
		t.Errorf("the turn's append was refused with %v, want adk-go's stale session error", records[refused].err)
	}
	id, stored := records[refused].id, 0
	for _, r := range records[refused+1:] {
		if r.id == id && r.err == nil {
			stored++
		}
	}
	if stored != 1 {
		t.Errorf("the refused event %s was stored %d times after the refusal, want 1", id, stored)
	}
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// counter counts by key, for scripted models called from parallel goroutines.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[k]++
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}
