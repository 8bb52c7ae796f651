package hooks_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
)

const (
	telApp    = "telemetry"
	telUser   = "user"
	telModel  = "scripted-model"
	telCanary = "quokka-canary-5512" // in every user message: must reach no metric and no span
	dumpBytes = 40 << 10
)

// adk-go starts its own spans (invoke_agent, generate_content, execute_tool) with the global
// tracer provider, and the global delegates to the first provider ever installed: one recorder
// per test binary, shared; tests tell their spans apart by session id.
var global struct {
	once sync.Once
	tp   *sdktrace.TracerProvider
	rec  *tracetest.SpanRecorder
}

func globalTracing() (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	global.once.Do(func() {
		global.rec = tracetest.NewSpanRecorder()
		global.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(global.rec))
		otel.SetTracerProvider(global.tp)
	})
	return global.tp, global.rec
}

// quotaError is a summarizer failure of a known kind.
type quotaError struct{}

func (quotaError) Error() string     { return "429 RESOURCE_EXHAUSTED" }
func (quotaError) ErrorKind() string { return "quota" }

type failingSummarizer struct{}

func (failingSummarizer) Name() string { return "failing" }

func (failingSummarizer) Summarize(context.Context, compaction.SummaryInput) (*compaction.Summary, error) {
	return nil, quotaError{}
}

type dumpArgs struct {
	Path string `json:"path"`
}

// dumpTool returns 40 KiB of text: adkctx cuts it to the truncation limit.
func dumpTool(t testing.TB) tool.Tool {
	t.Helper()
	tl, err := functiontool.New(functiontool.Config{Name: "dump", Description: "Prints a file."},
		func(_ agent.ToolContext, a dumpArgs) (map[string]any, error) {
			var b strings.Builder
			for i := 0; b.Len() < dumpBytes; i++ {
				fmt.Fprintf(&b, "%s line %05d: the quick brown fox jumps over the lazy dog\n", a.Path, i)
			}
			return map[string]any{"content": b.String()}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// toolThenAnswer calls dump once per user turn, then answers.
func toolThenAnswer(req *model.LLMRequest) (*genai.Content, error) {
	if n := len(req.Contents); n > 0 {
		for _, p := range req.Contents[n-1].Parts {
			if p.FunctionResponse != nil {
				return genai.NewContentFromText("The file holds "+strings.Repeat("numbered lines ", 30), genai.RoleModel), nil
			}
		}
	}
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "dump", Args: map[string]any{"path": "a.txt"}}}}}, nil
}

// agentsDir is a project with an AGENTS.md at its root and an empty one (skipped) in sub/.
func agentsDir(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	for _, d := range []string{filepath.Join(root, ".git"), sub} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("# Rules\n- Run the tests before answering.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "AGENTS.md"), []byte("  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return sub
}

type telStack struct {
	h      *hooks.Hooks
	model  *llmtest.Model
	runner *runner.Runner
	logs   *observer.ObservedLogs
}

func newTelStack(t testing.TB, cfg adkctx.Config) *telStack {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	cfg.Logger = zap.New(core)
	cfg.Models = []budget.ModelInfo{{Name: telModel, ContextWindow: 32_000, MaxOutputTokens: 1_000}}
	cfg.Instructions = &adkctx.InstructionsConfig{WorkDir: agentsDir(t)}
	cfg.Instructions.Discovery.NoGlobal = true
	cfg.Compaction = &compaction.Config{Interval: 2, Synchronous: true, Summarizer: failingSummarizer{}, RetainRecentTokens: 500} // a manual compaction always has work
	h, err := hooks.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	m := &llmtest.Model{ModelName: telModel, UsageScale: 1.15, Default: toolThenAnswer}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "Answer briefly.", Tools: []tool.Tool{dumpTool(t)}})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: telApp, Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &telStack{h: h, model: m, runner: r, logs: logs}
}

// send runs one user turn and returns the runner's error, if any.
func (s *telStack) send(t testing.TB, sessionID, text string) error {
	t.Helper()
	for _, err := range s.runner.Run(context.Background(), telUser, sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			return err
		}
	}
	return nil
}

