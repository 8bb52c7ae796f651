package recall

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Viewer is who reads the history: only events the viewer's agent could see are reachable. An
// event is visible when its Scope equals the viewer's (adk-go v2's isolation scope; "" in v1)
// and its branch is the viewer's, an ancestor of it, or empty, as adk-go's contents processor
// decides (a viewer with no branch sees every branch).
type Viewer struct {
	Branch string
	Scope  string
}

func (v Viewer) sees(e entryIndex) bool {
	if e.Scope != v.Scope {
		return false
	}
	if v.Branch == "" || e.Branch == "" || e.Branch == v.Branch {
		return true
	}
	return strings.HasPrefix(v.Branch, e.Branch+".")
}

// HistoryRequest is one search of the history.
type HistoryRequest struct {
	Query string
	// Before, when > 0, searches only segments numbered below it (the value a result stopped
	// by a bound gives).
	Before int
}

// BM25 parameters (the usual ones).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// maxQueryTerms bounds the distinct terms of a history query.
	maxQueryTerms = 16
	// snippetBytes bounds an excerpt's length.
	snippetBytes = 360
)

// hit is one scored entry.
type hit struct {
	seg   *openedSegment
	entry int
	score float64
	off   int64 // where the best term first occurs
	best  float64
}

// SearchHistory ranks the entries (messages, calls, results) of the session's history segments
// against the query's terms with BM25, newest segment first, and returns the best as excerpts,
// each with the turn it comes from. It reads the segments' headers and one index bucket per term
// per segment, at most lim.MaxScanBytes in all; when that bound stops it before the oldest
// segment, the result says so and gives the Before that continues. Only entries v sees count.
func SearchHistory(ctx context.Context, st Store, v Viewer, req HistoryRequest, lim Limits) (*Result, error) {
	lim = lim.withDefaults()
	terms := queryTerms(req.Query)
	if len(terms) == 0 {
		return nil, inputErrorf("query has no searchable word (words are letters, digits and '_', at least 2 characters)")
	}
	newest, err := newestSegment(ctx, st)
	if err != nil {
		return nil, err
	}
	top := newest
	if req.Before > 0 {
		top = min(newest, req.Before-1)
	}
	if newest == 0 {
		return &Result{Text: "no earlier turns are summarized yet: the whole conversation is in your context"}, nil
	}
	c := &collector{terms: terms, df: map[string]int{}, cands: map[[2]int]*hit{}, tfs: map[[2]int]map[string]posting{}}
	if err := c.collect(ctx, st, v, terms, top, lim); err != nil {
		return nil, err
	}
	return formatHits(ctx, c.rank(), req, c.searched, c.stopAt, c.read, lim)
}

// collector gathers the postings of a query's terms over segments, newest first.
type collector struct {
	terms    []string
	read     int64
	entries  int
	tokens   int64
	df       map[string]int
	cands    map[[2]int]*hit // (seq, entry) → hit
	tfs      map[[2]int]map[string]posting
	searched []int
	stopAt   int // the Before that continues, 0 when every segment was searched
}

// collect reads segments top, top-1, … 1 until the scan bound.
func (c *collector) collect(ctx context.Context, st Store, v Viewer, terms []string, top int, lim Limits) error {
	for seq := top; seq >= 1; seq-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.read >= lim.MaxScanBytes || len(c.searched) == maxSegmentsPerSearch {
			c.stopAt = seq + 1
			return nil
		}
		seg, err := openSegment(ctx, st, seq)
		if err == errNoSegment {
			continue
		}
		if err != nil {
			return err
		}
		c.searched = append(c.searched, seq)
		c.entries += len(seg.header.Entries)
		c.tokens += seg.header.Tokens
		for _, term := range terms {
			ps, err := seg.postings(ctx, term)
			if err != nil {
				return err
			}
			c.df[term] += len(ps)
			for _, p := range ps {
				if !v.sees(seg.header.Entries[p.entry]) {
					continue
				}
				k := [2]int{seq, p.entry}
				if c.cands[k] == nil {
					c.cands[k] = &hit{seg: seg, entry: p.entry}
					c.tfs[k] = map[string]posting{}
				}
				c.tfs[k][term] = p
			}
		}
		c.read += seg.o.read
		seg.o.read = 0
	}
	return nil
}

