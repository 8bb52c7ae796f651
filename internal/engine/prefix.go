package engine

import (
	"encoding/binary"
	"hash/maphash"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/processors/request"
)

// prefixPrint is a cheap fingerprint of a request, to measure how many tokens of it repeat the
// previous request of the same call byte for byte: what a provider's prompt cache can serve.
// Contents are compared by role, part kinds, names, ids, text lengths with their first and last
// bytes, and estimated size: equal fingerprints of different contents are possible in theory and
// harmless (the figure is a log field, not a decision).
type prefixPrint struct {
	fixed       uint64 // system instruction and tools
	fixedTokens int
	contents    []uint64
	sizes       []int
}

var seed = maphash.MakeSeed()

func fingerprint(req *request.LLMRequest, d request.BudgetDecision) prefixPrint {
	var h maphash.Hash
	h.SetSeed(seed)
	p := prefixPrint{fixedTokens: d.FixedTokens, contents: make([]uint64, len(req.Contents))}
	if req.Config != nil {
		if si := req.Config.SystemInstruction; si != nil {
			for _, part := range si.Parts {
				if part != nil {
					h.WriteString(part.Text) // instructions change rarely; hash them whole
				}
			}
		}
		for _, t := range req.Config.Tools {
			for _, fd := range toolDecls(t) {
				h.WriteString(fd.Name)
				h.WriteString(fd.Description)
			}
		}
	}
	p.fixed = h.Sum64()
	p.sizes = d.Sizes
	if d.Action == request.ActionTrimmed || len(p.sizes) != len(req.Contents) {
		p.sizes = make([]int, len(req.Contents))
		for i, c := range req.Contents {
			p.sizes[i] = budget.EstimateContent(c)
		}
	}
	for i, c := range req.Contents {
		h.Reset()
		writeContent(&h, c)
		writeInt(&h, p.sizes[i])
		p.contents[i] = h.Sum64()
	}
	return p
}

func toolDecls(t *genai.Tool) []*genai.FunctionDeclaration {
	if t == nil {
		return nil
	}
	return t.FunctionDeclarations
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
		if fc := p.FunctionCall; fc != nil {
			h.WriteString("call:" + fc.Name + ":" + fc.ID)
		}
		if fr := p.FunctionResponse; fr != nil {
			h.WriteString("resp:" + fr.Name + ":" + fr.ID)
		}
	}
}

func writeText(h *maphash.Hash, s string) {
	const edge = 32
	writeInt(h, len(s))
	if len(s) <= 2*edge {
		h.WriteString(s)
		return
	}
	h.WriteString(s[:edge])
	h.WriteString(s[len(s)-edge:])
}

// reused returns the estimated tokens of p's longest prefix equal to prev's.
func (p prefixPrint) reused(prev prefixPrint) int {
	if prev.contents == nil || p.fixed != prev.fixed {
		return 0
	}
	n := p.fixedTokens
	for i := range min(len(p.contents), len(prev.contents)) {
		if p.contents[i] != prev.contents[i] {
			break
		}
		n += p.sizes[i]
	}
	return n
}

func writeInt(h *maphash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}