// playSession plays turns of the session the telemetry tests measure: each with a tool call
// whose output is cut, and a sliding-window compaction every two turns through the fallback
// summarizer.
func playSession(t testing.TB, s *telStack, sessionID string, turns int) {
	t.Helper()
	for i := range turns {
		if err := s.send(t, sessionID, fmt.Sprintf("%s turn %d: print a.txt", telCanary, i)); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
}

// bigTurns sends a message too large for the history beside it (trimmed), then one too large for
// the window (rejected).
func (s *telStack) bigTurns(t testing.TB, sessionID string) {
	t.Helper()
	words := func(n int) string { return strings.Repeat("alpha beta gamma delta ", n) }
	if err := s.send(t, sessionID, telCanary+" please answer without tools: "+words(4_800)); err != nil {
		t.Fatalf("large turn: %v", err)
	}
	err := s.send(t, sessionID, telCanary+" "+words(8_000))
	var kinded interface{ ErrorKind() string }
	if !errors.As(err, &kinded) || kinded.ErrorKind() != "budget" {
		t.Fatalf("oversized turn: err = %v, want a budget error", err)
	}
}

// instrument is what the README documents of one instrument.
type instrument struct {
	Kind  string // counter, histogram
	Unit  string
	Attrs []string // attribute keys, sorted
}

// documented is the metric table of example/README-sections.md.
var documented = map[string]instrument{
	"adkctx.budget.decisions":             {"counter", "{decision}", []string{"adkctx.budget.action", "gen_ai.request.model"}},
	"adkctx.budget.turns_dropped":         {"counter", "{turn}", []string{"gen_ai.request.model"}},
	"adkctx.request.tokens":               {"histogram", "{token}", []string{"adkctx.token.kind", "gen_ai.request.model"}},
	"gen_ai.client.token.usage":           {"histogram", "{token}", []string{"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.token.type"}},
	"adkctx.compaction.attempts":          {"counter", "{attempt}", []string{"adkctx.compaction.outcome", "adkctx.compaction.trigger"}},
	"adkctx.compaction.duration":          {"histogram", "s", []string{"adkctx.compaction.outcome", "adkctx.compaction.trigger"}},
	"adkctx.compaction.compression_ratio": {"histogram", "1", []string{"adkctx.compaction.trigger"}},
	"adkctx.compaction.summarizer.errors": {"counter", "{error}", []string{"adkctx.compaction.summarizer", "error.type"}},
	"adkctx.compaction.fallbacks":         {"counter", "{compaction}", []string{"error.type"}},
	"adkctx.tool.truncations":             {"counter", "{result}", []string{"gen_ai.tool.name"}},
	"adkctx.tool.omitted":                 {"counter", "By", []string{"gen_ai.tool.name"}},
	"adkctx.instructions.injected":        {"histogram", "By", nil},
	"adkctx.instructions.files_skipped":   {"counter", "{file}", nil},
}

// point is one data point: its attributes and value (a sum, or a histogram's count and sum).
type point struct {
	Attrs map[string]string
	Count uint64
	Value float64
}

type collected struct {
	inst   map[string]instrument
	points map[string][]point
}

func attrMap(set attribute.Set) map[string]string {
	m := map[string]string{}
	for _, kv := range set.ToSlice() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// collect reads adkctx's metrics from reader.
func collect(t testing.TB, reader sdkmetric.Reader) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	c := collected{inst: map[string]instrument{}, points: map[string][]point{}}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/adkctx/adkctx" { // the instrumentation scope
			continue
		}
		for _, m := range sm.Metrics {
			var kind string
			var pts []point
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				kind = "counter"
				for _, dp := range d.DataPoints {
					pts = append(pts, point{attrMap(dp.Attributes), 1, float64(dp.Value)})
				}
			case metricdata.Histogram[int64]:
				kind = "histogram"
				for _, dp := range d.DataPoints {
					pts = append(pts, point{attrMap(dp.Attributes), dp.Count, float64(dp.Sum)})
				}
			case metricdata.Histogram[float64]:
				kind = "histogram"
				for _, dp := range d.DataPoints {
					pts = append(pts, point{attrMap(dp.Attributes), dp.Count, dp.Sum})
				}
			default:
				t.Errorf("metric %s has data %T", m.Name, m.Data)
			}
			if len(pts) == 0 {
				continue
			}
			keys := map[string]bool{}
			for _, p := range pts {
				for k := range p.Attrs {
					keys[k] = true
				}
			}
			var ks []string
			for k := range keys {
				ks = append(ks, k)
			}
			slices.Sort(ks)
			c.inst[m.Name] = instrument{kind, m.Unit, ks}
			c.points[m.Name] = pts
		}
	}
	return c
}

