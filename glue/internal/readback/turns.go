package readback

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/adkctx/adkctx/recall"
)

// Turn labels. A segment this release writes numbers its turns as the user counts them, within
// the reader's isolation scope (turn 1 is the session's first user message, one turn per
// invocation): "turn 7", and "turn 7, entry 3" for the third entry (message, call or result) of
// it as read_turn shows the turn. A turn a compaction split keeps its number in each segment
// that holds part of it, and read_turn shows its parts as one turn. The previous release's
// segments label turns by segment ("turn 2.4": the fourth turn of segment 2); they keep those
// labels.

// historyReader opens a session's history segments for one call, each at most once, and counts
// what they read.
type historyReader struct {
	st   recall.Store
	v    Viewer
	segs map[int]*openedSegment // nil: the segment does not exist
}

func newHistoryReader(st recall.Store, v Viewer) *historyReader {
	return &historyReader{st: st, v: v, segs: map[int]*openedSegment{}}
}

// maxSegmentsPerCall bounds the segments one call opens (a search's, and those it opens to
// locate a turn).
const maxSegmentsPerCall = maxSegmentsPerSearch + 64

// open returns segment seq, nil when it does not exist.
func (r *historyReader) open(ctx context.Context, seq int) (*openedSegment, error) {
	if s, ok := r.segs[seq]; ok {
		return s, nil
	}
	if len(r.segs) >= maxSegmentsPerCall {
		return nil, inputErrorf("the history is too long to find that turn within this call's bounds (%d segments opened): use the labels %s gives", len(r.segs), recall.ToolSearchHistory)
	}
	s, err := openSegment(ctx, r.st, seq)
	if err == errNoSegment {
		r.segs[seq] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.segs[seq] = s
	return s, nil
}

// read returns the bytes the segments opened have read.
func (r *historyReader) read() int64 {
	var n int64
	for _, s := range r.segs {
		if s != nil {
			n += s.o.read
		}
	}
	return n
}

// numbered reports whether s labels its turns by number (a segment of this release written with
// the turns' count).
func (s *openedSegment) numbered() bool {
	return s.header.Format >= segmentFormat && len(s.header.Turns) > 0 && s.header.Turns[0].No > 0
}

// turnRange returns the lowest and highest turn numbers of a numbered segment.
func (s *openedSegment) turnRange() (first, last int) {
	first, last = s.header.Turns[0].No, s.header.Turns[0].No
	for _, t := range s.header.Turns[1:] {
		first, last = min(first, t.No), max(last, t.No)
	}
	return first, last
}

// turnOf returns the index of turn number n in s, -1 when s does not hold it.
func (s *openedSegment) turnOf(n int) int {
	for t, te := range s.header.Turns {
		if te.No == n {
			return t
		}
	}
	return -1
}

// label is the label of turn t of s.
func (s *openedSegment) label(t int) string {
	if s.numbered() {
		return fmt.Sprintf("turn %d", s.header.Turns[t].No)
	}
	return fmt.Sprintf("turn %d.%d", s.seq, t+1)
}

// turnPart is the part of a turn one segment holds.
type turnPart struct {
	seg  *openedSegment
	turn int
}

// entryRef is one entry of a segment.
type entryRef struct {
	seg *openedSegment
	i   int
}

// visible returns the entries of parts the reader sees, in order.
func (r *historyReader) visible(parts []turnPart) []entryRef {
	var out []entryRef
	for _, p := range parts {
		for i, e := range p.seg.header.Entries {
			if e.Turn == p.turn && r.v.sees(e) {
				out = append(out, entryRef{p.seg, i})
			}
		}
	}
	return out
}

// nearestOurs returns the nearest numbered segment of the reader's scope from seq towards
// floor (step -1) or ceil (step +1), skipping missing segments and other scopes; nil when there
// is none, or when a segment of the previous release comes first (they are all older than the
// numbered ones).
func (r *historyReader) nearestOurs(ctx context.Context, seq, step, limit int) (*openedSegment, error) {
	for ; step < 0 && seq >= limit || step > 0 && seq <= limit; seq += step {
		s, err := r.open(ctx, seq)
		switch {
		case err != nil:
			return nil, err
		case s == nil:
		case !s.numbered():
			return nil, nil
		case s.header.Scope == r.v.Scope:
			return s, nil
		}
	}
	return nil, nil
}

// locate returns the parts of turn number n, oldest first (none when no segment holds it): a
// search of the segments by their turn numbers — interpolated, since segments hold similar
// numbers of turns, so it usually opens two or three — then the neighbours that hold more of
// the turn.
func (r *historyReader) locate(ctx context.Context, n, newest int) ([]turnPart, error) {
	var found *openedSegment
	// Segments below lo hold turns up to loTurn, segments above hi turns from hiTurn.
	lo, hi, loTurn, hiTurn := 1, newest, 0, 0
	top, err := r.nearestOurs(ctx, newest, -1, 1)
	if err != nil || top == nil {
		return nil, err
	}
	_, last := top.turnRange()
	if n > last {
		return nil, nil
	}
	hiTurn = last + 1
	for lo <= hi && found == nil {
		mid := lo + int(float64(hi-lo+1)*float64(n-loTurn)/float64(max(hiTurn-loTurn, 1)))
		mid = min(max(mid, lo), hi)
		s, err := r.nearestOurs(ctx, mid, -1, lo)
		if err != nil {
			return nil, err
		}
		if s == nil {
			lo = mid + 1
			continue
		}
		switch first, last := s.turnRange(); {
		case n < first:
			hi, hiTurn = s.seq-1, first
		case n > last:
			lo, loTurn = mid+1, last
		default:
			found = s
		}
	}
	if found == nil {
		return nil, nil
	}
	parts := []turnPart{{found, found.turnOf(n)}}
	for s := found; ; {
		first, _ := s.turnRange()
		if first != n {
			break
		}
		prev, err := r.nearestOurs(ctx, s.seq-1, -1, 1)
		if err != nil {
			return nil, err
		}
		if prev == nil || prev.turnOf(n) < 0 {
			break
		}
		parts = append([]turnPart{{prev, prev.turnOf(n)}}, parts...)
		s = prev
	}
	for s := found; ; {
		if _, last := s.turnRange(); last != n {
			break
		}
		next, err := r.nearestOurs(ctx, s.seq+1, +1, newest)
		if err != nil {
			return nil, err
		}
		if next == nil || next.turnOf(n) < 0 {
			break
		}
		parts = append(parts, turnPart{next, next.turnOf(n)})
		s = next
	}
	return parts, nil
}

// entryNumber returns the number read_turn gives entry i of seg within its turn: the entries of
// the turn the reader sees before it, in this segment and in the earlier parts of the turn.
func (r *historyReader) entryNumber(ctx context.Context, seg *openedSegment, i int) (int, error) {
	t := seg.header.Entries[i].Turn
	n := 1
	for _, e := range seg.header.Entries[:i] {
		if e.Turn == t && r.v.sees(e) {
			n++
		}
	}
	if !seg.numbered() {
		return n, nil
	}
	no := seg.header.Turns[t].No
	for s := seg; ; {
		if first, _ := s.turnRange(); first != no {
			return n, nil
		}
		prev, err := r.nearestOurs(ctx, s.seq-1, -1, 1)
		if err != nil || prev == nil || prev.turnOf(no) < 0 {
			return n, err
		}
		n += len(r.visible([]turnPart{{prev, prev.turnOf(no)}}))
		s = prev
	}
}

// TurnRequest asks for one covered turn.
type TurnRequest struct {
	// Turn is the turn's label as search results give it: "turn 7", "7", or "turn 7, entry 3"
	// (then From is 3 unless From or Entry is set); "turn 2.4" names a turn of a segment the
	// previous release wrote.
	Turn string
	// Whole shows tool results whole instead of as excerpts.
	Whole bool
	// From is the first entry shown (from 1); 0 means 1.
	From int
	// Entry, when > 0, shows only that entry, paged by Range (see [ParseRange]).
	Entry int
	Range string
}

// ReadTurn shows one turn of the history as the viewer sees it: each message, call and result
// with its label, tool results as excerpts (head and tail, lim.ExcerptBytes, with the cut marks
// of what they leave out) unless req.Whole, within lim.MaxResultBytes; the footer names the call
// that shows the rest. It reads the headers of a few segments to find the turn (a binary search
// by turn number) and the turn's entries.
func ReadTurn(ctx context.Context, st recall.Store, v Viewer, req TurnRequest, lim Limits) (*Result, error) {
	lim = lim.withDefaults()
	ref, err := parseTurn(req.Turn)
	if err != nil {
		return nil, err
	}
	r := newHistoryReader(st, v)
	newest, err := newestSegment(ctx, st)
	if err != nil {
		return nil, err
	}
	var parts []turnPart
	if ref.no > 0 {
		if parts, err = r.locate(ctx, ref.no, newest); err != nil {
			return nil, err
		}
		if parts == nil {
			return nil, r.notFound(ctx, ref, newest)
		}
	} else {
		seg, err := r.open(ctx, ref.seq)
		switch {
		case err != nil:
			return nil, err
		case seg == nil:
			return nil, inputErrorf("turn %d.%d does not exist: no history segment %d in this session (labels come from %s results)", ref.seq, ref.k, ref.seq, recall.ToolSearchHistory)
		case seg.numbered():
			return nil, inputErrorf("%q is not a label of this history: its turns are numbered as the conversation counts them, like \"turn %d\" or \"turn %d, entry %d\"", clip(req.Turn, 40), ref.seq, ref.seq, ref.k)
		case ref.k > len(seg.header.Turns):
			return nil, inputErrorf("turn %d.%d does not exist: segment %d holds %d turns", ref.seq, ref.k, ref.seq, len(seg.header.Turns))
		}
		parts = []turnPart{{seg, ref.k - 1}}
	}
	visible := r.visible(parts)
	if len(visible) == 0 {
		return nil, inputErrorf("turn %s does not exist in this session's history (or not on your branch)", clip(req.Turn, 40))
	}
	if ref.entry > 0 && req.From == 0 && req.Entry == 0 {
		req.From = ref.entry
	}
	// Every pointer the result gives names the turn by its label.
	req.Turn = parts[0].seg.label(parts[0].turn)
	if req.Entry > 0 {
		return readEntry(ctx, r, req, visible, lim)
	}
	from := max(req.From, 1)
	if from > len(visible) {
		return nil, inputErrorf("%s has %d entries; entry %d is past the last", req.Turn, len(visible), from)
	}
	t := parts[0].seg.header.Turns[parts[0].turn]
	var b strings.Builder
	room, roomLines := lim.MaxResultBytes-headerReserve, lim.MaxResultLines-2 // header and footer lines
	last := from - 1
	for n := from; n <= len(visible); n++ {
		ref := visible[n-1]
		item, err := renderEntry(ctx, ref.seg, req, n, ref.i, lim, room-b.Len(), roomLines-strings.Count(b.String(), "\n"), n == from)
		if err != nil {
			return nil, err
		}
		if item == "" {
			break
		}
		b.WriteString(item)
		last = n
	}
	text := fmt.Sprintf("%s · %s · entries %d-%d of %d\n", req.Turn, time.UnixMilli(t.Time).UTC().Format(time.RFC3339), from, last, len(visible)) + b.String()
	if last < len(visible) {
		text += fmt.Sprintf("[more: %s(turn=%q, from=%d)]", recall.ToolReadTurn, req.Turn, last+1)
	} else {
		text += "[end of turn]"
	}
	return &Result{Text: text, BytesRead: r.read()}, nil
}

// notFound is the error for a turn number no segment holds: which turns the history holds.
func (r *historyReader) notFound(ctx context.Context, ref turnRef, newest int) error {
	s, err := r.nearestOurs(ctx, newest, -1, 1)
	if err != nil {
		return err
	}
	if s == nil {
		return inputErrorf("turn %d is not among the summarized turns of this session (labels come from %s results)", ref.no, recall.ToolSearchHistory)
	}
	_, last := s.turnRange()
	if ref.no > last {
		return inputErrorf("turn %d is not summarized: the history holds turns up to turn %d; later turns are in your context", ref.no, last)
	}
	return inputErrorf("turn %d is not in this session's history (or not on your branch); labels come from %s results", ref.no, recall.ToolSearchHistory)
}

// excerptLines bounds the lines of each side of a result's excerpt in read_turn.
const excerptLines = 12

// renderEntry shows entry i (n-th visible) in at most room bytes and roomLines lines; "" when it
// does not fit and is not the first shown (the first is then shown cut, with the call that pages
// it).
func renderEntry(ctx context.Context, seg *openedSegment, req TurnRequest, n, i int, lim Limits, room, roomLines int, first bool) (string, error) {
	e := seg.header.Entries[i]
	label := fmt.Sprintf("[%d] %s", n, entryLabel(e.Kind, e.Author, e.Name))
	excerpt := e.Kind == kindResult && !req.Whole && e.Len > int64(lim.ExcerptBytes)
	if excerpt {
		head, tail := int64(lim.ExcerptBytes*2/3), int64(lim.ExcerptBytes/3)
		hb, err := seg.entryText(ctx, i, 0, head)
		if err != nil {
			return "", err
		}
		tb, err := seg.entryText(ctx, i, e.Len-tail, e.Len)
		if err != nil {
			return "", err
		}
		hb = firstLines(hb[:runeFloor(hb, len(hb))], excerptLines)
		hb = bytes.TrimSuffix(hb, []byte("\n"))
		for len(tb) > 0 && tb[0]&0xC0 == 0x80 {
			tb = tb[1:]
		}
		tb = lastLines(tb, excerptLines/2)
		// The cut marks the omitted part holds name the saved output: shown, so the model reads
		// it without another call.
		marks, err := seg.marksIn(ctx, i, int64(len(hb)), e.Len-int64(len(tb)))
		if err != nil {
			return "", err
		}
		item := fmt.Sprintf("%s (%d bytes, excerpt)\n%s\n[… %d bytes omitted: %s(turn=%q, whole=true, from=%d) …]\n%s%s\n\n",
			label, e.Len, sanitize(hb), e.Len-int64(len(hb)+len(tb)), recall.ToolReadTurn, req.Turn, n, markLines(marks), sanitize(tb))
		if len(item) <= room && strings.Count(item, "\n") <= roomLines {
			return item, nil
		}
		if !first {
			return "", nil
		}
	}
	if !excerpt && int64(len(label))+e.Len+4 <= int64(room) {
		text, err := seg.entryText(ctx, i, 0, e.Len)
		if err != nil {
			return "", err
		}
		// The label, the text's lines and a blank line.
		if bytes.Count(text, []byte("\n"))+3 <= roomLines {
			return fmt.Sprintf("%s\n%s\n\n", label, sanitize(text)), nil
		}
	}
	if !first {
		return "", nil
	}
	marks, err := seg.marksIn(ctx, i, 0, e.Len)
	if err != nil {
		return "", err
	}
	marks = marks[:min(len(marks), maxMarksShown)]
	reserve := len(markLines(marks))
	cut := int64(max(room-len(label)-160-reserve, 0))
	text, err := seg.entryText(ctx, i, 0, cut)
	if err != nil {
		return "", err
	}
	// The label, the text's lines, the footer line and the marks.
	text = firstLines(text[:runeFloor(text, len(text))], max(roomLines-2-len(marks), 1))
	text = bytes.TrimSuffix(text, []byte("\n"))
	// The marks the part shown leaves out.
	if marks, err = seg.marksIn(ctx, i, int64(len(text)), e.Len); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s (%d bytes, first %d shown)\n%s\n[rest of this entry: %s(turn=%q, entry=%d, range=\"bytes=%d-\")]\n%s",
		label, e.Len, len(text), sanitize(text), recall.ToolReadTurn, req.Turn, n, len(text), markLines(marks[:min(len(marks), maxMarksShown)])), nil
}

// maxMarksShown bounds the cut marks an excerpt shows.
const maxMarksShown = 4

// markLines shows cut marks one a line (at most maxMarksShown, and how many more).
func markLines(marks []string) string {
	var b strings.Builder
	for i, m := range marks {
		if i == maxMarksShown {
			fmt.Fprintf(&b, "[… %d more cut marks in the omitted part]\n", len(marks)-i)
			break
		}
		b.WriteString(m)
		b.WriteByte('\n')
	}
	return b.String()
}

// readEntry pages one entry of a turn with the range grammar of saved outputs.
func readEntry(ctx context.Context, r *historyReader, req TurnRequest, visible []entryRef, lim Limits) (*Result, error) {
	if req.Entry > len(visible) {
		return nil, inputErrorf("%s has %d entries; entry=%d does not exist", req.Turn, len(visible), req.Entry)
	}
	rng, err := ParseRange(req.Range)
	if err != nil {
		return nil, err
	}
	ref := visible[req.Entry-1]
	e := ref.seg.header.Entries[ref.i]
	if e.Len > maxEntryReadBytes {
		return nil, inputErrorf("entry %d of %s is %d bytes: too large to page here", req.Entry, req.Turn, e.Len)
	}
	text, err := ref.seg.entryText(ctx, ref.i, 0, e.Len)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s entry %d (%s)", req.Turn, req.Entry, entryLabel(e.Kind, e.Author, e.Name))
	o := memoryOutput(name, text)
	var page string
	if rng.Unit == Lines {
		page, err = o.pageLines(ctx, rng, lim)
	} else {
		page, err = o.pageBytes(ctx, rng, lim)
	}
	if err != nil {
		return nil, err
	}
	return &Result{Text: page, BytesRead: r.read()}, nil
}

// turnRef is a parsed turn label: a turn number (no) or a previous release's segment and turn
// (seq, k), and an entry (0: none).
type turnRef struct {
	no, seq, k, entry int
}

var turnLabelRE = regexp.MustCompile(`^(?i)\s*(?:turn\s*)?#?(\d{1,9})(?:\.(\d{1,9}))?\s*(?:[,;·:/]?\s*(?:entry|step)\s*#?(\d{1,9}))?\s*$`)

// parseTurn reads a turn label: "turn 7", "7", "turn 7, entry 3"; "turn 2.4" (a previous
// release's).
func parseTurn(s string) (turnRef, error) {
	m := turnLabelRE.FindStringSubmatch(s)
	if m == nil {
		return turnRef{}, inputErrorf("turn %q is not a turn label: labels look like \"turn 7\" or \"turn 7, entry 3\", as %s results give them", clip(s, 40), recall.ToolSearchHistory)
	}
	a, _ := strconv.Atoi(m[1])
	var ref turnRef
	if m[2] != "" {
		ref.seq = a
		ref.k, _ = strconv.Atoi(m[2])
	} else {
		ref.no = a
	}
	if m[3] != "" {
		ref.entry, _ = strconv.Atoi(m[3])
	}
	if a < 1 || m[2] != "" && ref.k < 1 || m[3] != "" && ref.entry < 1 {
		return turnRef{}, inputErrorf("turn %q is not a turn label: turns and entries count from 1", clip(s, 40))
	}
	return ref, nil
}
