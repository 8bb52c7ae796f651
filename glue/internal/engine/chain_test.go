package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/processors/request"
)

// No step of the chain changes a content in place, whatever it does to a request: every content
// is checked after each step against what was measured of it (steps.Measures.Check), over
// requests that truncate a stored oversized output, answer a call left without its response,
// carry a summary, and pass the hard limit (trimmed), each request extending the one before.
func TestChainStepsNeverChangeAContentInPlace(t *testing.T) {
	e, err := New(adkctx.Config{Models: []budget.ModelInfo{{Name: "small", ContextWindow: 45_000, MaxOutputTokens: 2_000}}})
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	e.stepCheck = func(step string, err error) {
		checked[step]++
		if err != nil {
			t.Errorf("after the %s step: %v", step, err)
		}
	}
	base := fixtures.ChainRequest(300)
	base.Model = "small"
	summary := genai.NewContentFromText(compaction.SummaryHeader+"\nGoal: ship it. "+strings.Repeat("fact ", 200), genai.RoleUser)
	huge := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		Name: "run_tests", Response: map[string]any{"output": strings.Repeat("ok line\n", 20_000)}}}}}
	call := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "run_tests"}}}}
	orphan := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "deploy"}}}}
	history := append([]*genai.Content{summary}, base.Contents...)
	actions := map[steps.Action]int{}
	for n := 200; n <= len(history); n += 10 {
		contents := append([]*genai.Content{}, history[:n]...)
		contents = append(contents, call, huge, orphan, genai.NewContentFromText(fmt.Sprint("question ", n), genai.RoleUser))
		req := &request.LLMRequest{Model: base.Model, Config: base.Config, Contents: contents}
		err := e.BeforeModel(context.Background(), testCall{inv: fmt.Sprint("i", n), agent: "coder"}, nil, req, nil)
		st := e.state(keyOf(testCall{}))
		st.mu.Lock()
		trimmed := st.stream(streamKey{"", "coder"}).turnsDrop > 0
		st.mu.Unlock()
		switch {
		case err != nil:
			actions[steps.ActionRejected]++
		case trimmed:
			actions[steps.ActionTrimmed]++
		default:
			actions[steps.ActionNone]++
		}
	}
	for _, step := range []string{"recall", "truncate", "normalize", "instructions", "budget"} {
		if checked[step] == 0 {
			t.Errorf("the %s step was never checked", step)
		}
	}
	if actions[steps.ActionTrimmed] == 0 || actions[steps.ActionNone] == 0 {
		t.Errorf("requests %v: want some sent whole and some trimmed", actions)
	}
}

// decisionFieldNames are the fields of the "budget decision" log entry, in the order the README's
// log schema documents them: where the call runs, then the reports of the steps (the budget's
// first, then truncate, normalize, instructions), then the refusal.
var decisionFieldNames = []string{
	"session_id", "invocation_id", "agent", "call_seq",
	// budget
	"model", "model_known", "window_source", "context_window", "reserved_output", "usable_input", "soft_limit", "hard_limit",
	"estimated_tokens", "calibration_factor", "predicted_tokens", "safety_margin", "margin_source", "margin_waived",
	"final_tokens", "prefix_reused_tokens", "action", "turns_dropped", "contents_dropped", "tokens_dropped",
	"exchanges_dropped", "newest_responses_cut", "summary_present", "summary_tokens", "floor_tokens", "summary_cut", "message_cut", "contents",
	// truncate
	"responses_truncated", "truncated_bytes",
	// normalize
	"synthetic_responses", "orphans_removed", "responses_reordered", "responses_merged",
	// instructions
	"instruction_bytes",
}

// stepsRequest is a request on which every step of the chain acts: a stored function response
// over the truncation limits, a call left without its response, and (with instructions on, see
// stepsEngine) an AGENTS.md file to inject.
func stepsRequest(model string) *request.LLMRequest {
	req := fixtures.ChainRequest(20)
	req.Model = model
	req.Contents = append(req.Contents,
		&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "run_tests"}}}},
		&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
			Name: "run_tests", Response: map[string]any{"output": strings.Repeat("ok line\n", 5_000)}}}}},
		&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "deploy"}}}},
		genai.NewContentFromText("and now?", genai.RoleUser),
	)
	return req
}

