package budget

import (
	"math"
	"unicode/utf8"
)

// Estimator model constants. Costs are kept in milli-tokens (1/1000 token) so a
// pass needs only integer arithmetic.
//
// The model mirrors how o200k-style byte-pair tokenizers pre-split text:
// a word piece (letters, split at lower→upper case changes, including one
// leading space or punctuation byte) is usually one token, long pieces cost
// more; digits go in groups of three; a punctuation run is about one token;
// a whitespace run costs a token unless it is the single space glued to the
// next word; a newline cluster is a token unless it ends a punctuation run;
// CJK and other wide runes are about one token each. The constants were
// fitted against o200k_base on the samples in testdata/ and then biased
// upward so the estimate stays at or above the real count (see
// TestEstimatorAgainstTokenizer for the measured ratios).
const (
	milli = 1000

	// wordBase is the cost of one word piece.
	wordBase = 1000
	// wordFreeLen is the piece length (bytes) covered by wordBase.
	wordFreeLen = 6
	// wordExtraPerByte is the cost of every byte beyond wordFreeLen.
	wordExtraPerByte = 200
	// upperExtra is the cost of each upper-case letter after the first in
	// a word piece.
	upperExtra = 350
	// digitGroup is the cost of each group of up to three digits.
	digitGroup = 1000
	// punctBase is the cost of a punctuation run; punctExtraPerByte applies
	// to every byte after the first.
	punctBase         = 1000
	punctExtraPerByte = 350
	// punctRepeatPerByte applies to a byte repeating the previous one
	// ("=====", "-----"): such rulers merge into long tokens, but never
	// fewer than one per 8 bytes (the floor FuzzEstimateText checks).
	punctRepeatPerByte = 125
	// spaceRun is the cost of a whitespace run that is not a lone space
	// glued to the following word or punctuation.
	spaceRun = 1000
	// spaceExtraPerByte applies to every byte of a whitespace run beyond 16
	// (long padding runs get split).
	spaceExtraPerByte = 30
	// newlineRun is the cost of a cluster of line breaks not ending a
	// punctuation run.
	newlineRun = 1000
	// newlineAfterPunct is the cost of line breaks glued to punctuation.
	newlineAfterPunct = 200
	// wideRune is the cost of one CJK / kana / hangul / symbol rune (3 bytes).
	wideRune = 950
	// hangulRune is the cost of one Hangul syllable.
	hangulRune = 650
	// astralRune is the cost of a 4-byte rune (emoji, rare CJK).
	astralRune = 2000
	// invalidByte is the cost of a byte that is not valid UTF-8.
	invalidByte = 1000
	// latinRuneLen is the piece length a 2-byte letter (accented Latin,
	// Greek, Cyrillic, ...) adds to its word piece.
	latinRuneLen = 2
	// safetyPermille scales the sum (1000 = ×1.0).
	safetyPermille = 1100
)

const (
	stNone = iota
	stWord
	stDigit
	stPunct
	stSpace
	stNewline
)

// textCounter is the single-pass state machine behind EstimateText. It is a
// value type kept on the stack: no allocation.
type textCounter struct {
	cost      int64 // milli-tokens
	state     int
	runLen    int  // bytes (or weighted length) of the current run
	prevLower bool // last letter of the current word piece was lower case
	punctNL   bool // the current punctuation run already absorbed line breaks
	upper     int  // upper-case letters in the current word piece
	glued     bool // the current punctuation run took a leading space
	runCost   int64
	lastInc   int64
	lastPunct byte
	nodes     int // values walked by value/reflectValue
	// saturated: the counter met a value it cannot walk (nested deeper than
	// maxValueDepth, more than maxValueNodes values: a cycle or an
	// exponentially shared structure) and counts as saturatedMilli.
	saturated bool
}

