package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/processors/request"
)

type benchCall struct{}

func (benchCall) AppName() string      { return "app" }
func (benchCall) UserID() string       { return "user" }
func (benchCall) SessionID() string    { return "s1" }
func (benchCall) InvocationID() string { return "inv" }
func (benchCall) Branch() string       { return "" }
func (benchCall) AgentName() string    { return "coder" }

// BenchmarkBeforeModel runs the whole BeforeModel chain as a session runs it — truncation,
// normalization, instructions, the budget with its size estimates, the prefix print, the decision
// log — on a 1,000-content request that extends the previous request of the same agent by two
// contents (what adk-go sends on a new model call), and reports the cost beside json.Marshal of
// the same contents, the work any model adapter does anyway. Target: chain_vs_json ≤ 0.20.
func BenchmarkBeforeModel(b *testing.B) { benchBeforeModel(b, adkctx.Config{}, false) }

// BenchmarkBeforeModelCold is BenchmarkBeforeModel on the first request of a session: nothing
// is known of its contents yet, every one is measured.
func BenchmarkBeforeModelCold(b *testing.B) { benchBeforeModel(b, adkctx.Config{}, true) }

// BenchmarkBeforeModelTrimmed is BenchmarkBeforeModel on a model whose window the history
// passes: every request is trimmed (the same turns left out as in the previous one), the path
// where the requests are largest.
func BenchmarkBeforeModelTrimmed(b *testing.B) {
	benchBeforeModel(b, adkctx.Config{Models: []budget.ModelInfo{{Name: "gemini-2.5-flash", ContextWindow: 160_000, MaxOutputTokens: 8_192}}}, false)
}

// BenchmarkBeforeModelKeepsSent is BenchmarkBeforeModel with an LLM summarizer configured:
// every request is kept for the summarizer, its contents shared with those of the requests kept
// before it once exact.Equal confirms them. adk-go builds every request's contents afresh: each
// iteration's are a copy (a JSON round trip, as a database read gives), so every comparison
// reads every byte.
func BenchmarkBeforeModelKeepsSent(b *testing.B) {
	benchBeforeModelWith(b, adkctx.Config{}, false, true)
}

func benchBeforeModel(b *testing.B, cfg adkctx.Config, cold bool) {
	benchBeforeModelWith(b, cfg, cold, false)
}

func benchBeforeModelWith(b *testing.B, cfg adkctx.Config, cold, keepSent bool) {
	base := fixtures.ChainRequest(1000)
	base.Config.SystemInstruction.Parts = append(base.Config.SystemInstruction.Parts,
		&genai.Part{Text: strings.Repeat("Follow the repository's conventions. ", 200)})
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	e.keepSent.Store(keepSent)
	if keepSent { // as read from a database, like the copies below
		base.Contents = copyContents(b, base.Contents)
	}
	ctx := context.Background()
	// The previous request: the same history without its last two contents.
	prev := *base
	prev.Contents = base.Contents[:len(base.Contents)-2]
	if err := e.BeforeModel(ctx, benchCall{}, nil, &prev, nil); err != nil {
		b.Fatal(err)
	}
	var chain, marshal time.Duration
	b.ReportAllocs()
	for b.Loop() {
		req := &request.LLMRequest{Model: base.Model, Config: base.Config, Contents: append([]*genai.Content(nil), base.Contents...)}
		if keepSent {
			req.Contents = copyContents(b, base.Contents)
		}
		// Every iteration is the request after prev.
		st := e.state(keyOf(benchCall{}))
		st.mu.Lock()
		sm := st.stream(streamKey{"", "coder"})
		saved := *sm
		if cold {
			*sm = stream{}
		}
		st.mu.Unlock()
		start := time.Now()
		if err := e.BeforeModel(ctx, benchCall{}, nil, req, nil); err != nil {
			b.Fatal(err)
		}
		chain += time.Since(start)
		st.mu.Lock()
		*sm = saved
		st.mu.Unlock()

		start = time.Now()
		if _, err := json.Marshal(base.Contents); err != nil {
			b.Fatal(err)
		}
		marshal += time.Since(start)
	}
	b.ReportMetric(float64(chain.Nanoseconds())/float64(b.N), "chain_ns/op")
	b.ReportMetric(float64(marshal.Nanoseconds())/float64(b.N), "json_ns/op")
	b.ReportMetric(float64(chain)/float64(marshal), "chain_vs_json")
	st := e.state(keyOf(benchCall{}))
	st.mu.Lock()
	trimmed := st.stream(streamKey{"", "coder"}).turnsDrop > 0
	st.mu.Unlock()
	if trimmed != (cfg.Models != nil) {
		b.Fatalf("requests trimmed: %v, want %v", trimmed, cfg.Models != nil)
	}
	if keepSent {
		st.mu.Lock()
		kept := len(st.sent.entries)
		st.sent.stop()
		st.mu.Unlock()
		if kept == 0 {
			b.Fatal("no request kept for the summarizer")
		}
	}
}

// copyContents returns a copy of contents through JSON, as a database read gives them.
func copyContents(b *testing.B, contents []*genai.Content) []*genai.Content {
	data, err := json.Marshal(contents)
	if err != nil {
		b.Fatal(err)
	}
	var out []*genai.Content
	if err := json.Unmarshal(data, &out); err != nil {
		b.Fatal(err)
	}
	return out
}
