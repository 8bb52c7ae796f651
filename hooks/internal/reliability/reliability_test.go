package reliability

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/tiktoken-go/tokenizer"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
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

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/longrun"
	"github.com/adkctx/adkctx/hooks/internal/scenario"
	"github.com/adkctx/adkctx/hooks/sessiondb"
)

const app = "reliability"

// chatModel answers every call with a fixed text and reports usage through count.
type chatModel struct {
	name   string
	answer string
	count  func(req *model.LLMRequest) int // the provider's prompt count; nil: our estimate
	script func(req *model.LLMRequest) *genai.Content

	mu       sync.Mutex
	reported []int
}

func (m *chatModel) Name() string { return m.name }

func (m *chatModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		n := budget.EstimateRequest(req.Contents, req.Config)
		if m.count != nil {
			n = m.count(req)
		}
		m.mu.Lock()
		m.reported = append(m.reported, n)
		m.mu.Unlock()
		c := genai.NewContentFromText(m.answer, genai.RoleModel)
		if m.script != nil {
			if s := m.script(req); s != nil {
				c = s
			}
		}
		yield(&model.LLMResponse{Content: c, FinishReason: genai.FinishReasonStop,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(n), CandidatesTokenCount: 20}}, nil)
	}
}

type stack struct {
	h      *hooks.Hooks
	r      *runner.Runner
	logs   *observer.ObservedLogs
	stored session.Service
}

func wire(t testing.TB, m model.LLM, cfg adkctx.Config, base session.Service, plugins []*plugin.Plugin, tools ...tool.Tool) *stack {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Logger = zap.New(core)
	h, err := hooks.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = h.Close(ctx)
	})
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "Be careful.", Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: app, Agent: a, SessionService: base, AutoCreateSession: true,
		PluginConfig: runner.PluginConfig{Plugins: plugins}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &stack{h: h, r: r, logs: logs, stored: base}
}

func (s *stack) send(t testing.TB, sessionID, text string) error {
	t.Helper()
	for _, err := range s.r.Run(context.Background(), "user", sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			return err
		}
	}
	return nil
}

