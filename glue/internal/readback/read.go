package readback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/adkctx/adkctx/recall"
)

// Result is what a recall call returns: the text for the model and what it cost.
type Result struct {
	// Text is the result, at most Limits.MaxResultBytes long.
	Text string
	// BytesRead counts the bytes read from storage.
	BytesRead int64
}

// headerReserve is the room a page keeps for its header and footer lines.
const headerReserve = 512

// ReadOutput returns one page of the saved output name: the lines or bytes rangeSpec asks for
// ([ParseRange]), as many as fit in lim.MaxResultBytes, with a header saying which part of how
// much it shows and a footer naming the range that continues. Text is shown with line numbers
// (lines mode) or as it is (bytes mode); a binary output only in bytes mode, as a hex dump.
func ReadOutput(ctx context.Context, st recall.Store, name, rangeSpec string, lim Limits) (*Result, error) {
	if err := ValidateOutputName(name); err != nil {
		return nil, err
	}
	r, err := ParseRange(rangeSpec)
	if err != nil {
		return nil, err
	}
	lim = lim.withDefaults()
	o, err := openOutput(ctx, st, name)
	if err != nil {
		return nil, notFound(err, name)
	}
	var text string
	switch {
	case o.lay.Size == 0:
		text = fmt.Sprintf("%s · empty (0 bytes)", name)
	case r.Unit == Lines && !o.lay.Text:
		return nil, inputErrorf("%s is binary (%s, %d bytes), not lines of text: read it as a hex dump with range=\"bytes=0-1023\"", name, o.lay.MIMEType, o.lay.Size)
	case r.Unit == Lines:
		text, err = o.pageLines(ctx, r, lim)
	default:
		text, err = o.pageBytes(ctx, r, lim)
	}
	if err != nil {
		return nil, err
	}
	return &Result{Text: text, BytesRead: o.read}, nil
}

// notFound turns a store's "not found" into the message the model reads.
func notFound(err error, name string) error {
	if errors.Is(err, fs.ErrNotExist) {
		return inputErrorf("no saved output named %q in this session (names come from truncation notes; %s(query=…) searches all of them)", clip(name, 120), recall.ToolSearchOutputs)
	}
	return err
}

// pageLines shows lines r asks for, within lim's bounds.
func (o *output) pageLines(ctx context.Context, r Range, lim Limits) (string, error) {
	room, roomLines := lim.MaxResultBytes-headerReserve, int64(lim.MaxResultLines-2) // header and footer lines
	total := o.totalLines()
	start, end := r.Start, total
	if r.Last > 0 {
		start = max(1, total-r.Last+1)
	} else if r.Bounded {
		end = min(r.End, total)
	}
	if start > total {
		return "", inputErrorf("%s has %d lines; line %d does not exist (ask for lines 1-%d, or \"-50\" for the last 50)", o.name, total, start, total)
	}
	off, err := o.lineStart(ctx, start)
	if err != nil {
		return "", err
	}
	buf, err := o.readAt(ctx, off, off+int64(room))
	if err != nil {
		return "", err
	}
	var body strings.Builder
	line, pos := start, 0
	for line <= end && pos < len(buf) && line-start < roomLines {
		nl := bytes.IndexByte(buf[pos:], '\n')
		complete := nl >= 0 || off+int64(len(buf)) == o.lay.Size
		if nl < 0 {
			nl = len(buf) - pos
		}
		prefix := fmt.Sprintf("%d\t", line)
		if !complete || body.Len()+len(prefix)+nl+1 > room {
			break
		}
		body.WriteString(prefix)
		body.Write(buf[pos : pos+nl])
		body.WriteByte('\n')
		pos += nl + 1
		line++
	}
	shownEnd := off + int64(min(pos, len(buf)))
	if line == start {
		// The first line alone does not fit: show its head, continue in bytes.
		cut := runeFloor(buf, max(room-32, 1))
		next := off + int64(cut)
		return fmt.Sprintf("%s · line %d of %d is too long for one page: bytes %d-%d of %d\n%s\n[line %d continues: range=\"bytes=%d-\"]",
			o.name, start, total, off, next-1, o.lay.Size, buf[:cut], start, next), nil
	}
	last := line - 1
	head := fmt.Sprintf("%s · lines %d-%d of %d · bytes %d-%d of %d\n", o.name, start, last, total, off, shownEnd-1, o.lay.Size)
	var foot string
	switch {
	case last >= total:
		foot = "[end of output]"
	case last >= end:
		foot = fmt.Sprintf("[end of the range asked for; more: range=\"%d-\"]", last+1)
	default:
		foot = fmt.Sprintf("[next page: range=\"%d-\"]", last+1)
	}
	return head + body.String() + foot, nil
}

