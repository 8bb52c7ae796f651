package recall

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// SearchRequest is one search of saved outputs.
type SearchRequest struct {
	// Query is a substring (ASCII letters match either case) or, with Regexp, an RE2 regular
	// expression (regexp package syntax; "(?i)" for case-insensitive). Lines are matched one
	// at a time.
	Query  string
	Regexp bool
	// Name limits the search to one saved output; "" searches every saved output of the
	// session, newest first.
	Name string
	// Context is the number of lines shown before and after each match: default 2, at most
	// MaxContextLines.
	Context int
	// Cursor resumes a search that a bound stopped: the value its result gave.
	Cursor string
}

const (
	// maxContextLines bounds SearchRequest.Context.
	maxContextLines = 10
	// defaultContextLines is SearchRequest.Context's default.
	defaultContextLines = 2
	// maxQueryBytes bounds a query (a regexp compiles to a program linear in its length).
	maxQueryBytes = 512
	// maxOutputsPerSearch bounds the outputs one search of every output opens.
	maxOutputsPerSearch = 200
	// scanBatch is the most chunks a search reads in one store call.
	scanBatch = 8
	// maxLineBytes is the longest line the scanner holds: a longer one is matched in pieces.
	maxLineBytes = 1 << 20
	// matchLineBytes and contextLineBytes bound how much of a line a result shows.
	matchLineBytes   = 320
	contextLineBytes = 160
)

// matcher finds a query in one line: the match's start and end, or -1.
type matcher interface {
	find(line []byte) (int, int)
}

type substring struct {
	folded []byte
	buf    []byte
}

func (s *substring) find(line []byte) (int, int) {
	s.buf = foldASCII(s.buf[:0], line)
	i := bytes.Index(s.buf, s.folded)
	if i < 0 {
		return -1, -1
	}
	return i, i + len(s.folded)
}

type pattern struct{ re *regexp.Regexp }

func (p pattern) find(line []byte) (int, int) {
	loc := p.re.FindIndex(line)
	if loc == nil {
		return -1, -1
	}
	return loc[0], loc[1]
}