// sum adds the values (or histogram counts, with count) of the points whose attributes include
// want.
func (c collected) sum(name string, want map[string]string, count bool) float64 {
	total := 0.0
	for _, p := range c.points[name] {
		match := true
		for k, v := range want {
			if p.Attrs[k] != v {
				match = false
			}
		}
		if match {
			if count {
				total += float64(p.Count)
			} else {
				total += p.Value
			}
		}
	}
	return total
}

func intField(e observer.LoggedEntry, key string) int {
	v, _ := e.ContextMap()[key].(int64)
	return int(v)
}

// spanAttrs returns a span's attributes as strings.
func spanAttrs(kvs []attribute.KeyValue) map[string]string {
	return attrMap(attribute.NewSet(kvs...))
}

// Every instrument and span appears with the documented attributes, through adk-go's runner and
// a session that exercises each decision; the figures agree with the log; no session id is a
// metric attribute and no conversation text reaches a metric or a span.
func TestTelemetryThroughRunner(t *testing.T) {
	tp, rec := globalTracing()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	s := newTelStack(t, adkctx.Config{MeterProvider: mp, TracerProvider: tp})
	sessionID := "tel-" + uuid.NewString()
	playSession(t, s, sessionID, 5)
	// A manual compaction, from inside a span of the application's.
	ctx, appSpan := tp.Tracer("app").Start(context.Background(), "app")
	m, err := s.h.Compact(ctx, telApp, telUser, sessionID)
	appSpan.End()
	if err != nil || m == nil {
		t.Fatalf("manual compaction: %v, %v", m, err)
	}
	s.bigTurns(t, sessionID)
	c := collect(t, reader)

	// Each instrument, with the documented kind, unit and attribute keys.
	if diff := cmp.Diff(documented, c.inst); diff != "" {
		t.Errorf("instruments (-documented +recorded):\n%s", diff)
	}

	// The figures, against the log and the model.
	decisions := s.logs.FilterMessage("budget decision").All()
	calls := len(s.model.Requests())
	actions := map[string]int{}
	for _, d := range decisions {
		actions[d.ContextMap()["action"].(string)]++
	}
	gotActions := map[string]int{}
	for _, p := range c.points["adkctx.budget.decisions"] {
		gotActions[p.Attrs["adkctx.budget.action"]] += int(p.Value)
	}
	if diff := cmp.Diff(actions, gotActions); diff != "" {
		t.Errorf("decisions by action (-logged +measured):\n%s", diff)
	}
	if len(decisions) != calls+1 || actions["trimmed"] == 0 || actions["rejected"] != 1 {
		t.Errorf("decisions %d for %d model calls and one refusal; actions %v: want trims and one refusal", len(decisions), calls, actions)
	}
	truncated := s.logs.FilterMessage("tool output truncated").All()
	omitted := 0
	for _, e := range truncated {
		omitted += intField(e, "original_bytes") - intField(e, "kept_bytes")
	}
	compactions := s.logs.FilterMessage("compaction").All()
	compacted, fallbacks := 0, 0
	for _, e := range compactions {
		if e.ContextMap()["outcome"] == "compacted" {
			compacted++
		}
		if e.ContextMap()["fallback_used"] == true {
			fallbacks++
		}
	}
	model := map[string]string{"gen_ai.request.model": telModel}
	dropped := 0
	for _, e := range s.logs.FilterField(zap.String("action", "trimmed")).All() {
		dropped += intField(e, "turns_dropped")
	}
	type figures struct {
		Truncations, Omitted, Compacted, Fallbacks, QuotaErrors int
		Reported, InputUsage, Estimated, Final                  int
		InstructionCalls, SkippedFiles, TurnsDropped            int
	}
	want := figures{
		Truncations: len(truncated), Omitted: omitted, Compacted: compacted, Fallbacks: fallbacks, QuotaErrors: fallbacks,
		Reported: calls, InputUsage: calls, Estimated: calls + 1, Final: calls,
		InstructionCalls: calls + 1, SkippedFiles: calls + 1, TurnsDropped: dropped,
	}
	got := figures{
		Truncations:      int(c.sum("adkctx.tool.truncations", map[string]string{"gen_ai.tool.name": "dump"}, false)),
		Omitted:          int(c.sum("adkctx.tool.omitted", map[string]string{"gen_ai.tool.name": "dump"}, false)),
		Compacted:        int(c.sum("adkctx.compaction.attempts", map[string]string{"adkctx.compaction.outcome": "compacted"}, false)),
		Fallbacks:        int(c.sum("adkctx.compaction.fallbacks", map[string]string{"error.type": "quota"}, false)),
		QuotaErrors:      int(c.sum("adkctx.compaction.summarizer.errors", map[string]string{"error.type": "quota", "adkctx.compaction.summarizer": "failing"}, false)),
		Reported:         int(c.sum("adkctx.request.tokens", map[string]string{"adkctx.token.kind": "reported", "gen_ai.request.model": telModel}, true)),
		InputUsage:       int(c.sum("gen_ai.client.token.usage", map[string]string{"gen_ai.token.type": "input", "gen_ai.operation.name": "generate_content"}, true)),
		Estimated:        int(c.sum("adkctx.request.tokens", map[string]string{"adkctx.token.kind": "estimated"}, true)),
		Final:            int(c.sum("adkctx.request.tokens", map[string]string{"adkctx.token.kind": "final"}, true)),
		InstructionCalls: int(c.sum("adkctx.instructions.injected", nil, true)),
		SkippedFiles:     int(c.sum("adkctx.instructions.files_skipped", nil, false)),
		TurnsDropped:     int(c.sum("adkctx.budget.turns_dropped", model, false)),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("measured figures (-from the log and the model +measured):\n%s", diff)
	}
	if want.Truncations == 0 || want.Compacted < 3 || want.Fallbacks == 0 || want.TurnsDropped == 0 {
		t.Errorf("the session did not exercise everything: %+v", want)
	}
	if reported, usage := c.sum("adkctx.request.tokens", map[string]string{"adkctx.token.kind": "reported"}, false),
		c.sum("gen_ai.client.token.usage", map[string]string{"gen_ai.token.type": "input"}, false); reported != usage || reported == 0 {
		t.Errorf("reported prompt tokens %v, gen_ai.client.token.usage input %v: want equal and > 0", reported, usage)
	}

	// Bounded cardinality: no attribute value is a session id or conversation text.
	for name, pts := range c.points {
		for _, p := range pts {
			for k, v := range p.Attrs {
				if strings.Contains(v, sessionID) || strings.Contains(v, telCanary) || k == "gen_ai.conversation.id" {
					t.Errorf("metric %s carries %s=%q", name, k, v)
				}
			}
		}
	}

	checkSpans(t, rec.Ended(), sessionID, calls, len(truncated), appSpan.SpanContext())
}

