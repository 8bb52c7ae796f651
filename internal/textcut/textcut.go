// Package textcut cuts text on rune boundaries: the one place adkctx does it (the ledger's
// entries, summaries, transcripts). Tool outputs are cut by processors/truncate, head and tail.
package textcut

import (
	"strconv"
	"unicode/utf8"
)

// Bytes returns the longest prefix of s of at most n bytes that does not split a UTF-8
// sequence.
func Bytes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Runes returns s when it has at most n runes; otherwise its head (two thirds) and tail (one
// third) of n runes in all around a "…[N chars omitted]…" note. A cut that would omit no more
// runes than its note adds is not made (s is returned), so the result never has more than n
// runes plus one note. It never splits a rune (invalid UTF-8 bytes count as one rune each and
// are kept as they are).
func Runes(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	total := utf8.RuneCountInString(s)
	if omitted := total - n; omitted <= noteRunes(omitted) {
		return s
	}
	head, tail := n*2/3, n-n*2/3
	// Byte offsets of the head's end and the tail's start.
	h, t, i := 0, len(s), 0
	for off := range s {
		if i == head {
			h = off
		}
		if i == total-tail {
			t = off
			break
		}
		i++
	}
	return s[:h] + " …[" + strconv.Itoa(total-head-tail) + " chars omitted]… " + s[t:]
}

// noteRunes is the length in runes of the note that stands for omitted runes.
func noteRunes(omitted int) int {
	return utf8.RuneCountInString(" …[ chars omitted]… ") + len(strconv.Itoa(omitted))
}
