package exact

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"

	"google.golang.org/genai"
)

// seed keys this process's prints: they are never stored nor shown, so nobody can make two
// contents that collide.
var seed = maphash.MakeSeed()

// maxDepth is the nesting the walk follows value by value; a value nested deeper is printed
// and compared through its JSON encoding (which refuses cycles).
const maxDepth = 256

// Print returns c's print (see the package doc).
func Print(c *genai.Content) uint64 {
	e := encoder{layout: fieldLayout()}
	e.content(c)
	return e.sum()
}

// Tags of the encoding: each value or field is written as a tag, then its payload.
const (
	tagNilContent = iota + 1
	tagContent
	tagParts
	tagNilPart
	tagPart
	tagPartEnd
	tagText
	tagThought
	tagSignature
	tagCall
	tagResponse
	tagBlob
	tagPartialArgs
	tagWillContinue
	tagScheduling
	tagResponseParts
	tagFileData
	tagCode
	tagCodeResult
	tagVideo
	tagMediaResolution
	tagToolCall
	tagToolResponse
	tagPartMetadata
	tagOther // a field the walk does not name: its index, then its JSON
	tagUnique
	tagNull
	tagString
	tagTrue
	tagFalse
	tagFloat64
	tagInt
	tagInt64
	tagNumber
	tagList
	tagStrings
	tagObject
	tagJSON
)

// encoder writes the encoding of a content into a keyed hash: gathered in buf, and written to h
// only when buf is full (most contents' encodings fit: a long string is written as its keyed
// digest, its every byte read once).
type encoder struct {
	buf    [256]byte
	n      int // bytes of buf not yet written to h
	h      maphash.Hash
	hashed bool // h holds some of the encoding
	layout *layout
}

// inline is the longest string gathered in buf; a longer one is written as its length and
// its keyed digest (maphash.String).
const inline = 128

func (e *encoder) flush() {
	if !e.hashed {
		e.h.SetSeed(seed)
		e.hashed = true
	}
	e.h.Write(e.buf[:e.n])
	e.n = 0
}

// sum returns the hash of what was written.
func (e *encoder) sum() uint64 {
	if !e.hashed {
		return maphash.Bytes(seed, e.buf[:e.n])
	}
	e.flush()
	return e.h.Sum64()
}

func (e *encoder) tag(t byte) {
	if e.n+1 > len(e.buf) {
		e.flush()
	}
	e.buf[e.n] = t
	e.n++
}

func (e *encoder) num(t byte, n uint64) {
	if e.n+9 > len(e.buf) {
		e.flush()
	}
	e.buf[e.n] = t
	binary.LittleEndian.PutUint64(e.buf[e.n+1:e.n+9], n)
	e.n += 9
}

func (e *encoder) str(t byte, s string) {
	e.num(t, uint64(len(s)))
	if len(s) > inline {
		e.num(t, maphash.String(seed, s))
		return
	}
	if e.n+len(s) > len(e.buf) {
		e.flush()
	}
	e.n += copy(e.buf[e.n:], s)
}

func (e *encoder) bytes(t byte, b []byte) {
	e.num(t, uint64(len(b)))
	if len(b) > inline {
		e.num(t, maphash.Bytes(seed, b))
		return
	}
	if e.n+len(b) > len(e.buf) {
		e.flush()
	}
	e.n += copy(e.buf[e.n:], b)
}

// json writes v's JSON encoding; a value JSON cannot encode makes the print unique: it then
// matches no other, and nothing is taken for it.
func (e *encoder) json(t byte, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		e.num(tagUnique, rand.Uint64())
		return
	}
	e.bytes(t, b)
}

func (e *encoder) content(c *genai.Content) {
	if c == nil {
		e.tag(tagNilContent)
		return
	}
	e.str(tagContent, c.Role)
	e.num(tagParts, uint64(len(c.Parts)))
	for _, p := range c.Parts {
		e.part(p)
	}
	e.others(e.layout.content, c)
}