// checkSpans checks adkctx's span events and compaction spans among the spans of the session.
func checkSpans(t *testing.T, spans []sdktrace.ReadOnlySpan, sessionID string, calls, truncations int, app trace.SpanContext) {
	t.Helper()
	invocations := map[string]trace.SpanContext{} // invocation id → its invoke_agent span
	agentSpans := map[trace.SpanID]bool{}
	for _, sp := range spans {
		if attrs := spanAttrs(sp.Attributes()); strings.HasPrefix(sp.Name(), "invoke_agent") && attrs["gen_ai.conversation.id"] == sessionID {
			invocations[attrs["gcp.vertex.agent.invocation_id"]] = sp.SpanContext()
			agentSpans[sp.SpanContext().SpanID()] = true
		}
	}
	var decisionEvents, truncationEvents int
	var compactionSpans []sdktrace.ReadOnlySpan
	for _, sp := range spans {
		attrs := spanAttrs(sp.Attributes())
		if sp.Name() == "adkctx.compaction" && attrs["gen_ai.conversation.id"] == sessionID {
			compactionSpans = append(compactionSpans, sp)
		}
		if !agentSpans[sp.SpanContext().SpanID()] && !agentSpans[sp.Parent().SpanID()] {
			continue // another test's session
		}
		for _, ev := range sp.Events() {
			for _, kv := range ev.Attributes {
				if strings.Contains(kv.Value.String(), telCanary) {
					t.Errorf("span %s event %s attribute %s carries conversation text", sp.Name(), ev.Name, kv.Key)
				}
			}
			switch {
			case ev.Name == "adkctx.budget_decision" && strings.HasPrefix(sp.Name(), "invoke_agent"):
				decisionEvents++
				if diff := cmp.Diff([]string{
					"adkctx.budget.action", "adkctx.limit.hard", "adkctx.limit.soft", "adkctx.summary_present",
					"adkctx.tokens.estimated", "adkctx.tokens.final", "adkctx.tokens.predicted", "adkctx.tokens.prefix_reused",
					"adkctx.turns_dropped", "gen_ai.request.model",
				}, keysOf(spanAttrs(ev.Attributes))); diff != "" {
					t.Errorf("budget decision event attributes (-documented +recorded):\n%s", diff)
				}
			case ev.Name == "adkctx.tool_output_truncated" && strings.HasPrefix(sp.Name(), "execute_tool"):
				truncationEvents++
				if diff := cmp.Diff([]string{"adkctx.bytes.kept", "adkctx.bytes.original", "gen_ai.tool.name"}, keysOf(spanAttrs(ev.Attributes))); diff != "" {
					t.Errorf("truncation event attributes (-documented +recorded):\n%s", diff)
				}
			case strings.HasPrefix(ev.Name, "adkctx."):
				t.Errorf("event %s on span %s", ev.Name, sp.Name())
			}
		}
	}
	// The refused call has its decision too.
	if decisionEvents != calls+1 {
		t.Errorf("budget decision events on invoke_agent spans = %d, want %d (one per model call and one for the refusal)", decisionEvents, calls+1)
	}
	if truncationEvents != truncations {
		t.Errorf("truncation events on execute_tool spans = %d, want %d", truncationEvents, truncations)
	}
	triggers := map[string]int{}
	for _, sp := range compactionSpans {
		attrs := spanAttrs(sp.Attributes())
		triggers[attrs["adkctx.compaction.trigger"]]++
		if diff := cmp.Diff([]string{
			"adkctx.compaction.events_covered", "adkctx.compaction.fallback_used", "adkctx.compaction.invocations_covered",
			"adkctx.compaction.outcome", "adkctx.compaction.summarizer", "adkctx.compaction.tokens_after",
			"adkctx.compaction.tokens_before", "adkctx.compaction.trigger", "adkctx.invocation_id", "gen_ai.conversation.id",
		}, keysOf(attrs)); diff != "" {
			t.Errorf("compaction span attributes (-documented +recorded):\n%s", diff)
		}
		if sp.Parent().IsValid() {
			t.Errorf("compaction span has a parent %v: want the root of its own trace", sp.Parent())
		}
		if sp.EndTime().Before(sp.StartTime()) {
			t.Errorf("compaction span ends before it starts")
		}
		if attrs["adkctx.compaction.trigger"] == string(compaction.TriggerManual) {
			if len(sp.Links()) != 1 || !sp.Links()[0].SpanContext.Equal(app) {
				t.Errorf("manual compaction span: links %v, want the span Compact was called in, %v", sp.Links(), app)
			}
			continue
		}
		// Sliding-window and token compactions: the invoke_agent span of the invocation that
		// triggered them.
		inv, ok := invocations[attrs["adkctx.invocation_id"]]
		if !ok || len(sp.Links()) != 1 || !sp.Links()[0].SpanContext.Equal(inv) {
			t.Errorf("compaction span of invocation %s: links %v, want the invoke_agent span %v", attrs["adkctx.invocation_id"], sp.Links(), inv)
		}
	}
	if triggers["invocations"] == 0 || triggers["tokens"] == 0 || triggers["manual"] != 1 {
		t.Errorf("compaction spans by trigger = %v, want sliding-window, token and one manual", triggers)
	}
}

