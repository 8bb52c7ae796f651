package readback

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adkctx/adkctx/recall"
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

func newMatcher(query string, isRegexp bool, budget int64) (*matcher, error) {
	switch {
	case query == "":
		return nil, inputErrorf("query is empty: pass a word or phrase from the output")
	case len(query) > maxQueryBytes:
		return nil, inputErrorf("query is %d bytes; at most %d", len(query), maxQueryBytes)
	case !utf8.ValidString(query):
		return nil, inputErrorf("query is not valid UTF-8")
	}
	if !isRegexp {
		return substringMatcher(query, budget), nil
	}
	return regexpMatcher(query, budget)
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
//
// It returns within lim.MaxScanTime, or before ctx's deadline when that comes first (keeping a
// fifth of the time left, at most 1 s, to write its result), plus one match call of at most
// pieceWork and one store call: every match call is bounded by measuring the pattern first
// (a regular expression too costly to bound is refused with a *PatternError), and the clock and
// ctx are checked between calls. A line longer than one call can match is matched in
// overlapping pieces.
func SearchOutputs(ctx context.Context, st recall.Store, req SearchRequest, lim Limits) (*Result, error) {
	res, _, err := searchOutputs(ctx, st, req, lim, searchEnv{now: time.Now, pieceWork: pieceWork})
	return res, err
}

// searchEnv is what tests change of a search: its clock and the work of one match call.
type searchEnv struct {
	now       func() time.Time
	pieceWork int64
}

// searchOutputs is SearchOutputs in env; it returns the search too (its work, for tests).
func searchOutputs(ctx context.Context, st recall.Store, req SearchRequest, lim Limits, env searchEnv) (*Result, *search, error) {
	lim = lim.withDefaults()
	m, err := newMatcher(req.Query, req.Regexp, env.pieceWork)
	if err != nil {
		return nil, nil, err
	}
	cur, err := parseCursor(req.Cursor)
	if err != nil {
		return nil, nil, err
	}
	if req.Context < 0 || req.Context > maxContextLines {
		return nil, nil, inputErrorf("context is %d lines; between 0 and %d", req.Context, maxContextLines)
	}
	s := &search{m: m, context: req.Context, lim: lim, roomLines: lim.MaxResultLines - 2, now: env.now, pieceWork: env.pieceWork}
	s.setDeadline(ctx)
	if s.context == 0 && req.Context == 0 {
		s.context = defaultContextLines
	}
	// A group (its heading, one match and its context) always fits the line bound.
	s.context = min(s.context, (s.roomLines-2)/2)
	if req.Name != "" {
		if err := ValidateOutputName(req.Name); err != nil {
			return nil, nil, err
		}
		o, err := openOutput(ctx, st, req.Name)
		if err != nil {
			return nil, nil, notFound(err, req.Name)
		}
		if !o.lay.Text {
			return nil, nil, inputErrorf("%s is binary (%s, %d bytes): it cannot be searched as text; read it with %s(name=%q, range=\"bytes=0-1023\")", req.Name, o.lay.MIMEType, o.lay.Size, recall.ToolReadOutput, req.Name)
		}
		if cur.index != 0 || cur.off > o.lay.Size {
			return nil, nil, inputErrorf("cursor %q does not belong to a search of %s", req.Cursor, req.Name)
		}
		if err := s.scan(ctx, o, 0, cur.off); err != nil {
			return nil, nil, err
		}
		return s.result(req, 1), s, nil
	}
	res, err := s.all(ctx, st, req, cur)
	return res, s, err
}

// all searches every saved output, newest first, from cur.
func (s *search) all(ctx context.Context, st recall.Store, req SearchRequest, cur cursor) (*Result, error) {
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
	m       *matcher
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

	now       func() time.Time
	pieceWork int64 // the work one match call may do: pieceWork outside tests
	deadline  time.Time
	bound     time.Duration // deadline less the start
	timeUp    bool          // the time bound refused a read
	// work is the matching work done (bytes × matcher.perByte), pieces the match calls that
	// cost any, maxPiece the costliest, matching the time they took; piece is the bytes the
	// next one is given.
	work, maxPiece int64
	pieces, piece  int
	matching       time.Duration
	// pieced: a line was matched in pieces.
	pieced bool
}

// setDeadline sets when the search stops: lim.MaxScanTime from now, or earlier when ctx ends
// sooner, keeping a fifth of what is left (at most 1 s) to return a result before ctx ends: a
// tool timeout shorter than MaxScanTime ends the call with a cursor, not an error.
func (s *search) setDeadline(ctx context.Context) {
	start := s.now()
	s.bound = s.lim.MaxScanTime
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		s.bound = min(s.bound, max(left-min(left/5, time.Second), 0))
	}
	s.deadline = start.Add(s.bound)
}

// minMatching is the matching time (or pieceWork, whichever comes first) a search always does:
// each call moves its cursor on by at least that much, whatever its deadline.
const minMatching = 20 * time.Millisecond

// late reports whether work units of matching, at the rate seen so far, would end past the
// deadline (work 0: whether the deadline passed); never before minMatching.
func (s *search) late(work int64) bool {
	if s.work < s.pieceWork && s.matching < minMatching {
		return false
	}
	return s.now().Add(time.Duration(s.rate() * float64(work))).After(s.deadline)
}

