package engine

import (
	"encoding/binary"
	"encoding/json"
	"hash/maphash"

	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/internal/exact"
	"github.com/adkctx/adkctx/processors/request"
)

// prefixPrint is the print of a request: a hash of its system instruction and tools, and each
// content's print and size (steps.Measure), every one a hash of every byte. Between two
// requests of the same stream (one agent in one branch of a session), adk-go rebuilds every
// content from the same events, so equal prints at the same position are the same content:
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
func unchangedPrefix(ms []steps.Measure, prev prefixPrint) int {
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

// fixedPrint prints what precedes the contents, every byte of it: the system instruction and
// the tools (through their JSON encoding; 0 when it fails: no prefix is then counted as reused).
func fixedPrint(req *request.LLMRequest) uint64 {
	if req.Config == nil {
		return 1
	}
	tools, err := json.Marshal(req.Config.Tools)
	if err != nil {
		return 0
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], exact.Print(req.Config.SystemInstruction))
	return maphash.Bytes(fixedSeed, append(b[:], tools...))
}

var fixedSeed = maphash.MakeSeed()

// reused returns the estimated tokens of p's longest prefix equal to prev's.
func (p prefixPrint) reused(prev prefixPrint) int {
	if prev.contents == nil || p.fixed == 0 || p.fixed != prev.fixed {
		return 0
	}
	n := p.fixedTokens
	for _, size := range p.sizes[:commonPrefix(p.contents, prev.contents)] {
		n += size
	}
	return n
}