// With nil providers adkctx uses the global ones: nothing is recorded before an application
// installs an SDK, and everything after. The global providers delegate once, to the first SDK
// installed, so this runs in a fresh process.
func TestNilProvidersUseTheGlobals(t *testing.T) {
	if os.Getenv("ADKCTX_TELEMETRY_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNilProvidersUseTheGlobals$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "ADKCTX_TELEMETRY_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestNilProvidersUseTheGlobals") {
			t.Fatalf("child process: %v\n%s", err, out)
		}
		return
	}
	if _, ok := otel.GetMeterProvider().(*sdkmetric.MeterProvider); ok {
		t.Fatal("a global meter provider is installed already")
	}
	s := newTelStack(t, adkctx.Config{}) // nil providers
	sessionID := "globals-" + uuid.NewString()
	playSession(t, s, sessionID, 3)

	// An application installs an SDK only now: what adkctx did before was never recorded.
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	if c := collect(t, reader); len(c.points) != 0 {
		t.Errorf("metrics recorded before any provider was installed: %v", c.points)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("%d spans recorded before any provider was installed", n)
	}

	// From now on the same hooks report through the globals.
	playSession(t, s, sessionID, 2)
	c := collect(t, reader)
	if n := c.sum("adkctx.budget.decisions", nil, false); n != 4 {
		t.Errorf("budget decisions through the global provider = %v, want 4 (2 turns × 2 model calls)", n)
	}
	events := 0
	for _, sp := range rec.Ended() {
		for _, ev := range sp.Events() {
			if ev.Name == "adkctx.budget_decision" {
				events++
			}
		}
	}
	if events != 4 {
		t.Errorf("budget decision events through the global tracer = %d, want 4", events)
	}
	if !slices.ContainsFunc(rec.Ended(), func(sp sdktrace.ReadOnlySpan) bool { return sp.Name() == "adkctx.compaction" }) {
		t.Errorf("no compaction span through the global tracer")
	}
}

