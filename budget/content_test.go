package budget

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

func TestEstimateNilSafety(t *testing.T) {
	tests := []struct {
		name string
		got  int
	}{
		{"nil content", EstimateContent(nil)},
		{"nil contents", EstimateRequest(nil, nil)},
		{"nil entries", EstimateRequest([]*genai.Content{nil, nil}, nil)},
		{"nil request", EstimateRequest(nil, nil)},
		{"empty config", EstimateRequest(nil, &genai.GenerateContentConfig{})},
		{"nil config parts", EstimateRequest(nil, &genai.GenerateContentConfig{Tools: []*genai.Tool{nil, {FunctionDeclarations: []*genai.FunctionDeclaration{nil}}}})},
		{"nil part", estimatePart(nil)},
		{"nil value", estimateValue(nil)},
	}
	for _, tt := range tests {
		if tt.got < 0 || tt.got > 20 {
			t.Errorf("%s: %d, want small non-negative", tt.name, tt.got)
		}
	}
	// Parts with every field nil or empty must not panic.
	c := &genai.Content{Role: "user", Parts: []*genai.Part{nil, {}, {FunctionCall: &genai.FunctionCall{}},
		{FunctionResponse: &genai.FunctionResponse{Parts: []*genai.FunctionResponsePart{nil, {}}}},
		{InlineData: &genai.Blob{}}, {FileData: &genai.FileData{}}, {ExecutableCode: &genai.ExecutableCode{}},
		{CodeExecutionResult: &genai.CodeExecutionResult{}}, {ToolCall: &genai.ToolCall{}}, {ToolResponse: &genai.ToolResponse{}}}}
	if got := EstimateContent(c); got <= 0 {
		t.Errorf("EstimateContent(empty parts) = %d, want > 0 (overheads)", got)
	}
}

// jsonEstimate is the reference for the JSON walk: EstimateText of the
// compact encoding/json output.
func jsonEstimate(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return EstimateText(string(b))
}

type typedResult struct {
	Path    string   `json:"path"`
	Lines   int      `json:"lines"`
	Matches []string `json:"matches,omitempty"`
	Skipped bool     `json:"-"`
	hidden  string
}

// The walk over JSON-like values must track EstimateText of the real JSON.
func TestEstimateValueTracksJSON(t *testing.T) {
	var apiDoc map[string]any
	if err := json.Unmarshal([]byte(readSample(t, "api.json")), &apiDoc); err != nil {
		t.Fatal(err)
	}
	values := map[string]any{
		"api sample (unmarshalled)": apiDoc,
		"flat":                      map[string]any{"status": "ok", "count": 42.0, "ratio": 0.125, "tags": []any{"a", "b"}, "none": nil, "ok": true},
		"typed struct":              typedResult{Path: "internal/ratelimit/limiter.go", Lines: 184, Matches: []string{"func (l *Limiter) Allow", "func (l *Limiter) Wait"}, hidden: "x"},
		"pointer":                   &typedResult{Path: "a.go"},
		"nested ints":               map[string]any{"a": []any{1, int64(-20), uint(300), int32(7)}, "m": map[string]string{"k": "v"}},
		"long output":               map[string]any{"output": readSample(t, "go_test.txt"), "exit_code": 1.0},
	}
	for name, v := range values {
		got, want := estimateValue(v), jsonEstimate(t, v)
		if r := float64(got) / float64(want); r < 0.9 || r > 1.2 {
			t.Errorf("%s: estimateValue = %d, EstimateText(json) = %d (ratio %.2f), want within [0.9, 1.2]", name, got, want, r)
		}
	}
}

// A []byte is sent as base64: counted at or above what o200k makes of it.
func TestEstimateValueBytes(t *testing.T) {
	random := make([]byte, 40_960)
	for i := range random {
		random[i] = byte(i*131 + i/256 + i*i)
	}
	for name, b := range map[string][]byte{"random": random, "text": []byte(readSample(t, "go_test.txt"))} {
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		real, err := realTokenizer(t).Count(string(js))
		if err != nil {
			t.Fatal(err)
		}
		if got := estimateValue(b); got < real || got > real*13/10 {
			t.Errorf("%s: estimateValue = %d, o200k of its base64 JSON = %d, want within [1, 1.3]×", name, got, real)
		}
	}
}

// nested returns {"a": {"a": ... leaf}} depth levels deep.
func nested(depth int, leaf any) any {
	v := leaf
	for range depth {
		v = map[string]any{"a": v}
	}
	return v
}

