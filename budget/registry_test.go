package budget

import (
	"errors"
	"github.com/adkctx/adkctx/internal/config"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRegistryLookup(t *testing.T) {
	type result struct {
		Window, Output int
		Match          string
		Known          bool
	}
	gem2 := result{1_048_576, 8_192, "", true}
	gem25 := result{1_048_576, 65_536, "", true}
	with := func(r result, match string) result { r.Match = match; return r }
	r := NewRegistry()
	tests := []struct {
		model string
		want  result
	}{
		{"gemini-2.0-flash", with(gem2, "gemini-2.0-flash")},
		{"gemini-2.0-flash-001", with(gem2, "gemini-2.0-flash")},
		{"gemini-2.0-flash-lite-preview-02-05", with(gem2, "gemini-2.0-flash-lite")},
		{"models/gemini-2.0-flash", with(gem2, "gemini-2.0-flash")},
		{"gemini-2.5-flash", with(gem25, "gemini-2.5-flash")},
		{"gemini-2.5-flash-preview-05-20", with(gem25, "gemini-2.5-flash")},
		{"gemini-2.5-flash-lite", with(gem25, "gemini-2.5-flash-lite")},
		{"gemini-2.5-pro-001", with(gem25, "gemini-2.5-pro")},
		{"GEMINI-2.5-PRO", with(gem25, "gemini-2.5-pro")},
		{"publishers/google/models/gemini-2.5-pro", with(gem25, "gemini-2.5-pro")},
		{"projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash", with(gem25, "gemini-2.5-flash")},
		{"gemini-2.5-computer-use-preview-10-2025", with(gem25, "gemini-2.5")},
		{"gemini-3-pro-preview", with(gem25, "gemini-3-pro")},
		{"gemini-3-flash", with(gem25, "gemini-3-flash")},
		{"gemini-flash-latest", with(gem25, "gemini-flash-latest")},
		{"gemini-2.5-flash-image-preview", result{32_768, 32_768, "gemini-2.5-flash-image", true}},
		{"gemini-2.5-flash-preview-tts", result{8_192, 16_384, "gemini-2.5-flash-preview-tts", true}},
		{"gemini-3-pro-image-preview", result{65_536, 32_768, "gemini-3-pro-image", true}},
		{"gemini-1.5-pro-002", result{2_097_152, 8_192, "gemini-1.5-pro", true}},
		{"gpt-4.1", result{1_047_576, 32_768, "gpt-4.1", true}},
		{"gpt-4.1-mini-2025-04-14", result{1_047_576, 32_768, "gpt-4.1-mini", true}},
		{"openai/gpt-4.1-nano", result{1_047_576, 32_768, "gpt-4.1-nano", true}},
		{"gpt-4o", result{128_000, 16_384, "gpt-4o", true}},
		{"gpt-5", result{272_000, 128_000, "gpt-5", true}},
		{"gpt-5-mini", result{272_000, 128_000, "gpt-5-mini", true}},
		{"gpt-5.1-codex", result{272_000, 128_000, "gpt-5.1-codex", true}},
		{"gpt-5.1-codex-mini", result{272_000, 128_000, "gpt-5.1-codex", true}},
		{"gpt-5.2-pro", result{272_000, 128_000, "gpt-5.2", true}},
		{"claude-sonnet-4-5-20250929", result{200_000, 64_000, "claude-sonnet-4-5", true}},
		{"claude-sonnet-4-5@20250929", result{200_000, 64_000, "claude-sonnet-4-5", true}},
		{"anthropic/claude-sonnet-4-20250514", result{200_000, 64_000, "claude-sonnet-4", true}},
		{"claude-opus-4-1-20250805", result{200_000, 32_000, "claude-opus-4-1", true}},
		{"claude-opus-4-20250514", result{200_000, 32_000, "claude-opus-4", true}},
		{"claude-opus-4-5", result{200_000, 64_000, "claude-opus-4-5", true}},
		{"claude-haiku-4-5-20251001", result{200_000, 64_000, "claude-haiku-4-5", true}},
		// Unknown: fallback, known=false.
		{"gpt-4", result{fallbackContextWindow, fallbackMaxOutputTokens, "", false}},
		{"gpt-40", result{fallbackContextWindow, fallbackMaxOutputTokens, "", false}},
		{"gemini-2.50-flash", result{fallbackContextWindow, fallbackMaxOutputTokens, "", false}},
		{"my-local-llama", result{fallbackContextWindow, fallbackMaxOutputTokens, "", false}},
		{"", result{fallbackContextWindow, fallbackMaxOutputTokens, "", false}},
	}
	for _, tt := range tests {
		info, known := r.Lookup(tt.model)
		got := result{info.ContextWindow, info.MaxOutputTokens, info.Match, known}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Lookup(%q) mismatch (-want +got):\n%s", tt.model, diff)
		}
		if info.Name != tt.model {
			t.Errorf("Lookup(%q).Name = %q, want the name as given", tt.model, info.Name)
		}
	}
}

