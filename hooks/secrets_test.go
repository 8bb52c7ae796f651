package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/adkctx/adkctx/hooks/internal/sqlitetest"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/api/googleapi"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/processors/request"
)

// Every planted secret holds this: nothing adkctx logs, measures or traces may.
const secretMark = "sk-live-"

// The secrets, one per place conversation text or a quote of it comes from.
const (
	userSecret     = "my key is sk-live-USER-4f9a1c"         // the user's messages
	toolSecret     = "token=sk-live-TOOL-7b2e90"             // a tool's output
	answerSecret   = "the key sk-live-ANSWER-0c3d7e works"   // the model's answers
	providerSecret = "sk-live-PROVIDER-1a2b3c"               // a model provider's error text
	detailSecret   = "sk-live-DETAIL-5e6f7a"                 // a provider error's details
	googleSecret   = "sk-live-GOOGLEAPI-9b8c7d"              // a googleapi error's body
	rowSecret      = "rejected row holding sk-live-ROW-2d4e" // a database's error text
)

// secretTool prints a file holding a secret, long enough to be truncated.
func secretTool(t *testing.T) tool.Tool {
	t.Helper()
	tl, err := functiontool.New(functiontool.Config{Name: "cat", Description: "Prints a file."},
		func(_ agent.ToolContext, a dumpArgs) (map[string]any, error) {
			var b strings.Builder
			for i := 0; b.Len() < dumpBytes; i++ {
				fmt.Fprintf(&b, "%s line %05d: %s\n", a.Path, i, toolSecret)
			}
			return map[string]any{"content": b.String()}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// catThenAnswer calls cat once per user turn, then answers with a secret.
func catThenAnswer(req *model.LLMRequest) (*genai.Content, error) {
	if n := len(req.Contents); n > 0 {
		for _, p := range req.Contents[n-1].Parts {
			if p.FunctionResponse != nil {
				return genai.NewContentFromText("Done: "+answerSecret, genai.RoleModel), nil
			}
		}
	}
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "cat", Args: map[string]any{"path": "a.txt"}}}}}, nil
}

// providerError is the Gemini API's refusal of a request, quoting the request in its message and
// details, as the genai client returns it.
func providerError() error {
	return genai.APIError{Code: 400, Status: "INVALID_ARGUMENT",
		Message: "Invalid value at 'contents[0].parts[0].text' (TYPE_STRING), \"" + userSecret + "\" " + providerSecret,
		Details: []map[string]any{
			{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": []any{
				map[string]any{"field": "contents[0].parts[0].text", "description": detailSecret}}},
			{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "INVALID_CONTENT", "domain": "googleapis.com",
				"metadata": map[string]any{"quoted": detailSecret}},
		}}
}

// googleAPIQuota is a model client built on google.golang.org/api: googleapi.CheckResponse's
// error for a 429 whose body quotes the request, wrapped by the client.
func googleAPIQuota(t *testing.T) error {
	t.Helper()
	rec := httptest.NewRecorder()
	rec.WriteHeader(http.StatusTooManyRequests)
	fmt.Fprintf(rec, `{"error": {"code": 429, "message": "Quota exceeded for %s", "status": "RESOURCE_EXHAUSTED"}}`, googleSecret)
	err := googleapi.CheckResponse(rec.Result())
	if err == nil || !strings.Contains(err.Error(), googleSecret) {
		t.Fatalf("CheckResponse = %v, want an error quoting the body", err)
	}
	return fmt.Errorf("generate content: %w", err)
}

// failingModel is a summarizer's model that fails every call with err.
func failingModel(err error) compaction.Model {
	return hooks.SummarizerModel(&llmtest.Model{ModelName: "summarizer-model",
		Default: func(*model.LLMRequest) (*genai.Content, error) { return nil, err }})
}

// quotingPanicker is a custom summarizer that panics with what it read.
type quotingPanicker struct{}

func (quotingPanicker) Name() string { return "quoting-panicker" }

func (quotingPanicker) Summarize(_ context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	var b strings.Builder
	for _, e := range in.Events {
		if e.Content != nil {
			for _, p := range e.Content.Parts {
				b.WriteString(p.Text)
			}
		}
	}
	panic("cannot summarize: " + b.String())
}

