package truncate

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/adkctx/adkctx/internal/config"
	"github.com/adkctx/adkctx/internal/marks"
)

// Defaults and minimums of Config.
const (
	// defaultMaxBytes is the byte limit used when Config.MaxBytes is zero (10 KiB).
	defaultMaxBytes = 10240
	// defaultMaxLines is the line limit used when Config.MaxLines is zero.
	defaultMaxLines = 256
	// minMaxBytes is the smallest accepted non-zero Config.MaxBytes.
	minMaxBytes = 64
	// minMaxLines is the smallest accepted non-zero Config.MaxLines (one head line, the marker
	// line and one tail line).
	minMaxLines = 3
)

// Config holds the limits of the cutter. The zero value means "defaults". Text and Value never
// fail: they use defaults for zero fields and the minimums for invalid ones; call Validate to
// reject a bad configuration up front.
type Config struct {
	// MaxBytes is the byte budget of a text (of all strings of a value together, for Value).
	// Zero means 10240 (10 KiB). Non-zero values below 64 are invalid.
	MaxBytes int
	// MaxLines is the line budget of a text (of all strings of a value together, for Value).
	// Zero means 256. Non-zero values below 3 are invalid (a head line, the marker, a tail line).
	MaxLines int
}

// Validate reports every unusable field as an *adkctx.ConfigError (joined). Zero fields are
// valid (defaults).
func (c Config) Validate() error {
	var errs []error
	if c.MaxBytes < 0 || (c.MaxBytes > 0 && c.MaxBytes < minMaxBytes) {
		errs = append(errs, config.Errorf("MaxBytes", c.MaxBytes, "want 0 (default) or at least %d", minMaxBytes))
	}
	if c.MaxLines < 0 || (c.MaxLines > 0 && c.MaxLines < minMaxLines) {
		errs = append(errs, config.Errorf("MaxLines", c.MaxLines, "want 0 (default) or at least %d", minMaxLines))
	}
	return errors.Join(errs...)
}

// WithDefaults returns the effective limits: zero fields get defaults and invalid fields are
// clamped to the minimum, so the cutter never fails.
func (c Config) WithDefaults() Config {
	if c.MaxBytes == 0 {
		c.MaxBytes = defaultMaxBytes
	} else if c.MaxBytes < minMaxBytes {
		c.MaxBytes = minMaxBytes
	}
	if c.MaxLines == 0 {
		c.MaxLines = defaultMaxLines
	} else if c.MaxLines < minMaxLines {
		c.MaxLines = minMaxLines
	}
	return c
}

// Stats says what a cut did. For Value, bytes measure the value's JSON size as Value counts it
// (strings by their raw length) and lines the lines of its strings.
type Stats struct {
	// Truncated is true when at least one string was cut (for Value: when the result differs from
	// the input, which may also be an element left out, a value replaced by its JSON text or a
	// number replaced by its text).
	Truncated bool
	// StringsCut is the number of strings (and []byte or JSON texts, for Value) that were cut.
	StringsCut int
	// ItemsOmitted is the number of list elements, map entries and unencodable values that Value
	// left out whole.
	ItemsOmitted int
	// NumbersReplaced is the number of NaN and infinite floats, which JSON cannot hold, that
	// Value replaced by their text ("NaN", "+Inf", "-Inf").
	NumbersReplaced int
	// OriginalBytes and OriginalLines measure the input.
	OriginalBytes, OriginalLines int
	// KeptBytes is the number of original bytes kept (markers not counted): OriginalBytes -
	// OmittedBytes.
	KeptBytes int
	// OmittedLines counts lines of which no byte was kept; OmittedBytes the bytes left out.
	OmittedLines, OmittedBytes int
}

// add accumulates o into s.
func (s *Stats) add(o Stats) {
	s.Truncated = s.Truncated || o.Truncated
	s.StringsCut += o.StringsCut
	s.ItemsOmitted += o.ItemsOmitted
	s.NumbersReplaced += o.NumbersReplaced
	s.OriginalBytes += o.OriginalBytes
	s.OriginalLines += o.OriginalLines
	s.KeptBytes += o.KeptBytes
	s.OmittedLines += o.OmittedLines
	s.OmittedBytes += o.OmittedBytes
}

