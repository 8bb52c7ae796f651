package hooks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/runner"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/sqlitetest"
)

// TestTurningAdkctxOnForAnExistingSession: a session that grew without adkctx, past the model's
// window, is first served with adkctx wired. Its first request is trimmed, with a notice, while
// the first compaction runs; every later one carries the summary. A Compact before the first
// run summarizes it first: that request already carries the summary and nothing is trimmed.
// Through adk-go's runner on SQLite.
func TestTurningAdkctxOnForAnExistingSession(t *testing.T) {
	for _, compactFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("compact first %v", compactFirst), func(t *testing.T) {
			store := sqlitetest.Open(t, sqlitetest.TempDSN(t))
			read, err := llmtest.PathTool("read_file", func(p string) map[string]any {
				return map[string]any{"content": strings.Repeat("a line of "+p+" holding value 12345\n", 60)}
			})
			if err != nil {
				t.Fatal(err)
			}
			m := &llmtest.Model{ModelName: "m16"}
			// The same agent without adkctx, then with its callbacks and the runner wired.
			start := func(h *hooks.Hooks) *runner.Runner {
				rc := runner.Config{SessionService: store.Sessions, Agent: wiringAgent(t, h, m, h != nil, read)}
				if h != nil {
					if rc, err = h.Wire(rc); err != nil {
						t.Fatal(err)
					}
				}
				return newRunner(t, rc)
			}
			send := func(r *runner.Runner, i int) {
				m.Script = append(m.Script, llmtest.Call(&genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": fmt.Sprintf("src/f%d.go", i)}}),
					llmtest.Text(fmt.Sprintf("File %d holds value 12345.", i)))
				msg := genai.NewContentFromText(fmt.Sprintf("Turn %d: read src/f%d.go, and remember code ZX%04d", i, i, i), genai.RoleUser)
				for _, err := range r.Run(context.Background(), "u", "s1", msg, agent.RunConfig{}) {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			plain := start(nil)
			for i := range 40 {
				send(plain, i)
			}
			before := len(m.Requests())
			core, logs := observer.New(zap.InfoLevel)
			h, err := hooks.New(adkctx.Config{Logger: zap.New(core), Models: []budget.ModelInfo{{Name: "m16", ContextWindow: 16_000, MaxOutputTokens: 1000}},
				Compaction: &compaction.Config{}})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close(context.Background())
			r := start(h)
			if compactFirst {
				mk, err := h.Compact(context.Background(), wiringApp, "u", "s1")
				if err != nil || mk == nil {
					t.Fatalf("Compact: %v, %v", mk, err)
				}
			}
			for i := 40; i < 43; i++ {
				send(r, i)
			}
			reqs := m.Requests()[before:]
			for k, req := range reqs {
				summarized := false
				for _, c := range req.Contents {
					summarized = summarized || compaction.IsSummary(c)
				}
				if want := compactFirst || k > 0; summarized != want {
					t.Errorf("request %d holds a summary: %v, want %v", k, summarized, want)
				}
			}
			trimmed := 0
			for _, e := range logs.FilterMessage("budget decision").All() {
				if e.ContextMap()["action"] == "trimmed" {
					trimmed++
				}
			}
			if want := map[bool]int{false: 1, true: 0}[compactFirst]; trimmed != want {
				t.Errorf("%d requests trimmed, want %d", trimmed, want)
			}
		})
	}
}
