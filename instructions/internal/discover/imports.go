package discover

import "strings"

// importToken is one @path import found in a file's text.
type importToken struct {
	Start, End int    // byte offsets of "@path" in the text (End exclusive)
	Path       string // the path after '@', trailing punctuation removed
}

// findImports returns the @path import tokens of text, in order.
//
// Grammar (documented in doc.go):
//   - '@' at the start of a line or directly after a space or tab;
//   - followed by a run of non-whitespace characters, from which trailing
//     punctuation . , ; : ! ? ) ] } ' " is removed;
//   - the remaining path must end in ".md" (any case) or start with "./" or
//     "../", must not end in '/', and must not contain '`' or '@'.
//
// Tokens in code are ignored: fenced code blocks (``` or ~~~), indented
// code blocks and inline code spans (matching backtick runs on the same
// line). So "mail me@example.com", "@alice" and "`@x.md`" are not imports.
func findImports(text string) []importToken {
	var out []importToken
	var b blocks
	b.afterBreak = true
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		if line := text[off:end]; !b.code(line) {
			out = scanLine(line, off, out)
		}
		off = end + 1
	}
	return out
}

// blocks follows the Markdown block structure line by line, as far as
// needed to tell code from text: fenced code blocks, indented code blocks
// (4 columns beyond the enclosing list item's content, after a blank line,
// a heading or the start of the text, since an indented line right after a
// paragraph line continues the paragraph) and list items (only for their
// content column). Block quotes and HTML blocks are not recognised.
type blocks struct {
	fenceCh     byte
	fenceLen    int // > 0 inside a fenced code block
	fenceIndent int // the most a closing fence may be indented
	indented    bool
	// afterBreak: the previous line ended any paragraph (a blank line, a
	// heading, a closing fence, the start of the text).
	afterBreak bool
	lists      []int // content columns of the open list items, innermost last
}

// code reports whether line (without its '\n') is code, and moves on.
func (b *blocks) code(line string) bool {
	if b.fenceLen > 0 {
		if isFenceClose(line, b.fenceCh, b.fenceLen, b.fenceIndent) {
			b.fenceLen, b.afterBreak = 0, true
		}
		return true
	}
	cols, rest := indentOf(line)
	if strings.TrimRight(rest, "\r") == "" { // blank: an indented block goes on
		b.afterBreak = true
		return false
	}
	container := 0
	if b.afterBreak { // a line left of a list item's content ends the item
		for len(b.lists) > 0 && b.lists[len(b.lists)-1] > cols {
			b.lists = b.lists[:len(b.lists)-1]
		}
	}
	if len(b.lists) > 0 {
		container = b.lists[len(b.lists)-1]
	}
	if cols >= container+4 && (b.indented || b.afterBreak) {
		// Code is no paragraph: nothing continues it lazily.
		b.indented, b.afterBreak = true, true
		return true
	}
	b.indented, b.afterBreak = false, false
	if cols > container+3 {
		return false // a paragraph's continuation line
	}
	if ch, n := fenceOpen(rest); n > 0 {
		b.fenceCh, b.fenceLen, b.fenceIndent = ch, n, container+3
		return true
	}
	switch {
	case isThematicBreak(rest):
		b.afterBreak = true
	case isATXHeading(rest):
		b.afterBreak = true
	default:
		if w := listMarker(rest); w > 0 {
			for len(b.lists) > 0 && b.lists[len(b.lists)-1] > cols {
				b.lists = b.lists[:len(b.lists)-1]
			}
			b.lists = append(b.lists, cols+w)
		}
	}
	return false
}

// indentOf returns the indentation of line in columns (a tab advances to
// the next multiple of 4) and the rest of the line.
func indentOf(line string) (int, string) {
	cols, i := 0, 0
	for ; i < len(line); i++ {
		switch line[i] {
		case ' ':
			cols++
		case '\t':
			cols += 4 - cols%4
		default:
			return cols, line[i:]
		}
	}
	return cols, ""
}

// fenceOpen reports the fence character and run length if rest (a line
// after its indentation) opens a fenced code block.
func fenceOpen(rest string) (byte, int) {
	if rest == "" || (rest[0] != '`' && rest[0] != '~') {
		return 0, 0
	}
	ch := rest[0]
	n := runLen(rest, 0, ch)
	if n < 3 {
		return 0, 0
	}
	if ch == '`' && strings.IndexByte(rest[n:], '`') >= 0 {
		return 0, 0 // CommonMark: a backtick fence's info string has no backticks
	}
	return ch, n
}

func isFenceClose(line string, ch byte, n, maxIndent int) bool {
	cols, rest := indentOf(line)
	m := runLen(rest, 0, ch)
	return cols <= maxIndent && m >= n && strings.TrimSpace(rest[m:]) == ""
}

// isThematicBreak: three or more of one of - * _ and nothing but spaces.
func isThematicBreak(rest string) bool {
	if rest == "" || (rest[0] != '-' && rest[0] != '*' && rest[0] != '_') {
		return false
	}
	n := 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case rest[0]:
			n++
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return n >= 3
}

// isATXHeading: one to six '#' followed by a space, a tab or the end.
func isATXHeading(rest string) bool {
	n := runLen(rest, 0, '#')
	return n >= 1 && n <= 6 && (n == len(rest) || isSpace(rest[n]))
}

// listMarker returns the width of the list item marker at the start of rest
// with the spaces after it ("- ", "1. ", "10) "), 0 if there is none.
func listMarker(rest string) int {
	i := 0
	switch c := rest[0]; {
	case c == '-' || c == '*' || c == '+':
		i = 1
	default:
		for i < len(rest) && i < 9 && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i == len(rest) || (rest[i] != '.' && rest[i] != ')') {
			return 0
		}
		i++
	}
	if i == len(rest) || rest[i] == '\r' {
		return i + 1 // an empty item
	}
	if rest[i] != ' ' && rest[i] != '\t' {
		return 0
	}
	n := runLen(rest, i, ' ')
	if n == 0 || n > 4 || i+n == len(rest) {
		n = 1 // CommonMark: after 5+ spaces the content is indented code
	}
	return i + n
}

// scanLine appends the import tokens of one non-fenced line; base is the
// line's offset in the whole text.
func scanLine(line string, base int, out []importToken) []importToken {
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == '`':
			n := runLen(line, i, '`')
			if close := findRun(line, i+n, n); close >= 0 {
				i = close + n // skip the whole code span
			} else {
				i += n // unmatched: literal backticks
			}
		case c == '@' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			j := i + 1
			for j < len(line) && !isSpace(line[j]) {
				j++
			}
			p := strings.TrimRight(line[i+1:j], ".,;:!?)]}'\"")
			if isImportPath(p) {
				out = append(out, importToken{Start: base + i, End: base + i + 1 + len(p), Path: p})
			}
			i = j
		default:
			i++
		}
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

func runLen(s string, i int, ch byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == ch {
		n++
	}
	return n
}

// findRun finds the next run of exactly n backticks at or after i.
func findRun(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		m := runLen(s, i, '`')
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func isImportPath(p string) bool {
	if p == "" || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "`@") {
		return false
	}
	if strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
		return true
	}
	return len(p) > 3 && strings.EqualFold(p[len(p)-3:], ".md")
}
