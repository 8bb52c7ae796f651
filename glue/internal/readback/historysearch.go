package readback

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adkctx/adkctx/recall"
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
	off   int64 // where the best term first occurs, or the exact match
	best  float64
	tier  int // how exactly the entry holds the whole query (tierNone … tierExact)
}

// How exactly an entry holds the whole query: the tiers rank before BM25's scores.
const (
	tierNone    = iota
	tierWords   // the query's words in order, whatever lies between them ("marker turn 3")
	tierAnyCase // the query itself in another case, on word boundaries
	tierExact   // the query itself, on word boundaries ("marker-turn-3", not "marker-turn-30")
)

// maxExactEntryBytes bounds the entries whose text a search reads to check for the whole query.
const maxExactEntryBytes = 1 << 20

// SearchHistory ranks the entries (messages, calls, results) of the session's history segments
// against the query and returns the best as excerpts, each with its turn's label and its entry
// in the turn (what read_turn takes), newest segment first. Entries that hold the whole query
// rank first — on word boundaries in its case, then in any case, then as its words in order —
// and BM25 over the query's terms orders the rest. It reads the segments' headers, one index
// bucket per term per segment, and the text of the entries that hold every term, at most
// lim.MaxScanBytes in all; when that bound stops it before the oldest segment, the result says
// so and gives the Before that continues. Only entries v sees count.
func SearchHistory(ctx context.Context, st recall.Store, v Viewer, req HistoryRequest, lim Limits) (*Result, error) {
	lim = lim.withDefaults()
	if len(req.Query) > maxQueryBytes {
		return nil, inputErrorf("query is %d bytes; at most %d", len(req.Query), maxQueryBytes)
	}
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
	r := newHistoryReader(st, v)
	c := &collector{r: r, terms: terms, df: map[string]int{}, cands: map[[2]int]*hit{}, tfs: map[[2]int]map[string]posting{}}
	if err := c.collect(ctx, top, lim); err != nil {
		return nil, err
	}
	hits := c.rank()
	if err := c.rankExact(ctx, hits, strings.TrimSpace(req.Query), lim); err != nil {
		return nil, err
	}
	return c.format(ctx, hits, req, lim)
}

// collector gathers the postings of a query's terms over segments, newest first.
type collector struct {
	r        *historyReader
	terms    []string
	entries  int
	tokens   int64
	df       map[string]int
	cands    map[[2]int]*hit // (seq, entry) → hit
	tfs      map[[2]int]map[string]posting
	searched []int
	stopAt   int // the Before that continues, 0 when every segment was searched
	// holding counts the entries that hold every term, checked those whose text was read for
	// the whole query.
	holding, checked int
}

// collect reads segments top, top-1, … 1 until the scan bound.
func (c *collector) collect(ctx context.Context, top int, lim Limits) error {
	for seq := top; seq >= 1; seq-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.r.read() >= lim.MaxScanBytes || len(c.searched) == maxSegmentsPerSearch {
			c.stopAt = seq + 1
			return nil
		}
		seg, err := c.r.open(ctx, seq)
		if err != nil {
			return err
		}
		if seg == nil {
			continue
		}
		c.searched = append(c.searched, seq)
		c.entries += len(seg.header.Entries)
		c.tokens += seg.header.Tokens
		for _, term := range c.terms {
			ps, err := seg.postings(ctx, term)
			if err != nil {
				return err
			}
			c.df[term] += len(ps)
			for _, p := range ps {
				if !c.r.v.sees(seg.header.Entries[p.entry]) {
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
	sortHits(hits)
	return hits
}

// sortHits orders hits by tier, then score, then newest first.
func sortHits(hits []*hit) {
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		switch {
		case a.tier != b.tier:
			return a.tier > b.tier
		case a.score != b.score:
			return a.score > b.score
		case a.seg.seq != b.seg.seq:
			return a.seg.seq > b.seg.seq
		}
		return a.entry > b.entry
	})
}

// rankExact reads, best first and within the scan bound, the text of the entries that hold every
// term of the query, gives each the tier of its best occurrence of the whole query, and moves
// the tiers ahead of BM25's order.
func (c *collector) rankExact(ctx context.Context, hits []*hit, query string, lim Limits) error {
	words := tokens(query)
	for _, h := range hits {
		if len(c.tfs[[2]int{h.seg.seq, h.entry}]) < len(c.terms) {
			continue
		}
		c.holding++
		e := h.seg.header.Entries[h.entry]
		if c.r.read() >= lim.MaxScanBytes || e.Len > maxExactEntryBytes {
			continue
		}
		text, err := h.seg.entryText(ctx, h.entry, 0, e.Len)
		if err != nil {
			return err
		}
		c.checked++
		var off int
		if h.tier, off = exactTier(string(text), query, words); h.tier > tierNone {
			h.off = int64(off)
		}
	}
	sortHits(hits)
	return nil
}

// exactTier returns how exactly text holds query (words: query's tokens) and where.
func exactTier(text, query string, words []string) (int, int) {
	if i := indexOnBoundaries(text, query); i >= 0 {
		return tierExact, i
	}
	if i := indexOnBoundaries(strings.ToLower(text), strings.ToLower(query)); i >= 0 {
		return tierAnyCase, min(i, len(text)) // ToLower keeps offsets but for a few runes
	}
	if i := indexOfWords(text, words); i >= 0 {
		return tierWords, i
	}
	return tierNone, -1
}

// indexOnBoundaries returns the first occurrence of q in text that neither starts nor ends
// inside a word (a word character of q next to one of text), or -1.
func indexOnBoundaries(text, q string) int {
	if q == "" {
		return -1
	}
	first, _ := utf8.DecodeRuneInString(q)
	last, _ := utf8.DecodeLastRuneInString(q)
	for at := 0; at <= len(text)-len(q); {
		i := strings.Index(text[at:], q)
		if i < 0 {
			return -1
		}
		i += at
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(q):])
		if (i == 0 || !isWordRune(before) || !isWordRune(first)) && (i+len(q) == len(text) || !isWordRune(after) || !isWordRune(last)) {
			return i
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		at = i + size
	}
	return -1
}

