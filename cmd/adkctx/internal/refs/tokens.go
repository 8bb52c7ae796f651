package refs

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	minTokenBytes = 4
	maxTokenBytes = 256
)

// tokenByte reports whether b may be part of a token.
func tokenByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' ||
		b == '_' || b == '.' || b == '/' || b == '-' || b == '@'
}

// tokenAt reports whether the character at text[i] may be part of a token (an ASCII token byte,
// or a letter or digit of any script), and its length in bytes.
func tokenAt(text string, i int) (bool, int) {
	if b := text[i]; b < utf8.RuneSelf {
		return tokenByte(b), 1
	}
	r, n := utf8.DecodeRuneInString(text[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r), n
}

// Each calls fn with every token of text, in order (repeats included).
func Each(text string, fn func(tok string)) {
	for i := 0; i < len(text); {
		ok, n := tokenAt(text, i)
		if !ok {
			i += n
			continue
		}
		j := i + n
		for j < len(text) {
			ok, n := tokenAt(text, j)
			if !ok {
				break
			}
			j += n
		}
		if tok, ok := keep(text[i:j]); ok {
			fn(tok)
		}
		i = j
	}
}

// Tokens returns the distinct tokens of text in order of first appearance.
func Tokens(text string) []string {
	var out []string
	seen := map[string]bool{}
	Each(text, func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

func keep(run string) (string, bool) {
	tok := strings.Trim(run, "./-")
	if len(tok) < minTokenBytes || len(tok) > maxTokenBytes {
		return "", false
	}
	letters, digits := 0, 0
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= utf8.RuneSelf:
			letters++
		}
	}
	if letters == 0 {
		return tok, digits >= 4
	}
	if isStopWord(tok) {
		return "", false
	}
	return tok, true
}

// stopWords are English function words of 4 or more letters, and JSON and code literals: words
// that say nothing about the task. Matched case-insensitively.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		about above after again against also because been before being below between both
		cannot could does doing done down during each else even ever every from further
		have having here hers herself himself into itself just least less many more most
		much must myself need next none once only other ought ours ourselves over own same
		shall should some such than that their theirs them themselves then there these they
		this those through under until upon very want were what when where which while whom
		whose will with within without would your yours yourself yourselves
		true false null nil undefined`) {
		m[w] = true
	}
	return m
}()

func isStopWord(tok string) bool {
	if len(tok) > 12 {
		return false
	}
	var buf [12]byte
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return stopWords[string(buf[:len(tok)])]
}

// normalize makes every whitespace run one space and trims the ends.
func normalize(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// headOf cuts a normalized text to at most max bytes at a word boundary (a rune boundary when a
// single word is longer).
func headOf(text string, max int) string {
	s := normalize(text)
	if len(s) <= max {
		return s
	}
	cut := strings.LastIndexByte(s[:max+1], ' ')
	if cut <= 0 {
		cut = max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return s[:cut]
}