// closeRun adds the cost of the current run. next is the state that follows.
func (t *textCounter) closeRun(next int) {
	switch t.state {
	case stWord:
		c := int64(wordBase)
		if t.runLen > wordFreeLen {
			c += int64(t.runLen-wordFreeLen) * wordExtraPerByte
		}
		if t.upper > 1 {
			// Upper-case runs (IDs, acronyms, SKUs) split into short tokens.
			c += int64(t.upper-1) * upperExtra
		}
		t.cost += c
		t.upper = 0
	case stDigit:
		t.cost += int64((t.runLen+2)/3) * digitGroup
	case stPunct:
		c := t.runCost
		// The last punctuation byte before a letter is absorbed into the
		// word piece (`"id`, `_name`, `(x`).
		if next == stWord && !t.glued {
			c -= t.lastInc
		}
		t.glued = false
		t.cost += c
	case stSpace:
		l := t.runLen
		// A single space in front of a word or punctuation is part of it.
		switch next {
		case stWord:
			l--
		case stPunct:
			l--
			t.glued = true
		case stDigit:
			// Digits never take a leading space: a longer run becomes
			// "n-1 spaces" + " ".
			if l > 1 {
				t.cost += spaceRun
			}
		}
		if l > 0 {
			c := int64(spaceRun)
			if l > 16 {
				c += int64(l-16) * spaceExtraPerByte
			}
			t.cost += c
		}
	case stNewline:
		t.cost += newlineRun
	}
	t.state = stNone
	t.runLen = 0
	t.runCost = 0
	t.lastInc = 0
}

// isPunct reports whether c is ASCII punctuation (printable, not a letter,
// digit or space) or a control byte other than whitespace.
func isPunct(c byte) bool {
	return c < utf8.RuneSelf && c-'a' >= 26 && c-'A' >= 26 && c-'0' >= 10 &&
		c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f'
}

