package readback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/processors/truncate"

	"github.com/adkctx/adkctx/recall"
)

// A history segment is one saved output (text/plain) laid out as:
//
//	line 1       "adkctx-history 1 seq=S header=H"
//	header       H bytes: JSON (segmentHeader) and '\n'
//	bucket table (B+1) lines of 8 hex digits: bucket b's postings start, relative to the buckets
//	buckets      per bucket, lines "term\tentry:tf:off entry:tf:off …", sorted by term
//	transcript   the turns, readable as they are: a heading per turn, a label line per entry
//
// Offsets in the header are relative to the end of the header (the section start). An entry is
// one part of an event (a message, a call, a result); it is the unit the index ranks.

const (
	historyMagic = "adkctx-history 1"
	// maxHeaderBytes bounds the header a reader accepts.
	maxHeaderBytes = 8 << 20
	// maxTermBytes bounds an indexed term; longer tokens are not indexed.
	maxTermBytes = 64
	// maxEntryReadBytes bounds what read_turn reads of one entry to page it.
	maxEntryReadBytes = 16 << 20
	// maxSegmentsPerSearch bounds the segments one history search opens.
	maxSegmentsPerSearch = 256
	// historyMIME is the segments' MIME type.
	historyMIME = "text/plain; charset=utf-8"
	// maxSaveAttempts bounds the retries of a segment whose name another writer took.
	maxSaveAttempts = 8
)

// segmentHeader is a segment's header (JSON, short keys: it is read on every search).
type segmentHeader struct {
	// Format is segmentFormat in the segments this release writes, 0 in the previous release's
	// (which record no cut marks and no turn numbers: they are read as they were).
	Format int `json:"f,omitempty"`
	Seq    int `json:"seq"`
	// Scope is the isolation scope of the segment's events (a compaction covers one scope).
	Scope   string       `json:"sc,omitempty"`
	Turns   []turnEntry  `json:"turns"`
	Entries []entryIndex `json:"entries"`
	Buckets int          `json:"buckets"`
	Body    int64        `json:"body"`   // transcript start, relative to the section start
	Tokens  int64        `json:"tokens"` // tokens in all entries (for BM25's average length)
}

type turnEntry struct {
	Invocation string `json:"inv,omitempty"`
	Time       int64  `json:"time"` // Unix milliseconds of the turn's first event
	First      int    `json:"first"`
	Count      int    `json:"n"`
	// No is the turn's number in its scope's conversation, as the user counts turns (turn 1
	// is the first user message); 0 when unknown (the previous release's segments): the turn
	// is then labelled by its segment ("S.K").
	No int `json:"no,omitempty"`
	// Head is the start of the turn's first user message, one line.
	Head string `json:"h,omitempty"`
}

type entryIndex struct {
	Turn   int    `json:"t"`
	Kind   string `json:"k"` // user, text, call, result, data
	Author string `json:"a,omitempty"`
	Name   string `json:"n,omitempty"` // tool name of a call or result
	Branch string `json:"b,omitempty"`
	Scope  string `json:"s,omitempty"`
	Off    int64  `json:"o"` // relative to the transcript start
	Len    int64  `json:"l"`
	Tokens int    `json:"w"`
	// Marks are the cut marks in the entry's text (truncation's "[... output truncated: …]",
	// which name the saved output), as offsets and lengths in the entry.
	Marks [][2]int64 `json:"m,omitempty"`
}

// segmentFormat is the Format of the segments this release writes.
const segmentFormat = 2

// Entry kinds.
const (
	kindUser   = "user"
	kindText   = "text"
	kindCall   = "call"
	kindResult = "result"
	kindData   = "data"
)

// historySegment describes a history segment [WriteHistory] saved.
type historySegment struct {
	Name    string
	Seq     int
	Turns   int
	Entries int
	Bytes   int
}

// HistoryName returns the name of history segment seq.
func HistoryName(seq int) string { return fmt.Sprintf("%s%06d.txt", historyPrefix, seq) }

