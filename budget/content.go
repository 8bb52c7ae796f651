package budget

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"

	"google.golang.org/genai"
)

// Placeholder costs (tokens) for parts whose size the estimator cannot see
// as text. They follow the Gemini media accounting (258 tokens per 768×768
// image tile; Gemini 3 "high" media resolution is 1,120 tokens per image)
// rounded up so that an image is not under-counted.
const (
	// contentOverheadTokens is added per genai.Content (role, turn framing).
	contentOverheadTokens = 4
	// partOverheadTokens is added per genai.Part.
	partOverheadTokens = 1
	// imageTokens is the cost of one inline or referenced image.
	imageTokens = 1_290
	// mediaMinTokens is the minimum cost of inline audio, video, PDF or
	// other binary data.
	mediaMinTokens = 258
	// mediaBytesPerToken converts inline binary (non-image, non-text) data to
	// tokens: len(Data)/mediaBytesPerToken, at least mediaMinTokens.
	mediaBytesPerToken = 256
	// fileDataTokens is the cost of a non-image file reference (FileData URI;
	// its size is unknown: a PDF page is 258, a second of video 263).
	fileDataTokens = 2_580
	// toolOverheadTokens is added per tool (function declaration or built-in
	// tool such as Google Search).
	toolOverheadTokens = 8
	// maxValueDepth bounds the nesting the walk follows: encoding/json
	// decodes nothing deeper, and processors/truncate sends nothing deeper
	// than 64 levels.
	maxValueDepth = 10_000
	// maxValueNodes bounds the values walked per part, so that a cycle or
	// a shared subtree repeated exponentially stops the walk.
	maxValueNodes = 1 << 20
	// base64CharMilli is the cost of one base64 character of a []byte
	// value (encoding/json's form), before the safety factor.
	base64CharMilli = 700
	// saturatedMilli is what a part costs when it holds a value the walk
	// cannot finish (deeper than maxValueDepth, more than maxValueNodes
	// values): no window holds it, so it counts as the largest estimate
	// (math.MaxInt32 tokens) rather than as what was walked.
	saturatedMilli = math.MaxInt32 * milli
)

// EstimateContent estimates the tokens of one content: text (thoughts
// included), function calls (name + args as compact JSON), function
// responses (name + response as compact JSON, plus their media parts),
// inline data and file data (placeholder costs above), executable code and
// code execution results, plus contentOverheadTokens and partOverheadTokens
// per part. A nil content costs 0. It never calls json.Marshal and never
// mutates its input.
func EstimateContent(c *genai.Content) int {
	return milliToTokens(contentMilli(c))
}

// estimateValue estimates a JSON-like value (map[string]any, []any, strings,
// numbers, bools, nil; other types through reflection) as compact JSON.
func estimateValue(v any) int {
	var t textCounter
	t.value(v, 0)
	return milliToTokens(t.scaledTotal())
}

// EstimateRequest estimates a whole request as genai sends it: the system
// instruction and tool declarations of config (nil: none) and contents.
func EstimateRequest(contents []*genai.Content, config *genai.GenerateContentConfig) int {
	var m int64
	if config != nil {
		m += contentMilli(config.SystemInstruction)
		m += toolsMilli(config.Tools)
	}
	for _, c := range contents {
		m += contentMilli(c)
	}
	return milliToTokens(m)
}

func contentMilli(c *genai.Content) int64 {
	if c == nil {
		return 0
	}
	m := int64(contentOverheadTokens * milli)
	for _, p := range c.Parts {
		m += partMilli(p)
	}
	return m
}