// maxQueryWords bounds the words of a query matched in order.
const maxQueryWords = 64

// indexOfWords returns where the words (lower-cased) occur in text one after the other, as whole
// words with only non-word characters between them, or -1.
func indexOfWords(text string, words []string) int {
	if len(words) == 0 || len(words) > maxQueryWords {
		return -1
	}
	type word struct {
		w   string
		off int
	}
	var ws []word
	forEachWord(text, func(w string, off int) { ws = append(ws, word{strings.ToLower(w), off}) })
	for i := 0; i+len(words) <= len(ws); i++ {
		match := true
		for j, w := range words {
			if ws[i+j].w != w {
				match = false
				break
			}
		}
		if match {
			return ws[i].off
		}
	}
	return -1
}

// tokens returns the words of q, lower-cased, one letter long included.
func tokens(q string) []string {
	var out []string
	forEachWord(q, func(w string, _ int) { out = append(out, strings.ToLower(w)) })
	return out
}

// format writes the ranked excerpts within the result bound: each with its turn's label, its
// entry, and once per turn the start of the turn's user message.
func (c *collector) format(ctx context.Context, hits []*hit, req HistoryRequest, lim Limits) (*Result, error) {
	var body strings.Builder
	shown, lines := 0, 0
	headed := map[[2]int]bool{} // turns whose user message was shown
	example := ""
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
		snippet := oneLine(text, from > 0, from+int64(len(text)) < e.Len)
		n, err := c.r.entryNumber(ctx, h.seg, h.entry)
		if err != nil {
			return nil, err
		}
		label := fmt.Sprintf("%s, entry %d", h.seg.label(e.Turn), n)
		t := h.seg.header.Turns[e.Turn]
		var item strings.Builder
		fmt.Fprintf(&item, "[%d] %s · %s · %s", shown+1, label, entryLabel(e.Kind, e.Author, e.Name), time.UnixMilli(t.Time).UTC().Format("2006-01-02 15:04"))
		switch h.tier {
		case tierExact, tierAnyCase:
			item.WriteString(" · exact match")
		case tierWords:
			item.WriteString(" · all words in order")
		}
		if key := [2]int{h.seg.seq, e.Turn}; !headed[key] && e.Kind != kindUser {
			head, err := c.r.head(ctx, h.seg, e.Turn)
			if err != nil {
				return nil, err
			}
			if head != "" {
				fmt.Fprintf(&item, " · user: %q", head)
			}
			headed[key] = true
		}
		fmt.Fprintf(&item, "\n    %s\n", snippet)
		// Two lines an item; the header, the footer and the "older turns" line aside.
		if body.Len()+item.Len() > lim.MaxResultBytes-headerReserve || lines+2 > lim.MaxResultLines-4 {
			break
		}
		if example == "" {
			example = label
		}
		body.WriteString(item.String())
		shown++
		lines += 2
	}
	var b strings.Builder
	span := "no history segments"
	if len(c.searched) > 0 {
		span = fmt.Sprintf("history segments %d-%d", c.searched[len(c.searched)-1], c.searched[0])
	}
	fmt.Fprintf(&b, "search_history %q: %d of %d matching entries shown, exact matches first, then best first (searched %s, %d bytes read)\n",
		clip(req.Query, 80), shown, len(hits), span, c.r.read())
	b.WriteString(body.String())
	if shown > 0 {
		fmt.Fprintf(&b, "[read one: %s(turn=%q)", recall.ToolReadTurn, example)
		if !strings.Contains(example, ".") {
			b.WriteString("; turn 1 is the session's first user message")
		}
		b.WriteString("]")
	} else {
		b.WriteString("[no match]")
	}
	if c.checked < c.holding {
		fmt.Fprintf(&b, "\n[exact matches looked for in %d of the %d entries holding every word (a per-call bound)]", c.checked, c.holding)
	}
	if c.stopAt > 1 {
		fmt.Fprintf(&b, "\n[older turns not searched (segments 1-%d, a per-call bound): search again with before=%d]", c.stopAt-1, c.stopAt)
	}
	return &Result{Text: b.String(), BytesRead: c.r.read()}, nil
}

// head returns the start of turn t's user message in seg, "" when the reader does not see one.
func (r *historyReader) head(ctx context.Context, seg *openedSegment, t int) (string, error) {
	for i, e := range seg.header.Entries {
		if e.Turn != t || e.Kind != kindUser {
			continue
		}
		if !r.v.sees(e) {
			return "", nil
		}
		if seg.header.Format >= segmentFormat {
			return seg.header.Turns[t].Head, nil
		}
		text, err := seg.entryText(ctx, i, 0, 2*maxHeadBytes)
		if err != nil {
			return "", err
		}
		text = text[:runeFloor(text, len(text))]
		h := headOf(string(text))
		if int64(len(text)) < e.Len && !strings.HasSuffix(h, "…") {
			h += "…"
		}
		return h, nil
	}
	return "", nil
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
func newestSegment(ctx context.Context, st recall.Store) (int, error) {
	last, err := st.Recent(ctx, historyPrefix, 0, 1)
	if err != nil || len(last) == 0 {
		return 0, err
	}
	n, _ := parseHistoryName(last[0].Name)
	return n, nil
}