func (e *encoder) part(p *genai.Part) {
	if p == nil {
		e.tag(tagNilPart)
		return
	}
	l := e.layout
	e.tag(tagPart)
	if p.Text != "" {
		e.str(tagText, p.Text)
	}
	if p.Thought {
		e.tag(tagThought)
	}
	if len(p.ThoughtSignature) > 0 {
		e.bytes(tagSignature, p.ThoughtSignature)
	}
	if fc := p.FunctionCall; fc != nil {
		e.str(tagCall, fc.ID)
		e.str(tagCall, fc.Name)
		e.object(fc.Args, true, 0)
		if len(fc.PartialArgs) > 0 {
			e.json(tagPartialArgs, fc.PartialArgs)
		}
		if fc.WillContinue != nil {
			e.json(tagWillContinue, *fc.WillContinue)
		}
		e.others(l.call, fc)
	}
	if fr := p.FunctionResponse; fr != nil {
		e.str(tagResponse, fr.ID)
		e.str(tagResponse, fr.Name)
		e.object(fr.Response, true, 0)
		if fr.WillContinue != nil {
			e.json(tagWillContinue, *fr.WillContinue)
		}
		if fr.Scheduling != "" {
			e.str(tagScheduling, string(fr.Scheduling))
		}
		if len(fr.Parts) > 0 {
			e.json(tagResponseParts, fr.Parts)
		}
		e.others(l.response, fr)
	}
	if b := p.InlineData; b != nil {
		e.str(tagBlob, b.MIMEType)
		e.str(tagBlob, b.DisplayName)
		e.bytes(tagBlob, b.Data)
		e.others(l.blob, b)
	}
	// Rarer parts, through their JSON encoding.
	if p.FileData != nil {
		e.json(tagFileData, p.FileData)
	}
	if p.ExecutableCode != nil {
		e.json(tagCode, p.ExecutableCode)
	}
	if p.CodeExecutionResult != nil {
		e.json(tagCodeResult, p.CodeExecutionResult)
	}
	if p.VideoMetadata != nil {
		e.json(tagVideo, p.VideoMetadata)
	}
	if p.MediaResolution != nil {
		e.json(tagMediaResolution, p.MediaResolution)
	}
	if p.ToolCall != nil {
		e.json(tagToolCall, p.ToolCall)
	}
	if p.ToolResponse != nil {
		e.json(tagToolResponse, p.ToolResponse)
	}
	if len(p.PartMetadata) > 0 {
		e.tag(tagPartMetadata)
		e.object(p.PartMetadata, true, 0)
	}
	e.others(l.part, p)
	e.tag(tagPartEnd)
}

// others writes the fields of *v the walk does not name (fields, see layout) that are set.
func (e *encoder) others(fields []int, v any) {
	if len(fields) > 0 {
		e.unnamed(fields, v)
	}
}

func (e *encoder) unnamed(fields []int, v any) {
	rv := reflect.ValueOf(v).Elem()
	for _, i := range fields {
		if f := rv.Field(i); !f.IsZero() {
			e.num(tagOther, uint64(i))
			e.json(tagJSON, f.Interface())
		}
	}
}

// entry is a map entry, sorted by key.
type entry struct {
	k string
	v any
}

// object writes a map, its entries in key order. A nil map is JSON's null, an empty one {},
// unless omitted is set (a field omitted when empty, such as FunctionCall.Args).
func (e *encoder) object(m map[string]any, omitted bool, depth int) {
	if m == nil && !omitted {
		e.tag(tagNull)
		return
	}
	e.num(tagObject, uint64(len(m)))
	switch len(m) {
	case 0:
		return
	case 1, 2: // most arguments and responses: no sort
		var first, second entry
		i := 0
		for k, v := range m {
			if i == 0 {
				first = entry{k, v}
			} else {
				second = entry{k, v}
			}
			i++
		}
		if len(m) == 2 && second.k < first.k {
			first, second = second, first
		}
		e.str(tagString, first.k)
		e.value(first.v, depth+1)
		if len(m) == 2 {
			e.str(tagString, second.k)
			e.value(second.v, depth+1)
		}
		return
	}
	var buf [16]entry
	entries := buf[:0]
	for k, v := range m {
		entries = append(entries, entry{k, v})
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.k, b.k) })
	for _, en := range entries {
		e.str(tagString, en.k)
		e.value(en.v, depth+1)
	}
}