func partMilli(p *genai.Part) int64 {
	if p == nil {
		return 0
	}
	m := int64(partOverheadTokens * milli)
	var t textCounter
	if p.Text != "" {
		t.add(p.Text)
		t.closeRun(stNone)
	}
	if fc := p.FunctionCall; fc != nil {
		t.add(fc.Name)
		t.closeRun(stNone)
		t.mapValue(fc.Args, 0)
		t.closeRun(stNone)
	}
	if fr := p.FunctionResponse; fr != nil {
		t.add(fr.Name)
		t.closeRun(stNone)
		t.mapValue(fr.Response, 0)
		t.closeRun(stNone)
		for _, rp := range fr.Parts {
			if rp == nil {
				continue
			}
			if rp.InlineData != nil {
				m += blobMilli(rp.InlineData.MIMEType, rp.InlineData.Data)
			}
			if rp.FileData != nil {
				m += fileMilli(rp.FileData.MIMEType)
				t.add(rp.FileData.FileURI)
				t.closeRun(stNone)
			}
		}
	}
	if b := p.InlineData; b != nil {
		m += blobMilli(b.MIMEType, b.Data)
	}
	if f := p.FileData; f != nil {
		m += fileMilli(f.MIMEType)
		t.add(f.FileURI)
		t.closeRun(stNone)
	}
	if ec := p.ExecutableCode; ec != nil {
		t.add(string(ec.Language))
		t.closeRun(stNone)
		t.add(ec.Code)
		t.closeRun(stNone)
	}
	if cr := p.CodeExecutionResult; cr != nil {
		t.add(string(cr.Outcome))
		t.closeRun(stNone)
		t.add(cr.Output)
		t.closeRun(stNone)
	}
	if tc := p.ToolCall; tc != nil {
		t.add(string(tc.ToolType))
		t.closeRun(stNone)
		t.mapValue(tc.Args, 0)
		t.closeRun(stNone)
	}
	if tr := p.ToolResponse; tr != nil {
		t.add(string(tr.ToolType))
		t.closeRun(stNone)
		t.mapValue(tr.Response, 0)
		t.closeRun(stNone)
	}
	return m + t.scaledTotal()
}

func isTextMIME(mime string) bool {
	mime = strings.ToLower(mime)
	return strings.HasPrefix(mime, "text/") || mime == "application/json" ||
		mime == "application/xml" || strings.HasSuffix(mime, "+json") || strings.HasSuffix(mime, "+xml")
}

func blobMilli(mime string, data []byte) int64 {
	switch {
	case strings.HasPrefix(strings.ToLower(mime), "image/"):
		return imageTokens * milli
	case isTextMIME(mime) && len(data) > 0:
		var t textCounter
		t.add(string(data))
		return scaled(t.finish())
	}
	n := int64(len(data) / mediaBytesPerToken)
	if n < mediaMinTokens {
		n = mediaMinTokens
	}
	return n * milli
}

func fileMilli(mime string) int64 {
	if strings.HasPrefix(strings.ToLower(mime), "image/") {
		return imageTokens * milli
	}
	return fileDataTokens * milli
}

func toolsMilli(tools []*genai.Tool) int64 {
	var m int64
	for _, tool := range tools {
		if tool == nil {
			continue
		}
		if len(tool.FunctionDeclarations) == 0 {
			// Built-in tool (search, code execution, URL context...).
			m += toolOverheadTokens * milli
			continue
		}
		for _, fd := range tool.FunctionDeclarations {
			if fd == nil {
				continue
			}
			var t textCounter
			t.add(`{"name":"`)
			t.add(fd.Name)
			t.add(`","description":"`)
			t.add(fd.Description)
			t.add(`"`)
			if fd.Parameters != nil {
				t.add(`,"parameters":`)
				t.schema(fd.Parameters, 0)
			}
			if fd.ParametersJsonSchema != nil {
				t.add(`,"parametersJsonSchema":`)
				t.value(fd.ParametersJsonSchema, 0)
			}
			if fd.Response != nil {
				t.add(`,"response":`)
				t.schema(fd.Response, 0)
			}
			if fd.ResponseJsonSchema != nil {
				t.add(`,"responseJsonSchema":`)
				t.value(fd.ResponseJsonSchema, 0)
			}
			t.add(`}`)
			m += toolOverheadTokens*milli + t.scaledTotal()
		}
	}
	return m
}