// rank scores the candidates with BM25 over the segments searched, best first.
func (c *collector) rank() []*hit {
	avg := float64(c.tokens) / float64(max(c.entries, 1))
	n := float64(c.entries)
	hits := make([]*hit, 0, len(c.cands))
	for k, h := range c.cands {
		dl := float64(h.seg.header.Entries[h.entry].Tokens)
		for _, term := range c.terms { // query order: equal input, equal sums
			p, ok := c.tfs[k][term]
			if !ok {
				continue
			}
			df := float64(c.df[term])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			tf := float64(p.tf)
			s := idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/math.Max(avg, 1)))
			h.score += s
			if s > h.best {
				h.best, h.off = s, p.off
			}
		}
		hits = append(hits, h)
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		if hits[i].seg.seq != hits[j].seg.seq {
			return hits[i].seg.seq > hits[j].seg.seq
		}
		return hits[i].entry > hits[j].entry
	})
	return hits
}

// formatHits writes the ranked excerpts within the result bound.
func formatHits(ctx context.Context, hits []*hit, req HistoryRequest, searched []int, stopAt int, read int64, lim Limits) (*Result, error) {
	var body strings.Builder
	shown := 0
	for _, h := range hits {
		if shown == lim.MaxMatches {
			break
		}
		e := h.seg.header.Entries[h.entry]
		from := max(0, h.off-snippetBytes/3)
		text, err := h.seg.entryText(ctx, h.entry, from, from+snippetBytes)
		if err != nil {
			return nil, err
		}
		read += h.seg.o.read
		h.seg.o.read = 0
		snippet := oneLine(text, from > 0, from+int64(len(text)) < e.Len)
		t := h.seg.header.Turns[e.Turn]
		item := fmt.Sprintf("[%d] turn %d.%d · %s · %s\n    %s\n", shown+1, h.seg.seq, e.Turn+1,
			time.UnixMilli(t.Time).UTC().Format("2006-01-02 15:04"), entryLabel(e.Kind, e.Author, e.Name), snippet)
		// Two lines an item; the header, the footer and the "older turns" line aside.
		if body.Len()+len(item) > lim.MaxResultBytes-headerReserve || 2*(shown+1) > lim.MaxResultLines-3 {
			break
		}
		body.WriteString(item)
		shown++
	}
	var b strings.Builder
	span := "no history segments"
	if len(searched) > 0 {
		span = fmt.Sprintf("history segments %d-%d", searched[len(searched)-1], searched[0])
	}
	fmt.Fprintf(&b, "search_history %q: %d of %d matching entries shown, best first (searched %s, %d bytes read)\n",
		clip(req.Query, 80), shown, len(hits), span, read)
	b.WriteString(body.String())
	if shown > 0 {
		fmt.Fprintf(&b, "[read a whole turn: %s(turn=\"S.K\") with the turn of an excerpt]", ToolReadTurn)
	} else {
		b.WriteString("[no match]")
	}
	if stopAt > 1 {
		fmt.Fprintf(&b, "\n[older turns not searched (segments 1-%d, a per-call bound): search again with before=%d]", stopAt-1, stopAt)
	}
	return &Result{Text: b.String(), BytesRead: read}, nil
}

// oneLine shows an excerpt on one line: line breaks as " ⏎ ", "…" where cut.
func oneLine(b []byte, cutHead, cutTail bool) string {
	if cutHead {
		for len(b) > 0 && b[0]&0xC0 == 0x80 {
			b = b[1:]
		}
	}
	if cutTail {
		b = b[:runeFloor(b, len(b))]
	}
	s := strings.ReplaceAll(sanitize(bytes.TrimSpace(b)), "\n", " ⏎ ")
	if cutHead {
		s = "…" + s
	}
	if cutTail {
		s += "…"
	}
	return s
}

// queryTerms returns the distinct indexable terms of q, at most maxQueryTerms.
func queryTerms(q string) []string {
	seen := map[string]bool{}
	var out []string
	forEachTerm(q, func(term string, _ int) {
		if !seen[term] && len(out) < maxQueryTerms {
			seen[term] = true
			out = append(out, term)
		}
	})
	return out
}

// newestSegment returns the number of the newest history segment, 0 when there is none.
func newestSegment(ctx context.Context, st Store) (int, error) {
	last, err := st.Recent(ctx, historyPrefix, 0, 1)
	if err != nil || len(last) == 0 {
		return 0, err
	}
	n, _ := parseHistoryName(last[0].Name)
	return n, nil
}

