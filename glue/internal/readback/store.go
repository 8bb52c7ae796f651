package readback

import (
	"context"
	"fmt"
	"time"

	"github.com/adkctx/adkctx/recall"
)

// Limits bound one recall call. A zero field takes its default.
type Limits struct {
	// MaxResultBytes bounds the text one call returns. Default 8 KiB (adkctx truncates tool
	// results at 10 KiB by default: a recall result must never be cut and saved again).
	MaxResultBytes int
	// MaxResultLines bounds the lines of the text one call returns. Default 200 (adkctx cuts
	// tool results at 256 lines by default: lines count as well as bytes); at least 20.
	MaxResultLines int
	// MaxScanBytes bounds the bytes one search reads from storage. Default 8 MiB.
	MaxScanBytes int64
	// MaxMatches bounds the matches (lines, or ranked excerpts) one search returns. Default 20.
	MaxMatches int
	// ExcerptBytes bounds each tool result read_turn shows as an excerpt. Default 1 KiB.
	ExcerptBytes int
	// MaxScanTime bounds the time one search of saved outputs scans (RE2 is linear, but a
	// complex pattern over megabytes still takes a while); it then stops with a cursor like the
	// other bounds. A call's context that ends sooner (a tool's Timeout) stops it sooner, with
	// time left to return its result. Each match call is bounded by measuring the pattern
	// first, so the bound is passed by at most one of them (tens of milliseconds; patterns too
	// costly for that are refused). Default 5 s.
	MaxScanTime time.Duration
}

// Default limits.
const (
	DefaultMaxResultBytes = 8 << 10
	DefaultMaxResultLines = 200
	DefaultMaxScanBytes   = 8 << 20
	defaultMaxMatches     = 20
	defaultExcerptBytes   = 1 << 10
	defaultMaxScanTime    = 5 * time.Second
	// minResultBytes is the smallest MaxResultBytes honoured: a page must hold its header.
	minResultBytes = 1024
	// minResultLines is the smallest MaxResultLines honoured: a search group with its context
	// and the result's header and footer.
	minResultLines = 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	l.MaxResultBytes = max(l.MaxResultBytes, minResultBytes)
	if l.MaxResultLines <= 0 {
		l.MaxResultLines = DefaultMaxResultLines
	}
	l.MaxResultLines = max(l.MaxResultLines, minResultLines)
	if l.MaxScanBytes <= 0 {
		l.MaxScanBytes = DefaultMaxScanBytes
	}
	if l.MaxMatches <= 0 {
		l.MaxMatches = defaultMaxMatches
	}
	if l.ExcerptBytes <= 0 {
		l.ExcerptBytes = defaultExcerptBytes
	}
	l.ExcerptBytes = min(l.ExcerptBytes, l.MaxResultBytes/4)
	if l.MaxScanTime <= 0 {
		l.MaxScanTime = defaultMaxScanTime
	}
	return l
}

// output reads one version of one saved output through its layout, chunk by chunk, caching the
// chunks it read for the rest of the call and counting the bytes it read.
type output struct {
	st    recall.Store
	name  string
	lay   *recall.Layout
	cache map[int][]byte
	read  int64 // bytes read from the store

	// starts[i] is chunk i's byte offset, lines[i] the newlines before it; len(lay.Chunks)+1
	// entries.
	starts, lines []int64
}

func openOutput(ctx context.Context, st recall.Store, name string) (*output, error) {
	lay, err := st.Layout(ctx, name)
	if err != nil {
		return nil, err
	}
	o := newOutput(st, name, lay)
	if o.starts[len(lay.Chunks)] != lay.Size {
		return nil, &corruptError{Name: name, Msg: fmt.Sprintf("chunks hold %d bytes, size is %d", o.starts[len(lay.Chunks)], lay.Size)}
	}
	return o, nil
}

// newOutput indexes lay's chunks: their offsets and the newlines before each.
func newOutput(st recall.Store, name string, lay *recall.Layout) *output {
	o := &output{st: st, name: name, lay: lay, cache: map[int][]byte{},
		starts: make([]int64, len(lay.Chunks)+1), lines: make([]int64, len(lay.Chunks)+1)}
	for i, c := range lay.Chunks {
		o.starts[i+1] = o.starts[i] + int64(c.Size)
		o.lines[i+1] = o.lines[i] + int64(c.Newlines)
	}
	return o
}

