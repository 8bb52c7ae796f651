package marks

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Mark is what the marker line of a cut says: the lines and bytes it left out, the size of the
// original and the note.
type Mark struct {
	OmittedLines, OmittedBytes   int
	OriginalLines, OriginalBytes int
	Note                         string
}

// Prefix starts every mark line a cut writes (and the marks of elements a value cut leaves out,
// which Find does not read).
const Prefix = "[... output truncated: "

// markEnd ends every marker line.
const markEnd = " ...]"

// String returns the marker line of m, as truncate.Text writes it (without newlines). Newlines in
// the note become spaces and invalid UTF-8 U+FFFD; unlike Text, it does not cut a long note, so a
// note read back by Find and extended stays whole.
func (m Mark) String() string {
	return Line(m.OmittedLines, m.OmittedBytes, m.OriginalLines, m.OriginalBytes, CleanLine(m.Note))
}

// Line is the mark line of a cut for a note that is one valid line already, of any length.
func Line(omittedLines, omittedBytes, totalLines, totalBytes int, note string) string {
	var b strings.Builder
	b.Grow(len(Prefix) + 96 + len(note))
	b.WriteString(Prefix)
	b.WriteString(strconv.Itoa(omittedLines))
	b.WriteString(" lines and ")
	b.WriteString(strconv.Itoa(omittedBytes))
	b.WriteString(" bytes omitted; original ")
	b.WriteString(strconv.Itoa(totalLines))
	b.WriteString(" lines, ")
	b.WriteString(strconv.Itoa(totalBytes))
	b.WriteString(" bytes")
	if note != "" {
		b.WriteString("; ")
		b.WriteString(note)
	}
	b.WriteString(markEnd)
	return b.String()
}

// CleanLine returns note as one valid UTF-8 line: newlines become spaces, invalid bytes U+FFFD.
func CleanLine(note string) string {
	if strings.ContainsAny(note, "\r\n") {
		note = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(note)
	}
	if !utf8.ValidString(note) {
		note = strings.ToValidUTF8(note, "\uFFFD")
	}
	return note
}

// Find returns the mark lines of cuts in s (those truncate.Text writes, not the marks of elements
// truncate.Value leaves out), in order, each with its byte offsets [Start, End) in s.
func Find(s string) []Found {
	var out []Found
	for at := 0; ; {
		i := strings.Index(s[at:], Prefix)
		if i < 0 {
			return out
		}
		start := at + i
		at = start + len(Prefix)
		nl := strings.IndexByte(s[start:], '\n')
		line := s[start:]
		if nl >= 0 {
			line = line[:nl]
		}
		end := strings.Index(line, markEnd)
		if end < 0 {
			continue
		}
		// A note may hold " ...]" itself: the mark ends at the last one on its line.
		end = strings.LastIndex(line, markEnd) + len(markEnd)
		m, ok := parseMark(line[:end])
		if !ok {
			continue
		}
		out = append(out, Found{Mark: m, Start: start, End: start + end})
		at = start + end
	}
}

// Found is a marker line found in a text.
type Found struct {
	Mark
	Start, End int
}

// parseMark parses one marker line as cutMarker writes it.
func parseMark(line string) (Mark, bool) {
	rest, ok := strings.CutPrefix(line, Prefix)
	if !ok {
		return Mark{}, false
	}
	rest, ok = strings.CutSuffix(rest, markEnd)
	if !ok {
		return Mark{}, false
	}
	var m Mark
	for _, f := range []struct {
		n   *int
		end string
	}{
		{&m.OmittedLines, " lines and "}, {&m.OmittedBytes, " bytes omitted; original "},
		{&m.OriginalLines, " lines, "}, {&m.OriginalBytes, " bytes"},
	} {
		num, after, ok := strings.Cut(rest, f.end)
		if !ok {
			return Mark{}, false
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 || strconv.Itoa(n) != num {
			return Mark{}, false
		}
		*f.n, rest = n, after
	}
	if rest != "" {
		note, ok := strings.CutPrefix(rest, "; ")
		if !ok || note == "" {
			return Mark{}, false
		}
		m.Note = note
	}
	return m, true
}

// ExcerptNote is the note in the cut mark of a tool result a view shows as an excerpt: what
// happened, and how the model gets the rest. The recall step of a request for a model that has the
// recall tools replaces it with one naming the saved result.
const ExcerptNote = ExcerptHead + "; call the tool again for all of it"

// ExcerptHead starts the note of every excerpt's cut mark. When the stored result was itself cut
// (its text holds a truncation mark, whose note says where the full output is kept), the
// excerpt's mark states the sizes of that full output and carries that mark's note after
// ExcerptHead and "; " instead of ExcerptNote's advice: the model is pointed at the output
// already kept whole, not at a copy of the cut text.
const ExcerptHead = "older tool result shortened when the history was summarized"