// add counts s. It is one loop with one switch over byte classes on purpose: it is the
// estimator's hot path (every byte of every request), and the state it carries from class to
// class (runs, their cost) would otherwise go through calls per byte run.
func (t *textCounter) add(s string) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c-'a' < 26:
			switch {
			case t.state == stWord:
			case t.state == stSpace && t.runLen == 1:
				// Fast path: the single space is part of this word.
				t.state, t.runLen = stWord, 0
			default:
				t.closeRun(stWord)
				t.state = stWord
			}
			j := i + 1
			for j < len(s) && s[j]-'a' < 26 {
				j++
			}
			t.runLen += j - i
			t.prevLower = true
			i = j
		case c == ' ':
			switch {
			case t.state == stSpace:
			case t.state == stWord && t.upper <= 1:
				// Fast path: close a word piece inline.
				w := int64(wordBase)
				if t.runLen > wordFreeLen {
					w += int64(t.runLen-wordFreeLen) * wordExtraPerByte
				}
				t.cost += w
				t.upper = 0
				t.state, t.runLen = stSpace, 0
			default:
				t.closeRun(stSpace)
				t.state = stSpace
			}
			j := i + 1
			for j < len(s) && s[j] == ' ' {
				j++
			}
			t.runLen += j - i
			i = j
		case c-'A' < 26:
			if t.state == stWord && t.prevLower {
				// camelCase boundary: a new piece starts.
				t.closeRun(stNone)
			}
			if t.state != stWord {
				t.closeRun(stWord)
				t.state = stWord
			}
			j := i + 1
			for j < len(s) && s[j]-'A' < 26 {
				j++
			}
			t.runLen += j - i
			t.upper += j - i
			t.prevLower = false
			i = j
		case c-'0' < 10:
			if t.state != stDigit {
				t.closeRun(stDigit)
				t.state = stDigit
			}
			j := i + 1
			for j < len(s) && s[j]-'0' < 10 {
				j++
			}
			t.runLen += j - i
			i = j
		case c == '\t' || c == '\v' || c == '\f':
			if t.state != stSpace {
				t.closeRun(stSpace)
				t.state = stSpace
			}
			t.runLen++
			i++
		case c == '\n' || c == '\r':
			switch t.state {
			case stNewline:
			case stPunct:
				// Line breaks glue to the punctuation run before them.
				if !t.punctNL {
					t.cost += newlineAfterPunct
					t.punctNL = true
				}
			default:
				// Trailing spaces before a line break join the break.
				if t.state == stSpace {
					t.state = stNone
					t.runLen = 0
				}
				t.closeRun(stNewline)
				t.state = stNewline
			}
			i++
		case c < utf8.RuneSelf:
			if t.state == stPunct && t.punctNL {
				// Punctuation after absorbed line breaks starts a new run.
				t.closeRun(stPunct)
			}
			if t.state != stPunct {
				t.closeRun(stPunct)
				t.state = stPunct
				t.punctNL = false
				t.runCost += punctBase
				t.lastInc = punctBase
				t.lastPunct = c
				t.runLen++
				i++
			}
			// The rest of the punctuation run.
			runCost, lastInc, last := t.runCost, t.lastInc, t.lastPunct
			j := i
			for ; j < len(s) && isPunct(s[j]); j++ {
				// A repeated printable byte ("=====") merges into few tokens; control
				// bytes are rare in tokenizer vocabularies and never merge.
				if s[j] == last && s[j] >= 0x20 && s[j] != 0x7f {
					lastInc = punctRepeatPerByte
				} else {
					lastInc = punctExtraPerByte
				}
				runCost += lastInc
				last = s[j]
			}
			t.runCost, t.lastInc, t.lastPunct = runCost, lastInc, last
			t.runLen += j - i
			i = j
		case c >= 0xE0 && c <= 0xEF:
			// Runs of 3-byte runes (CJK, kana, Hangul, symbols), decoded
			// inline.
			t.closeRun(stNone)
			j := i
			for j+2 < len(s) && s[j]&0xF0 == 0xE0 && s[j+1]&0xC0 == 0x80 && s[j+2]&0xC0 == 0x80 {
				r := rune(s[j]&0x0F)<<12 | rune(s[j+1]&0x3F)<<6 | rune(s[j+2]&0x3F)
				if r >= 0xAC00 && r <= 0xD7A3 {
					// Hangul syllables: about two per token.
					t.cost += hangulRune
				} else {
					t.cost += wideRune
				}
				j += 3
			}
			if j == i {
				// Truncated or invalid sequence.
				t.cost += invalidByte
				j++
			}
			i = j
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size <= 1:
				t.closeRun(stNone)
				t.cost += invalidByte
				size = 1
			case size == 2:
				// Accented Latin, Greek, Cyrillic, Hebrew, Arabic...: letters
				// that extend the current word piece.
				if t.state != stWord {
					t.closeRun(stWord)
					t.state = stWord
				}
				t.runLen += latinRuneLen
				t.prevLower = true
			case size == 3:
				t.closeRun(stNone)
				t.cost += wideRune
			default:
				t.closeRun(stNone)
				t.cost += astralRune
			}
			i += size
		}
	}
}

func (t *textCounter) finish() int64 {
	t.closeRun(stNone)
	return t.cost
}

// scaledTotal returns the cost with the safety factor, or saturatedMilli
// when something could not be walked.
func (t *textCounter) scaledTotal() int64 {
	if t.saturated {
		return saturatedMilli
	}
	return scaled(t.finish())
}

// scaled applies the safety factor to a raw text cost.
func scaled(m int64) int64 {
	return m * safetyPermille / milli
}

// milliToTokens converts milli-tokens to whole tokens, rounding up.
func milliToTokens(m int64) int {
	if m <= 0 {
		return 0
	}
	v := (m + milli - 1) / milli
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(v)
}

// textMilli returns the milli-token cost of s, safety factor included.
func textMilli(s string) int64 {
	if s == "" {
		return 0
	}
	var t textCounter
	t.add(s)
	return scaled(t.finish())
}

// EstimateText estimates the number of tokens of s for current BPE
// tokenizers (o200k_base, Gemini's SentencePiece). It makes one pass over the
// UTF-8 bytes and does not allocate. It aims to over-count slightly rather
// than under-count; see the package documentation for measured ratios.
func EstimateText(s string) int {
	return milliToTokens(textMilli(s))
}

// estimateBytesDiv4 is the classic bytes/4 heuristic (rounded up), kept for
// comparison in tests and benchmarks.
func estimateBytesDiv4(s string) int {
	return (len(s) + 3) / 4
}