// totalLines returns the output's line count: its newlines, plus one when the last line has
// none.
func (o *output) totalLines() int64 {
	n := o.lines[len(o.lay.Chunks)]
	if o.lay.Size > 0 && !o.lay.EndsWithNewline {
		n++
	}
	return n
}

// chunkAt returns the index of the chunk holding byte off (0 ≤ off < Size).
func (o *output) chunkAt(off int64) int {
	starts := o.starts
	lo, hi := 0, len(o.lay.Chunks)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// chunks returns chunks [first, last], reading the ones not cached in one call.
func (o *output) chunks(ctx context.Context, first, last int) ([][]byte, error) {
	out := make([][]byte, 0, last-first+1)
	missFrom := -1
	for i := first; i <= last+1; i++ {
		_, cached := o.cache[i]
		if i <= last && !cached {
			if missFrom < 0 {
				missFrom = i
			}
			continue
		}
		if missFrom >= 0 {
			got, err := o.st.ReadChunks(ctx, o.name, o.lay.Version, missFrom, i-missFrom)
			if err != nil {
				return nil, err
			}
			if len(got) != i-missFrom {
				return nil, &corruptError{Name: o.name, Msg: fmt.Sprintf("read %d chunks from %d, want %d", len(got), missFrom, i-missFrom)}
			}
			for j, c := range got {
				if len(c) != o.lay.Chunks[missFrom+j].Size {
					return nil, &corruptError{Name: o.name, Msg: fmt.Sprintf("chunk %d holds %d bytes, layout says %d", missFrom+j, len(c), o.lay.Chunks[missFrom+j].Size)}
				}
				o.cache[missFrom+j] = c
				o.read += int64(len(c))
			}
			missFrom = -1
		}
	}
	for i := first; i <= last; i++ {
		out = append(out, o.cache[i])
	}
	return out, nil
}

// readAt returns bytes [off, end) (clamped to the output).
func (o *output) readAt(ctx context.Context, off, end int64) ([]byte, error) {
	end = min(end, o.lay.Size)
	if off >= end {
		return nil, nil
	}
	first, last := o.chunkAt(off), o.chunkAt(end-1)
	cs, err := o.chunks(ctx, first, last)
	if err != nil {
		return nil, err
	}
	if len(cs) == 1 {
		base := o.starts[first]
		return cs[0][off-base : end-base], nil
	}
	buf := make([]byte, 0, end-off)
	for i, c := range cs {
		base := o.starts[first+i]
		lo, hi := max(off-base, 0), min(end-base, int64(len(c)))
		buf = append(buf, c[lo:hi]...)
	}
	return buf, nil
}

// lineStart returns the byte offset where line (from 1) starts; line must be ≤ Lines().
func (o *output) lineStart(ctx context.Context, line int64) (int64, error) {
	k := line - 1 // newlines before the line
	if k <= 0 {
		return 0, nil
	}
	lines := o.lines
	// The chunk holding the k-th newline: lines[i] < k ≤ lines[i+1].
	lo, hi := 0, len(o.lay.Chunks)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if lines[mid+1] < k {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	cs, err := o.chunks(ctx, lo, lo)
	if err != nil {
		return 0, err
	}
	need := k - lines[lo]
	for i, b := range cs[0] {
		if b == '\n' {
			need--
			if need == 0 {
				return o.starts[lo] + int64(i) + 1, nil
			}
		}
	}
	return 0, &corruptError{Name: o.name, Msg: fmt.Sprintf("chunk %d has fewer newlines than its layout says", lo)}
}

// lineOf returns the line (from 1) holding byte off.
func (o *output) lineOf(ctx context.Context, off int64) (int64, error) {
	if off <= 0 {
		return 1, nil
	}
	off = min(off, o.lay.Size)
	i := o.chunkAt(min(off, o.lay.Size-1))
	cs, err := o.chunks(ctx, i, i)
	if err != nil {
		return 0, err
	}
	n := o.lines[i]
	upto := off - o.starts[i]
	for _, b := range cs[0][:upto] {
		if b == '\n' {
			n++
		}
	}
	return n + 1, nil
}
