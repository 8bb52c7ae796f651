package engine

import (
	"encoding/binary"
	"hash/maphash"
	"math"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/processors/request"
)

// prefixPrint is a cheap fingerprint of a request: a hash of its system instruction and tools,
// and one per content built from its role, part kinds, names, ids, text lengths with their
// first and last bytes, and the shape of function arguments and responses (their keys, value
// kinds and string lengths). Between two requests of the same stream (one agent in one branch
// of a session), adk-go rebuilds every content from the same events, so equal fingerprints at
// the same position are the same content:
//
//   - the sizes of matching contents are taken from the previous request instead of being
//     estimated again: a request costs the estimate of what is new, not of the whole history;
//   - the tokens of the longest matching prefix are what a provider's prompt cache can serve,
//     logged as prefix_reused_tokens.
//
// Two different contents with equal fingerprints at the same position of consecutive requests
// (same length, same first and last 32 bytes of every text, same keys) would share a size
// estimate; the estimate is then that of a content of the same shape.
type prefixPrint struct {
	fixed       uint64 // system instruction and tools
	fixedTokens int
	contents    []uint64
	sizes       []int
}

var seed = maphash.MakeSeed()

// printsOf fingerprints each content.
func printsOf(contents []*genai.Content) []uint64 {
	var h maphash.Hash
	prints := make([]uint64, len(contents))
	for i, c := range contents {
		prints[i] = printOf(&h, c)
	}
	return prints
}

// printOf fingerprints c, reusing h.
func printOf(h *maphash.Hash, c *genai.Content) uint64 {
	h.SetSeed(seed)
	writeContent(h, c)
	return h.Sum64()
}

// unchangedPrefix is the number of leading prints equal to prev's at the same position: the
// contents the previous request of the stream held, after its steps, unchanged.
func unchangedPrefix(prints []uint64, prev prefixPrint) int {
	n := 0
	for n < min(len(prints), len(prev.contents)) && prints[n] == prev.contents[n] {
		n++
	}
	return n
}

// contentPrints fingerprints each content and sizes it. A content still at its place in orig
// (the request before its steps, printed as origPrints) keeps that print; a content with the
// same print as prev's at its position keeps prev's size estimate. moved says a trim moved the
// contents from their places in prev: a content is then also looked up by print.
func contentPrints(contents, orig []*genai.Content, origPrints []uint64, prev prefixPrint, moved bool) (prints []uint64, sizes []int) {
	var h maphash.Hash
	var byPrint map[uint64]int
	if moved {
		byPrint = make(map[uint64]int, len(prev.contents))
		for k, p := range prev.contents {
			byPrint[p] = prev.sizes[k]
		}
	}
	prints, sizes = make([]uint64, len(contents)), make([]int, len(contents))
	for i, c := range contents {
		if i < len(orig) && orig[i] == c {
			prints[i] = origPrints[i]
		} else {
			prints[i] = printOf(&h, c)
		}
		if i < len(prev.contents) && prev.contents[i] == prints[i] {
			sizes[i] = prev.sizes[i]
			continue
		}
		if size, ok := byPrint[prints[i]]; ok {
			sizes[i] = size
		} else {
			sizes[i] = budget.EstimateContent(c)
		}
	}
	return prints, sizes
}

// fixedPrint fingerprints what precedes the contents: system instruction and tools.
func fixedPrint(req *request.LLMRequest) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	if req.Config != nil {
		if si := req.Config.SystemInstruction; si != nil {
			for _, part := range si.Parts {
				if part != nil {
					h.WriteString(part.Text) // instructions change rarely; hash them whole
				}
			}
		}
		for _, t := range req.Config.Tools {
			if t == nil {
				continue
			}
			for _, fd := range t.FunctionDeclarations {
				if fd != nil {
					h.WriteString(fd.Name)
					h.WriteString(fd.Description)
				}
			}
		}
	}
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
			writeShape(h, fc.Args, 0)
		}
		if fr := p.FunctionResponse; fr != nil {
			h.WriteString("resp:" + fr.Name + ":" + fr.ID)
			writeShape(h, fr.Response, 0)
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

// writeShape writes a digest of a JSON-like value (see shape).
func writeShape(h *maphash.Hash, v any, depth int) { writeInt(h, int(shape(v, depth))) }

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
				d += (maphash.String(seed, k) ^ shape(e, depth+1)) * mix // a sum: map order does not matter
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
		return maphash.String(seed, s) ^ uint64(len(s))
	}
	return (maphash.String(seed, s[:edge]) * 31) ^ maphash.String(seed, s[len(s)-edge:]) ^ uint64(len(s))<<1
}

func writeText(h *maphash.Hash, s string) { writeInt(h, int(textDigest(s))) }

func writeInt(h *maphash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}

// reused returns the estimated tokens of p's longest prefix equal to prev's.
func (p prefixPrint) reused(prev prefixPrint) int {
	if prev.contents == nil || p.fixed != prev.fixed {
		return 0
	}
	n := p.fixedTokens
	for _, size := range p.sizes[:unchangedPrefix(p.contents, prev)] {
		n += size
	}
	return n
}