// A value the walk cannot finish is never counted below its real size: deep
// values are walked to the end, cycles and exponentially shared values
// saturate the estimate.
func TestEstimateValueUnwalkable(t *testing.T) {
	cyclic := map[string]any{"name": "loop"}
	cyclic["a"] = cyclic
	cyclic["b"] = cyclic
	l := []any{nil}
	l[0] = l
	// 2^40 paths through 40 levels of two references to the same list.
	shared := []any{"leaf"}
	for range 40 {
		shared = []any{shared, shared}
	}
	deepOutput := nested(150, strings.Repeat("deep line of output\n", 210_000))
	for _, tc := range []struct {
		name string
		v    any
		min  int
	}{
		{"150 levels deep, 4.2 MB", deepOutput, jsonEstimate(t, deepOutput)},
		{"20,000 levels deep", nested(20_000, "x"), math.MaxInt32},
		{"cyclic map", cyclic, math.MaxInt32},
		{"cyclic list", map[string]any{"l": l}, math.MaxInt32},
		{"exponentially shared", shared, math.MaxInt32},
	} {
		if got := estimateValue(tc.v); got < tc.min {
			t.Errorf("%s: estimateValue = %d, want at least %d", tc.name, got, tc.min)
		}
		part := genai.NewPartFromFunctionResponse("tool", map[string]any{"result": tc.v})
		if got := estimatePart(part); got < tc.min {
			t.Errorf("%s: estimatePart = %d, want at least %d", tc.name, got, tc.min)
		}
	}
}

func TestEstimateContentParts(t *testing.T) {
	text := readSample(t, "prose_en.txt")
	args := map[string]any{"path": "README.md", "max_lines": 200.0}
	resp := map[string]any{"output": readSample(t, "ls_la.txt")}
	tests := []struct {
		name     string
		part     *genai.Part
		min, max int
	}{
		{"text", genai.NewPartFromText(text), EstimateText(text), EstimateText(text) + 4},
		{"thought text", &genai.Part{Text: text, Thought: true}, EstimateText(text), EstimateText(text) + 4},
		{"function call", genai.NewPartFromFunctionCall("read_file", args), 8, 30},
		{"function response", genai.NewPartFromFunctionResponse("list_dir", resp), jsonEstimate(t, resp), jsonEstimate(t, resp) * 12 / 10},
		{"image inline", genai.NewPartFromBytes(make([]byte, 200_000), "image/png"), imageTokens, imageTokens + 4},
		{"image file", genai.NewPartFromURI("gs://b/cat.jpg", "image/jpeg"), imageTokens, imageTokens + 20},
		{"pdf file", genai.NewPartFromURI("gs://b/report.pdf", "application/pdf"), fileDataTokens, fileDataTokens + 20},
		{"small audio", genai.NewPartFromBytes(make([]byte, 1000), "audio/wav"), mediaMinTokens, mediaMinTokens + 4},
		{"large video", genai.NewPartFromBytes(make([]byte, 1<<20), "video/mp4"), (1 << 20) / mediaBytesPerToken, (1<<20)/mediaBytesPerToken + 4},
		{"inline text", genai.NewPartFromBytes([]byte(text), "text/plain"), EstimateText(text), EstimateText(text) + 4},
		{"executable code", genai.NewPartFromExecutableCode("print('hi')", genai.LanguagePython), 4, 12},
		{"code result", genai.NewPartFromCodeExecutionResult(genai.OutcomeOK, "hi\n"), 3, 12},
		{"function response with media", &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: "shot",
			Parts: []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: []byte{1}}}}}}, imageTokens, imageTokens + 10},
	}
	for _, tt := range tests {
		got := estimatePart(tt.part)
		if got < tt.min || got > tt.max {
			t.Errorf("%s: estimatePart = %d, want in [%d, %d]", tt.name, got, tt.min, tt.max)
		}
		c := &genai.Content{Role: "user", Parts: []*genai.Part{tt.part}}
		if cg := EstimateContent(c); cg < got+contentOverheadTokens-1 || cg > got+contentOverheadTokens+1 {
			t.Errorf("%s: EstimateContent = %d, estimatePart = %d, want part + %d", tt.name, cg, got, contentOverheadTokens)
		}
	}
}

