package adkctx_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/config"
)

// Validate rejects model entries that cannot mean what they say, each as a *ConfigError naming
// the field and its value readably: two entries for one model (after the registry's
// normalization: case, spaces, path prefixes), a window no request fits in, negative figures,
// no name. Figures the registry itself holds stay valid, output limits above the window included
// (providers count output apart; the built-in speech models allow more output than input).
func TestValidateModels(t *testing.T) {
	type problem struct{ Field, Text string }
	for _, tc := range []struct {
		name   string
		models []budget.ModelInfo
		want   []problem
	}{
		{"valid", []budget.ModelInfo{{Name: "m", ContextWindow: 32_000, MaxOutputTokens: 4_000}, {Name: "n"}}, nil},
		{"the smallest window", []budget.ModelInfo{{Name: "m", ContextWindow: budget.MinContextWindow}}, nil},
		{"output above the window", []budget.ModelInfo{{Name: "tts", ContextWindow: 8_192, MaxOutputTokens: 16_384}}, nil},
		{"duplicate names", []budget.ModelInfo{{Name: "m", ContextWindow: 1000_000}, {Name: "m", ContextWindow: 2000_000}},
			[]problem{{"Models[1].Name", `adkctx: invalid Models[1].Name = m: names the model Models[0] names ("m"): one entry per model, or the first wins unseen`}}},
		{"duplicates after normalization", []budget.ModelInfo{{Name: "Gemini-X"}, {Name: "n"}, {Name: " models/gemini-x "}, {Name: "publishers/google/models/GEMINI-X"}},
			[]problem{
				{"Models[2].Name", `adkctx: invalid Models[2].Name =  models/gemini-x : names the model Models[0] names ("Gemini-X"): one entry per model, or the first wins unseen`},
				{"Models[3].Name", `adkctx: invalid Models[3].Name = publishers/google/models/GEMINI-X: names the model Models[0] names ("Gemini-X"): one entry per model, or the first wins unseen`},
			}},
		{"a prefix is another model", []budget.ModelInfo{{Name: "gemini-2.5-flash"}, {Name: "gemini-2.5-flash-lite"}}, nil},
		{"a tiny window", []budget.ModelInfo{{Name: "m", ContextWindow: 10}},
			[]problem{{"Models[0].ContextWindow", "adkctx: invalid Models[0].ContextWindow = 10: is below 1024 tokens, which no request fits in (0 keeps the built-in figure)"}}},
		{"just below the floor", []budget.ModelInfo{{Name: "m", ContextWindow: budget.MinContextWindow - 1}},
			[]problem{{"Models[0].ContextWindow", "adkctx: invalid Models[0].ContextWindow = 1023: is below 1024 tokens, which no request fits in (0 keeps the built-in figure)"}}},
		{"negative figures", []budget.ModelInfo{{Name: "m", ContextWindow: -5, MaxOutputTokens: -1}},
			[]problem{
				{"Models[0].ContextWindow", "adkctx: invalid Models[0].ContextWindow = -5: must be ≥ 0 (0 keeps the built-in figure)"},
				{"Models[0].MaxOutputTokens", "adkctx: invalid Models[0].MaxOutputTokens = -1: must be ≥ 0 (0 keeps the built-in figure)"},
			}},
		{"no name", []budget.ModelInfo{{ContextWindow: 1000}},
			[]problem{
				{"Models[0].Name", "adkctx: invalid Models[0].Name: an entry needs the name of the model it describes"},
				{"Models[0].ContextWindow", "adkctx: invalid Models[0].ContextWindow = 1000: is below 1024 tokens, which no request fits in (0 keeps the built-in figure)"},
			}},
		{"only a path", []budget.ModelInfo{{Name: "models/"}},
			[]problem{{"Models[0].Name", "adkctx: invalid Models[0].Name = models/: an entry needs the name of the model it describes"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := adkctx.Config{Models: tc.models}
			var got []problem
			for _, e := range config.Leaves(cfg.Validate()) {
				var ce *adkctx.ConfigError
				if !errors.As(e, &ce) {
					t.Fatalf("%v is not an *adkctx.ConfigError", e)
				}
				if strings.Contains(e.Error(), "{") {
					t.Errorf("the error prints a struct: %v", e)
				}
				got = append(got, problem{ce.Field, e.Error()})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}
