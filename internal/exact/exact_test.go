package exact_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/exact"
)

// twins are two texts of equal length and equal first and last 100 bytes, differing only in
// their middle: what the print once took for one text.
func twins(a, b string) (string, string) {
	edge := strings.Repeat("=== RUN   TestHandler\n--- PASS: TestHandler (0.00s)\n", 3)
	return edge + a + edge, edge + b + edge
}

func text(role genai.Role, s string) *genai.Content { return genai.NewContentFromText(s, role) }

func call(name string, args map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: args}}}}
}

func response(name string, resp map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: resp}}}}
}

// Contents that differ anywhere, however little, have different prints and are not Equal: a
// byte in the middle of a long text, an argument, a response value at any depth, the nesting of
// a value, the order of parts, a value's type, where a key ends and its value begins.
func TestContentsThatDifferHaveDifferentPrints(t *testing.T) {
	pass, fail := twins("--- PASS: TestService (0.01s)\n", "--- FAIL: TestService (0.01s)\n")
	two := func(a, b string) *genai.Content {
		return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: a}, {Text: b}}}
	}
	for _, tc := range []struct {
		name string
		a, b *genai.Content
	}{
		{"a test run's middle", response("run_tests", map[string]any{"output": pass, "exit_code": 0.0}), response("run_tests", map[string]any{"output": fail, "exit_code": 0.0})},
		{"a text's middle", text(genai.RoleModel, pass), text(genai.RoleModel, fail)},
		{"an argument's middle", call("write_file", map[string]any{"content": pass}), call("write_file", map[string]any{"content": fail})},
		{"a nested value", response("r", map[string]any{"a": map[string]any{"b": []any{pass}}}), response("r", map[string]any{"a": map[string]any{"b": []any{fail}}})},
		{"a value deep down", response("r", nested(40, pass)), response("r", nested(40, fail))},
		{"a value's nesting", response("r", map[string]any{"a": []any{"x"}}), response("r", map[string]any{"a": []any{[]any{"x"}}})},
		{"the order of parts", two("a", "b"), two("b", "a")},
		{"where one part ends", two("ab", "c"), two("a", "bc")},
		{"one part or two", text(genai.RoleUser, "ab"), two("a", "b")},
		{"where a key ends", response("r", map[string]any{"ab": "c"}), response("r", map[string]any{"a": "bc"})},
		{"a key and a value swapped", response("r", map[string]any{"a": "b"}), response("r", map[string]any{"b": "a"})},
		{"a number's type", call("f", map[string]any{"n": 1.0}), call("f", map[string]any{"n": 1})},
		{"a number", call("f", map[string]any{"n": 1.0}), call("f", map[string]any{"n": 1.0000000000000002})},
		{"zero's sign", call("f", map[string]any{"n": 0.0}), call("f", map[string]any{"n": negativeZero()})},
		{"null or empty", response("r", map[string]any{"a": map[string]any(nil)}), response("r", map[string]any{"a": map[string]any{}})},
		{"an empty list or none", response("r", map[string]any{"a": []any{}}), response("r", map[string]any{"a": nil})},
		{"a string or a number", response("r", map[string]any{"a": "1"}), response("r", map[string]any{"a": 1.0})},
		{"the role", text(genai.RoleUser, "hello"), text(genai.RoleModel, "hello")},
		{"a call's name", call("read_file", nil), call("read_files", nil)},
		{"a call's id", &genai.Content{Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "a", Name: "f"}}}}, &genai.Content{Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "b", Name: "f"}}}}},
		{"a call or a response", call("f", map[string]any{"a": "b"}), &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "f", Response: map[string]any{"a": "b"}}}}}},
		{"a thought", text(genai.RoleModel, "plan"), &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "plan", Thought: true}}}},
		{"a blob's middle byte", blob([]byte(pass)), blob([]byte(fail))},
		{"a value of another type", response("r", map[string]any{"a": []int{1, 2}}), response("r", map[string]any{"a": []int{1, 3}})},
		{"a file's URI", &genai.Content{Parts: []*genai.Part{genai.NewPartFromURI("gs://a/b.png", "image/png")}}, &genai.Content{Parts: []*genai.Part{genai.NewPartFromURI("gs://a/c.png", "image/png")}}},
		{"nothing or an empty content", nil, &genai.Content{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if exact.Print(tc.a) == exact.Print(tc.b) {
				t.Errorf("equal prints for\n%s\n%s", jsonOf(tc.a), jsonOf(tc.b))
			}
			if exact.Equal(tc.a, tc.b) || exact.Equal(tc.b, tc.a) {
				t.Errorf("Equal for\n%s\n%s", jsonOf(tc.a), jsonOf(tc.b))
			}
		})
	}
}

// A value JSON cannot encode (a map that holds itself, a NaN in a field printed through JSON)
// gives a print that matches nothing, not even the same content printed again, and contents
// holding one are Equal only to themselves: nothing is taken for them, and nothing panics.
func TestValuesThatCannotBeEncoded(t *testing.T) {
	loop := func() *genai.Content {
		m := map[string]any{"a": "b"}
		m["self"] = m
		return response("r", map[string]any{"tree": m})
	}
	nan := func() *genai.Content {
		return &genai.Content{Parts: []*genai.Part{{VideoMetadata: &genai.VideoMetadata{FPS: genai.Ptr(math.NaN())}}}}
	}
	for name, c := range map[string]func() *genai.Content{"a map that holds itself": loop, "NaN": nan} {
		a, b := c(), c()
		first, again := exact.Print(a), exact.Print(a)
		if first == again || first == exact.Print(b) {
			t.Errorf("%s: a print that matches", name)
		}
		if exact.Equal(a, b) || !exact.Equal(a, a) {
			t.Errorf("%s: Equal(a, b) = %v, Equal(a, a) = %v; want false, true", name, exact.Equal(a, b), exact.Equal(a, a))
		}
	}
}