// A compaction written by an LLM summarizer puts the summarizer call's usage on its span, with
// whether the prompt was the agent's conversation (what the provider's cache can serve).
func TestCompactionSpanCarriesSummarizerUsage(t *testing.T) {
	tp, rec := globalTracing()
	m := &llmtest.Model{UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
		if strings.Contains(llmtest.AllText(req), "Write a summary of the whole conversation above") {
			return genai.NewContentFromText("Goal: keep going.", genai.RoleModel), nil
		}
		turn := userTexts(req)
		return genai.NewContentFromText("noted "+strings.Fields(turn[len(turn)-1])[0]+" "+strings.Repeat("detail ", 40), genai.RoleModel), nil
	}}
	s := wireStack(t, m, adkctx.Config{TracerProvider: tp, Compaction: &compaction.Config{Interval: 2, Synchronous: true,
		Summarizer: &compaction.LLMSummarizer{Model: hooks.SummarizerModel(m)}}}, session.InMemoryService())
	sessionID := "usage-" + uuid.NewString()
	for i := range 5 {
		if err := s.send(t, sessionID, fmt.Sprintf("turn-%d: %s", i, strings.Repeat("context ", 40))); err != nil {
			t.Fatal(err)
		}
	}
	compacted := 0
	for _, sp := range rec.Ended() {
		attrs := spanAttrs(sp.Attributes())
		if sp.Name() != "adkctx.compaction" || attrs["gen_ai.conversation.id"] != sessionID || attrs["adkctx.compaction.outcome"] != "compacted" {
			continue
		}
		compacted++
		if attrs["gen_ai.usage.input_tokens"] == "" || attrs["gen_ai.usage.input_tokens"] == "0" || attrs["gen_ai.usage.output_tokens"] == "" ||
			attrs["gen_ai.usage.cache_read.input_tokens"] == "" || attrs["adkctx.compaction.summarizer_shared_prefix"] != "true" {
			t.Errorf("compaction span attributes %v: want the summarizer's usage and a shared prefix", attrs)
		}
	}
	if compacted == 0 {
		t.Fatal("no compaction span")
	}
}