// MarkerPrefix starts every marker line inserted by Text (and the marks of elements Value leaves
// out): a stored result holding it was cut.
const MarkerPrefix = marks.Prefix

// cutMarker returns the marker line (without newlines) that Text inserts between head and tail.
// Newlines in note become spaces, invalid UTF-8 in it becomes U+FFFD and it is cut to 200 bytes,
// so the marker is always one valid line of bounded length.
func cutMarker(omittedLines, omittedBytes, totalLines, totalBytes int, note string) string {
	return marks.Line(omittedLines, omittedBytes, totalLines, totalBytes, cleanNote(note))
}

// minContentBytes is the least Text keeps of head and tail together when the marker leaves less.
const minContentBytes = 32

// maxNoteBytes caps a marker's note, so that the room Value reserves for markers holds.
const maxNoteBytes = 200

func cleanNote(note string) string {
	if len(note) > maxNoteBytes {
		cut := maxNoteBytes
		for cut > 0 && !utf8.RuneStart(note[cut]) {
			cut--
		}
		note = note[:cut]
	}
	return marks.CleanLine(note)
}

// countLines returns the number of lines of s. "" has 0 lines, "a" and "a\n" 1, "a\nb" 2.
func countLines(s string) int { return linesOf(s, strings.Count(s, "\n")) }

// Text cuts s to the limits of cfg, keeping its head and its tail.
//
// If s is within both limits it is returned unchanged (Stats.Truncated is false). Otherwise the
// result is head + marker line + tail, where head is a prefix and tail a suffix of s and the marker
// line (see Marker; it carries the optional note) states the omitted lines and bytes and the
// original size. Head and tail share the budget roughly half and half; the tail gets whatever the
// head leaves unused and is always kept, so the last lines of a failing build survive, and a single
// huge line keeps both its start and its end. Cuts fall on line boundaries when that keeps at
// least half of the side's budget, otherwise on UTF-8 rune boundaries, so valid UTF-8 in gives
// valid UTF-8 out (invalid input is cut without panicking).
//
// Bound: the budget reserves room for the marker, so the result has at most cfg.MaxLines lines
// and len(result) <= cfg.MaxBytes, unless the marker (with its note) leaves less than 32 bytes
// of MaxBytes for head and tail; in every case len(result) <= MaxBytes + len(marker line). A result within the
// limits is not cut again: Text(Text(s)) == Text(s) whenever the first result fits MaxBytes.
//
// Cost: one newline count over s plus work and memory proportional to the kept size; s is never
// split or copied.
func Text(s string, cfg Config, note string) (string, Stats) {
	return cutText(s, cfg.WithDefaults(), note, -1)
}

// text is a string or a byte slice: Value cuts []byte leaves and JSON texts with the same code,
// without converting them to a string (a copy).
type text interface{ ~string | ~[]byte }

// cutText is Text with effective limits, for strings and byte slices, and, when newlines >= 0,
// the known newline count of s (so that a caller that has already counted does not make us scan s
// again).
func cutText[T text](s T, cfg Config, note string, newlines int) (string, Stats) {
	n := len(s)
	if newlines < 0 {
		newlines = countNewlines(s)
	}
	total := linesOf(s, newlines)
	if n <= cfg.MaxBytes && total <= cfg.MaxLines {
		return string(s), Stats{OriginalBytes: n, KeptBytes: n, OriginalLines: total}
	}

	// Reserve room for the marker line, measured with worst-case numbers.
	markerMax := len(cutMarker(total, n, total, n, note)) + 2
	content := max(cfg.MaxBytes-markerMax, min(cfg.MaxBytes/2, minContentBytes))
	lineBudget := cfg.MaxLines - 1 // one line for the marker

	headLines := lineBudget / 2
	h, headKept := cutHead(s, content/2, headLines)
	t, tailKept := cutTail(s, h, content-h, lineBudget-headKept)
	if t <= h { // nothing to omit (cannot happen when s is over the limits; defensive)
		return string(s), Stats{OriginalBytes: n, KeptBytes: n, OriginalLines: total}
	}

	// Lines with no kept byte. The head's last line and the tail's first line are the same line
	// when there is no newline between them.
	omittedLines := total - headKept - tailKept
	if h > 0 && t < n {
		nlBeforeLast := newlines // newlines in s[:n-1]
		if s[n-1] == '\n' {
			nlBeforeLast--
		}
		between := nlBeforeLast - countNewlines(s[:h-1]) - countNewlines(s[t:n-1])
		if between == 0 {
			omittedLines++
		}
	}
	if omittedLines < 0 {
		omittedLines = 0
	}
	marker := cutMarker(omittedLines, t-h, total, n, note)

	b := make([]byte, 0, h+len(marker)+2+n-t)
	b = append(b, s[:h]...)
	if h > 0 && s[h-1] != '\n' {
		b = append(b, '\n')
	}
	b = append(b, marker...)
	b = append(b, '\n')
	b = append(b, s[t:]...)
	return string(b), Stats{
		Truncated:     true,
		StringsCut:    1,
		OriginalBytes: n,
		OriginalLines: total,
		KeptBytes:     h + n - t,
		OmittedLines:  omittedLines,
		OmittedBytes:  t - h,
	}
}

