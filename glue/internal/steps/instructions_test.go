package steps_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/processors/request"
)

func instrTexts(c *genai.Content) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, p := range c.Parts {
		out = append(out, p.Text)
	}
	return out
}

func TestInjectInstructions(t *testing.T) {
	const merged = "# merged {name} {braces}"
	t.Run("empty text is a no-op", func(t *testing.T) {
		req := &request.LLMRequest{}
		steps.InjectInstructions(req, "")
		if req.Config != nil {
			t.Errorf("Config = %+v, want nil", req.Config)
		}
		steps.InjectInstructions(nil, merged) // must not panic
	})
	t.Run("no config", func(t *testing.T) {
		req := &request.LLMRequest{}
		steps.InjectInstructions(req, merged)
		want := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: merged}}}
		if diff := cmp.Diff(want, req.Config.SystemInstruction); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("config without system instruction keeps its fields", func(t *testing.T) {
		temp := float32(0.2)
		orig := &genai.GenerateContentConfig{Temperature: &temp}
		req := &request.LLMRequest{Config: orig}
		steps.InjectInstructions(req, merged)
		if req.Config.Temperature != &temp || orig.SystemInstruction != nil {
			t.Errorf("config fields lost or original mutated: %+v / %+v", req.Config, orig)
		}
		if diff := cmp.Diff([]string{merged}, instrTexts(req.Config.SystemInstruction)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("many parts", func(t *testing.T) {
		var parts []*genai.Part
		var want []string
		for _, s := range []string{"a", "b", "c", "d", "e"} {
			parts = append(parts, &genai.Part{Text: s})
			want = append(want, s)
		}
		shared := &genai.Content{Role: "user", Parts: parts}
		req := &request.LLMRequest{Config: &genai.GenerateContentConfig{SystemInstruction: shared}}
		steps.InjectInstructions(req, merged)
		if diff := cmp.Diff(append(want, merged), instrTexts(req.Config.SystemInstruction)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, instrTexts(shared)); diff != "" {
			t.Errorf("shared content changed (-want +got):\n%s", diff)
		}
	})
	t.Run("appends after the agent's parts without touching shared values", func(t *testing.T) {
		own := &genai.Part{Text: "agent instruction"}
		parts := make([]*genai.Part, 2, 8) // spare capacity: an in-place append would write into it
		parts[0], parts[1] = own, &genai.Part{Text: "second"}
		shared := &genai.Content{Role: "user", Parts: parts}
		cfg := &genai.GenerateContentConfig{SystemInstruction: shared}
		req := &request.LLMRequest{Config: cfg}
		steps.InjectInstructions(req, merged)
		if diff := cmp.Diff([]string{"agent instruction", "second", merged}, instrTexts(req.Config.SystemInstruction)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if req.Config.SystemInstruction.Role != "user" || req.Config.SystemInstruction.Parts[0] != own {
			t.Error("role or the agent's own part changed")
		}
		if len(shared.Parts) != 2 || parts[:3][2] != nil || cfg.SystemInstruction != shared || own.Text != "agent instruction" {
			t.Error("the shared content, its parts array or the original config was mutated")
		}
		// A second request built from the same shared config gets exactly one copy.
		req2 := &request.LLMRequest{Config: cfg}
		steps.InjectInstructions(req2, merged)
		if got := len(req2.Config.SystemInstruction.Parts); got != 3 {
			t.Errorf("second request parts = %d, want 3", got)
		}
	})
}

// BenchmarkInjectInstructions compares one injection of a cached 32 KiB
// text with a plain copy of that text (what re-reading or cloning it would
// cost). Reported: inject_ns/op, copy_ns/op and beyond_copy_ns/op (inject
// minus copy; negative when injecting is cheaper than copying).
func BenchmarkInjectInstructions(b *testing.B) {
	text := strings.Repeat("rule {x}\n", 32768/9)
	base := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("agent instruction", genai.RoleUser)}
	var sink string
	b.ReportAllocs()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		sink = strings.Clone(text)
	}
	copyNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	start = time.Now()
	for i := 0; i < b.N; i++ {
		req := request.LLMRequest{Config: base}
		steps.InjectInstructions(&req, text)
		if len(req.Config.SystemInstruction.Parts) != 2 {
			b.Fatal("not injected")
		}
	}
	injectNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	_ = sink
	b.ReportMetric(injectNs, "inject_ns/op")
	b.ReportMetric(copyNs, "copy_ns/op")
	b.ReportMetric(injectNs-copyNs, "beyond_copy_ns/op")
}

func ExampleInjectInstructions() {
	own := genai.NewContentFromText("You are a helpful agent.", genai.RoleUser)
	req := &request.LLMRequest{Config: &genai.GenerateContentConfig{SystemInstruction: own}}
	steps.InjectInstructions(req, "# Instructions from AGENTS.md files\nUse {braces} freely.")
	for _, p := range req.Config.SystemInstruction.Parts {
		fmt.Printf("%q\n", p.Text)
	}
	fmt.Println("agent's content untouched:", len(own.Parts) == 1)
	// Output:
	// "You are a helpful agent."
	// "# Instructions from AGENTS.md files\nUse {braces} freely."
	// agent's content untouched: true
}
