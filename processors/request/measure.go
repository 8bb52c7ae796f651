package request

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// Measure is what the steps know of one content: its fingerprint and its estimated tokens
// (budget.EstimateContent).
//
// The fingerprint is cheap: a hash of the content's role, part kinds, names, ids, text lengths
// with their first and last bytes, and the shape of function arguments and responses (keys,
// value kinds, string lengths). adk-go rebuilds every content of a request from the same
// events, so equal fingerprints at the same position of two consecutive requests of one stream
// are the same content: its size is not estimated again, and the longest run of them is what a
// provider's prompt cache can serve. Two different contents with equal fingerprints at the same
// position (same length, same first and last 32 bytes of every text, same keys) would share a
// size estimate: that of a content of the same shape.
type Measure struct {
	Print  uint64
	Tokens int
}

// Measures holds the measures of a request's contents by content. A step never changes a
// content in place: it replaces what it changes with a new content, which has no measure yet
// and is measured when asked. So a measure recorded for a content stays true for it, and one
// Measures serves a request through every step. Check verifies that invariant. Use NewMeasures.
type Measures struct {
	// base are the contents the request came in with and their measures (Tokens < 0: not
	// estimated yet), looked up by position first: most steps change nothing.
	base  []*genai.Content
	baseM []Measure
	// of holds every other measured content, and base's once a content was asked for by itself.
	of map[*genai.Content]Measure
	// exact, when checking, is a hash of each measured content's every byte (Check).
	exact map[*genai.Content]uint64
	// last is the contents Prints was last asked for, and its answer.
	last       []*genai.Content
	lastPrints []uint64
	lastSizes  []int
}

// NewMeasures returns the Measures of a request that came in with contents, whose measures are
// known (base, aligned with contents; Tokens < 0: estimated when asked; nil: none known). With
// check, it records an exact hash of every content it measures, for Check (tests: it costs a
// JSON encoding each).
func NewMeasures(contents []*genai.Content, base []Measure, check bool) *Measures {
	m := &Measures{}
	if len(base) == len(contents) {
		m.base, m.baseM = contents, base
	}
	if check {
		m.exact = make(map[*genai.Content]uint64, len(contents))
		for _, c := range m.base {
			m.exact[c] = exactHash(c)
		}
	}
	return m
}

// Of returns the measure of c, measuring what is not known of it yet.
func (m *Measures) Of(c *genai.Content) Measure {
	if m.of == nil {
		m.of = make(map[*genai.Content]Measure, len(m.base))
		for i, b := range m.base {
			m.of[b] = m.baseM[i]
		}
	}
	ms, ok := m.of[c]
	switch {
	case !ok:
		ms = Measure{Print: Fingerprint(c), Tokens: budget.EstimateContent(c)}
		if m.exact != nil {
			m.exact[c] = exactHash(c)
		}
	case ms.Tokens < 0:
		ms.Tokens = budget.EstimateContent(c)
	default:
		return ms
	}
	m.of[c] = ms
	return ms
}

// Check reports a content among contents changed in place since it was measured (its measure
// then lies). It needs a Measures made with check.
func (m *Measures) Check(contents []*genai.Content) error {
	if m.exact == nil {
		return nil
	}
	for i, c := range contents {
		if h, ok := m.exact[c]; ok && h != exactHash(c) {
			return fmt.Errorf("request: content %d was changed in place after it was measured", i)
		}
		if ms, ok := m.known(i, c); ok && ms.Print != Fingerprint(c) {
			return fmt.Errorf("request: content %d has another fingerprint than its measure", i)
		}
	}
	return nil
}

// known returns the measure of c, at position i of its request, when it was measured.
func (m *Measures) known(i int, c *genai.Content) (Measure, bool) {
	if i < len(m.base) && m.base[i] == c {
		return m.baseM[i], true
	}
	ms, ok := m.of[c]
	return ms, ok
}

