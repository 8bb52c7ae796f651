package readback

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"time"
	"unicode"
	"unicode/utf8"
)

// The cost of a search. Go's regexp (RE2) is linear: matching n bytes costs at most about
// n × the size of the compiled program (its NFA runs at most one thread per instruction per
// byte), whatever the pattern and the text. A search measures that cost before it runs and keeps
// every match call under pieceWork, so that it can look at the clock and the context between
// calls: a line longer than pieceWork / (program size) bytes is matched in overlapping pieces.
const (
	// maxProgram bounds a regular expression's compiled program, in instructions. Repeat counts
	// multiply (x{1000} is a thousand copies of x): a 512-byte pattern can compile to 70,000.
	maxProgram = 4000
	// pieceWork bounds the work (bytes × program size) of one match call: about 0.1–0.2 s for the
	// worst pattern on a slow, busy core, under 2 ms for a substring.
	pieceWork = 1 << 21
	// pieceTime is what a search aims one match call at: pieces shrink (to minPiece) when the
	// work it sees runs slower than pieceWork per pieceTime (a loaded machine, -race).
	pieceTime = 50 * time.Millisecond
	// minPieceBytes is the piece a search does not shrink below (unless pieceWork allows less).
	minPieceBytes = 1024
)

// matcher finds a query in a piece of a line and says what finding costs.
type matcher struct {
	// find returns the first match's start and end in b, or -1, -1.
	find func(b []byte) (int, int)
	// perByte is the worst-case work of matching one byte: the program's size (1 for a
	// substring).
	perByte int64
	// piece is the most bytes one find call is given (pieceWork / perByte, at most
	// maxLineBytes), minPiece the least a search shrinks it to; overlap the bytes consecutive
	// pieces of a long line share: the longest match less one, so that every match of a bounded
	// pattern lies inside one piece (a quarter of the piece for an unbounded pattern).
	piece, minPiece, overlap int
	// unbounded: the pattern's matches have no maximal length (a match longer than overlap+1
	// across two pieces is not found); edges: it holds ^ $ \A \z \b or \B, which a piece's
	// edges satisfy as a line's would.
	unbounded, edges bool
}

// substringMatcher matches query (ASCII letters in either case), budget bytes at a time (at
// most maxLineBytes).
func substringMatcher(query string, budget int64) *matcher {
	folded := foldASCII(nil, []byte(query))
	var buf []byte
	m := &matcher{
		find: func(b []byte) (int, int) {
			buf = foldASCII(buf[:0], b)
			i := bytes.Index(buf, folded)
			if i < 0 {
				return -1, -1
			}
			return i, i + len(folded)
		},
		perByte: 1,
		piece:   int(min(budget, maxLineBytes)),
		overlap: len(folded) - 1,
	}
	m.minPiece = max(2*m.overlap, min(m.piece, minPieceBytes))
	return m
}

// regexpMatcher compiles query and measures it, to match at most budget units of work per call
// (pieceWork outside tests); an *inputError when it does not compile, a *PatternError when it
// cannot be matched within that budget.
func regexpMatcher(query string, budget int64) (*matcher, error) {
	re, err := syntax.Parse(query, syntax.Perl)
	if err != nil {
		return nil, inputErrorf("query is not a valid regular expression (RE2 syntax): %v", err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, inputErrorf("query is not a valid regular expression (RE2 syntax): %v", err)
	}
	size := len(prog.Inst)
	if size > maxProgram {
		return nil, &PatternError{Program: size}
	}
	m := &matcher{perByte: int64(size), piece: int(min(maxLineBytes, budget/int64(size))), edges: hasAssertion(re)}
	span := maxSpan(re)
	switch {
	case span < 0:
		m.unbounded, m.overlap = true, m.piece/4
	case 2*(span-1) > m.piece || m.piece == 0:
		// A piece must hold the longest match twice over (a match is found in the piece that
		// holds it whole), and a longer piece would cost more than pieceWork.
		return nil, &PatternError{Program: size, Span: span}
	default:
		m.overlap = max(span-1, 0)
	}
	m.minPiece = max(2*m.overlap, min(m.piece, minPieceBytes))
	compiled, err := regexp.Compile(query)
	if err != nil { // cannot happen: syntax accepted it
		return nil, inputErrorf("query is not a valid regular expression (RE2 syntax): %v", err)
	}
	m.find = func(b []byte) (int, int) {
		loc := compiled.FindIndex(b)
		if loc == nil {
			return -1, -1
		}
		return loc[0], loc[1]
	}
	return m, nil
}

// PatternError is a regular expression a search refuses because matching it could not be kept
// within the call's bounds: its compiled program is too large, or a match can be so long that
// one bounded step of the search cannot hold it. [IsInputError] reports true for it: its message
// tells the model how to ask again.
type PatternError struct {
	// Program is the compiled program's size in instructions; Span, when not 0, the longest
	// match in bytes, the reason for the refusal.
	Program, Span int
}

func (e *PatternError) Error() string {
	if e.Span > 0 {
		return fmt.Sprintf("the regular expression is too costly to search within this call's bounds: a match can be %d bytes long "+
			"and the expression compiles to %d instructions, more than one bounded step of the search can hold; "+
			"use smaller repeat counts (x{100} rather than x{1000}) or search for a substring", e.Span, e.Program)
	}
	return fmt.Sprintf("the regular expression is too complex to search within this call's bounds: it compiles to %d instructions, "+
		"at most %d are accepted (repeat counts multiply: x{1000} is a thousand copies of x); use smaller repeat counts or search for a substring",
		e.Program, maxProgram)
}

// maxSpanCap is where maxSpan stops counting (any longer span is refused anyway).
const maxSpanCap = 1 << 30

// maxSpan returns the most bytes a match of re can hold, or -1 when there is no bound.
func maxSpan(re *syntax.Regexp) int {
	add := func(a, b int) int {
		if a < 0 || b < 0 {
			return -1
		}
		return min(a+b, maxSpanCap)
	}
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				n = add(n, foldedLen(r))
			} else {
				n = add(n, runeLen(r))
			}
		}
		return n
	case syntax.OpCharClass:
		n := 0
		for i := 1; i < len(re.Rune); i += 2 {
			n = max(n, runeLen(re.Rune[i]))
		}
		return n
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxSpan(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if maxSpan(re.Sub[0]) == 0 {
			return 0
		}
		return -1
	case syntax.OpRepeat:
		sub := maxSpan(re.Sub[0])
		switch {
		case sub == 0:
			return 0
		case sub < 0 || re.Max < 0:
			return -1
		}
		return min(sub*re.Max, maxSpanCap)
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n = add(n, maxSpan(s))
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			k := maxSpan(s)
			if k < 0 {
				return -1
			}
			n = max(n, k)
		}
		return n
	}
	return 0 // empty-width: anchors, word boundaries, empty and no match
}

// hasAssertion reports whether re holds an empty-width assertion (^ $ \A \z \b \B).
func hasAssertion(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, s := range re.Sub {
		if hasAssertion(s) {
			return true
		}
	}
	return false
}

// runeLen is the UTF-8 length of r; an invalid rune is matched as one byte of invalid input.
func runeLen(r rune) int {
	if n := utf8.RuneLen(r); n > 0 {
		return n
	}
	return utf8.UTFMax
}

// foldedLen is the longest UTF-8 length among r's case variants (k matches U+212A, 3 bytes).
func foldedLen(r rune) int {
	n := runeLen(r)
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		n = max(n, runeLen(f))
	}
	return n
}