// schema feeds a genai.Schema as compact JSON (the fields that carry text).
func (t *textCounter) schema(s *genai.Schema, depth int) {
	if s == nil {
		t.add(`null`)
		return
	}
	if !t.enter(depth) {
		return
	}
	t.add(`{"type":"`)
	t.add(string(s.Type))
	t.add(`"`)
	t.stringField("title", s.Title)
	t.stringField("description", s.Description)
	t.stringField("format", s.Format)
	t.stringField("pattern", s.Pattern)
	if len(s.Enum) > 0 {
		t.add(`,"enum":`)
		t.stringList(s.Enum)
	}
	if len(s.Required) > 0 {
		t.add(`,"required":`)
		t.stringList(s.Required)
	}
	if s.Items != nil {
		t.add(`,"items":`)
		t.schema(s.Items, depth+1)
	}
	if len(s.AnyOf) > 0 {
		t.add(`,"anyOf":[`)
		for i, sub := range s.AnyOf {
			if i > 0 {
				t.add(`,`)
			}
			t.schema(sub, depth+1)
		}
		t.add(`]`)
	}
	if len(s.Properties) > 0 {
		t.add(`,"properties":{`)
		for k, sub := range s.Properties {
			t.closeRun(stNone)
			t.add(`"`)
			t.add(k)
			t.add(`":`)
			t.schema(sub, depth+1)
			t.add(`,`)
			t.closeRun(stNone)
		}
		t.add(`}`)
	}
	if s.Default != nil {
		t.add(`,"default":`)
		t.value(s.Default, depth+1)
	}
	if s.Example != nil {
		t.add(`,"example":`)
		t.value(s.Example, depth+1)
	}
	t.add(`}`)
}

// stringField feeds `,"name":"value"` when value is not empty (JSON's omitempty).
func (t *textCounter) stringField(name, value string) {
	if value == "" {
		return
	}
	t.add(`,"`)
	t.add(name)
	t.add(`":"`)
	t.add(value)
	t.add(`"`)
}

func (t *textCounter) stringList(ss []string) {
	t.add(`[`)
	for i, s := range ss {
		if i > 0 {
			t.add(`,`)
		}
		t.add(`"`)
		t.add(s)
		t.add(`"`)
	}
	t.add(`]`)
}

func (t *textCounter) mapValue(m map[string]any, depth int) {
	if m == nil {
		return
	}
	t.add(`{`)
	for k, v := range m {
		// Each entry is counted from a clean state so that the result does
		// not depend on Go's random map order.
		t.closeRun(stNone)
		t.add(`"`)
		t.add(k)
		t.add(`":`)
		t.value(v, depth+1)
		t.add(`,`)
		t.closeRun(stNone)
	}
	t.add(`}`)
}

// enter counts one more value at depth and reports whether to walk it: a
// walk past the limits saturates the counter (see saturatedMilli).
func (t *textCounter) enter(depth int) bool {
	if t.saturated {
		return false
	}
	t.nodes++
	if depth > maxValueDepth || t.nodes > maxValueNodes {
		t.saturated = true
		return false
	}
	return true
}