// pageBytes shows the bytes r asks for, within lim's bounds: text as it is (cut on UTF-8
// boundaries), binary as a hex dump.
func (o *output) pageBytes(ctx context.Context, r Range, lim Limits) (string, error) {
	room, roomLines := lim.MaxResultBytes-headerReserve, lim.MaxResultLines-2 // header and footer lines
	size := o.lay.Size
	start, end := r.Start, size // end exclusive
	if r.Last > 0 {
		start = max(0, size-r.Last)
	} else if r.Bounded {
		end = min(r.End+1, size)
	}
	if start >= size {
		return "", inputErrorf("%s has %d bytes; byte %d does not exist (bytes count from 0)", o.name, size, start)
	}
	perLine := 16
	capacity := int64(room)
	if !o.lay.Text {
		capacity = int64(min(room/hexLineBytes, roomLines) * perLine)
	}
	stop := min(end, start+capacity)
	buf, err := o.readAt(ctx, start, stop)
	if err != nil {
		return "", err
	}
	var body string
	if o.lay.Text {
		// Start and stop on rune boundaries: a cut rune is shown whole or not at all.
		skip := 0
		for skip < len(buf) && skip < utf8.UTFMax && !utf8.RuneStart(buf[skip]) {
			skip++
		}
		cut := len(buf)
		if stop < size {
			cut = max(runeFloor(buf, len(buf)), skip)
		}
		buf = firstLines(buf[skip:cut], roomLines)
		start += int64(skip)
		stop = start + int64(len(buf))
		body = string(buf)
	} else {
		body = hexDump(buf, start)
	}
	if len(buf) == 0 {
		return "", inputErrorf("%s: bytes %d-%d are inside one character; ask for a wider range", o.name, r.Start, end-1)
	}
	lineNo, err := o.lineOf(ctx, start)
	if err != nil {
		return "", err
	}
	head := fmt.Sprintf("%s · bytes %d-%d of %d", o.name, start, stop-1, size)
	if o.lay.Text {
		head += fmt.Sprintf(" · from line %d of %d", lineNo, o.totalLines())
	} else {
		head += fmt.Sprintf(" · binary (%s), hex dump", o.lay.MIMEType)
	}
	var foot string
	switch {
	case stop >= size:
		foot = "[end of output]"
	case stop >= end:
		foot = fmt.Sprintf("[end of the range asked for; more: range=\"bytes=%d-\"]", stop)
	default:
		foot = fmt.Sprintf("[next page: range=\"bytes=%d-\"]", stop)
	}
	sep := "\n"
	if strings.HasSuffix(body, "\n") {
		sep = ""
	}
	return head + "\n" + body + sep + foot, nil
}

// firstLines returns the head of b holding at most n lines: b when it has fewer, else up to and
// including its n-th line break.
func firstLines(b []byte, n int) []byte {
	end := 0
	for range n {
		i := bytes.IndexByte(b[end:], '\n')
		if i < 0 {
			return b
		}
		end += i + 1
	}
	if end == len(b) {
		return b
	}
	return b[:end]
}

// lastLines returns the tail of b holding at most n lines: b when it has fewer, else what
// follows the line break before them (a final line break ends the last line).
func lastLines(b []byte, n int) []byte {
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	for range n {
		i := bytes.LastIndexByte(b[:end], '\n')
		if i < 0 {
			return b
		}
		end = i
	}
	return b[end+1:]
}

// runeFloor returns the largest n' ≤ n such that b[:n'] does not end inside a UTF-8 sequence
// (invalid bytes count as whole).
func runeFloor(b []byte, n int) int {
	n = min(max(n, 0), len(b))
	// The last rune start at or before n-1, and whether its sequence is complete before n.
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:n]) {
				return n
			}
			return i
		}
	}
	return n
}

// hexLineBytes is the length of one hexDump line.
const hexLineBytes = 8 + 2 + 16*3 + 1 + 16 + 2

// hexDump formats b like `xxd -g 1`: offset, 16 bytes in hex, their printable ASCII.
func hexDump(b []byte, base int64) string {
	var s strings.Builder
	for i := 0; i < len(b); i += 16 {
		row := b[i:min(i+16, len(b))]
		fmt.Fprintf(&s, "%08x  ", base+int64(i))
		for j := range 16 {
			if j < len(row) {
				fmt.Fprintf(&s, "%02x ", row[j])
			} else {
				s.WriteString("   ")
			}
		}
		s.WriteString(" ")
		for _, c := range row {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			s.WriteByte(c)
		}
		s.WriteString("\n")
	}
	return s.String()
}