// TurnRequest asks for one covered turn.
type TurnRequest struct {
	// Turn is the turn's label, "S.K", as search results give it.
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
// with its label, tool results as excerpts (head and tail, lim.ExcerptBytes) unless req.Whole,
// within lim.MaxResultBytes; the footer names the call that shows the rest.
func ReadTurn(ctx context.Context, st Store, v Viewer, req TurnRequest, lim Limits) (*Result, error) {
	lim = lim.withDefaults()
	seq, k, err := parseTurn(req.Turn)
	if err != nil {
		return nil, err
	}
	seg, err := openSegment(ctx, st, seq)
	if err == errNoSegment {
		return nil, inputErrorf("turn %s does not exist: no history segment %d in this session (turns come from %s results)", req.Turn, seq, ToolSearchHistory)
	}
	if err != nil {
		return nil, err
	}
	var visible []int
	if k <= len(seg.header.Turns) {
		for i, e := range seg.header.Entries {
			if e.Turn == k-1 && v.sees(e) {
				visible = append(visible, i)
			}
		}
	}
	if len(visible) == 0 {
		return nil, inputErrorf("turn %s does not exist in this session's history (or not on your branch)", req.Turn)
	}
	if req.Entry > 0 {
		return readEntry(ctx, seg, req, visible, lim)
	}
	from := max(req.From, 1)
	if from > len(visible) {
		return nil, inputErrorf("turn %s has %d entries; from=%d is past the last", req.Turn, len(visible), from)
	}
	t := seg.header.Turns[k-1]
	var b strings.Builder
	room, roomLines := lim.MaxResultBytes-headerReserve, lim.MaxResultLines-2 // header and footer lines
	last := from - 1
	for n := from; n <= len(visible); n++ {
		i := visible[n-1]
		item, err := renderEntry(ctx, seg, req, n, i, lim, room-b.Len(), roomLines-strings.Count(b.String(), "\n"), n == from)
		if err != nil {
			return nil, err
		}
		if item == "" {
			break
		}
		b.WriteString(item)
		last = n
	}
	text := fmt.Sprintf("turn %s · %s · entries %d-%d of %d\n", req.Turn, time.UnixMilli(t.Time).UTC().Format(time.RFC3339), from, last, len(visible)) + b.String()
	if last < len(visible) {
		text += fmt.Sprintf("[more: %s(turn=%q, from=%d)]", ToolReadTurn, req.Turn, last+1)
	} else {
		text += "[end of turn]"
	}
	return &Result{Text: text, BytesRead: seg.o.read}, nil
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
			label, e.Len, sanitize(hb), e.Len-int64(len(hb)+len(tb)), ToolReadTurn, req.Turn, n, markLines(marks), sanitize(tb))
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
		label, e.Len, len(text), sanitize(text), ToolReadTurn, req.Turn, n, len(text), markLines(marks[:min(len(marks), maxMarksShown)])), nil
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
func readEntry(ctx context.Context, seg *openedSegment, req TurnRequest, visible []int, lim Limits) (*Result, error) {
	if req.Entry > len(visible) {
		return nil, inputErrorf("turn %s has %d entries; entry=%d does not exist", req.Turn, len(visible), req.Entry)
	}
	r, err := ParseRange(req.Range)
	if err != nil {
		return nil, err
	}
	i := visible[req.Entry-1]
	e := seg.header.Entries[i]
	if e.Len > maxEntryReadBytes {
		return nil, inputErrorf("entry %d of turn %s is %d bytes: too large to page here", req.Entry, req.Turn, e.Len)
	}
	text, err := seg.entryText(ctx, i, 0, e.Len)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("turn %s entry %d (%s)", req.Turn, req.Entry, entryLabel(e.Kind, e.Author, e.Name))
	o := memoryOutput(name, text)
	var page string
	if r.Unit == Lines {
		page, err = o.pageLines(ctx, r, lim)
	} else {
		page, err = o.pageBytes(ctx, r, lim)
	}
	if err != nil {
		return nil, err
	}
	return &Result{Text: page, BytesRead: seg.o.read}, nil
}

// parseTurn reads a turn label "S.K" (also "turn S.K").
func parseTurn(s string) (seq, k int, err error) {
	t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "turn"))
	a, b, ok := strings.Cut(t, ".")
	seq, err1 := strconv.Atoi(strings.TrimSpace(a))
	k, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || seq < 1 || k < 1 || seq > 1<<30 || k > 1<<30 {
		return 0, 0, inputErrorf("turn %q is not a turn label: labels look like \"3.4\" (segment 3, turn 4), as %s results give them", clip(s, 40), ToolSearchHistory)
	}
	return seq, k, nil
}