// Prints returns the fingerprints of contents and their estimated tokens (shared: do not
// modify them).
func (m *Measures) Prints(contents []*genai.Content) (prints []uint64, sizes []int) {
	if len(contents) > 0 && len(contents) == len(m.last) && &contents[0] == &m.last[0] {
		return m.lastPrints, m.lastSizes
	}
	prints, sizes = make([]uint64, len(contents)), make([]int, len(contents))
	for i, c := range contents {
		if i < len(m.base) && m.base[i] == c {
			if m.baseM[i].Tokens < 0 {
				m.baseM[i].Tokens = budget.EstimateContent(c)
				if m.of != nil {
					m.of[c] = m.baseM[i]
				}
			}
			prints[i], sizes[i] = m.baseM[i].Print, m.baseM[i].Tokens
			continue
		}
		ms := m.Of(c)
		prints[i], sizes[i] = ms.Print, ms.Tokens
	}
	m.last, m.lastPrints, m.lastSizes = contents, prints, sizes
	return prints, sizes
}

var printSeed = maphash.MakeSeed()

// exactHash hashes every byte of c's JSON encoding.
func exactHash(c *genai.Content) uint64 {
	b, err := json.Marshal(c)
	if err != nil {
		return 0
	}
	return maphash.Bytes(printSeed, b)
}

// Fingerprint returns the cheap fingerprint of c (see Measure).
func Fingerprint(c *genai.Content) uint64 {
	var h maphash.Hash
	h.SetSeed(printSeed)
	writeContent(&h, c)
	return h.Sum64()
}

func writeContent(h *maphash.Hash, c *genai.Content) {
	if c == nil {
		return
	}
	h.WriteString(c.Role)
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		writeText(h, p.Text)
		if p.Thought {
			h.WriteByte(1)
		}
		if fc := p.FunctionCall; fc != nil {
			h.WriteString("call:" + fc.Name + ":" + fc.ID)
			writeInt(h, int(shape(fc.Args, 0)))
		}
		if fr := p.FunctionResponse; fr != nil {
			h.WriteString("resp:" + fr.Name + ":" + fr.ID)
			writeInt(h, int(shape(fr.Response, 0)))
		}
		if b := p.InlineData; b != nil {
			h.WriteString("blob:" + b.MIMEType)
			writeInt(h, len(b.Data))
		}
		if f := p.FileData; f != nil {
			h.WriteString("file:" + f.FileURI)
		}
		if ec := p.ExecutableCode; ec != nil {
			writeText(h, ec.Code)
		}
		if cr := p.CodeExecutionResult; cr != nil {
			writeText(h, cr.Output)
		}
	}
}

// shape digests a JSON-like value: map keys, value kinds, string lengths with their edges,
// numbers, list lengths; two levels deep; independent of map order. It allocates nothing.
func shape(v any, depth int) uint64 {
	const mix = 0x9e3779b97f4a7c15
	switch x := v.(type) {
	case string:
		return textDigest(x)
	case float64:
		return math.Float64bits(x) * mix
	case bool:
		if x {
			return 1
		}
		return 2
	case []any:
		d := uint64(len(x))*mix + 3
		if depth < 2 {
			for _, e := range x[:min(len(x), 16)] {
				d = (d ^ shape(e, depth+1)) * mix
			}
		}
		return d
	case map[string]any:
		d := uint64(len(x))*mix + 4
		if depth < 2 {
			for k, e := range x {
				d += (maphash.String(printSeed, k) ^ shape(e, depth+1)) * mix // a sum: map order does not matter
			}
		}
		return d
	case nil:
		return 5
	}
	return 6
}

// textDigest digests a string's length and its first and last 32 bytes.
func textDigest(s string) uint64 {
	const edge = 32
	if len(s) <= 2*edge {
		return maphash.String(printSeed, s) ^ uint64(len(s))
	}
	return (maphash.String(printSeed, s[:edge]) * 31) ^ maphash.String(printSeed, s[len(s)-edge:]) ^ uint64(len(s))<<1
}

func writeText(h *maphash.Hash, s string) { writeInt(h, int(textDigest(s))) }

func writeInt(h *maphash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}