func parseHistoryName(name string) (int, bool) {
	digits, ok := strings.CutSuffix(strings.TrimPrefix(name, historyPrefix), ".txt")
	if !ok || !strings.HasPrefix(name, historyPrefix) {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil && n > 0
}

// WriteHistory saves a transcript of events (the events one compaction marker newly covers, in
// session order) and its index as the session's next history segment. Events without content,
// partial events and thoughts are left out. It returns nil and no error when nothing is left.
// Its cost is linear in events: it reads one name of the store to number the segment.
//
// turns is how many turns (invocations) of the events' scope the conversation holds up to the
// last of events: the covering marker's [compaction.Marker.Invocations]. The segment's turns are
// numbered from it as the user counts them (turn 1 is the session's first user message; a turn
// that a previous segment began keeps its number) and labelled "turn N"; with turns ≤ 0, or too
// small for the events, they are labelled by segment ("S.K", the K-th turn of segment S), as the
// previous release labelled every turn.
func WriteHistory(ctx context.Context, st recall.Store, events []compaction.Event, turns int) (*historySegment, error) {
	seg := buildSegment(events, turns)
	if len(seg.header.Entries) == 0 {
		return nil, nil
	}
	last, err := st.Recent(ctx, historyPrefix, 0, 1)
	if err != nil {
		return nil, err
	}
	seq := 1
	if len(last) > 0 {
		if n, ok := parseHistoryName(last[0].Name); ok {
			seq = n + 1
		}
	}
	for range maxSaveAttempts {
		data := seg.encode(seq)
		name := HistoryName(seq)
		version, err := st.Save(ctx, name, data, historyMIME)
		if err != nil {
			return nil, err
		}
		if version == 1 {
			return &historySegment{Name: name, Seq: seq, Turns: len(seg.header.Turns), Entries: len(seg.header.Entries), Bytes: len(data)}, nil
		}
		// Another writer saved this segment first: keep theirs, take the next number.
		if err := st.Delete(ctx, name, version); err != nil {
			return nil, err
		}
		seq++
	}
	return nil, fmt.Errorf("recall: history segment not saved: %d names taken by concurrent writers", maxSaveAttempts)
}

// segment is a history segment being built.
type segment struct {
	header segmentHeader
	body   bytes.Buffer
	// postings[term] lists (entry, tf, first offset) in entry order.
	postings map[string][]posting
}

type posting struct {
	entry, tf int
	off       int64 // first occurrence, relative to the entry's start
}

func buildSegment(events []compaction.Event, turns int) *segment {
	seg := &segment{postings: map[string][]posting{}}
	group, groups := invocationGroups(events)
	first := turns - groups + 1 // the number of the first group
	turnOf := map[int]int{}     // group → turn of the segment
	for i := range events {
		e := &events[i]
		if group[i] < 0 {
			continue
		}
		parts := renderParts(e)
		if len(parts) == 0 {
			continue
		}
		t, ok := turnOf[group[i]]
		if !ok {
			t = len(seg.header.Turns)
			turnOf[group[i]] = t
			te := turnEntry{Invocation: e.InvocationID, Time: e.Timestamp.UnixMilli(), First: len(seg.header.Entries)}
			label := fmt.Sprintf("%d (of this segment)", t+1)
			if turns > 0 && first >= 1 {
				te.No = first + group[i]
				label = strconv.Itoa(te.No)
			}
			seg.header.Turns = append(seg.header.Turns, te)
			seg.header.Scope = e.Scope
			fmt.Fprintf(&seg.body, "## turn %s · %s · invocation %s\n", label, e.Timestamp.UTC().Format(time.RFC3339), e.InvocationID)
		}
		for _, p := range parts {
			if p.kind == kindUser && seg.header.Turns[t].Head == "" {
				seg.header.Turns[t].Head = headOf(p.text)
			}
			seg.add(t, e, p)
		}
	}
	// Turns group by invocation; entries of one turn may interleave with another's in the
	// transcript (parallel branches), so each turn lists its entries by index.
	return seg
}

// invocationGroups numbers the invocations of events as compaction counts them (the invocations
// a marker's Invocations counts): events with content that are not partial, grouped by
// invocation, an event without an invocation id joining the group before it (the first group,
// before any). It returns each event's group (-1 when it counts in none) and the groups' count.
func invocationGroups(events []compaction.Event) ([]int, int) {
	group := make([]int, len(events))
	at := map[string]int{}
	n := 0
	var orphans []int
	for i := range events {
		e := &events[i]
		group[i] = -1
		switch {
		case e.Partial || e.Content == nil || len(e.Content.Parts) == 0:
		case e.InvocationID == "" && n == 0:
			orphans = append(orphans, i)
		case e.InvocationID == "":
			group[i] = n - 1
		default:
			k, ok := at[e.InvocationID]
			if !ok {
				k, n = n, n+1
				at[e.InvocationID] = k
			}
			group[i] = k
		}
	}
	n = max(n, min(len(orphans), 1))
	for _, i := range orphans {
		group[i] = 0
	}
	return group, n
}

// maxHeadBytes bounds a turn's head: the start of its user message.
const maxHeadBytes = 72

// headOf returns the start of text on one line, "…" where cut.
func headOf(text string) string {
	line, _, cut := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.Join(strings.Fields(line), " ")
	if len(line) > maxHeadBytes {
		line, cut = line[:runeFloor([]byte(line), maxHeadBytes)], true
	}
	if cut {
		line += "…"
	}
	return line
}

// renderedPart is one part of an event as the transcript shows it.
type renderedPart struct {
	kind, name, text string
}

func renderParts(e *compaction.Event) []renderedPart {
	var out []renderedPart
	user := e.Author == "user" || e.Author == "" && e.Content.Role == genai.RoleUser
	for _, p := range e.Content.Parts {
		switch {
		case p == nil || p.Thought:
		case p.FunctionCall != nil:
			args, _ := json.Marshal(p.FunctionCall.Args)
			out = append(out, renderedPart{kindCall, p.FunctionCall.Name, p.FunctionCall.Name + "(" + string(args) + ")"})
		case p.FunctionResponse != nil:
			out = append(out, renderedPart{kindResult, p.FunctionResponse.Name, renderResponse(p.FunctionResponse.Response)})
		case p.Text != "":
			kind := kindText
			if user {
				kind = kindUser
			}
			out = append(out, renderedPart{kind, "", p.Text})
		case p.InlineData != nil:
			out = append(out, renderedPart{kindData, "", fmt.Sprintf("[inline data: %s, %d bytes]", p.InlineData.MIMEType, len(p.InlineData.Data))})
		case p.FileData != nil:
			out = append(out, renderedPart{kindData, "", fmt.Sprintf("[file: %s %s]", p.FileData.MIMEType, p.FileData.FileURI)})
		case p.ExecutableCode != nil:
			out = append(out, renderedPart{kindCall, "code", p.ExecutableCode.Code})
		case p.CodeExecutionResult != nil:
			out = append(out, renderedPart{kindResult, "code", p.CodeExecutionResult.Output})
		}
	}
	return out
}

// renderResponse shows a tool result readably: each key on its own line, string values as they
// are (a test log keeps its lines), other values as JSON.
func renderResponse(resp map[string]any) string {
	keys := make([]string, 0, len(resp))
	for k := range resp {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k)
		b.WriteString(": ")
		if s, ok := resp[k].(string); ok {
			b.WriteString(strings.ToValidUTF8(s, "\uFFFD"))
			continue
		}
		j, err := json.Marshal(resp[k])
		if err != nil {
			j = []byte(fmt.Sprintf("%v", resp[k]))
		}
		b.Write(j)
	}
	return b.String()
}