// jsonText feeds the content of a JSON string value. JSON escapes its
// double quotes (one more token each) and backslashes (two more: `\n` in
// the JSON text carried in a string, as processors/truncate sends values
// nested too deep, is about three tokens where the raw text counts one).
func (t *textCounter) jsonText(s string) {
	t.add(s)
	t.cost += int64(2*strings.Count(s, `\`)+strings.Count(s, `"`)) * milli
}

// digitsOf returns the number of decimal digits of |v|.
func digitsOf(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// addInt feeds an integer: a sign and its digit groups.
func (t *textCounter) addInt(neg bool, v uint64) {
	if neg {
		t.add(`-`)
	}
	if t.state != stDigit {
		t.closeRun(stDigit)
		t.state = stDigit
	}
	t.runLen += digitsOf(v)
}

func (t *textCounter) addFloat(f float64) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		t.add(`null`)
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		if f < 0 {
			t.addInt(true, uint64(-f))
		} else {
			t.addInt(false, uint64(f))
		}
	default:
		// A decimal such as 3.14159 or 1.5e-07: integer part, point and
		// up to 17 significant digits (about 4-7 tokens); count a
		// conservative 6-digit fraction.
		ip := math.Trunc(math.Abs(f))
		if ip >= 1e15 {
			ip = 1e15
		}
		t.addInt(f < 0, uint64(ip))
		t.add(`.`)
		t.addInt(false, 123456)
	}
}

// value feeds v as compact JSON. Common JSON types are handled directly;
// anything else goes through reflection. depth bounds recursion.
func (t *textCounter) value(v any, depth int) {
	if !t.enter(depth) {
		return
	}
	switch x := v.(type) {
	case nil:
		t.add(`null`)
	case string:
		t.add(`"`)
		t.jsonText(x)
		t.add(`"`)
	case bool:
		if x {
			t.add(`true`)
		} else {
			t.add(`false`)
		}
	case float64:
		t.addFloat(x)
	case float32:
		t.addFloat(float64(x))
	case int:
		t.addInt(x < 0, absInt(int64(x)))
	case int64:
		t.addInt(x < 0, absInt(x))
	case int32:
		t.addInt(x < 0, absInt(int64(x)))
	case uint64:
		t.addInt(false, x)
	case uint:
		t.addInt(false, uint64(x))
	case json.Number:
		t.add(string(x))
	case map[string]any:
		if x == nil {
			t.add(`null`)
			return
		}
		t.mapValue(x, depth)
	case []any:
		t.add(`[`)
		for i, e := range x {
			if i > 0 {
				t.add(`,`)
			}
			t.value(e, depth+1)
		}
		t.add(`]`)
	case []string:
		t.stringList(x)
	case map[string]string:
		t.add(`{`)
		for k, s := range x {
			t.closeRun(stNone)
			t.add(`"`)
			t.add(k)
			t.add(`":"`)
			t.jsonText(s)
			t.add(`",`)
			t.closeRun(stNone)
		}
		t.add(`}`)
	case []byte:
		// JSON encodes bytes as base64, which o200k splits into about
		// 0.68 tokens per character (random data; 0.64 for text).
		t.closeRun(stNone)
		t.cost += int64((len(x)+2)/3*4) * base64CharMilli
	case *genai.Schema:
		t.schema(x, depth+1)
	default:
		t.reflectValue(reflect.ValueOf(v), depth+1)
	}
}

func absInt(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// reflectValue walks arbitrary values (typed tool results, *jsonschema.Schema)
// approximately like encoding/json would print them: one case per reflect.Kind, as
// encoding/json's own encoder does.
func (t *textCounter) reflectValue(rv reflect.Value, depth int) {
	if !t.enter(depth) {
		return
	}
	if !rv.IsValid() {
		t.add(`null`)
		return
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			t.add(`null`)
			return
		}
		if e := rv.Elem(); e.CanInterface() {
			t.value(e.Interface(), depth+1)
		} else {
			t.reflectValue(e, depth+1)
		}
	case reflect.String:
		t.add(`"`)
		t.jsonText(rv.String())
		t.add(`"`)
	case reflect.Bool:
		t.value(rv.Bool(), depth)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := rv.Int()
		t.addInt(i < 0, absInt(i))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		t.addInt(false, rv.Uint())
	case reflect.Float32, reflect.Float64:
		t.addFloat(rv.Float())
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			t.add(`null`)
			return
		}
		t.add(`[`)
		for i := 0; i < rv.Len(); i++ {
			if i > 0 {
				t.add(`,`)
			}
			t.reflectValue(rv.Index(i), depth+1)
		}
		t.add(`]`)
	case reflect.Map:
		if rv.IsNil() {
			t.add(`null`)
			return
		}
		t.add(`{`)
		it := rv.MapRange()
		for it.Next() {
			t.closeRun(stNone)
			t.add(`"`)
			if k := it.Key(); k.Kind() == reflect.String {
				t.add(k.String())
			} else {
				t.reflectValue(k, depth+1)
			}
			t.add(`":`)
			t.reflectValue(it.Value(), depth+1)
			t.add(`,`)
			t.closeRun(stNone)
		}
		t.add(`}`)
	case reflect.Struct:
		t.add(`{`)
		rt := rv.Type()
		first := true
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			if !f.IsExported() {
				continue
			}
			name := f.Name
			omitEmpty := false
			if tag, ok := f.Tag.Lookup("json"); ok {
				if tag == "-" {
					continue
				}
				n, opts, _ := strings.Cut(tag, ",")
				if n != "" {
					name = n
				}
				omitEmpty = strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			}
			fv := rv.Field(i)
			if omitEmpty && fv.IsZero() {
				continue
			}
			if !first {
				t.add(`,`)
			}
			first = false
			t.add(`"`)
			t.add(name)
			t.add(`":`)
			t.reflectValue(fv, depth+1)
		}
		t.add(`}`)
	default:
		// Channels, funcs, complex numbers: encoding/json rejects them.
		t.add(`null`)
	}
}