func TestRegistryOverrides(t *testing.T) {
	r := NewRegistry(
		ModelInfo{Name: "models/Gemini-2.5", ContextWindow: 32_000, MaxOutputTokens: 4_000},
		ModelInfo{Name: "claude-sonnet-4-5", ContextWindow: 1_000_000}, // 1M beta, output inherited
		ModelInfo{Name: "my-local-llama", ContextWindow: 8_192, MaxOutputTokens: 1_024},
		ModelInfo{Name: "", ContextWindow: 5},                   // ignored
		ModelInfo{Name: "unknown-family", MaxOutputTokens: 100}, // window from fallback
	)
	tests := []struct {
		model string
		want  ModelInfo
		known bool
	}{
		// An override beats a longer built-in entry.
		{"gemini-2.5-flash", ModelInfo{Name: "gemini-2.5-flash", ContextWindow: 32_000, MaxOutputTokens: 4_000, Provider: "gcp.gen_ai", Match: "gemini-2.5", Source: SourceOverride}, true},
		{"claude-sonnet-4-5-20250929", ModelInfo{Name: "claude-sonnet-4-5-20250929", ContextWindow: 1_000_000, MaxOutputTokens: 64_000, Provider: "anthropic", Match: "claude-sonnet-4-5", Source: SourceOverride}, true},
		{"my-local-llama", ModelInfo{Name: "my-local-llama", ContextWindow: 8_192, MaxOutputTokens: 1_024, Provider: "_OTHER", Match: "my-local-llama", Source: SourceOverride}, true},
		{"unknown-family-7b", ModelInfo{Name: "unknown-family-7b", ContextWindow: fallbackContextWindow, MaxOutputTokens: 100, Provider: "_OTHER", Match: "unknown-family", Source: SourceOverride}, true},
		// Built-ins still apply elsewhere.
		{"gemini-2.0-flash", ModelInfo{Name: "gemini-2.0-flash", ContextWindow: 1_048_576, MaxOutputTokens: 8_192, Provider: "gcp.gen_ai", Match: "gemini-2.0-flash", Source: SourceBuiltin}, true},
	}
	for _, tt := range tests {
		got, known := r.Lookup(tt.model)
		if diff := cmp.Diff(tt.want, got); diff != "" || known != tt.known {
			t.Errorf("Lookup(%q) known=%v mismatch (-want +got):\n%s", tt.model, known, diff)
		}
	}
	var nilReg *Registry
	if info, known := nilReg.Lookup("gemini-2.5-pro"); !known || info.ContextWindow != 1_048_576 {
		t.Errorf("nil registry Lookup = %+v, %v; want built-in", info, known)
	}
	if n := len(r.overrides) + len(r.builtins); n < 30 {
		t.Errorf("the registry has %d entries", n)
	}
}