// value writes a JSON-like value: the types a JSON decoder produces and the common Go ones,
// each with its own tag; any other type through its JSON encoding.
func (e *encoder) value(v any, depth int) {
	if depth > maxDepth {
		e.json(tagJSON, v)
		return
	}
	switch x := v.(type) {
	case nil:
		e.tag(tagNull)
	case string:
		e.str(tagString, x)
	case bool:
		if x {
			e.tag(tagTrue)
		} else {
			e.tag(tagFalse)
		}
	case float64:
		e.num(tagFloat64, math.Float64bits(x))
	case int:
		e.num(tagInt, uint64(x))
	case int64:
		e.num(tagInt64, uint64(x))
	case json.Number:
		e.str(tagNumber, string(x))
	case map[string]any:
		e.object(x, false, depth)
	case []any:
		if x == nil {
			e.tag(tagNull)
			return
		}
		e.num(tagList, uint64(len(x)))
		for _, y := range x {
			e.value(y, depth+1)
		}
	case []string:
		if x == nil {
			e.tag(tagNull)
			return
		}
		e.num(tagStrings, uint64(len(x)))
		for _, y := range x {
			e.str(tagString, y)
		}
	default:
		e.json(tagJSON, v)
	}
}

// Equal reports whether a and b are equal in every field the model can be sent: the same
// texts, calls, arguments and values (of the same types; floats bit for bit), parts in the same
// order. Values of other types, and fields of the rarer parts, are equal when their JSON
// encodings are.
func Equal(a, b *genai.Content) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Role != b.Role || len(a.Parts) != len(b.Parts) {
		return false
	}
	for i, p := range a.Parts {
		if !partEqual(p, b.Parts[i]) {
			return false
		}
	}
	return othersEqual(fieldLayout().content, a, b)
}

func partEqual(a, b *genai.Part) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Text != b.Text || a.Thought != b.Thought || !bytes.Equal(a.ThoughtSignature, b.ThoughtSignature) {
		return false
	}
	l := fieldLayout()
	switch x, y := a.FunctionCall, b.FunctionCall; {
	case (x == nil) != (y == nil):
		return false
	case x != nil && (x.ID != y.ID || x.Name != y.Name || !objectEqual(x.Args, y.Args, true, 0) ||
		!listEqual(x.PartialArgs, y.PartialArgs) || !ptrEqual(x.WillContinue, y.WillContinue) || !othersEqual(l.call, x, y)):
		return false
	}
	switch x, y := a.FunctionResponse, b.FunctionResponse; {
	case (x == nil) != (y == nil):
		return false
	case x != nil && (x.ID != y.ID || x.Name != y.Name || x.Scheduling != y.Scheduling || !objectEqual(x.Response, y.Response, true, 0) ||
		!ptrEqual(x.WillContinue, y.WillContinue) || !listEqual(x.Parts, y.Parts) || !othersEqual(l.response, x, y)):
		return false
	}
	switch x, y := a.InlineData, b.InlineData; {
	case (x == nil) != (y == nil):
		return false
	case x != nil && (x.MIMEType != y.MIMEType || x.DisplayName != y.DisplayName || !bytes.Equal(x.Data, y.Data) || !othersEqual(l.blob, x, y)):
		return false
	}
	return ptrEqual(a.FileData, b.FileData) && ptrEqual(a.ExecutableCode, b.ExecutableCode) &&
		ptrEqual(a.CodeExecutionResult, b.CodeExecutionResult) && ptrEqual(a.VideoMetadata, b.VideoMetadata) &&
		ptrEqual(a.MediaResolution, b.MediaResolution) && ptrEqual(a.ToolCall, b.ToolCall) && ptrEqual(a.ToolResponse, b.ToolResponse) &&
		objectEqual(a.PartMetadata, b.PartMetadata, true, 0) && othersEqual(l.part, a, b)
}