// stepsEngine is an engine with AGENTS.md instructions on (agents is the file's text), logging
// to the observer it returns.
func stepsEngine(t *testing.T, agents string, cfg adkctx.Config) (*Engine, *observer.ObservedLogs) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(agents), 0o600); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Logger = zap.New(core)
	cfg.Instructions = &adkctx.InstructionsConfig{WorkDir: dir}
	cfg.Instructions.Discovery.NoGlobal = true
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, logs
}

func fieldNames(fields []zap.Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Key
	}
	return out
}

// The "budget decision" entry holds every step's fields exactly once, in the documented order,
// with what each step did: sent whole, trimmed, and refused (then with the refusal's fields last).
func TestDecisionEntryHoldsEveryStepsFieldsInOrder(t *testing.T) {
	const agents = "Run go vet before committing.\n"
	tests := []struct {
		name   string
		window int
		limits budget.LimitConfig
		action steps.Action
	}{
		{"sent whole", 1_000_000, budget.LimitConfig{}, steps.ActionNone},
		{"trimmed", 4_000, budget.LimitConfig{}, steps.ActionTrimmed},
		// The smallest window, with a hard limit of 92 tokens: the newest turn does not fit.
		{"refused", budget.MinContextWindow, budget.LimitConfig{SoftFraction: 0.05, HardFraction: 0.1}, steps.ActionRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, logs := stepsEngine(t, agents, adkctx.Config{Models: []budget.ModelInfo{{Name: "m", ContextWindow: tt.window, MaxOutputTokens: 500}}, Limits: tt.limits})
			req := stepsRequest("m")
			err := e.BeforeModel(context.Background(), testCall{inv: "i1", agent: "coder"}, nil, req, nil)
			entries := logs.FilterMessage("budget decision").All()
			if len(entries) != 1 {
				t.Fatalf("%d budget decision entries, want 1", len(entries))
			}
			want := decisionFieldNames
			if tt.action == steps.ActionRejected {
				want = append(slices.Clone(want), "error_kind", "error")
				if err == nil {
					t.Errorf("BeforeModel: no error, want a refusal")
				}
			}
			if diff := cmp.Diff(want, fieldNames(entries[0].Context)); diff != "" {
				t.Errorf("fields (-documented +logged):\n%s", diff)
			}
			got := entries[0].ContextMap()
			if got["action"] != string(tt.action) {
				t.Errorf("action = %v, want %s", got["action"], tt.action)
			}
			// Each step's report says what it did.
			for field, ok := range map[string]bool{
				"responses_truncated": got["responses_truncated"] == int64(1),
				"truncated_bytes":     got["truncated_bytes"].(int64) > 0,
				"synthetic_responses": got["synthetic_responses"] == int64(1),
				"instruction_bytes":   got["instruction_bytes"].(int64) >= int64(len(agents)),
				"contents":            got["contents"] == int64(len(req.Contents)),
				"turns_dropped":       (tt.action == steps.ActionTrimmed) == (got["turns_dropped"].(int64) > 0),
			} {
				if !ok {
					t.Errorf("%s = %v: not what the step did", field, got[field])
				}
			}
		})
	}
}

// reportStep is a step that only reports: the text contents of the request, as a log field, a
// span attribute, and a metric point (counted in points).
func reportStep(points *int) step {
	return step{"texts", func(_ *Engine, _ context.Context, c *chain) stepReport {
		return textsReport{n: textContents(c.req.Contents), points: points}
	}}
}

func textContents(contents []*genai.Content) int {
	n := 0
	for _, c := range contents {
		if len(c.Parts) > 0 && c.Parts[0].Text != "" {
			n++
		}
	}
	return n
}