// secretRun is what one run of a session wrote, read back for the check.
type secretRun struct {
	logs    *observer.ObservedLogs
	reader  sdkmetric.Reader
	spans   *tracetest.SpanRecorder // adkctx's tracer provider: compaction spans
	session string
}

// runWithSecrets plays four turns of a session whose every text holds a secret, wired with
// Hooks.Wire, with compaction configured by cc and sessions stored in base.
func runWithSecrets(t *testing.T, cc compaction.Config, base session.Service) secretRun {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	rec := tracetest.NewSpanRecorder()
	cc.Interval, cc.RetainRecentInvocations, cc.Synchronous = 1, 1, true
	cfg := adkctx.Config{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
		Models:         []budget.ModelInfo{{Name: telModel, ContextWindow: 32_000, MaxOutputTokens: 1_000}},
		Compaction:     &cc,
	}
	m := &llmtest.Model{ModelName: telModel, UsageScale: 1.1, Default: catThenAnswer}
	w := wireStack(t, m, cfg, base, secretTool(t))
	run := secretRun{logs: w.logs, reader: reader, spans: rec, session: "secrets-" + uuid.NewString()}
	for i := range 4 {
		if err := w.send(t, run.session, fmt.Sprintf("turn %d: print a.txt, %s", i, userSecret)); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	// A message too large for the window: refused, and the refusal logged.
	err := w.send(t, run.session, userSecret+strings.Repeat(" alpha beta gamma delta", 12_000))
	if tooBig := (*request.BudgetExceededError)(nil); !errors.As(err, &tooBig) {
		t.Fatalf("oversized turn: %v, want a budget refusal", err)
	}
	return run
}

// checkNoSecret fails on any secret in a log entry (message and every field), in a metric (every
// attribute of every data point, every scope) or in a span adkctx started (name, attributes,
// events, status, links), or in an event adkctx added to adk-go's spans.
func checkNoSecret(t *testing.T, run secretRun) {
	t.Helper()
	entries := run.logs.All()
	if len(entries) == 0 {
		t.Fatal("nothing logged: the check proves nothing")
	}
	for _, e := range entries {
		fields, err := json.Marshal(e.ContextMap())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(e.Message, secretMark) || strings.Contains(string(fields), secretMark) {
			t.Errorf("log entry %q carries a secret: %s", e.Message, fields)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := run.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, set := range attributeSets(m.Data) {
				points++
				if v := set.Encoded(attribute.DefaultEncoder()); strings.Contains(v, secretMark) {
					t.Errorf("metric %s carries a secret: %s", m.Name, v)
				}
			}
		}
	}
	if points == 0 {
		t.Error("no metric recorded: the check proves nothing")
	}

	own := run.spans.Ended()
	_, global := globalTracing()
	for _, sp := range global.Ended() {
		for _, ev := range sp.Events() {
			if strings.HasPrefix(ev.Name, "adkctx.") {
				checkAttrs(t, "event "+ev.Name+" on "+sp.Name(), ev.Attributes)
			}
		}
	}
	for _, sp := range own {
		checkAttrs(t, "span "+sp.Name(), sp.Attributes())
		if strings.Contains(sp.Name()+sp.Status().Description, secretMark) {
			t.Errorf("span %s (status %q) carries a secret", sp.Name(), sp.Status().Description)
		}
		for _, ev := range sp.Events() {
			checkAttrs(t, "event "+ev.Name+" on "+sp.Name(), ev.Attributes)
		}
		for _, l := range sp.Links() {
			checkAttrs(t, "link of "+sp.Name(), l.Attributes)
		}
	}
	if len(own) == 0 {
		t.Error("no compaction span: the check proves nothing")
	}
}

func checkAttrs(t *testing.T, where string, kvs []attribute.KeyValue) {
	t.Helper()
	for _, kv := range kvs {
		if strings.Contains(kv.Value.String(), secretMark) {
			t.Errorf("%s: attribute %s carries a secret", where, kv.Key)
		}
	}
}

// attributeSets returns the attribute set of every data point of a metric.
func attributeSets(data metricdata.Aggregation) []attribute.Set {
	var out []attribute.Set
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	}
	return out
}

// compactionEntry is what the check expects of the session's compaction log entries.
type compactionEntry struct {
	Level     zapcore.Level
	Outcome   string
	ErrorKind string // primary_error_kind, or error_kind when the attempt failed
	Error     string // primary_error, or error
}

