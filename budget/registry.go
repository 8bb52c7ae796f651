package budget

import (
	"errors"
	"strings"

	"github.com/adkctx/adkctx/internal/config"
	"github.com/adkctx/adkctx/internal/modelname"
)

// Fallback figures used for a model the registry does not know. They are
// deliberately conservative: most current models have a larger window, so an
// unknown model is compacted early rather than sent over its real limit.
const (
	fallbackContextWindow   = 128_000
	fallbackMaxOutputTokens = 8_192
)

// ModelInfo describes one model's token limits.
type ModelInfo struct {
	// Name is the model name. In a registry entry it is the name prefix the
	// entry matches ("gemini-2.5-flash"); from Lookup it is the name that was
	// looked up, as given.
	Name string
	// ContextWindow is the maximum number of input tokens. In an override, 0 keeps the
	// built-in (or fallback) figure; any other value must be at least MinContextWindow.
	ContextWindow int
	// MaxOutputTokens is the maximum number of output tokens. It is a limit of its own: a
	// provider that counts input and output apart may allow more output than input (the
	// built-in speech models do), and the budget reserves at most a tenth, and never more than
	// half, of the window for it. In an override, 0 keeps the built-in (or fallback) figure.
	MaxOutputTokens int
	// Provider is the model's provider as the OpenTelemetry GenAI semantic conventions name it
	// in gen_ai.provider.name ("gcp.gemini", "gcp.vertex_ai", "gcp.gen_ai", "openai",
	// "anthropic", "aws.bedrock", …). In an override it may be left empty; from Lookup it is
	// always set: the override's, else derived from the name (see Lookup).
	Provider string
	// Match is set by Lookup: the registry entry that matched ("" for the
	// fallback).
	Match string
	// Source is set by Lookup: where the figures come from.
	Source WindowSource
}

// MinContextWindow is the smallest ContextWindow an override may set, in tokens. Below it a
// window holds no useful request: a system instruction, the declarations of a few tools and one
// turn take about a thousand tokens, and the hard limit is 95% of what the output reserve leaves.
// No model in use has a window near it (the smallest built-in is 8,192), so a smaller figure is a
// mistake (10 for 10,000, 1000 for 1,000,000).
const MinContextWindow = 1024

// Validate reports what makes m unusable as an override (adkctx.Config.Models): an empty name,
// a negative figure, a ContextWindow below MinContextWindow. Every problem is an
// *adkctx.ConfigError naming the field; all are joined.
func (m ModelInfo) Validate() error {
	var errs []error
	if strings.TrimSpace(m.Name) == "" || modelname.Normalize(m.Name) == "" {
		var v any // an empty name is not printed
		if m.Name != "" {
			v = m.Name
		}
		errs = append(errs, config.Errorf("Name", v, "an entry needs the name of the model it describes"))
	}
	switch {
	case m.ContextWindow < 0:
		errs = append(errs, config.Errorf("ContextWindow", m.ContextWindow, "must be ≥ 0 (0 keeps the built-in figure)"))
	case m.ContextWindow > 0 && m.ContextWindow < MinContextWindow:
		errs = append(errs, config.Errorf("ContextWindow", m.ContextWindow,
			"is below %d tokens, which no request fits in (0 keeps the built-in figure)", MinContextWindow))
	}
	if m.MaxOutputTokens < 0 {
		errs = append(errs, config.Errorf("MaxOutputTokens", m.MaxOutputTokens, "must be ≥ 0 (0 keeps the built-in figure)"))
	}
	return errors.Join(errs...)
}

// WindowSource says where a looked-up model's figures come from.
type WindowSource string

// Sources of a looked-up ModelInfo.
const (
	// SourceOverride: the caller's ModelInfo (adkctx.Config.Models).
	SourceOverride WindowSource = "override"
	// SourceBuiltin: the built-in table.
	SourceBuiltin WindowSource = "builtin"
	// SourceFallback: neither knows the model; the fallback figures.
	SourceFallback WindowSource = "fallback"
)