// add appends part p of event e (turn t) to the transcript and the index.
func (seg *segment) add(t int, e *compaction.Event, p renderedPart) {
	h := &seg.header
	label := entryLabel(p.kind, e.Author, p.name)
	fmt.Fprintf(&seg.body, "[%s]\n", label)
	text := strings.ToValidUTF8(p.text, "\uFFFD")
	idx := len(h.Entries)
	entry := entryIndex{Turn: t, Kind: p.kind, Author: e.Author, Name: p.name, Branch: e.Branch, Scope: e.Scope,
		Off: int64(seg.body.Len()), Len: int64(len(text))}
	for _, m := range findMarks([]byte(text)) {
		entry.Marks = append(entry.Marks, [2]int64{int64(m[0]), int64(m[1] - m[0])})
	}
	seg.body.WriteString(text)
	seg.body.WriteString("\n\n")
	tf := map[string]*posting{}
	var order []string
	forEachTerm(text, func(term string, off int) {
		entry.Tokens++
		if p := tf[term]; p != nil {
			p.tf++
			return
		}
		tf[term] = &posting{entry: idx, tf: 1, off: int64(off)}
		order = append(order, term)
	})
	for _, term := range order {
		seg.postings[term] = append(seg.postings[term], *tf[term])
	}
	h.Tokens += int64(entry.Tokens)
	h.Entries = append(h.Entries, entry)
	h.Turns[t].Count++
}

