package readback

import (
	"fmt"
	"strings"
)

// Unit is what a [Range] counts.
type Unit int

const (
	// Lines counts lines, from 1.
	Lines Unit = iota
	// Bytes counts bytes, from 0 (as HTTP byte ranges do).
	Bytes
)

func (u Unit) String() string {
	if u == Bytes {
		return "bytes"
	}
	return "lines"
}

// maxRangeNumber bounds the numbers of a range (2^50: far past any saved output).
const maxRangeNumber = 1 << 50

// Range is a parsed range (see the package doc for the grammar).
type Range struct {
	Unit Unit
	// Start is the first line (from 1) or byte (from 0). Unused when Last > 0.
	Start int64
	// End is the last line or byte, inclusive, when Bounded; otherwise the range is open and a
	// page shows as much as it holds.
	End     int64
	Bounded bool
	// Last > 0 asks for the last Last lines or bytes.
	Last int64
}

// ParseRange parses s (see the package doc). Errors are *inputError values that say what a valid
// range looks like.
func ParseRange(s string) (Range, error) {
	r := Range{Unit: Lines, Start: 1}
	spec := strings.TrimSpace(s)
	lower := strings.ToLower(spec)
	for _, p := range []struct {
		prefix string
		unit   Unit
	}{{"bytes=", Bytes}, {"byte=", Bytes}, {"bytes ", Bytes}, {"lines=", Lines}, {"line=", Lines}, {"lines ", Lines}} {
		if strings.HasPrefix(lower, p.prefix) {
			r.Unit = p.unit
			spec = strings.TrimSpace(spec[len(p.prefix):])
			break
		}
	}
	if r.Unit == Bytes {
		r.Start = 0
	}
	if spec == "" {
		return r, nil
	}
	p := rangeLexer{s: spec}
	if p.sep() {
		// "-n": the last n.
		n, err := p.number()
		if err != nil || !p.done() {
			return Range{}, badRange(s, "after a leading '-' comes the count of last lines or bytes, as in \"-50\"")
		}
		if n == 0 {
			return Range{}, badRange(s, "the count of last lines or bytes must be at least 1")
		}
		r.Last = n
		return r, nil
	}
	start, err := p.number()
	if err != nil {
		return Range{}, badRange(s, err.Error())
	}
	if r.Unit == Lines && start == 0 {
		return Range{}, badRange(s, "lines are numbered from 1")
	}
	r.Start = start
	switch {
	case p.done():
		return r, nil
	case p.plus():
		n, err := p.number()
		if err != nil || !p.done() {
			return Range{}, badRange(s, "after '+' comes a count, as in \"120+40\"")
		}
		if n == 0 {
			return Range{}, badRange(s, "the count after '+' must be at least 1")
		}
		r.End, r.Bounded = start+n-1, true
		return r, nil
	case p.sep():
		if p.done() {
			return r, nil
		}
		end, err := p.number()
		if err != nil || !p.done() {
			return Range{}, badRange(s, "a range is two numbers, as in \"120-180\"")
		}
		if end < start {
			return Range{}, badRange(s, fmt.Sprintf("it ends (%d) before it starts (%d)", end, start))
		}
		r.End, r.Bounded = end, true
		return r, nil
	}
	return Range{}, badRange(s, "a range is two numbers, as in \"120-180\"")
}

func badRange(s, why string) error {
	return inputErrorf("range %q is not valid: %s (ranges: \"120-180\", \"3000\" for a page from line 3000, \"-50\" for the last 50 lines, \"bytes=0-4095\" for bytes)", clip(s, 60), why)
}

// rangeLexer reads a range spec left to right.
type rangeLexer struct {
	s string
	i int
}

func (p *rangeLexer) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *rangeLexer) done() bool {
	p.skipSpace()
	return p.i == len(p.s)
}

// sep consumes a range separator: '-', ':', "..", an en dash or an em dash.
func (p *rangeLexer) sep() bool {
	p.skipSpace()
	for _, sep := range []string{"..", "-", ":", "–", "—"} {
		if strings.HasPrefix(p.s[p.i:], sep) {
			p.i += len(sep)
			return true
		}
	}
	return false
}

func (p *rangeLexer) plus() bool {
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '+' {
		p.i++
		return true
	}
	return false
}

// number reads a decimal number.
func (p *rangeLexer) number() (int64, error) {
	p.skipSpace()
	start := p.i
	var n int64
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		n = n*10 + int64(p.s[p.i]-'0')
		if n > maxRangeNumber {
			return 0, fmt.Errorf("number too large (at most %d)", int64(maxRangeNumber))
		}
		p.i++
	}
	if p.i == start {
		return 0, fmt.Errorf("expected a number at %q", clip(p.s[p.i:], 20))
	}
	return n, nil
}