type textsReport struct {
	n      int
	points *int
}

func (r textsReport) logFields(f []zap.Field) []zap.Field {
	return append(f, zap.Int("text_contents", r.n))
}
func (r textsReport) spanAttrs(a []attribute.KeyValue) []attribute.KeyValue {
	return append(a, attribute.Int("adkctx.text_contents", r.n))
}
func (r textsReport) record(*telemetry) { *r.points++ }

// Adding a step to the chain changes the decision's log entry, span event and metric points only
// through the step's own report: run with and without a step that only reports (inserted before
// the instructions), on two calls of one stream (the second extends the first), the entries are
// the same but for the step's field, placed after the fields of the steps that ran before it; the
// events the same but for its attribute; the other metric points the same.
func TestAddingAStepChangesTheDecisionOnlyThroughItsReport(t *testing.T) {
	type run struct {
		fields [][]zap.Field
		attrs  [][]attribute.KeyValue
		series map[string]map[string]int64
		texts  []int // text contents of each request
	}
	points := 0
	play := func(steps []step) run {
		var texts []int
		reader := sdkmetric.NewManualReader()
		sr := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
		e, logs := stepsEngine(t, "Keep it short.\n", adkctx.Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		for i, n := range []int{2, 0} { // the first request lacks the second's last two contents
			req := stepsRequest("gemini-2.5-flash")
			req.Contents = req.Contents[:len(req.Contents)-n]
			texts = append(texts, textContents(req.Contents))
			ctx, span := tp.Tracer("test").Start(context.Background(), "invoke_agent coder")
			if err := e.beforeModel(ctx, testCall{inv: fmt.Sprint("i", i), agent: "coder"}, nil, req, nil, steps); err != nil {
				t.Fatal(err)
			}
			span.End()
		}
		var r run
		for _, entry := range logs.FilterMessage("budget decision").All() {
			r.fields = append(r.fields, entry.Context)
		}
		for _, sp := range sr.Ended() {
			for _, ev := range sp.Events() {
				r.attrs = append(r.attrs, ev.Attributes)
			}
		}
		r.series, r.texts = series(t, reader), texts
		return r
	}
	plain := play(requestSteps[:])
	var withStep []step
	for _, s := range requestSteps {
		if s.name == "instructions" {
			withStep = append(withStep, reportStep(&points))
		}
		withStep = append(withStep, s)
	}
	added := play(withStep)

	if len(plain.fields) != 2 || len(plain.attrs) != 2 {
		t.Fatalf("%d entries and %d span events, want 2 of each", len(plain.fields), len(plain.attrs))
	}
	if points != 2 {
		t.Errorf("the step's metric points were recorded %d times, want once per call (2)", points)
	}
	for i := range plain.fields {
		at := slices.IndexFunc(plain.fields[i], func(f zap.Field) bool { return f.Key == "instruction_bytes" })
		want := slices.Insert(slices.Clone(plain.fields[i]), at, zap.Int("text_contents", plain.texts[i]))
		if diff := cmp.Diff(want, added.fields[i]); diff != "" {
			t.Errorf("call %d: log entry with the step (-without it, its field added +with it):\n%s", i, diff)
		}
		if plain.fields[i][slices.IndexFunc(plain.fields[i], func(f zap.Field) bool { return f.Key == "prefix_reused_tokens" })].Integer == 0 && i == 1 {
			t.Errorf("call %d: no prefix reused: the second request does not extend the first", i)
		}
		wantAttrs := append(slices.Clone(plain.attrs[i]), attribute.Int("adkctx.text_contents", plain.texts[i]))
		if diff := cmp.Diff(wantAttrs, added.attrs[i], cmp.Comparer(func(a, b attribute.Value) bool { return a == b })); diff != "" {
			t.Errorf("call %d: span event with the step (-without it, its attribute added +with it):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff(plain.series, added.series); diff != "" {
		t.Errorf("metric points (-without the step +with it):\n%s", diff)
	}
}