// sqliteService is adk-go's database service over an SQLite file, its connections closed when
// the test ends (adk-go's service has no Close).
func sqliteService(t testing.TB, path string) session.Service {
	t.Helper()
	db, err := sql.Open(sqlite.DriverName, path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc, err := database.NewSessionService(&sqlite.Dialector{Conn: db}, &gorm.Config{Logger: gormlogger.Default.LogMode(gormlogger.Silent)})
	if err != nil {
		t.Fatal(err)
	}
	if err := database.AutoMigrate(svc); err != nil {
		t.Fatal(err)
	}
	gdb, err := gorm.Open(&sqlite.Dialector{Conn: db}, &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := sessiondb.CreateIndex(t.Context(), gdb, sessiondb.Config{}); err != nil {
		t.Fatal(err)
	}
	return svc
}

func storedEvents(t testing.TB, svc session.Service, id string) []*session.Event {
	t.Helper()
	resp, err := svc.Get(context.Background(), &session.GetRequest{AppName: app, UserID: "user", SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Collect(resp.Session.Events().All())
}

func isMarker(e *session.Event) bool {
	return e.Content == nil && e.CustomMetadata[compaction.MetadataKey] != nil
}

// readMarker parses a stored marker event.
func readMarker(t testing.TB, e *session.Event) *compaction.Marker {
	t.Helper()
	m, err := compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata})
	if err != nil || m == nil {
		t.Fatalf("marker %s does not read: %v", e.ID, err)
	}
	return m
}

// lag makes a replica's clock run late: every event it stores is stamped seconds in the past.
func lag(d time.Duration) *plugin.Plugin {
	p, _ := plugin.New(plugin.Config{Name: "lagging-clock", OnEventCallback: func(_ agent.InvocationContext, ev *session.Event) (*session.Event, error) {
		ev.Timestamp = ev.Timestamp.Add(-d)
		return nil, nil
	}})
	return p
}

// Two replicas serve one SQLite session in turn; one's clock lags by 5 s (its events come
// stamped 5 s early), and a third writer that does not go through adkctx stores an event with a
// clock 4 s late now and then, inside ranges already summarized. adkctx stamps what it appends
// after the newest event it read, so the replicas' events keep their order; a marker covers
// events by id, so the foreign events are never hidden without being summarized; and the
// bounded reads (which reach a margin further back than the view needs) lose none of them: the
// model's view is the same from both replicas and equals the view of the whole session.
func TestSkewedReplicasHideNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	cfg := adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}}}
	answer := "noted: " + strings.Repeat("detail ", 40)
	a := wire(t, &chatModel{name: "m", answer: answer}, cfg, sqliteService(t, path), nil)
	b := wire(t, &chatModel{name: "m", answer: answer}, cfg, sqliteService(t, path), []*plugin.Plugin{lag(5 * time.Second)})
	foreign := sqliteService(t, path)
	var yielded []*session.Event // what the replicas appended, in order
	for i := range 24 {
		s := a
		if i%2 == 1 {
			s = b
		}
		for ev, err := range s.r.Run(context.Background(), "user", "s1", genai.NewContentFromText(fmt.Sprintf("turn-%d: %s", i, strings.Repeat("context ", 30)), genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("turn %d: %v", i, err)
			}
			if !ev.Partial {
				yielded = append(yielded, ev)
			}
		}
		if i%5 == 4 {
			resp, err := foreign.Get(context.Background(), &session.GetRequest{AppName: app, UserID: "user", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			ev := session.NewEventWithContext(context.Background(), fmt.Sprint("foreign-", i))
			ev.Author, ev.Timestamp = "user", time.Now().Add(-4*time.Second)
			ev.Content = genai.NewContentFromText(fmt.Sprintf("a note stored by another writer at turn %d", i), genai.RoleUser)
			if err := foreign.AppendEvent(context.Background(), resp.Session, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 1; i < len(yielded); i++ {
		if !yielded[i].Timestamp.After(yielded[i-1].Timestamp) {
			t.Fatalf("event %d (%s) is stamped %v, not after the one appended before it (%v)", i, yielded[i].Author,
				yielded[i].Timestamp, yielded[i-1].Timestamp)
		}
		if _, off := yielded[i].Timestamp.Zone(); off != 0 {
			t.Fatalf("event %d is stamped with UTC offset %d", i, off)
		}
	}
	raw := storedEvents(t, a.stored, "s1")
	byID := map[string]*compaction.Marker{}
	var newest *compaction.Marker
	for _, e := range raw {
		if isMarker(e) {
			m := readMarker(t, e)
			byID[e.ID] = m
			if newest == nil || m.Seq > newest.Seq {
				newest = m
			}
		}
	}
	if len(byID) < 2 {
		t.Fatalf("%d markers stored, want several", len(byID))
	}
	covered := map[string]bool{}
	for m := newest; m != nil; m = byID[m.Previous] {
		for _, id := range m.EventIDs {
			covered[id] = true
		}
		if m.Previous == "" {
			break
		}
	}
	// The hazard is real: foreign events are stamped before the end of a range already
	// summarized (a read by timestamps after that range, or a marker covering by range, would
	// lose or hide them).
	early := 0
	for _, e := range raw {
		if ts := float64(e.Timestamp.UnixMicro()) / 1e6; strings.HasPrefix(e.InvocationID, "foreign-") && ts < newest.EndTimestamp {
			early++
		}
	}
	if early == 0 {
		t.Fatal("no foreign event is stamped inside or before a summarized range: the test shows nothing")
	}
	var whole []string
	for _, e := range hooks.ModelView(wholeSession(t, a.h, a.stored)) {
		whole = append(whole, e.ID)
	}
	for name, s := range map[string]*stack{"a": a, "b": b} {
		resp, err := s.h.SessionService(s.stored).Get(context.Background(), &session.GetRequest{AppName: app, UserID: "user", SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		shown := map[string]bool{}
		var ids []string
		for _, e := range hooks.ModelView(resp.Session) {
			shown[e.ID] = true
			ids = append(ids, e.ID)
		}
		if !slices.Equal(ids, whole) {
			t.Errorf("replica %s shows %v, the whole session's view is %v", name, ids, whole)
		}
		for _, e := range raw {
			if isMarker(e) {
				continue
			}
			if !shown[e.ID] && !covered[e.ID] {
				t.Errorf("replica %s: event %s (%s) is hidden without being summarized", name, e.ID, e.Author)
			}
			if shown[e.ID] && covered[e.ID] {
				t.Errorf("replica %s: event %s is shown raw and summarized", name, e.ID)
			}
		}
	}
	var core []compaction.Event
	newestID := ""
	for _, e := range raw {
		core = append(core, compaction.Event{ID: e.ID, Content: e.Content, Metadata: e.CustomMetadata})
		if isMarker(e) && byID[e.ID] == newest {
			newestID = e.ID
		}
	}
	ledger, ok := scenario.WholeLedger(core, newestID)
	if !ok {
		t.Fatal("the newest marker does not resolve")
	}
	if got := ledger.Events; got != len(covered) {
		t.Errorf("ledger counts %d events, the chain covers %d", got, len(covered))
	}
}

// wholeSession reads session s1 of store whole and shows it as a session of h's wrapper would
// be shown: the model's view of every stored event.
func wholeSession(t testing.TB, h *hooks.Hooks, store session.Service) session.Session {
	t.Helper()
	resp, err := store.Get(context.Background(), &session.GetRequest{AppName: app, UserID: "user", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Session
}

// A summarizer failing on every call is not retried after every invocation: failures back off.
// The backoff is the bubble's clock's (synctest): no time passes during the turns, however slow
// the machine, so the one call is not by luck; once the backoff's 30 s have passed, the next
// turn tries again.
func TestFailingSummarizerBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		failing := summarizerFunc(func(context.Context, compaction.SummaryInput) (*compaction.Summary, error) {
			calls.Add(1)
			return nil, errors.New("quota exceeded")
		})
		cfg := adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true, Summarizer: failing, NoFallback: true}}
		s := wire(t, &chatModel{name: "m", answer: strings.Repeat("detail ", 40)}, cfg, session.InMemoryService(), nil)
		turn := func(i int) {
			t.Helper()
			if err := s.send(t, "s1", fmt.Sprintf("turn-%d: %s", i, strings.Repeat("context ", 30))); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20 {
			turn(i)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("summarizer called %d times in 20 turns, want 1 (then backoff)", n)
		}
		backoffs := s.logs.FilterMessage("compaction").FilterField(zap.String("outcome", "backoff")).Len()
		if backoffs == 0 {
			t.Error("no attempt was logged as backing off")
		}
		time.Sleep(30 * time.Second) // the default Backoff
		turn(20)
		if n := calls.Load(); n != 2 {
			t.Errorf("summarizer called %d times after the backoff passed, want 2", n)
		}
	})
}

type summarizerFunc func(context.Context, compaction.SummaryInput) (*compaction.Summary, error)

func (f summarizerFunc) Summarize(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	return f(ctx, in)
}

// An event whose content sits beside an invalid marker record (a user plugin put it there) is
// shown: an invalid record hides nothing, not even its own event.
func TestContentBesideAnInvalidMarkerIsShown(t *testing.T) {
	corrupt, _ := plugin.New(plugin.Config{Name: "corrupt", OnEventCallback: func(_ agent.InvocationContext, ev *session.Event) (*session.Event, error) {
		if ev.Content != nil && ev.Author != "user" {
			ev.CustomMetadata = map[string]any{compaction.MetadataKey: map[string]any{"startTimestamp": "yesterday"}}
		}
		return nil, nil
	}})
	m := &chatModel{name: "m", answer: "the answer is 42"}
	s := wire(t, m, adkctx.Config{Compaction: &compaction.Config{}}, session.InMemoryService(), []*plugin.Plugin{corrupt})
	for i := range 2 {
		if err := s.send(t, "s1", fmt.Sprint("question ", i)); err != nil {
			t.Fatal(err)
		}
	}
	view := storedEvents(t, s.h.SessionService(s.stored), "s1")
	answers := 0
	for _, e := range view {
		if e.Content != nil && e.Author == "assistant" && e.Content.Parts[0].Text == "the answer is 42" {
			answers++
		}
	}
	if answers != 2 {
		t.Errorf("%d of 2 answers carrying an invalid record are shown", answers)
	}
	if s.logs.FilterMessage("compaction: ignoring marker").Len() == 0 {
		t.Error("the invalid record was not logged")
	}
}

// contentTokens counts what a provider whose tokenizer is not ours would: o200k tokens, and 40%
// more for tool results (code and logs count denser for it than prose).
func contentTokens(t testing.TB) func(req *model.LLMRequest) int {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	count := func(s string) int {
		ids, _, _ := codec.Encode(s)
		return len(ids)
	}
	return func(req *model.LLMRequest) int {
		n := 0
		if req.Config != nil && req.Config.SystemInstruction != nil {
			for _, p := range req.Config.SystemInstruction.Parts {
				n += count(p.Text)
			}
		}
		for _, c := range req.Contents {
			n += 4
			for _, p := range c.Parts {
				switch {
				case p.FunctionResponse != nil:
					b, _ := json.Marshal(p.FunctionResponse.Response)
					n += count(string(b)) * 14 / 10
				case p.FunctionCall != nil:
					b, _ := json.Marshal(p.FunctionCall.Args)
					n += count(p.FunctionCall.Name + string(b))
				default:
					n += count(p.Text)
				}
			}
		}
		return n
	}
}

type fileArgs struct {
	Path string `json:"path"`
}

// An 8,192-token window over 200 turns, each reading a file after a chat turn: by the
// provider's own count, no request passes the hard limit — most of all right after large new
// content, where the learned ratio under-counts it.
func TestLongProviderCountNeverPassesTheHardLimit(t *testing.T) {
	longrun.Test(t)
	if testing.Short() {
		t.Skip("200 turns")
	}
	readFile, err := functiontool.New(functiontool.Config{Name: "read_file", Description: "reads a file"},
		func(_ agent.ToolContext, a fileArgs) (map[string]any, error) {
			var b strings.Builder
			for i := 0; b.Len() < 6000; i++ {
				fmt.Fprintf(&b, "func f%d(x int) int { return x*%d + len(%q) }\n", i, i, a.Path)
			}
			return map[string]any{"content": b.String()}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	turn := 0
	m := &chatModel{name: "small-8k", answer: "Here is what I found. " + strings.Repeat("It looks fine. ", 10), count: contentTokens(t)}
	m.script = func(req *model.LLMRequest) *genai.Content {
		last := req.Contents[len(req.Contents)-1]
		if last.Role == genai.RoleUser && last.Parts[0].FunctionResponse == nil && turn%3 == 0 {
			return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": fmt.Sprint("f", turn, ".go")}}}}}
		}
		return nil
	}
	// Without compaction, trimming alone holds the limit: every request is cut close to it.
	cfg := adkctx.Config{Models: []budget.ModelInfo{{Name: "small-8k", ContextWindow: 8192, MaxOutputTokens: 512}}}
	s := wire(t, m, cfg, session.InMemoryService(), nil, readFile)
	hard := s.h.Limits("small-8k").Hard
	for turn = range 200 {
		if err := s.send(t, "s1", fmt.Sprintf("Turn %d: %s", turn, strings.Repeat("please look again. ", 8))); err != nil {
			var exceeded interface{ ErrorKind() string }
			_ = exceeded
			t.Fatalf("turn %d: %v", turn, err)
		}
	}
	over, worst := 0, 0
	for _, n := range m.reported {
		if n > hard {
			over++
			worst = max(worst, n-hard)
		}
	}
	trimmed := s.logs.FilterMessage("budget decision").FilterField(zap.String("action", "trimmed")).Len()
	t.Logf("%d calls (%d trimmed), hard limit %d, largest reported %d", len(m.reported), trimmed, hard, slices.Max(m.reported))
	if trimmed < 100 {
		t.Errorf("only %d requests were trimmed: the test does not reach the hard limit", trimmed)
	}
	if over > 0 {
		t.Errorf("%d calls passed the hard limit by the provider's count (worst by %d tokens)", over, worst)
	}
}

// heldSummarizer holds every call until release is closed, counting the calls and the most
// that ran at once; started receives once per call.
type heldSummarizer struct {
	release, started         chan struct{}
	calls, active, maxAtOnce atomic.Int32
}

func (h *heldSummarizer) Summarize(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	h.calls.Add(1) // counted before started says so: a reader woken by started sees the call
	n := h.active.Add(1)
	h.started <- struct{}{}
	defer h.active.Add(-1)
	for m := h.maxAtOnce.Load(); n > m && !h.maxAtOnce.CompareAndSwap(m, n); m = h.maxAtOnce.Load() {
	}
	<-h.release
	return (&compaction.ExtractiveSummarizer{}).Summarize(ctx, in)
}

// Four runners serve one session at the same time with one Hooks: one compaction runs at a
// time per session, so no two markers summarize the same range. The overlap is injected, not
// hoped for: the first compaction is held in its summarizer until every runner has finished its
// turns, so the triggers of the turns after it find it running (coalesced, and counted), and
// the summarizer never runs twice at once.
func TestRunnersShareOneCompaction(t *testing.T) {
	base := session.InMemoryService()
	held := &heldSummarizer{release: make(chan struct{}), started: make(chan struct{}, 16)}
	free := sync.OnceFunc(func() { close(held.release) })
	defer free()
	cfg := adkctx.Config{Compaction: &compaction.Config{Interval: 2, Summarizer: held},
		Models: []budget.ModelInfo{{Name: "m", ContextWindow: 128_000, MaxOutputTokens: 8_192}}}
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Logger = zap.New(core)
	h, err := hooks.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var runners []*runner.Runner
	for range 4 {
		a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: &chatModel{name: "m", answer: strings.Repeat("detail ", 40)}})
		rc, err := h.Wire(runner.Config{AppName: app, Agent: a, SessionService: base, AutoCreateSession: true})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := runner.New(rc)
		runners = append(runners, r)
	}
	if _, err := base.Create(context.Background(), &session.CreateRequest{AppName: app, UserID: "user", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for k, r := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6 {
				for _, err := range r.Run(context.Background(), "user", "s1", genai.NewContentFromText(fmt.Sprintf("runner %d turn %d: %s", k, i, strings.Repeat("context ", 30)), genai.RoleUser), agent.RunConfig{}) {
					if err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-held.started:
	case <-time.After(time.Minute): // a liveness guard, not a timing assertion
		t.Fatal("no compaction reached its summarizer")
	}
	coalesced := logs.FilterMessage("compaction").FilterField(zap.String("outcome", "coalesced")).Len()
	if held.calls.Load() != 1 || coalesced == 0 {
		t.Errorf("after the runners' turns: %d summarizer calls, %d triggers coalesced; want one held compaction and the triggers after it coalesced",
			held.calls.Load(), coalesced)
	}
	free()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := held.maxAtOnce.Load(); n != 1 {
		t.Errorf("%d compactions of the session ran at once, want 1", n)
	}
	// Runners sharing the one store work quietly: nothing logged as a problem.
	if bad := logs.Filter(func(e observer.LoggedEntry) bool { return e.Level >= zapcore.WarnLevel }); bad.Len() > 0 {
		t.Errorf("runners over one store logged %d warnings or errors, the first: %s %v", bad.Len(), bad.All()[0].Message, bad.All()[0].Context)
	}
	previous := map[string]int{}
	ids := map[string]int{}
	for _, e := range storedEvents(t, base, "s1") {
		if !isMarker(e) {
			continue
		}
		m := readMarker(t, e)
		previous[m.Previous]++
		for _, id := range m.EventIDs {
			ids[id]++
		}
	}
	if len(previous) == 0 {
		t.Fatal("no marker stored")
	}
	for p, n := range previous {
		if n > 1 {
			t.Errorf("%d markers roll up the same marker %q: a range summarized twice", n, p)
		}
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("event %s summarized by %d markers", id, n)
		}
	}
}

// Per-name state stays bounded however many distinct model names a process sees.
func TestPerNameStateIsBounded(t *testing.T) {
	h, err := hooks.New(adkctx.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 100_000 {
		h.Limits(fmt.Sprintf("model-%d-%s", i, strings.Repeat("x", 64)))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 4<<20 {
		t.Errorf("heap grew by %d bytes for 100,000 model names", grown)
	}
}

// BenchmarkLongSessionIsFlat runs 10,000 invocations with compaction on and reports the
// goroutines and the live heap at the end against the start.
func BenchmarkLongSessionIsFlat(b *testing.B) {
	for b.Loop() {
		s := wire(b, &chatModel{name: "m", answer: strings.Repeat("detail ", 20)},
			adkctx.Config{Compaction: &compaction.Config{Summarizer: &compaction.ExtractiveSummarizer{}}}, session.InMemoryService(), nil)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		for i := range 10_000 {
			if err := s.send(b, fmt.Sprint("s", i%10), fmt.Sprintf("turn %d: %s", i, strings.Repeat("context ", 10))); err != nil {
				b.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_ = s.h.Close(ctx)
		cancel()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(runtime.NumGoroutine()-g0), "goroutines_added")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap_growth_MiB")
	}
}

// Eight parallel tool calls of 50 KB each on a 16K window: each result is cut to the truncation
// limit when stored, and the newest turn's results then share what is left of the window, so the
// turn goes on instead of being refused.
func TestParallelResultsThroughTheRunner(t *testing.T) {
	big, err := functiontool.New(functiontool.Config{Name: "fetch", Description: "fetches a page"},
		func(_ agent.ToolContext, a fileArgs) (map[string]any, error) {
			return map[string]any{"page": strings.Repeat(a.Path+" line of a long page\n", 2500)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	m := &chatModel{name: "small-16k", answer: "summarized all pages"}
	m.script = func(req *model.LLMRequest) *genai.Content {
		last := req.Contents[len(req.Contents)-1]
		if last.Role == genai.RoleUser && last.Parts[0].FunctionResponse == nil {
			c := &genai.Content{Role: genai.RoleModel}
			for k := range 8 {
				c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{Name: "fetch", Args: map[string]any{"path": fmt.Sprint("page", k)}}})
			}
			return c
		}
		return nil
	}
	cfg := adkctx.Config{Models: []budget.ModelInfo{{Name: "small-16k", ContextWindow: 16_384, MaxOutputTokens: 1024}}}
	s := wire(t, m, cfg, session.InMemoryService(), nil, big)
	if err := s.send(t, "s1", "fetch the eight pages and summarize them"); err != nil {
		t.Fatalf("turn refused: %v", err)
	}
	hard := s.h.Limits("small-16k").Hard
	for i, n := range m.reported {
		if n > hard {
			t.Errorf("call %d: %d tokens over the hard limit %d", i, n, hard)
		}
	}
	cut := s.logs.FilterMessage("budget decision").All()
	if last := cut[len(cut)-1].ContextMap(); last["newest_responses_cut"].(int64) != 8 {
		t.Errorf("last decision %v: want the 8 results cut to one budget", last)
	}
}
