package agentsmd

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
// Tokens inside fenced code blocks (``` or ~~~, up to 3 spaces of indent)
// and inline code spans (matching backtick runs on the same line) are
// ignored. So "mail me@example.com", "@alice" and "`@x.md`" are not imports.
func findImports(text string) []importToken {
	var out []importToken
	var fenceCh byte
	fenceLen := 0
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		line := text[off:end]
		if fenceLen > 0 {
			if isFenceClose(line, fenceCh, fenceLen) {
				fenceLen = 0
			}
		} else if ch, n := fenceOpen(line); n > 0 {
			fenceCh, fenceLen = ch, n
		} else {
			out = scanLine(line, off, out)
		}
		off = end + 1
	}
	return out
}

// fenceOpen reports the fence character and run length if line opens a
// fenced code block.
func fenceOpen(line string) (byte, int) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0
	}
	ch := line[i]
	n := 0
	for i+n < len(line) && line[i+n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0
	}
	if ch == '`' && strings.IndexByte(line[i+n:], '`') >= 0 {
		return 0, 0 // CommonMark: a backtick fence's info string has no backticks
	}
	return ch, n
}

func isFenceClose(line string, ch byte, n int) bool {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	m := 0
	for i+m < len(line) && line[i+m] == ch {
		m++
	}
	return m >= n && strings.TrimSpace(line[i+m:]) == ""
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