// ptrEqual reports whether *a and *b encode to the same JSON (nil only equals nil); a value
// JSON cannot encode equals nothing.
func ptrEqual[T any](a, b *T) bool {
	if a == nil || b == nil || a == b {
		return a == b
	}
	return jsonEqual(a, b)
}

// listEqual reports whether a and b, lists a field omits when empty, encode to the same JSON.
func listEqual[T any](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return jsonEqual(a, b)
}

// jsonEqual reports whether a and b encode to the same JSON; a value JSON cannot encode equals
// nothing.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// othersEqual compares the fields of *a and *b the walk does not name (see layout).
func othersEqual[T any](fields []int, a, b *T) bool {
	if len(fields) == 0 {
		return true
	}
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for _, i := range fields {
		x, y := va.Field(i), vb.Field(i)
		if x.IsZero() && y.IsZero() {
			continue
		}
		if !jsonEqual(x.Interface(), y.Interface()) {
			return false
		}
	}
	return true
}

// objectEqual compares two maps (see encoder.object for nil and omitted).
func objectEqual(a, b map[string]any, omitted bool, depth int) bool {
	if !omitted && (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	if len(a) == 0 || reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() {
		return true
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || !valueEqual(x, y, depth+1) {
			return false
		}
	}
	return true
}

// ValueEqual reports whether a and b are the same value as a content's values are compared:
// JSON values (maps, lists, strings, numbers bit for bit, booleans, nil) compared in full, any
// other value through its JSON encoding.
func ValueEqual(a, b any) bool { return valueEqual(a, b, 0) }

// valueEqual compares two values as encoder.value writes them.
func valueEqual(a, b any, depth int) bool {
	if depth > maxDepth {
		return jsonEqual(a, b)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case int:
		y, ok := b.(int)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && objectEqual(x, y, false, depth)
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valueEqual(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	case []string:
		y, ok := b.([]string)
		return ok && (x == nil) == (y == nil) && slices.Equal(x, y)
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	return jsonEqual(a, b)
}

// layout lists, for each genai type the walk reads field by field, the indices of the fields it
// does not name: none with the genai version adkctx was written for; a newer one's new fields,
// which are printed and compared through their JSON encoding.
type layout struct {
	content, part, call, response, blob []int
}

var fieldLayout = sync.OnceValue(func() *layout {
	return &layout{
		content: unnamedFields[genai.Content]("Parts", "Role"),
		part: unnamedFields[genai.Part]("MediaResolution", "CodeExecutionResult", "ExecutableCode", "FileData", "FunctionCall",
			"FunctionResponse", "InlineData", "Text", "Thought", "ThoughtSignature", "VideoMetadata", "ToolCall", "ToolResponse", "PartMetadata"),
		call:     unnamedFields[genai.FunctionCall]("ID", "Args", "Name", "PartialArgs", "WillContinue"),
		response: unnamedFields[genai.FunctionResponse]("WillContinue", "Scheduling", "Parts", "ID", "Name", "Response"),
		blob:     unnamedFields[genai.Blob]("Data", "DisplayName", "MIMEType"),
	}
})

// unnamedFields returns the indices of T's fields not in named.
func unnamedFields[T any](named ...string) []int {
	t := reflect.TypeFor[T]()
	var out []int
	for i := range t.NumField() {
		if !slices.Contains(named, t.Field(i).Name) {
			out = append(out, i)
		}
	}
	return out
}