func entryLabel(kind, author, name string) string {
	switch kind {
	case kindUser:
		return "user"
	case kindCall:
		return author + " called " + name
	case kindResult:
		return name + " result"
	}
	if author == "" {
		return "model"
	}
	return author
}

// forEachTerm calls fn with each indexable term of text (lower-cased words of 2 to maxTermBytes
// bytes) and its byte offset.
func forEachTerm(text string, fn func(term string, off int)) {
	forEachWord(text, func(word string, off int) {
		if len(word) < 2 || len(word) > maxTermBytes || utf8.RuneCountInString(word) < 2 {
			return
		}
		fn(strings.ToLower(word), off)
	})
}

// forEachWord calls fn with each word of text (a run of letters, digits and '_') and its byte
// offset.
func forEachWord(text string, fn func(word string, off int)) {
	start := -1
	for i, r := range text {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(text[start:i], start)
			start = -1
		}
	}
	if start >= 0 {
		fn(text[start:], start)
	}
}

// isWordRune reports whether r belongs to a word: a letter, a digit or '_'.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

func bucketOf(term string, buckets int) int {
	h := fnv.New32a()
	h.Write([]byte(term))
	return int(h.Sum32() % uint32(buckets))
}

// tableLine is the length of one bucket table line ("%08x\n").
const tableLine = 9

// encode lays the segment out as seq.
func (seg *segment) encode(seq int) []byte {
	h := seg.header
	h.Seq, h.Format = seq, segmentFormat
	h.Buckets = 1
	for h.Buckets < len(seg.postings)/16 && h.Buckets < 1<<16 {
		h.Buckets *= 2
	}
	lines := make([][]string, h.Buckets)
	for term, ps := range seg.postings {
		var b strings.Builder
		b.WriteString(term)
		b.WriteByte('\t')
		for i, p := range ps {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%d:%d:%d", p.entry, p.tf, p.off)
		}
		b.WriteByte('\n')
		k := bucketOf(term, h.Buckets)
		lines[k] = append(lines[k], b.String())
	}
	var table, buckets bytes.Buffer
	for _, ls := range lines {
		fmt.Fprintf(&table, "%08x\n", buckets.Len())
		sort.Strings(ls)
		for _, l := range ls {
			buckets.WriteString(l)
		}
	}
	fmt.Fprintf(&table, "%08x\n", buckets.Len())
	h.Body = int64(table.Len() + buckets.Len())
	hj, _ := json.Marshal(h) // plain values: cannot fail
	hj = append(hj, '\n')
	var out bytes.Buffer
	fmt.Fprintf(&out, "%s seq=%d header=%d\n", historyMagic, seq, len(hj))
	out.Write(hj)
	out.Write(table.Bytes())
	out.Write(buckets.Bytes())
	out.Write(seg.body.Bytes())
	return out.Bytes()
}

