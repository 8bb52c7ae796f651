package geminitest

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"
)

// seedBodies returns request bodies as the real genai client writes them: a tool turn with
// every part kind the project sends, a system instruction and a generation config.
func seedBodies(f *testing.F) [][]byte {
	srv := NewServer(f, Options{})
	client := srv.Client(f)
	contents := []*genai.Content{
		genai.NewContentFromText("What is the weather in Paris?", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: "Let me check.", Thought: true, ThoughtSignature: []byte{1, 2, 3}},
			{FunctionCall: &genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris", "days": 2.0}}},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			{FunctionResponse: &genai.FunctionResponse{Name: "get_weather", Response: map[string]any{"forecast": []any{"sun", "rain"}}}},
			{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("\x89PNG")}},
		}},
	}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser),
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name: "get_weather", Description: "Forecast.",
			ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		}}}},
		ToolConfig:      &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}},
		MaxOutputTokens: 512,
		ThinkingConfig:  &genai.ThinkingConfig{ThinkingBudget: genai.Ptr[int32](128)},
		SafetySettings:  []*genai.SafetySetting{{Category: genai.HarmCategoryHarassment, Threshold: genai.HarmBlockThresholdBlockNone}},
	}
	if _, err := client.Models.GenerateContent(f.Context(), "gemini-2.5-flash", contents, cfg); err != nil {
		f.Fatal(err)
	}
	if _, err := client.Models.GenerateContent(f.Context(), "gemini-2.5-flash", contents[:1], nil); err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, r := range srv.Requests() {
		out = append(out, r.Body)
	}
	return out
}

// decodeBody takes any bytes: it fails or returns a request that encodes and decodes to itself.
func FuzzDecodeBody(f *testing.F) {
	for _, b := range seedBodies(f) {
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"contents":[{"parts":[{"text":"a"}]}]} {}`))
	f.Add([]byte(`{"unknown":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		w, err := decodeBody(body)
		if err != nil {
			return
		}
		again, err := json.Marshal(w)
		if err != nil {
			t.Fatalf("decoded request does not encode: %v", err)
		}
		w2, err := decodeBody(again)
		if err != nil {
			t.Fatalf("re-encoded request %s does not decode: %v", again, err)
		}
		// Empty and absent lists encode alike (omitempty).
		if diff := cmp.Diff(w, w2, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("round trip changed the request (-first +second):\n%s", diff)
		}
	})
}

// parsePath accepts exactly "/v1beta/models/{model}:{generateContent|streamGenerateContent}".
func FuzzParsePath(f *testing.F) {
	for _, p := range []string{
		"/v1beta/models/gemini-2.5-flash:generateContent", "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
		"/v1beta/models/:generateContent", "/v1beta/models/a:b:generateContent", "/v1beta/models/a/b:generateContent",
		"/v1/models/x:generateContent", "/v1beta/models/x:countTokens", "",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		model, method, ok := parsePath(p)
		if !ok {
			return
		}
		if model == "" || (method != methodGenerate && method != methodStream) || pathPrefix+model+":"+method != p {
			t.Errorf("parsePath(%q) = %q, %q", p, model, method)
		}
		for _, r := range model {
			if r == '/' || r == ':' {
				t.Errorf("parsePath(%q): model %q has %q", p, model, r)
			}
		}
	})
}