// foldASCII appends b with ASCII capitals made small (same length as b).
func foldASCII(dst, b []byte) []byte {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func newMatcher(query string, isRegexp bool) (matcher, error) {
	switch {
	case query == "":
		return nil, inputErrorf("query is empty: pass a word or phrase from the output")
	case len(query) > maxQueryBytes:
		return nil, inputErrorf("query is %d bytes; at most %d", len(query), maxQueryBytes)
	case !utf8.ValidString(query):
		return nil, inputErrorf("query is not valid UTF-8")
	}
	if !isRegexp {
		return &substring{folded: foldASCII(nil, []byte(query))}, nil
	}
	re, err := regexp.Compile(query)
	if err != nil {
		return nil, inputErrorf("query is not a valid regular expression (RE2 syntax): %v", err)
	}
	return pattern{re}, nil
}

// cursor is where a search resumes: the index of the output in the newest-first list (0 when
// one output is searched) and the byte offset of the line to start at.
type cursor struct {
	index int
	off   int64
}

func (c cursor) String() string { return fmt.Sprintf("%d:%d", c.index, c.off) }

func parseCursor(s string) (cursor, error) {
	if s == "" {
		return cursor{}, nil
	}
	i, off, ok := strings.Cut(s, ":")
	idx, err1 := strconv.Atoi(i)
	o, err2 := strconv.ParseInt(off, 10, 64)
	if !ok || err1 != nil || err2 != nil || idx < 0 || o < 0 || idx > 1<<30 {
		return cursor{}, inputErrorf("cursor %q is not one a search returned (they look like \"2:1048576\")", clip(s, 40))
	}
	return cursor{index: idx, off: o}, nil
}

// SearchOutputs searches one saved output or every saved output of the session (newest first)
// line by line, and returns the matching lines with req.Context lines around each, grep-style
// ("N:" a matching line, "N-" a context line). It reads at most lim.MaxScanBytes, returns at most
// lim.MaxMatches matches in lim.MaxResultBytes, skips binary outputs when searching all of them,
// and says when a bound stopped it and which cursor continues.
func SearchOutputs(ctx context.Context, st Store, req SearchRequest, lim Limits) (*Result, error) {
	lim = lim.withDefaults()
	m, err := newMatcher(req.Query, req.Regexp)
	if err != nil {
		return nil, err
	}
	cur, err := parseCursor(req.Cursor)
	if err != nil {
		return nil, err
	}
	if req.Context < 0 || req.Context > maxContextLines {
		return nil, inputErrorf("context is %d lines; between 0 and %d", req.Context, maxContextLines)
	}
	s := &search{m: m, context: req.Context, lim: lim, deadline: time.Now().Add(lim.MaxScanTime), roomLines: lim.MaxResultLines - 2}
	if s.context == 0 && req.Context == 0 {
		s.context = defaultContextLines
	}
	// A group (its heading, one match and its context) always fits the line bound.
	s.context = min(s.context, (s.roomLines-2)/2)
	if req.Name != "" {
		if err := ValidateOutputName(req.Name); err != nil {
			return nil, err
		}
		o, err := openOutput(ctx, st, req.Name)
		if err != nil {
			return nil, notFound(err, req.Name)
		}
		if !o.lay.Text {
			return nil, inputErrorf("%s is binary (%s, %d bytes): it cannot be searched as text; read it with %s(name=%q, range=\"bytes=0-1023\")", req.Name, o.lay.MIMEType, o.lay.Size, ToolReadOutput, req.Name)
		}
		if cur.index != 0 || cur.off > o.lay.Size {
			return nil, inputErrorf("cursor %q does not belong to a search of %s", req.Cursor, req.Name)
		}
		if err := s.scan(ctx, o, 0, cur.off); err != nil {
			return nil, err
		}
		return s.result(req, 1), nil
	}
	return s.all(ctx, st, req, cur)
}

// all searches every saved output, newest first, from cur.
func (s *search) all(ctx context.Context, st Store, req SearchRequest, cur cursor) (*Result, error) {
	const page = 50
	visited := 0
	for skip := cur.index; !s.stopped(); skip += page {
		list, err := st.Recent(ctx, OutputPrefix, skip, page)
		if err != nil {
			return nil, err
		}
		for i, info := range list {
			idx := skip + i
			if s.stopped() {
				break
			}
			if visited == maxOutputsPerSearch {
				s.stop = fmt.Sprintf("searched %d outputs (the per-call bound)", visited)
				s.next = &cursor{index: idx}
				break
			}
			visited++
			o, err := openOutput(ctx, st, info.Name)
			if err != nil {
				continue // deleted since it was listed
			}
			if !o.lay.Text {
				s.binary++
				continue
			}
			from := int64(0)
			if idx == cur.index {
				from = min(cur.off, o.lay.Size)
			}
			if err := s.scan(ctx, o, idx, from); err != nil {
				return nil, err
			}
		}
		if len(list) < page {
			break
		}
	}
	return s.result(req, visited), nil
}

// search accumulates one search's matches and its stop reason.
type search struct {
	m       matcher
	context int
	lim     Limits

	out       strings.Builder
	lines     int // lines written to out
	roomLines int // lines out may hold (the result's header and footer aside)
	matches   int // matches written to out
	read      int64
	binary    int
	searched  int
	stop      string  // why it stopped early ("" when it did not)
	next      *cursor // where it resumes
	deadline  time.Time
	late      bool // the time bound refused a read
}

func (s *search) stopped() bool { return s.next != nil }

// shownLine is one line of a match group.
type shownLine struct {
	no    int64
	match bool
	text  string
}

// matchGroup is the lines shown for nearby matches of one output, not yet written.
type matchGroup struct {
	lines   []shownLine
	matches int
	off     int64 // byte offset of its first match line
	last    int64 // number of its last line; 0 before any
}

// scan searches output o (list index idx) from byte offset from (a line start).
func (s *search) scan(ctx context.Context, o *output, idx int, from int64) error {
	if from < o.lay.Size && s.read > 0 {
		switch {
		case time.Now().After(s.deadline):
			s.next, s.stop = &cursor{idx, from}, fmt.Sprintf("searched for %s (the per-call bound)", s.lim.MaxScanTime)
			return nil
		case s.read+int64(o.lay.Chunks[o.chunkAt(from)].Size) > s.lim.MaxScanBytes:
			s.next, s.stop = &cursor{idx, from}, fmt.Sprintf("read %d bytes (the per-call bound)", s.read)
			return nil
		}
	}
	s.searched++
	ls, err := newLineScanner(ctx, o, from)
	if err != nil {
		return err
	}
	defer func() { s.read += o.read; o.read = 0 }()
	canRead := func(n int) bool {
		if s.read+o.read > 0 && time.Now().After(s.deadline) {
			s.late = true
			return false
		}
		return s.read+o.read == 0 || s.read+o.read+int64(n) <= s.lim.MaxScanBytes
	}
	var (
		before  []shownLine
		g       matchGroup
		after   int
		written bool // the output's header is written
	)
	stopAt := func(off int64, why string) {
		if !s.flush(&g, o, &written) {
			off, why = g.off, "the result is full"
		}
		s.next, s.stop = &cursor{idx, off}, why
	}
	for {
		line, off, no, ok, err := ls.next(ctx, canRead)
		if err != nil {
			return err
		}
		if !ok {
			if ls.stoppedAt >= 0 && s.late {
				stopAt(ls.stoppedAt, fmt.Sprintf("searched for %s (the per-call bound)", s.lim.MaxScanTime))
			} else if ls.stoppedAt >= 0 {
				stopAt(ls.stoppedAt, fmt.Sprintf("read %d bytes (the per-call bound)", s.read+o.read))
			} else if !s.flush(&g, o, &written) {
				s.next, s.stop = &cursor{idx, g.off}, "the result is full"
			}
			return nil
		}
		if start, end := s.m.find(line); start >= 0 {
			if s.matches+g.matches == s.lim.MaxMatches {
				stopAt(off, fmt.Sprintf("found %d matches (the per-call bound)", s.lim.MaxMatches))
				return nil
			}
			if g.matches > 0 && no > g.last+1 && !s.flush(&g, o, &written) {
				s.next, s.stop = &cursor{idx, g.off}, "the result is full"
				return nil
			}
			var newBefore int
			for _, b := range before {
				if b.no > g.last {
					newBefore++
				}
			}
			// The group's heading, its lines, this match with its context: past the line bound,
			// the result stops here (a group alone always fits: the next call shows it).
			if s.lines+1+len(g.lines)+newBefore+1+s.context > s.roomLines {
				stopAt(off, "the result is full")
				return nil
			}
			if g.matches == 0 {
				g.off = off
			}
			for _, b := range before {
				if b.no > g.last {
					g.lines = append(g.lines, b)
				}
			}
			g.lines = append(g.lines, shownLine{no, true, excerptAround(line, start, end)})
			g.matches++
			g.last, after = no, s.context
		} else if after > 0 {
			g.lines = append(g.lines, shownLine{no, false, clipLine(line, contextLineBytes)})
			g.last = no
			after--
		}
		if s.context > 0 {
			before = append(before, shownLine{no, false, clipLine(line, contextLineBytes)})
			if len(before) > s.context {
				before = before[1:]
			}
		}
	}
}

// flush writes g to the result when it fits, and reports whether it did (or g was empty).
func (s *search) flush(g *matchGroup, o *output, written *bool) bool {
	if g.matches == 0 {
		return true
	}
	var b strings.Builder
	if !*written {
		fmt.Fprintf(&b, "== %s (%d lines)\n", o.name, o.lay.Lines())
	} else {
		b.WriteString("--\n")
	}
	for _, l := range g.lines {
		sep := "-"
		if l.match {
			sep = ":"
		}
		fmt.Fprintf(&b, "%d%s%s\n", l.no, sep, l.text)
	}
	lines := 1 + len(g.lines)
	if s.out.Len()+b.Len() > s.lim.MaxResultBytes-headerReserve || s.lines+lines > s.roomLines {
		return false
	}
	*written = true
	s.out.WriteString(b.String())
	s.lines += lines
	s.matches += g.matches
	last := g.last
	*g = matchGroup{lines: g.lines[:0], last: last}
	return true
}

// lineScanner reads an output's lines from a line start, chunk by chunk.
type lineScanner struct {
	o     *output
	chunk int // next chunk to read
	data  []byte
	off   int64 // offset of data[0]
	no    int64 // number of the line starting at off
	// stoppedAt is the offset of the first line not read when canRead refused a chunk; -1.
	stoppedAt int64
}

func newLineScanner(ctx context.Context, o *output, from int64) (*lineScanner, error) {
	ls := &lineScanner{o: o, off: from, stoppedAt: -1}
	if from >= o.lay.Size {
		ls.chunk = len(o.lay.Chunks)
		return ls, nil
	}
	no, err := o.lineOf(ctx, from)
	if err != nil {
		return nil, err
	}
	ls.no, ls.chunk = no, o.chunkAt(from)
	cs, err := o.chunks(ctx, ls.chunk, ls.chunk)
	if err != nil {
		return nil, err
	}
	ls.data = cs[0][from-o.lay.starts[ls.chunk]:]
	ls.chunk++
	return ls, nil
}

// next returns the next line (without its '\n'), its offset and number; ok false at the end or
// when canRead refuses the next chunk (then stoppedAt is set).
func (ls *lineScanner) next(ctx context.Context, canRead func(int) bool) (line []byte, off, no int64, ok bool, err error) {
	for {
		if nl := bytes.IndexByte(ls.data, '\n'); nl >= 0 || len(ls.data) >= maxLineBytes || ls.chunk == len(ls.o.lay.Chunks) && len(ls.data) > 0 {
			n := len(ls.data)
			if nl >= 0 {
				n = nl
			}
			n = min(n, maxLineBytes)
			line, off, no = ls.data[:n], ls.off, ls.no
			skip := n
			if nl == n {
				skip++
				ls.no++
			}
			ls.data, ls.off = ls.data[skip:], ls.off+int64(skip)
			return line, off, no, true, nil
		}
		if ls.chunk == len(ls.o.lay.Chunks) {
			return nil, 0, 0, false, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, 0, false, err
		}
		// Read up to scanBatch chunks in one store call, as many as the bound allows.
		n, size := 0, 0
		for ls.chunk+n < len(ls.o.lay.Chunks) && n < scanBatch && canRead(size+ls.o.lay.Chunks[ls.chunk+n].Size) {
			size += ls.o.lay.Chunks[ls.chunk+n].Size
			n++
		}
		if n == 0 {
			ls.stoppedAt = ls.off
			return nil, 0, 0, false, nil
		}
		cs, err := ls.o.chunks(ctx, ls.chunk, ls.chunk+n-1)
		if err != nil {
			return nil, 0, 0, false, err
		}
		ls.chunk += n
		if len(ls.data) == 0 && n == 1 {
			ls.data = cs[0]
			continue
		}
		buf := make([]byte, 0, len(ls.data)+size)
		buf = append(buf, ls.data...)
		for _, c := range cs {
			buf = append(buf, c...)
		}
		ls.data = buf
	}
}

// result formats the search's result.
func (s *search) result(req SearchRequest, outputs int) *Result {
	kind := "substring"
	if req.Regexp {
		kind = "regexp"
	}
	where := "every saved output of this session, newest first"
	if req.Name != "" {
		where = req.Name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q in %s: %d matches in %d outputs searched (%d bytes read)", kind, clip(req.Query, 80), where, s.matches, s.searched, s.read)
	if s.binary > 0 {
		fmt.Fprintf(&b, "; %d binary outputs skipped", s.binary)
	}
	b.WriteString("\n")
	b.WriteString(s.out.String())
	switch {
	case s.next != nil:
		fmt.Fprintf(&b, "[stopped early: %s; continue with the same query and cursor=%q]", s.stop, s.next.String())
	case s.matches == 0:
		b.WriteString("[no match]")
	default:
		b.WriteString("[end of matches]")
	}
	return &Result{Text: b.String(), BytesRead: s.read}
}

// excerptAround returns line, or the part of it around [start, end) when it is longer than
// matchLineBytes, cut on rune boundaries with "…" where cut.
func excerptAround(line []byte, start, end int) string {
	if len(line) <= matchLineBytes {
		return sanitize(line)
	}
	from := max(0, start-matchLineBytes/3)
	to := min(len(line), max(end, from+matchLineBytes))
	to = min(to, from+matchLineBytes)
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	to = runeFloor(line, to)
	out := sanitize(line[from:to])
	if from > 0 {
		out = "…" + out
	}
	if to < len(line) {
		out += "…"
	}
	return out
}

// clipLine returns line's head of at most n bytes, "…" when cut.
func clipLine(line []byte, n int) string {
	if len(line) <= n {
		return sanitize(line)
	}
	return sanitize(line[:runeFloor(line, n)]) + "…"
}

// sanitize returns b as a string with invalid UTF-8 shown as U+FFFD and a trailing '\r' dropped.
func sanitize(b []byte) string {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