// compactionEntries reads the compaction entries that carry an error.
func compactionEntries(run secretRun) []compactionEntry {
	var out []compactionEntry
	for _, e := range run.logs.FilterMessage("compaction").All() {
		f := e.ContextMap()
		kind, msg := f["primary_error_kind"], f["primary_error"]
		if kind == nil {
			kind, msg = f["error_kind"], f["error"]
		}
		if kind == nil {
			continue
		}
		out = append(out, compactionEntry{e.Level, f["outcome"].(string), kind.(string), msg.(string)})
	}
	return out
}

// No secret reaches a log entry, a metric or a span through error text: provider errors (genai's,
// googleapi's), a database's error, a summarizer's panic, a budget refusal — each through adk-go's
// runner, wired as the README shows. Each error is logged by kind, status and code, at Warn.
func TestNoSecretsInLogsSpansAndMetrics(t *testing.T) {
	tests := []struct {
		name string
		cc   compaction.Config
		base func(t *testing.T) session.Service
		want compactionEntry // every compaction entry with an error
	}{
		{
			name: "genai error, fallback used",
			cc:   compaction.Config{Summarizer: &compaction.LLMSummarizer{Model: failingModel(providerError())}},
			want: compactionEntry{zapcore.WarnLevel, "compacted", "invalid_request", "model API 400 INVALID_ARGUMENT (reason INVALID_CONTENT)"},
		},
		{
			name: "genai error, no fallback",
			cc:   compaction.Config{Summarizer: &compaction.LLMSummarizer{Model: failingModel(providerError())}, NoFallback: true},
			want: compactionEntry{zapcore.WarnLevel, "failed", "invalid_request", "model API 400 INVALID_ARGUMENT (reason INVALID_CONTENT)"},
		},
		{
			name: "googleapi 429, fallback used",
			cc:   compaction.Config{Summarizer: &compaction.LLMSummarizer{Model: failingModel(googleAPIQuota(t))}},
			want: compactionEntry{zapcore.WarnLevel, "compacted", "quota", "HTTP 429 (*googleapi.Error)"},
		},
		{
			name: "summarizer panics with what it read",
			cc:   compaction.Config{Summarizer: quotingPanicker{}},
			want: compactionEntry{zapcore.WarnLevel, "compacted", "panic",
				"panic (string) in github.com/adkctx/adkctx/hooks_test.quotingPanicker.Summarize"},
		},
		{
			name: "database refuses the marker, quoting the row",
			cc:   compaction.Config{Summarizer: &compaction.ExtractiveSummarizer{}},
			base: refusingStore,
			want: compactionEntry{zapcore.WarnLevel, "failed", "storage", "SQLite code 1811 (*sqlite.Error)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := session.InMemoryService()
			if tt.base != nil {
				base = tt.base(t)
			}
			run := runWithSecrets(t, tt.cc, base)
			checkNoSecret(t, run)
			entries := compactionEntries(run)
			if len(entries) == 0 {
				t.Fatal("no compaction logged an error: the error path did not run")
			}
			for _, e := range entries {
				if e != tt.want {
					t.Errorf("compaction entry %+v, want %+v", e, tt.want)
				}
			}
			refusals := run.logs.FilterMessage("budget decision").FilterField(zap.String("action", "rejected")).All()
			if len(refusals) != 1 || refusals[0].Level != zapcore.WarnLevel || refusals[0].ContextMap()["error_kind"] != "budget" ||
				!strings.Contains(refusals[0].ContextMap()["error"].(string), "plus a safety margin of") {
				t.Errorf("refusal entries: %v", refusals)
			}
		})
	}
}

// refusingStore is adk-go's database session service on SQLite whose events table refuses a
// compaction marker with an error quoting the row, as a trigger or a check constraint may.
func refusingStore(t *testing.T) session.Service {
	t.Helper()
	store := sqlitetest.Open(t, sqlitetest.TempDSN(t))
	svc, db := store.Sessions, store.Pool
	if _, err := db.Exec(`CREATE TRIGGER refuse_markers BEFORE INSERT ON events
		WHEN CAST(NEW.custom_metadata AS TEXT) LIKE '%_adk_compaction%'
		BEGIN SELECT RAISE(ABORT, '` + rowSecret + `'); END`); err != nil {
		t.Fatal(err)
	}
	return svc
}