func TestNewLimits(t *testing.T) {
	r := NewRegistry()
	tests := []struct {
		name  string
		model string
		cfg   LimitConfig
		want  Limits
	}{
		{
			// reserve = min(65,536, 10% of 1,048,576 = 104,857) = 65,536.
			name: "gemini 2.5 defaults", model: "gemini-2.5-flash",
			want: Limits{Model: "gemini-2.5-flash", Known: true, Source: SourceBuiltin, Window: 1_048_576, ReservedOutput: 65_536, Usable: 983_040, Soft: 688_128, Hard: 933_888},
		},
		{
			// reserve = min(8,192, 104,857) = 8,192.
			name: "gemini 2.0 defaults", model: "gemini-2.0-flash",
			want: Limits{Model: "gemini-2.0-flash", Known: true, Source: SourceBuiltin, Window: 1_048_576, ReservedOutput: 8_192, Usable: 1_040_384, Soft: 728_268, Hard: 988_364},
		},
		{
			// reserve = min(128,000, 27,200) = 27,200 (capped at 10%).
			name: "gpt-5 capped reserve", model: "gpt-5",
			want: Limits{Model: "gpt-5", Known: true, Source: SourceBuiltin, Window: 272_000, ReservedOutput: 27_200, Usable: 244_800, Soft: 171_360, Hard: 232_560},
		},
		{
			name: "explicit reserve and fractions", model: "claude-sonnet-4-5",
			cfg:  LimitConfig{ReservedOutputTokens: 16_000, SoftFraction: 0.5, HardFraction: 0.9},
			want: Limits{Model: "claude-sonnet-4-5", Known: true, Source: SourceBuiltin, Window: 200_000, ReservedOutput: 16_000, Usable: 184_000, Soft: 92_000, Hard: 165_600},
		},
		{
			name: "unknown model fallback", model: "mystery",
			want: Limits{Model: "mystery", Known: false, Source: SourceFallback, Window: 128_000, ReservedOutput: 8_192, Usable: 119_808, Soft: 83_865, Hard: 113_817},
		},
		{
			name: "invalid config falls back to defaults", model: "mystery",
			cfg:  LimitConfig{SoftFraction: -1, HardFraction: 7, OutputReserveFraction: 2},
			want: Limits{Model: "mystery", Known: false, Source: SourceFallback, Window: 128_000, ReservedOutput: 8_192, Usable: 119_808, Soft: 83_865, Hard: 113_817},
		},
		{
			name: "reserve capped at half the window", model: "mystery",
			cfg:  LimitConfig{ReservedOutputTokens: 1_000_000},
			want: Limits{Model: "mystery", Known: false, Source: SourceFallback, Window: 128_000, ReservedOutput: 64_000, Usable: 64_000, Soft: 44_800, Hard: 60_800},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LimitsFor(r, tt.model, tt.cfg)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if !(got.Soft <= got.Hard && got.Hard <= got.Usable && got.Usable+got.ReservedOutput == got.Window) {
				t.Errorf("inconsistent limits %+v", got)
			}
		})
	}
	if got := newLimits(ModelInfo{Name: "zero"}, false, LimitConfig{}); got.Window != fallbackContextWindow {
		t.Errorf("zero window: %+v", got)
	}
}

func TestLimitConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		cfg    LimitConfig
		fields []string // fields named in the errors, in order
	}{
		{"zero value", LimitConfig{}, nil},
		{"valid", LimitConfig{ReservedOutputTokens: 100, OutputReserveFraction: 0.2, SoftFraction: 0.5, HardFraction: 1}, nil},
		{"soft equals hard", LimitConfig{SoftFraction: 0.9, HardFraction: 0.9}, nil},
		{"negative reserve", LimitConfig{ReservedOutputTokens: -1}, []string{"ReservedOutputTokens"}},
		{"fraction above 1", LimitConfig{HardFraction: 1.5}, []string{"HardFraction"}},
		{"negative fraction", LimitConfig{OutputReserveFraction: -0.1}, []string{"OutputReserveFraction"}},
		{"soft above default hard", LimitConfig{SoftFraction: 0.99}, []string{"SoftFraction"}},
		{"several", LimitConfig{ReservedOutputTokens: -5, SoftFraction: 0.9, HardFraction: 0.5}, []string{"ReservedOutputTokens", "SoftFraction"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			var got []string
			if err != nil {
				var ce *config.Error
				if !errors.As(err, &ce) {
					t.Errorf("error %v is not a *ConfigError", err)
				}
				for _, e := range config.Leaves(err) {
					got = append(got, e.(*config.Error).Field)
				}
			}
			if diff := cmp.Diff(tt.fields, got); diff != "" {
				t.Errorf("Validate() = %v; fields mismatch (-want +got):\n%s", err, diff)
			}
		})
	}
}

// The rules an override is held to hold for the registry's own figures: every built-in entry
// (speech models whose output limit passes their window among them) would pass as an override.
func TestBuiltinsPassValidate(t *testing.T) {
	for _, m := range builtinModels() {
		if err := m.Validate(); err != nil {
			t.Errorf("built-in %s: %v", m.Name, err)
		}
	}
}
