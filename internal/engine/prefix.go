package engine

import (
	"hash/maphash"

	"github.com/adkctx/adkctx/processors/request"
)

// prefixPrint is a cheap fingerprint of a request: a hash of its system instruction and tools,
// and each content's print and size (request.Measure). Between two requests of the same stream
// (one agent in one branch of a session), adk-go rebuilds every content from the same events, so
// equal prints at the same position are the same content:
//
//   - the sizes of matching contents are taken from the previous request instead of being
//     estimated again: a request costs the estimate of what is new, not of the whole history;
//   - the tokens of the longest matching prefix are what a provider's prompt cache can serve,
//     logged as prefix_reused_tokens.
type prefixPrint struct {
	fixed       uint64 // system instruction and tools
	fixedTokens int
	contents    []uint64
	sizes       []int
}

// unchangedPrefix is the number of leading measures whose print is prev's at the same position:
// the contents the previous request of the stream held, after its steps, unchanged.
func unchangedPrefix(ms []request.Measure, prev prefixPrint) int {
	n := 0
	for n < min(len(ms), len(prev.contents)) && ms[n].Print == prev.contents[n] {
		n++
	}
	return n
}

// commonPrefix is the number of leading prints equal in a and b.
func commonPrefix(a, b []uint64) int {
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	return n
}

var fixedSeed = maphash.MakeSeed()

// fixedPrint fingerprints what precedes the contents: system instruction and tools.
func fixedPrint(req *request.LLMRequest) uint64 {
	var h maphash.Hash
	h.SetSeed(fixedSeed)
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

// reused returns the estimated tokens of p's longest prefix equal to prev's.
func (p prefixPrint) reused(prev prefixPrint) int {
	if prev.contents == nil || p.fixed != prev.fixed {
		return 0
	}
	n := p.fixedTokens
	for _, size := range p.sizes[:commonPrefix(p.contents, prev.contents)] {
		n += size
	}
	return n
}