// openedSegment is a history segment whose header was read.
type openedSegment struct {
	o      *output
	seq    int
	header segmentHeader
	base   int64 // section start
}

var errNoSegment = errors.New("recall: no such history segment")

// openSegment reads segment seq's header; errNoSegment when it does not exist.
func openSegment(ctx context.Context, st recall.Store, seq int) (*openedSegment, error) {
	name := HistoryName(seq)
	o, err := openOutput(ctx, st, name)
	if err != nil {
		if errors.Is(err, errNotFound) || isNotExist(err) {
			return nil, errNoSegment
		}
		return nil, err
	}
	first, err := o.readAt(ctx, 0, 128)
	if err != nil {
		return nil, err
	}
	nl := bytes.IndexByte(first, '\n')
	var gotSeq, hlen int
	if nl < 0 {
		return nil, &corruptError{Name: name, Msg: "no header line"}
	}
	if n, err := fmt.Sscanf(string(first[:nl]), historyMagic+" seq=%d header=%d", &gotSeq, &hlen); n != 2 || err != nil || gotSeq != seq || hlen <= 0 || hlen > maxHeaderBytes {
		return nil, &corruptError{Name: name, Msg: "header line does not parse"}
	}
	hb, err := o.readAt(ctx, int64(nl+1), int64(nl+1+hlen))
	if err != nil {
		return nil, err
	}
	s := &openedSegment{o: o, seq: seq, base: int64(nl + 1 + hlen)}
	if err := json.Unmarshal(hb, &s.header); err != nil {
		return nil, &corruptError{Name: name, Msg: "header: " + err.Error()}
	}
	if err := s.check(); err != nil {
		return nil, &corruptError{Name: name, Msg: err.Error()}
	}
	return s, nil
}

// check validates the header against the segment's size, so that no offset read later can
// point outside it.
func (s *openedSegment) check() error {
	h := &s.header
	bodyStart := s.base + h.Body
	if h.Buckets < 1 || h.Buckets > 1<<16 || h.Body < int64(h.Buckets+1)*tableLine || bodyStart > s.o.lay.Size {
		return errors.New("sections out of range")
	}
	for i, e := range h.Entries {
		if e.Off < 0 || e.Len < 0 || bodyStart+e.Off+e.Len > s.o.lay.Size || e.Turn < 0 || e.Turn >= len(h.Turns) {
			return fmt.Errorf("entry %d out of range", i)
		}
		for _, m := range e.Marks {
			if m[0] < 0 || m[1] <= 0 || m[1] > maxMarkBytes || m[0]+m[1] > e.Len {
				return fmt.Errorf("entry %d: cut mark out of range", i)
			}
		}
	}
	for i, t := range h.Turns {
		if t.First < 0 || t.Count < 0 || t.First+t.Count > len(h.Entries) {
			return fmt.Errorf("turn %d out of range", i)
		}
	}
	return nil
}

// postings returns term's postings in the segment (nil when absent).
func (s *openedSegment) postings(ctx context.Context, term string) ([]posting, error) {
	b := bucketOf(term, s.header.Buckets)
	tb, err := s.o.readAt(ctx, s.base+int64(b)*tableLine, s.base+int64(b+2)*tableLine)
	if err != nil {
		return nil, err
	}
	from, err1 := strconv.ParseInt(string(bytes.TrimSpace(tb[:tableLine])), 16, 64)
	to, err2 := strconv.ParseInt(string(bytes.TrimSpace(tb[tableLine:])), 16, 64)
	bucketsStart := s.base + int64(s.header.Buckets+1)*tableLine
	if err1 != nil || err2 != nil || from > to || bucketsStart+to > s.base+s.header.Body {
		return nil, &corruptError{Name: s.o.name, Msg: "bucket table"}
	}
	data, err := s.o.readAt(ctx, bucketsStart+from, bucketsStart+to)
	if err != nil {
		return nil, err
	}
	prefix := term + "\t"
	for len(data) > 0 {
		line := data
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			line, data = data[:nl], data[nl+1:]
		} else {
			data = nil
		}
		if !bytes.HasPrefix(line, []byte(prefix)) {
			continue
		}
		return s.parsePostings(line[len(prefix):])
	}
	return nil, nil
}

