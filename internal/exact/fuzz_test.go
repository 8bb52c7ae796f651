package exact_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/exact"
)

// FuzzPrint: a content built twice (its maps filled in another order) has one print and is
// Equal to itself; the same content changed anywhere — one byte of its text, of an argument, of
// a long tool output's middle, of a key; a value nested one level deeper; its parts in another
// order; a number by its last bit; a list shorter — has another print and is not Equal.
func FuzzPrint(f *testing.F) {
	f.Add("--- PASS: TestService (0.01s)", "path", "internal/mod01/service.go", uint8(2), uint16(5))
	f.Add("", "", "", uint8(0), uint16(0))
	f.Add("ok", "n", "list", uint8(5), uint16(1))
	f.Add(strings.Repeat("x", 300), "content", strings.Repeat("y", 300), uint8(3), uint16(150))
	f.Fuzz(func(t *testing.T, text, key, val string, op uint8, at uint16) {
		a, b := fuzzContent(text, key, val), fuzzContent(text, key, val)
		if exact.Print(a) != exact.Print(b) || !exact.Equal(a, b) {
			t.Fatalf("one content built twice: prints %x, %x; Equal %v", exact.Print(a), exact.Print(b), exact.Equal(a, b))
		}
		changed, what := mutate(fuzzContent(text, key, val), op, int(at))
		if reflect.DeepEqual(a, changed) {
			return // nothing to change (an empty text)
		}
		if exact.Print(a) == exact.Print(changed) {
			t.Errorf("%s: one print for two contents:\n%s\n%s", what, jsonOf(a), jsonOf(changed))
		}
		if exact.Equal(a, changed) || exact.Equal(changed, a) {
			t.Errorf("%s: Equal for two contents:\n%s\n%s", what, jsonOf(a), jsonOf(changed))
		}
	})
}

// fuzzContent is a model turn: a text, a call, and a response whose output holds text in its
// middle between two edges of 64 bytes.
func fuzzContent(text, key, val string) *genai.Content {
	edge := strings.Repeat("=", 64)
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{Text: text},
		{FunctionCall: &genai.FunctionCall{Name: "f", Args: map[string]any{key: val, "n": 1.5, "list": []any{val, map[string]any{key: val}}}}},
		{FunctionResponse: &genai.FunctionResponse{Name: "f", Response: map[string]any{"output": edge + text + edge, "nested": map[string]any{"a": []any{val}}}}},
	}}
}

// mutate changes c as op says, at byte at, and says what it changed.
func mutate(c *genai.Content, op uint8, at int) (*genai.Content, string) {
	flip := func(s string) string {
		if s == "" {
			return s
		}
		b := []byte(s)
		b[at%len(b)] ^= 1 << (at % 8)
		return string(b)
	}
	args, resp := c.Parts[1].FunctionCall.Args, c.Parts[2].FunctionResponse.Response
	key := ""
	for k := range args {
		if k != "n" && k != "list" {
			key = k
		}
	}
	switch op % 8 {
	case 0:
		c.Parts[0].Text = flip(c.Parts[0].Text)
		return c, "a byte of the text"
	case 1:
		if v, ok := args[key].(string); ok {
			args[key] = flip(v)
		}
		return c, "a byte of an argument"
	case 2:
		out := resp["output"].(string)
		resp["output"] = out[:64] + flip(out[64:len(out)-64]) + out[len(out)-64:]
		return c, "a byte in the middle of the output"
	case 3:
		nested := resp["nested"].(map[string]any)
		nested["a"] = []any{nested["a"]}
		return c, "a value one level deeper"
	case 4:
		c.Parts[0], c.Parts[1] = c.Parts[1], c.Parts[0]
		return c, "the order of parts"
	case 5:
		if v, ok := args[key]; ok && key != "" {
			delete(args, key)
			args[flip(key)] = v
		}
		return c, "a byte of a key"
	case 6:
		args["n"] = math.Nextafter(1.5, 2)
		return c, "a number's last bit"
	default:
		l := args["list"].([]any)
		args["list"] = l[:len(l)-1]
		return c, "a shorter list"
	}
}
