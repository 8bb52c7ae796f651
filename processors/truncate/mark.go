package truncate

import (
	"strconv"
	"strings"
)

// Mark is what the marker line of a cut says: the lines and bytes it left out, the size of the
// original and the note.
type Mark struct {
	OmittedLines, OmittedBytes   int
	OriginalLines, OriginalBytes int
	Note                         string
}

// markEnd ends every marker line.
const markEnd = " ...]"

// String returns the marker line of m, as Text writes it (without newlines). Newlines in the
// note become spaces and invalid UTF-8 U+FFFD; unlike Text, it does not cut a long note, so
// a note read back by FindMarks and extended stays whole.
func (m Mark) String() string {
	return markLine(m.OmittedLines, m.OmittedBytes, m.OriginalLines, m.OriginalBytes, cleanLine(m.Note))
}

// FindMarks returns the marker lines of cuts in s (those Text writes, not the markers of
// elements Value leaves out), in order, each with its byte offsets [Start, End) in s.
func FindMarks(s string) []Found {
	var out []Found
	for at := 0; ; {
		i := strings.Index(s[at:], MarkerPrefix)
		if i < 0 {
			return out
		}
		start := at + i
		at = start + len(MarkerPrefix)
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
	rest, ok := strings.CutPrefix(line, MarkerPrefix)
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