// builtinModels returns the built-in table. Figures: see REFERENCES
// ("Budgets and counting") and the providers' model pages; windows are input
// tokens. A family entry ("gemini-2.5") catches variants without their own
// entry; longer entries win.
func builtinModels() []ModelInfo {
	return []ModelInfo{
		// Gemini 1.5 (legacy).
		{Name: "gemini-1.5-pro", ContextWindow: 2_097_152, MaxOutputTokens: 8_192},
		{Name: "gemini-1.5-flash", ContextWindow: 1_048_576, MaxOutputTokens: 8_192},
		// Gemini 2.0.
		{Name: "gemini-2.0", ContextWindow: 1_048_576, MaxOutputTokens: 8_192},
		{Name: "gemini-2.0-flash", ContextWindow: 1_048_576, MaxOutputTokens: 8_192},
		{Name: "gemini-2.0-flash-lite", ContextWindow: 1_048_576, MaxOutputTokens: 8_192},
		{Name: "gemini-2.0-pro", ContextWindow: 1_048_576, MaxOutputTokens: 8_192},
		// Gemini 2.5.
		{Name: "gemini-2.5", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		{Name: "gemini-2.5-pro", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		{Name: "gemini-2.5-flash", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		{Name: "gemini-2.5-flash-lite", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		// Gemini special-purpose variants with small windows (longer
		// prefixes than their family, so they win).
		{Name: "gemini-2.0-flash-preview-image-generation", ContextWindow: 32_000, MaxOutputTokens: 8_192},
		{Name: "gemini-2.5-flash-image", ContextWindow: 32_768, MaxOutputTokens: 32_768},
		{Name: "gemini-2.5-flash-preview-tts", ContextWindow: 8_192, MaxOutputTokens: 16_384},
		{Name: "gemini-2.5-pro-preview-tts", ContextWindow: 8_192, MaxOutputTokens: 16_384},
		{Name: "gemini-3-pro-image", ContextWindow: 65_536, MaxOutputTokens: 32_768},
		// Gemini 3.
		{Name: "gemini-3", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		{Name: "gemini-3-pro", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		{Name: "gemini-3-flash", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		{Name: "gemini-3-flash-lite", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		// Gemini aliases.
		{Name: "gemini-pro-latest", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		{Name: "gemini-flash-latest", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		{Name: "gemini-flash-lite-latest", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
		// OpenAI.
		{Name: "gpt-4o", ContextWindow: 128_000, MaxOutputTokens: 16_384},
		{Name: "gpt-4o-mini", ContextWindow: 128_000, MaxOutputTokens: 16_384},
		{Name: "gpt-4.1", ContextWindow: 1_047_576, MaxOutputTokens: 32_768},
		{Name: "gpt-4.1-mini", ContextWindow: 1_047_576, MaxOutputTokens: 32_768},
		{Name: "gpt-4.1-nano", ContextWindow: 1_047_576, MaxOutputTokens: 32_768},
		{Name: "gpt-5", ContextWindow: 272_000, MaxOutputTokens: 128_000},
		{Name: "gpt-5-mini", ContextWindow: 272_000, MaxOutputTokens: 128_000},
		{Name: "gpt-5-nano", ContextWindow: 272_000, MaxOutputTokens: 128_000},
		{Name: "gpt-5-codex", ContextWindow: 272_000, MaxOutputTokens: 128_000},
		{Name: "gpt-5.1", ContextWindow: 272_000, MaxOutputTokens: 128_000},
		{Name: "gpt-5.1-codex", ContextWindow: 272_000, MaxOutputTokens: 128_000},
		{Name: "gpt-5.2", ContextWindow: 272_000, MaxOutputTokens: 128_000},
		// Anthropic Claude 4.x (200K standard window; the 1M beta must be
		// configured as an override).
		{Name: "claude-opus-4", ContextWindow: 200_000, MaxOutputTokens: 32_000},
		{Name: "claude-opus-4-1", ContextWindow: 200_000, MaxOutputTokens: 32_000},
		{Name: "claude-opus-4-5", ContextWindow: 200_000, MaxOutputTokens: 64_000},
		{Name: "claude-sonnet-4", ContextWindow: 200_000, MaxOutputTokens: 64_000},
		{Name: "claude-sonnet-4-5", ContextWindow: 200_000, MaxOutputTokens: 64_000},
		{Name: "claude-haiku-4", ContextWindow: 200_000, MaxOutputTokens: 64_000},
		{Name: "claude-haiku-4-5", ContextWindow: 200_000, MaxOutputTokens: 64_000},
		{Name: "claude-3-7-sonnet", ContextWindow: 200_000, MaxOutputTokens: 64_000},
		{Name: "claude-3-5-haiku", ContextWindow: 200_000, MaxOutputTokens: 8_192},
	}
}

// Registry maps model names to their limits. Built-in entries cover current
// Gemini (1.5, 2.0, 2.5, 3), OpenAI (GPT-4o, GPT-4.1, GPT-5.x) and Anthropic
// (Claude 4.x) models; overrides given to NewRegistry take precedence. A
// Registry is immutable after construction and safe for concurrent use. A nil
// *Registry behaves like NewRegistry().
type Registry struct {
	overrides []ModelInfo
	builtins  []ModelInfo
}

// NewRegistry returns a registry with the built-in models plus overrides.
// Override names are normalized like looked-up names. An override whose
// ContextWindow or MaxOutputTokens is ≤ 0 inherits that figure from the
// built-in entry matching its name (or the fallback). Overrides with an empty
// name are ignored.
func NewRegistry(overrides ...ModelInfo) *Registry {
	r := &Registry{builtins: builtinModels()}
	for i := range r.builtins {
		r.builtins[i].Name = modelname.Normalize(r.builtins[i].Name)
	}
	for _, o := range overrides {
		o.Name = modelname.Normalize(o.Name)
		if o.Name == "" {
			continue
		}
		if o.ContextWindow <= 0 || o.MaxOutputTokens <= 0 {
			base, ok := longestMatch(r.builtins, o.Name)
			if !ok {
				base = ModelInfo{ContextWindow: fallbackContextWindow, MaxOutputTokens: fallbackMaxOutputTokens}
			}
			if o.ContextWindow <= 0 {
				o.ContextWindow = base.ContextWindow
			}
			if o.MaxOutputTokens <= 0 {
				o.MaxOutputTokens = base.MaxOutputTokens
			}
		}
		o.Match = ""
		r.overrides = append(r.overrides, o)
	}
	return r
}

// isBoundary reports whether c may follow a matched prefix: the entry
// "gpt-4" must not match "gpt-4o", but "gemini-2.5-flash" matches
// "gemini-2.5-flash-preview-05-20" and "claude-sonnet-4-5@20250929".
func isBoundary(c byte) bool {
	switch c {
	case '-', '@', ':', '.', '_', ' ':
		return true
	}
	return false
}

func longestMatch(entries []ModelInfo, name string) (ModelInfo, bool) {
	best, found := ModelInfo{}, false
	for _, e := range entries {
		if !strings.HasPrefix(name, e.Name) {
			continue
		}
		if len(name) > len(e.Name) && !isBoundary(name[len(e.Name)]) {
			continue
		}
		if !found || len(e.Name) > len(best.Name) {
			best, found = e, true
		}
	}
	return best, found
}

// Provider names derived from a model name (gen_ai.provider.name).
const (
	providerVertexAI = "gcp.vertex_ai"
	providerGoogle   = "gcp.gen_ai" // the Gemini API or Vertex AI: a bare model name does not tell
	providerOpenAI   = "openai"
	providerClaude   = "anthropic"
	providerOther    = "_OTHER" // nothing tells; name it with a Config.Models entry
)

// providerOf derives the provider of a model from its name: a Vertex AI resource name
// ("projects/…/publishers/…/models/…") is Vertex AI's whatever the model; otherwise the model's
// family decides, and a name of no known family is providerOther.
func providerOf(model string) string {
	raw := strings.ToLower(strings.TrimSpace(model))
	if strings.HasPrefix(raw, "projects/") || strings.HasPrefix(raw, "publishers/") || strings.Contains(raw, "/publishers/") {
		return providerVertexAI
	}
	name := modelname.Normalize(model)
	family := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) && (len(name) == len(p) || isBoundary(name[len(p)]) || strings.HasSuffix(p, "-")) {
				return true
			}
		}
		return false
	}
	switch {
	case family("gemini-", "gemma-"):
		return providerGoogle
	case family("gpt-", "chatgpt-", "o1", "o3", "o4"):
		return providerOpenAI
	case family("claude-"):
		return providerClaude
	}
	return providerOther
}

// Lookup returns the limits of model. Matching is case-insensitive, ignores
// path prefixes such as "models/" and picks the longest entry that is a
// prefix of the name ending at a separator ('-', '.', '@', ':', '_'), so
// version and date suffixes ("gemini-2.5-pro-001",
// "claude-sonnet-4-5-20250929", "gpt-5.1-codex-mini") match their family.
// Any matching override beats every built-in entry. For an unknown model
// it returns fallbackContextWindow / fallbackMaxOutputTokens and
// known=false; the caller should log that once.
//
// Provider is the matching override's when it names one; otherwise a Vertex
// AI resource name ("projects/…/publishers/…/models/…") is "gcp.vertex_ai",
// a Gemini or Gemma model "gcp.gen_ai" (the name does not tell the Gemini
// API from Vertex AI: an override naming "gcp.gemini" or "gcp.vertex_ai"
// does), GPT and o-series models "openai", Claude models "anthropic", and
// any other name "_OTHER".
func (r *Registry) Lookup(model string) (info ModelInfo, known bool) {
	if r == nil {
		r = NewRegistry()
	}
	info, known = r.lookup(model)
	if info.Provider == "" {
		info.Provider = providerOf(model)
	}
	return info, known
}

func (r *Registry) lookup(model string) (info ModelInfo, known bool) {
	name := modelname.Normalize(model)
	if name != "" {
		if e, ok := longestMatch(r.overrides, name); ok {
			return ModelInfo{Name: model, ContextWindow: e.ContextWindow, MaxOutputTokens: e.MaxOutputTokens, Provider: e.Provider,
				Match: e.Name, Source: SourceOverride}, true
		}
		if e, ok := longestMatch(r.builtins, name); ok {
			return ModelInfo{Name: model, ContextWindow: e.ContextWindow, MaxOutputTokens: e.MaxOutputTokens, Match: e.Name, Source: SourceBuiltin}, true
		}
	}
	return ModelInfo{Name: model, ContextWindow: fallbackContextWindow, MaxOutputTokens: fallbackMaxOutputTokens, Source: SourceFallback}, false
}