// rate is the average time of a unit of work so far (one preempted call does not skew it).
func (s *search) rate() float64 {
	if s.work == 0 {
		return 0
	}
	return float64(s.matching) / float64(s.work)
}

// timeReason is the stop note of the time bound.
func (s *search) timeReason() string {
	return fmt.Sprintf("the time bound (%s) was reached", s.bound.Round(time.Millisecond))
}

// match finds the query in line (which starts at offset off of its output), in pieces of at
// most matcher.piece bytes: the first match's start and end, or -1. stop, when not -1, is the
// offset of the first piece the time bound left unmatched.
func (s *search) match(ctx context.Context, line []byte, off int64) (start, end int, stop int64, err error) {
	m := s.m
	for from := 0; ; {
		if s.piece == 0 {
			s.piece = m.piece
		}
		overlap := m.overlap
		if m.unbounded {
			overlap = s.piece / 4
		}
		to := min(len(line), from+s.piece)
		work := int64(to-from) * m.perByte
		if work > 0 {
			// The time bound first: a process starved past both its deadline and ctx's (a busy
			// machine) still returns what it found, with a cursor, not ctx's error.
			if s.late(work) {
				return -1, -1, off + int64(from), nil
			}
			if err := ctx.Err(); err != nil {
				return -1, -1, -1, err
			}
		}
		s.pieced = s.pieced || to-from < len(line)
		t := s.now()
		i, j := m.find(line[from:to])
		if work > 0 {
			s.work += work
			s.pieces++
			s.maxPiece = max(s.maxPiece, work)
			s.matching += s.now().Sub(t)
			// Aim the next piece at pieceTime at the rate seen.
			if r := s.rate() * float64(m.perByte); r > 0 {
				s.piece = int(min(max(float64(pieceTime)/r, float64(m.minPiece)), float64(m.piece)))
			}
		}
		if i >= 0 {
			return from + i, from + j, -1, nil
		}
		if to == len(line) {
			return -1, -1, -1, nil
		}
		from = to - overlap
	}
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
		case s.late(0):
			s.next, s.stop = &cursor{idx, from}, s.timeReason()
			return nil
		case s.read+int64(o.lay.Chunks[o.chunkAt(from)].Size) > s.lim.MaxScanBytes:
			s.next, s.stop = &cursor{idx, from}, fmt.Sprintf("read %d bytes (the per-call bound)", s.read)
			return nil
		}
	}
	s.searched++
	ls, err := newLineScanner(ctx, o, from, s.m.overlap)
	if err != nil {
		return err
	}
	defer func() { s.read += o.read; o.read = 0 }()
	canRead := func(n int) bool {
		if s.late(0) {
			s.timeUp = true
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
			if ls.stoppedAt >= 0 && s.timeUp {
				stopAt(ls.stoppedAt, s.timeReason())
			} else if ls.stoppedAt >= 0 {
				stopAt(ls.stoppedAt, fmt.Sprintf("read %d bytes (the per-call bound)", s.read+o.read))
			} else if !s.flush(&g, o, &written) {
				s.next, s.stop = &cursor{idx, g.off}, "the result is full"
			}
			return nil
		}
		start, end, stop, err := s.match(ctx, line, off)
		if err != nil {
			return err
		}
		if stop >= 0 {
			stopAt(stop, s.timeReason())
			return nil
		}
		if start >= 0 {
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
		fmt.Fprintf(&b, "== %s (%d lines)\n", o.name, o.totalLines())
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
	// overlap is what consecutive parts of a line longer than maxLineBytes share (the
	// matcher's overlap).
	overlap int
}

func newLineScanner(ctx context.Context, o *output, from int64, overlap int) (*lineScanner, error) {
	ls := &lineScanner{o: o, off: from, stoppedAt: -1, overlap: overlap}
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
	ls.data = cs[0][from-o.starts[ls.chunk]:]
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
			switch {
			case nl == n:
				skip++
				ls.no++
			case n < len(ls.data) || ls.chunk < len(ls.o.lay.Chunks):
				skip -= ls.overlap // a part of a longer line: the next part starts overlap earlier
			}
			ls.data, ls.off = ls.data[skip:], ls.off+int64(skip)
			return line, off, no, true, nil
		}
		if ls.chunk == len(ls.o.lay.Chunks) {
			return nil, 0, 0, false, nil
		}
		// Read up to scanBatch chunks in one store call, as many as the bound allows (canRead
		// asks the time bound before ctx is asked, as match does).
		n, size := 0, 0
		for ls.chunk+n < len(ls.o.lay.Chunks) && n < scanBatch && canRead(size+ls.o.lay.Chunks[ls.chunk+n].Size) {
			size += ls.o.lay.Chunks[ls.chunk+n].Size
			n++
		}
		if n == 0 {
			ls.stoppedAt = ls.off
			return nil, 0, 0, false, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, 0, false, err
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
	// Pieces share the longest match of a bounded pattern: only assertions can differ.
	switch {
	case s.pieced && s.m.unbounded:
		fmt.Fprintf(&b, "; long lines matched in overlapping pieces: a match over %d bytes across two may be missed", s.m.minPiece/4+1)
	case s.pieced && s.m.edges:
		b.WriteString("; long lines matched in overlapping pieces: ^ $ \\b also match at their edges")
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
