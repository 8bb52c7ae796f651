package compaction

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adkctx/adkctx/budget"
	"github.com/glebarez/sqlite"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"
)

const (
	testApp  = "app"
	testUser = "u1"
)

// scriptedModel is a model.LLM whose replies come from a script. It records
// every request (text dump and estimated prompt tokens) and reports
// UsageMetadata.PromptTokenCount = budget.EstimateRequest(req.Contents, req.Config).
type scriptedModel struct {
	name string
	// toolsPerTurn: how many tool rounds (one call each, or `parallel`
	// calls per round) before the final answer.
	toolsPerTurn int
	parallel     int
	// reply, when set, answers first; (nil, nil) falls back to the default
	// script.
	reply func(req *model.LLMRequest) (*model.LLMResponse, error)

	mu       sync.Mutex
	rounds   int
	question string
	prompts  []int
	texts    [][]string // per request: one line per content
	calls    int
}

func (m *scriptedModel) Name() string {
	if m.name == "" {
		return "scripted-model"
	}
	return m.name
}

func contentText(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.Text != "":
			b.WriteString(p.Text)
		case p.FunctionCall != nil:
			fmt.Fprintf(&b, "call:%s(%v)", p.FunctionCall.Name, p.FunctionCall.Args)
		case p.FunctionResponse != nil:
			fmt.Fprintf(&b, "resp:%s(%v)", p.FunctionResponse.Name, p.FunctionResponse.Response)
		}
	}
	return b.String()
}

func (m *scriptedModel) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		prompt := budget.EstimateRequest(req.Contents, req.Config)
		var lines []string
		for _, c := range req.Contents {
			lines = append(lines, c.Role+"|"+contentText(c))
		}
		m.mu.Lock()
		m.prompts = append(m.prompts, prompt)
		m.texts = append(m.texts, lines)
		m.calls++
		n := m.calls
		m.mu.Unlock()
		var resp *model.LLMResponse
		var err error
		if m.reply != nil {
			resp, err = m.reply(req)
		}
		if resp == nil && err == nil {
			resp = m.defaultReply(req, n)
		}
		if err != nil {
			yield(nil, err)
			return
		}
		if resp.UsageMetadata == nil {
			resp.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(prompt), CandidatesTokenCount: 10, TotalTokenCount: int32(prompt + 10)}
		}
		yield(resp, nil)
	}
}

// defaultReply: a new user message starts a turn; call `lookup` (parallel
// calls per round) for toolsPerTurn rounds, then answer. The state lives in
// the model, so compaction of the turn's start does not confuse it.
func (m *scriptedModel) defaultReply(req *model.LLMRequest, n int) *model.LLMResponse {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(req.Contents) > 0 {
		last := req.Contents[len(req.Contents)-1]
		for _, p := range last.Parts {
			if p.Text != "" && last.Role == genai.RoleUser && !strings.HasPrefix(p.Text, SummaryHeader) {
				m.rounds, m.question = 0, p.Text
			}
		}
	}
	par := max(m.parallel, 1)
	if m.rounds < m.toolsPerTurn {
		m.rounds++
		var parts []*genai.Part
		for k := 0; k < par; k++ {
			parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{
				Name: "lookup",
				Args: map[string]any{"q": fmt.Sprintf("%s#%d.%d", m.question, m.rounds, k), "size": 0},
			}})
		}
		return &model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}, FinishReason: genai.FinishReasonStop}
	}
	return &model.LLMResponse{
		Content:      &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: fmt.Sprintf("answer to %s (call %d)", m.question, n)}}},
		FinishReason: genai.FinishReasonStop,
	}
}

func (m *scriptedModel) snapshot() ([]int, [][]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.prompts...), append([][]string(nil), m.texts...)
}

type lookupArgs struct {
	Q    string `json:"q"`
	Size int    `json:"size"`
}

type lookupResult struct {
	Result string `json:"result"`
}