func TestEstimateDoesNotMutate(t *testing.T) {
	args := map[string]any{"q": "x", "n": []any{1.0, map[string]any{"deep": "y"}}}
	c := genai.NewContentFromParts([]*genai.Part{genai.NewPartFromFunctionCall("f", args), genai.NewPartFromText("t")}, "model")
	before := fmt.Sprintf("%#v", args)
	beforeParts := len(c.Parts)
	_ = EstimateContent(c)
	if diff := cmp.Diff(before, fmt.Sprintf("%#v", args)); diff != "" || len(c.Parts) != beforeParts {
		t.Errorf("input mutated (-before +after):\n%s", diff)
	}
}

func sampleTools() []*genai.Tool {
	return []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
		{
			Name:        "read_file",
			Description: "Read a file from the workspace and return its content with line numbers.",
			Parameters: &genai.Schema{Type: genai.TypeObject, Required: []string{"path"}, Properties: map[string]*genai.Schema{
				"path":      {Type: genai.TypeString, Description: "Path relative to the workspace root."},
				"max_lines": {Type: genai.TypeInteger, Description: "Maximum number of lines to return."},
				"mode":      {Type: genai.TypeString, Enum: []string{"head", "tail", "all"}},
				"ranges":    {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}},
			}},
		},
		{
			Name:                 "run_shell",
			Description:          "Run a shell command.",
			ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"cmd": map[string]any{"type": "string"}}},
		},
	}}, {GoogleSearch: &genai.GoogleSearch{}}}
}

func TestEstimateRequestComponents(t *testing.T) {
	sys := genai.NewContentFromText(readSample(t, "prose_en.txt"), "user")
	contents := []*genai.Content{
		genai.NewContentFromText("list the files", "user"),
		genai.NewContentFromParts([]*genai.Part{genai.NewPartFromFunctionCall("run_shell", map[string]any{"cmd": "ls -la"})}, "model"),
		genai.NewContentFromParts([]*genai.Part{genai.NewPartFromFunctionResponse("run_shell", map[string]any{"output": readSample(t, "ls_la.txt")})}, "user"),
	}
	tools := sampleTools()
	got := EstimateRequest(contents, &genai.GenerateContentConfig{SystemInstruction: sys, Tools: tools})
	parts := EstimateContent(sys) + estimateTools(tools) + EstimateRequest(contents, nil)
	if d := got - parts; d < -3 || d > 3 {
		t.Errorf("EstimateRequest = %d, sum of components = %d", got, parts)
	}
	toolJSON := 0
	for _, fd := range tools[0].FunctionDeclarations {
		toolJSON += jsonEstimate(t, fd)
	}
	if et := estimateTools(tools); et < toolJSON || et > toolJSON*3/2+3*toolOverheadTokens {
		t.Errorf("estimateTools = %d, EstimateText(json of declarations) = %d", et, toolJSON)
	}
}

func TestEstimateContentAllocFree(t *testing.T) {
	c := genai.NewContentFromParts([]*genai.Part{
		genai.NewPartFromText(readSample(t, "prose_en.txt")),
		genai.NewPartFromFunctionCall("f", map[string]any{"a": "b", "n": 3.0, "l": []any{"x", true, nil}}),
		genai.NewPartFromFunctionResponse("f", map[string]any{"output": strings.Repeat("line\n", 100)}),
	}, "model")
	if n := testing.AllocsPerRun(20, func() { _ = EstimateContent(c) }); n != 0 {
		t.Errorf("EstimateContent allocates %.1f times per call, want 0", n)
	}
}

// Go randomizes map order; the estimate must not depend on it.
func TestEstimateDeterministic(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(readSample(t, "api.json")), &doc); err != nil {
		t.Fatal(err)
	}
	doc["strings"] = map[string]string{"a": "x y", "b": "1,2", "c": "{}", "d": "Zz"}
	doc["typed"] = map[string]int{"one": 1, "two": 2, "three": 3}
	c := genai.NewContentFromFunctionResponse("get_orders", doc, genai.RoleUser)
	contents, config := []*genai.Content{c}, &genai.GenerateContentConfig{Tools: sampleTools()}
	first := EstimateRequest(contents, config)
	for i := range 50 {
		if got := EstimateRequest(contents, config); got != first {
			t.Fatalf("run %d: %d, first run %d", i, got, first)
		}
	}
}

// estimatePart and estimateTools are the figures of one part (without the per-content overhead)
// and of a config's tool declarations, as the tests compare them.
func estimatePart(p *genai.Part) int        { return milliToTokens(partMilli(p)) }
func estimateTools(tools []*genai.Tool) int { return milliToTokens(toolsMilli(tools)) }
