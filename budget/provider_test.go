package budget

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Lookup names the model's provider as the GenAI semantic conventions' gen_ai.provider.name: from
// a Vertex AI resource name, else from the model's family, else from an override; "_OTHER" when
// nothing tells.
func TestLookupProvider(t *testing.T) {
	r := NewRegistry(
		ModelInfo{Name: "gemini-2.5-flash", Provider: "gcp.vertex_ai"}, // the application knows its endpoint
		ModelInfo{Name: "my-local-llama", ContextWindow: 8_192, Provider: "ollama"},
		ModelInfo{Name: "gpt-5", ContextWindow: 400_000}, // figures only: the provider is derived
	)
	tests := map[string]string{
		"gemini-2.5-pro":        "gcp.gen_ai", // the Gemini API or Vertex AI: the name does not tell
		"models/gemini-3-flash": "gcp.gen_ai",
		"gemma-3-27b-it":        "gcp.gen_ai",
		"gemini-9-ultra":        "gcp.gen_ai", // unknown to the table, known family
		"gemini-2.5-flash":      "gcp.vertex_ai",
		"gemini-2.5-flash-001":  "gcp.vertex_ai",
		"projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro": "gcp.vertex_ai",
		"publishers/anthropic/models/claude-sonnet-4-5":                            "gcp.vertex_ai",
		"gpt-4.1-mini":          "openai",
		"gpt-5":                 "openai",
		"o3-mini":               "openai",
		"o1":                    "openai",
		"openai/gpt-4o":         "openai",
		"claude-opus-4-5":       "anthropic",
		"claude-3-5-haiku@2024": "anthropic",
		"my-local-llama-3":      "ollama",
		"offline-coder":         "_OTHER",
		"o10-thing":             "_OTHER",
		"":                      "_OTHER",
	}
	got := map[string]string{}
	for model := range tests {
		info, _ := r.Lookup(model)
		got[model] = info.Provider
	}
	if diff := cmp.Diff(tests, got); diff != "" {
		t.Errorf("Lookup(model).Provider (-want +got):\n%s", diff)
	}
}