// lookupTool returns a deterministic output of outSize(q) bytes.
func lookupTool(t testing.TB, outSize func(q string) int) tool.Tool {
	t.Helper()
	tl, err := functiontool.New(functiontool.Config{Name: "lookup", Description: "looks things up"},
		func(_ agent.ToolContext, a lookupArgs) (lookupResult, error) {
			size := 64
			if outSize != nil {
				size = outSize(a.Q)
			}
			var b strings.Builder
			line := "row " + a.Q + ": lorem ipsum dolor sit amet, consectetur adipiscing elit\n"
			for b.Len() < size {
				b.WriteString(line)
			}
			return lookupResult{Result: b.String()[:size]}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// harness wires runner + llmagent + scripted model + a compaction plugin
// over compaction.NewService(base).
type harness struct {
	t       testing.TB
	base    session.Service
	svc     *Service
	model   *scriptedModel
	runner  *runner.Runner
	comp    *Compactor
	limit   int // token limit for the token trigger (0 = off)
	session string
	mu      sync.Mutex
	errs    []error
}

type harnessOpts struct {
	base       session.Service
	cfg        Config
	model      *scriptedModel
	outSize    func(q string) int
	tokenLimit int
	noPlugin   bool
	extraTools []tool.Tool
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	if o.base == nil {
		o.base = session.InMemoryService()
	}
	if o.model == nil {
		o.model = &scriptedModel{toolsPerTurn: 1}
	}
	comp, err := NewCompactor(o.cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, base: o.base, model: o.model, comp: comp, limit: o.tokenLimit, session: "s1"}
	h.svc = NewService(o.base, o.cfg.Logger)
	ag, err := llmagent.New(llmagent.Config{
		Name:        "assistant",
		Description: "test agent",
		Model:       o.model,
		Instruction: "You are a test agent.",
		Tools:       append([]tool.Tool{lookupTool(t, o.outSize)}, o.extraTools...),
	})
	if err != nil {
		t.Fatal(err)
	}
	var plugins []*plugin.Plugin
	if !o.noPlugin {
		plugins = append(plugins, h.plugin())
	}
	r, err := runner.New(runner.Config{AppName: testApp, Agent: ag, SessionService: h.svc, PluginConfig: runner.PluginConfig{Plugins: plugins}})
	if err != nil {
		t.Fatal(err)
	}
	h.runner = r
	if _, err := h.svc.Create(context.Background(), &session.CreateRequest{AppName: testApp, UserID: testUser, SessionID: h.session}); err != nil {
		t.Fatal(err)
	}
	return h
}

// plugin: AfterRun → Compact(invocations); OnEvent → Compact(tokens, Live)
// when the view plus the incoming event reaches the token limit.
func (h *harness) plugin() *plugin.Plugin {
	p, err := plugin.New(plugin.Config{
		Name: "compaction-test",
		AfterRunCallback: func(ctx agent.InvocationContext) {
			s := ctx.Session()
			_, err := h.comp.Compact(ctx, Request{Service: h.svc, AppName: s.AppName(), UserID: s.UserID(), SessionID: s.ID(),
				Trigger: TriggerInvocations, TokenLimit: h.limit, InvocationID: ctx.InvocationID()})
			h.recordErr(err)
		},
		OnEventCallback: func(ctx agent.InvocationContext, ev *session.Event) (*session.Event, error) {
			if h.limit <= 0 || ev.Partial {
				return nil, nil
			}
			s := ctx.Session()
			est := budget.EstimateContent(ev.Content)
			for e := range s.Events().All() {
				est += budget.EstimateContent(e.Content)
			}
			if est < h.limit {
				return nil, nil
			}
			_, err := h.comp.Compact(ctx, Request{Service: h.svc, AppName: s.AppName(), UserID: s.UserID(), SessionID: s.ID(),
				Live: s, Trigger: TriggerTokens, TokenLimit: h.limit, InvocationID: ctx.InvocationID()})
			h.recordErr(err)
			return nil, nil
		},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) recordErr(err error) {
	if err == nil {
		return
	}
	h.mu.Lock()
	h.errs = append(h.errs, err)
	h.mu.Unlock()
}

// turn runs one invocation and fails the test on a run error.
func (h *harness) turn(text string) []*session.Event {
	h.t.Helper()
	return h.send(genai.NewContentFromText(text, genai.RoleUser))
}

// send runs one invocation with msg and fails the test on a run error.
func (h *harness) send(msg *genai.Content) []*session.Event {
	h.t.Helper()
	text := contentText(msg)
	var out []*session.Event
	for ev, err := range h.runner.Run(context.Background(), testUser, h.session, msg, agent.RunConfig{}) {
		if err != nil {
			h.t.Fatalf("turn %q: %v", text, err)
		}
		out = append(out, ev)
	}
	return out
}

// raw returns the stored events through the base service.
func (h *harness) raw() []*session.Event {
	h.t.Helper()
	return rawFrom(h.t, h.base, h.session)
}

func rawFrom(t testing.TB, svc session.Service, id string) []*session.Event {
	t.Helper()
	resp, err := svc.Get(context.Background(), &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	return RawEvents(resp.Session)
}

func markersIn(t testing.TB, raw []*session.Event) []*Marker {
	t.Helper()
	var out []*Marker
	for _, e := range raw {
		if IsCompactionEvent(e) {
			m, err := ReadMarker(e)
			if err != nil {
				t.Fatalf("stored marker does not read back: %v", err)
			}
			out = append(out, m)
		}
	}
	return out
}

func openSQLite(t testing.TB, path string) session.Service {
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

func sqlitePath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "sessions.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
}

// backends returns the base services the end-to-end tests run on.
func backends(t *testing.T) map[string]func(t *testing.T) (session.Service, string) {
	return map[string]func(t *testing.T) (session.Service, string){
		"inmemory": func(t *testing.T) (session.Service, string) { return session.InMemoryService(), "" },
		"sqlite": func(t *testing.T) (session.Service, string) {
			p := sqlitePath(t)
			return openSQLite(t, p), p
		},
	}
}

// ---- synthetic events for table tests ----

type evBuilder struct {
	t0 time.Time
	n  int
}

func newEvBuilder() *evBuilder {
	return &evBuilder{t0: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (b *evBuilder) next() time.Time {
	b.n++
	return b.t0.Add(time.Duration(b.n) * time.Millisecond)
}

func (b *evBuilder) ev(inv, author string, c *genai.Content) *session.Event {
	e := &session.Event{ID: fmt.Sprintf("e%02d", b.n+1), InvocationID: inv, Author: author, Timestamp: b.next()}
	e.Content = c
	return e
}

func (b *evBuilder) user(inv, text string) *session.Event {
	return b.ev(inv, "user", genai.NewContentFromText(text, genai.RoleUser))
}

func (b *evBuilder) answer(inv, text string) *session.Event {
	return b.ev(inv, "assistant", genai.NewContentFromText(text, genai.RoleModel))
}

func (b *evBuilder) call(inv string, ids ...string) *session.Event {
	c := &genai.Content{Role: genai.RoleModel}
	for _, id := range ids {
		c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: "lookup", Args: map[string]any{"q": id}}})
	}
	return b.ev(inv, "assistant", c)
}

func (b *evBuilder) resp(inv string, ids ...string) *session.Event {
	c := &genai.Content{Role: genai.RoleUser}
	for _, id := range ids {
		c.Parts = append(c.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: "lookup", Response: map[string]any{"result": "r-" + id}}})
	}
	return b.ev(inv, "assistant", c)
}

// invocation appends a complete invocation: user, call, response, answer.
func (b *evBuilder) invocation(inv string) []*session.Event {
	return []*session.Event{
		b.user(inv, "question "+inv),
		b.call(inv, "c-"+inv),
		b.resp(inv, "c-"+inv),
		b.answer(inv, "answer "+inv),
	}
}

func ids(events []*session.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.ID)
	}
	return out
}

// applyWindow summarizes w with a fixed text and returns raw + marker event.
func applyWindow(t testing.TB, raw []*session.Event, w *window) []*session.Event {
	t.Helper()
	m := *w.m
	m.CompactedContent = genai.NewContentFromText("summary", genai.RoleUser)
	ev := NewMarkerEvent(&m, "cmp", raw[len(raw)-1].Timestamp.Add(time.Millisecond))
	if ev == nil {
		t.Fatal("NewMarkerEvent returned nil")
	}
	return append(append([]*session.Event(nil), raw...), ev)
}