// Equal contents built apart — maps filled in another order, a JSON round trip — have equal
// prints and are Equal.
func TestEqualContentsHaveEqualPrints(t *testing.T) {
	many := func(reverse bool) map[string]any {
		m := map[string]any{}
		for i := range 40 {
			k := i
			if reverse {
				k = 39 - i
			}
			m[fmt.Sprint("key", k)] = map[string]any{"v": fmt.Sprint(k), "w": []any{float64(k), true, nil}}
		}
		return m
	}
	for _, tc := range []struct {
		name string
		a    *genai.Content
	}{
		{"a response of 40 keys", response("r", many(false))},
		{"a call of two keys", call("list_files", map[string]any{"dir": "pkg/1", "recursive": true})},
		{"text and thought", &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "plan", Thought: true, ThoughtSignature: []byte{1, 2}}, {Text: "answer"}}}},
		{"an empty content", &genai.Content{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b genai.Content
			if err := json.Unmarshal([]byte(jsonOf(tc.a)), &b); err != nil {
				t.Fatal(err)
			}
			if exact.Print(tc.a) != exact.Print(&b) || !exact.Equal(tc.a, &b) {
				t.Errorf("a JSON round trip of %s has another print or is not Equal", jsonOf(tc.a))
			}
		})
	}
	a, b := response("r", many(false)), response("r", many(true))
	if exact.Print(a) != exact.Print(b) || !exact.Equal(a, b) {
		t.Error("one map filled in two orders has two prints or is not Equal")
	}
}

// Every field of a part reaches the print and the comparison: a part with any one field set
// differs from the part without it and from a part with another field set. The fields are
// found by reflection, so a genai upgrade that adds one is covered (the print reads such a field
// through its JSON encoding).
func TestEveryFieldOfAPartCounts(t *testing.T) {
	variants, copies := partVariants(), partVariants()
	if len(variants) < 30 {
		t.Fatalf("%d variants: the walk missed fields", len(variants))
	}
	prints := map[uint64]string{}
	for name, p := range variants {
		c := &genai.Content{Parts: []*genai.Part{p}}
		if other, ok := prints[exact.Print(c)]; ok {
			t.Errorf("%q and %q have one print", name, other)
		}
		prints[exact.Print(c)] = name
		for other, q := range variants {
			if other != name && exact.Equal(c, &genai.Content{Parts: []*genai.Part{q}}) {
				t.Errorf("%q and %q are Equal", name, other)
			}
		}
		same := &genai.Content{Parts: []*genai.Part{copies[name]}}
		if !exact.Equal(c, same) || exact.Print(c) != exact.Print(same) {
			t.Errorf("%q is not Equal to its copy, or has another print", name)
		}
	}
}

// partVariants returns parts with one field set each (a field of a struct a part points to, for
// those), by the field's name, and the empty part ("").
func partVariants() map[string]*genai.Part {
	variants := map[string]*genai.Part{"": {}}
	v := reflect.ValueOf(genai.Part{})
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct {
			// Each field of the pointed-to struct, alone.
			for j := range f.Type().Elem().NumField() {
				p := &genai.Part{}
				sub := reflect.New(f.Type().Elem())
				if !fill(sub.Elem().Field(j)) {
					continue
				}
				reflect.ValueOf(p).Elem().Field(i).Set(sub)
				variants[name+"."+f.Type().Elem().Field(j).Name] = p
			}
			continue
		}
		p := &genai.Part{}
		if fill(reflect.ValueOf(p).Elem().Field(i)) {
			variants[name] = p
		}
	}
	return variants
}

// fill sets v to a value other than its zero; false when it cannot.
func fill(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(3)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		if !fill(s.Index(0)) {
			return false
		}
		v.Set(s)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return false
		}
		m := reflect.MakeMap(v.Type())
		e := reflect.New(v.Type().Elem()).Elem()
		if v.Type().Elem().Kind() == reflect.Interface {
			e.Set(reflect.ValueOf("v"))
		} else if !fill(e) {
			return false
		}
		m.SetMapIndex(reflect.ValueOf("k"), e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if p.Elem().Kind() == reflect.Struct {
			for i := range p.Elem().NumField() {
				if fill(p.Elem().Field(i)) {
					break
				}
			}
		} else if !fill(p.Elem()) {
			return false
		}
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if fill(v.Field(i)) {
				return true
			}
		}
		return false
	default:
		return false
	}
	return true
}

func nested(depth int, leaf string) map[string]any {
	var v any = leaf
	for i := range depth {
		if i%2 == 0 {
			v = []any{v}
		} else {
			v = map[string]any{"k": v}
		}
	}
	return map[string]any{"root": v}
}

func blob(data []byte) *genai.Content {
	return &genai.Content{Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "application/octet-stream", Data: data}}}}
}

func negativeZero() float64 {
	z := 0.0
	return -z
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func TestValueEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b any
		want bool
	}{
		{nil, nil, true},
		{map[string]any{"a": []any{1.0, "x", nil, true}}, map[string]any{"a": []any{1.0, "x", nil, true}}, true},
		{map[string]any{"a": 1.0}, map[string]any{"b": 1.0}, false},
		{map[string]any{"a": 0.0}, map[string]any{"a": math.Copysign(0, -1)}, false}, // bit for bit
		{[]any{1.0}, []any{1.0, 2.0}, false},
		{[]any{}, []any(nil), false},
		{"x", []byte("x"), false},
		{json.RawMessage(`{}`), json.RawMessage(`{}`), true},
	} {
		if got := exact.ValueEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("ValueEqual(%#v, %#v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