// linesOf returns the number of lines of s given its newline count: newline-terminated segments
// plus a final unterminated one.
func linesOf[T text](s T, newlines int) int {
	if len(s) == 0 {
		return 0
	}
	if s[len(s)-1] != '\n' {
		return newlines + 1
	}
	return newlines
}

func countNewlines[T text](s T) int {
	switch x := any(s).(type) {
	case string:
		return strings.Count(x, "\n")
	case []byte:
		return bytes.Count(x, []byte{'\n'})
	}
	return strings.Count(string(s), "\n")
}

func indexNewline[T text](s T) int {
	switch x := any(s).(type) {
	case string:
		return strings.IndexByte(x, '\n')
	case []byte:
		return bytes.IndexByte(x, '\n')
	}
	return strings.IndexByte(string(s), '\n')
}

func lastIndexNewline[T text](s T) int {
	switch x := any(s).(type) {
	case string:
		return strings.LastIndexByte(x, '\n')
	case []byte:
		return bytes.LastIndexByte(x, '\n')
	}
	return strings.LastIndexByte(string(s), '\n')
}

// cutHead returns the end of the head (at most maxBytes bytes and maxLines lines of s) and the
// number of lines it touches.
func cutHead[T text](s T, maxBytes, maxLines int) (end, lines int) {
	limit := min(len(s), maxBytes)
	pos := 0
	for lines < maxLines {
		j := indexNewline(s[pos:limit])
		if j < 0 {
			break
		}
		pos += j + 1
		lines++
	}
	if lines == maxLines || pos == len(s) {
		return pos, lines
	}
	// The byte budget ends inside a line. Stop at the last line end if that keeps at least half
	// of the budget, otherwise cut the line on a rune boundary.
	if pos > 0 && pos >= maxBytes/2 {
		return pos, lines
	}
	cut := limit
	for k := 0; k < utf8.UTFMax-1 && cut > pos && cut < len(s) && !utf8.RuneStart(s[cut]); k++ {
		cut--
	}
	if cut > pos {
		lines++
	}
	return cut, lines
}

// cutTail returns the start of the tail (at most maxBytes bytes and maxLines lines of s, never
// before h) and the number of lines it touches.
func cutTail[T text](s T, h, maxBytes, maxLines int) (start, lines int) {
	n := len(s)
	if maxLines < 1 {
		maxLines = 1
	}
	lo := max(h, n-maxBytes)
	start = n
	end := n
	if end > lo && s[end-1] == '\n' {
		end-- // the last line's own newline
	}
	for lines < maxLines {
		j := lastIndexNewline(s[lo:end])
		if j < 0 {
			break
		}
		start = lo + j + 1
		end = lo + j
		lines++
	}
	if lines == maxLines {
		return start, lines
	}
	// No newline left in s[lo:end]: the line containing lo is the next one.
	if lo == h || s[lo-1] == '\n' {
		return lo, lines + 1 // a whole line (or everything after the head) fits
	}
	if start < n && n-start >= maxBytes/2 {
		return start, lines
	}
	cut := lo
	for k := 0; k < utf8.UTFMax-1 && cut < n && !utf8.RuneStart(s[cut]); k++ {
		cut++
	}
	if cut < start {
		lines++
	}
	return cut, lines
}