func (s *openedSegment) parsePostings(b []byte) ([]posting, error) {
	var out []posting
	for _, f := range bytes.Fields(b) {
		parts := bytes.Split(f, []byte{':'})
		if len(parts) != 3 {
			return nil, &corruptError{Name: s.o.name, Msg: "posting"}
		}
		e, err1 := strconv.Atoi(string(parts[0]))
		tf, err2 := strconv.Atoi(string(parts[1]))
		off, err3 := strconv.ParseInt(string(parts[2]), 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || e < 0 || e >= len(s.header.Entries) || off < 0 || off > s.header.Entries[e].Len {
			return nil, &corruptError{Name: s.o.name, Msg: "posting out of range"}
		}
		out = append(out, posting{entry: e, tf: tf, off: off})
	}
	return out, nil
}

// maxMarkBytes bounds a cut mark: its prefix, counts and a note of at most 200 bytes (JSON
// escaping included).
const maxMarkBytes = 640

// findMarks returns the [start, end) of each cut mark in text.
func findMarks(text []byte) [][2]int {
	var out [][2]int
	for at := 0; ; {
		i := bytes.Index(text[at:], []byte(truncate.MarkerPrefix))
		if i < 0 {
			return out
		}
		start := at + i
		window := text[start:min(len(text), start+maxMarkBytes)]
		end := bytes.Index(window, []byte(markEnd))
		if end < 0 {
			at = start + len(truncate.MarkerPrefix)
			continue
		}
		end += start + len(markEnd)
		out = append(out, [2]int{start, end})
		at = end
	}
}

// markEnd ends a cut mark.
const markEnd = " ...]"

// maxMarkScanBytes bounds what read_turn reads of a previous release's entry to find its cut
// marks (those segments do not record them).
const maxMarkScanBytes = 1 << 20

// marksIn returns the text of entry i's cut marks that reach into [lo, hi) of it: the part an
// excerpt leaves out.
func (s *openedSegment) marksIn(ctx context.Context, i int, lo, hi int64) ([]string, error) {
	e := s.header.Entries[i]
	if lo >= hi {
		return nil, nil
	}
	var spans [][2]int64
	if s.header.Format >= segmentFormat {
		for _, m := range e.Marks {
			if m[0] < hi && m[0]+m[1] > lo {
				spans = append(spans, m)
			}
		}
	} else {
		from, to := max(lo-maxMarkBytes, 0), min(hi+maxMarkBytes, e.Len)
		if to-from > maxMarkScanBytes {
			return nil, nil
		}
		text, err := s.entryText(ctx, i, from, to)
		if err != nil {
			return nil, err
		}
		for _, m := range findMarks(text) {
			if start := from + int64(m[0]); start < hi && from+int64(m[1]) > lo {
				spans = append(spans, [2]int64{start, int64(m[1] - m[0])})
			}
		}
	}
	var out []string
	for _, m := range spans {
		text, err := s.entryText(ctx, i, m[0], m[0]+m[1])
		if err != nil {
			return nil, err
		}
		// A mark inside JSON text has its quotes escaped: shown as the model reads names.
		out = append(out, strings.ReplaceAll(sanitize(text), `\"`, `"`))
	}
	return out, nil
}

// entryText reads [from, to) of entry i's text (clamped).
func (s *openedSegment) entryText(ctx context.Context, i int, from, to int64) ([]byte, error) {
	e := s.header.Entries[i]
	from, to = max(0, from), min(e.Len, to)
	if from >= to {
		return nil, nil
	}
	start := s.base + s.header.Body + e.Off
	return s.o.readAt(ctx, start+from, start+to)
}
