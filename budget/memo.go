package budget

import (
	"encoding/json"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"google.golang.org/genai"
)

// Content memo: the Estimator remembers the cost of whole contents, keyed
// by a structural fingerprint that never reads string bytes.
//
// The fingerprint is the exact sequence of everything partMilli reads: the
// parts and which of their fields are set, every string as (data pointer,
// length), map entries in a canonical order (sorted by key pointer and
// length), the bits of numbers, the lengths of byte slices. Go strings are
// immutable and the memo stores the data pointers themselves (traced by the
// GC, so the bytes stay alive and the address cannot be reused for other
// bytes while the entry exists): equal fingerprints mean equal strings,
// equal structure and therefore an equal estimate. Maps and slices are
// mutable, so they are always walked, never identified by address. A hit
// compares the whole sequence, not only its hash.
//
// adk-go rebuilds req.Contents on every model call with a reflective deep
// copy (internal/llminternal clone/deepCopy) that allocates new contents,
// parts and top-level maps but copies string headers, so string data, and
// the interface values nested in maps, stay shared with the session's
// events: the fingerprint of an unchanged history content is the same on
// every call.
//
// Contents the fingerprint does not describe exactly are not memoized and
// are counted directly: values of other types than the JSON-like ones
// handled by (*textCounter).value (typed structs, *genai.Schema), inline
// data with a text MIME type (its cost depends on bytes that a deep copy
// duplicates), and values nested deeper than fpMaxDepth or with more than
// fpMaxItems items.

// fpItem is one element of a fingerprint: a string (p = its data, n = tag
// and length) or a tagged scalar (p = nil).
type fpItem struct {
	p unsafe.Pointer
	n uint64
}

const (
	fpTagShift = 56
	// fpMaxItems bounds a fingerprint; larger contents are counted
	// directly (a content that big costs far more to count than to walk).
	fpMaxItems = 1 << 14
	// fpMaxDepth bounds the value nesting walked (cycles, hostile input);
	// it is far below maxValueDepth, so no memoized content ever reaches
	// the counter's own limits.
	fpMaxDepth = 32
	// fpInline is the number of items a fingerprint holds on the stack.
	fpInline = 64
	// fpInlineKVs is the number of map entries sorted on the stack.
	fpInlineKVs = 8
	// memoEntryOverhead approximates the bytes of a memo entry besides its
	// items and the strings it references.
	memoEntryOverhead = 96
)

// Tags, in the top byte of fpItem.n. tgFloat and tgInt are always followed
// by one raw 64-bit item, so a sequence parses one way only.
const (
	tgStr      = iota + 1 // string: low bits = length
	tgContent             // low bits = number of parts
	tgPart                // low bits = set of present fields
	tgNilPart             // nil *genai.Part
	tgRespPart            // FunctionResponse part: low bits = present fields
	tgNil                 // nil value
	tgTrue                // true
	tgFalse               // false
	tgFloat               // followed by the raw float64 bits
	tgInt                 // low bit = negative; followed by the raw magnitude
	tgNumber              // json.Number: low bits = length
	tgMap                 // map[string]any: low bits = entries
	tgNilMap              // nil map[string]any
	tgList                // []any: low bits = length
	tgStrList             // []string: low bits = length
	tgStrMap              // map[string]string: low bits = entries
	tgBytes               // []byte: low bits = length
	tgBlob                // inline data: low bits = len(Data); then MIME string
)

// fpAcc carries a fingerprint's scalars through the walk. The items
// themselves are threaded through the functions below as a slice argument
// and result, so the caller's buffer can stay on its stack.
type fpAcc struct {
	bytes int  // string bytes referenced
	bad   bool // not memoizable
}

// fpKV is a map entry waiting to be emitted in canonical order.
type fpKV struct {
	k string
	v any    // map[string]any value
	s string // map[string]string value
}

func fpTag(fp []fpItem, tag, v uint64) []fpItem {
	return append(fp, fpItem{n: tag<<fpTagShift | v})
}

// fpString appends a string by identity. The empty string has no
// identity: its data pointer is dropped so it cannot keep unrelated memory
// alive.
func fpString(fp []fpItem, a *fpAcc, tag uint64, s string) []fpItem {
	if len(s) == 0 {
		return append(fp, fpItem{n: tag << fpTagShift})
	}
	a.bytes += len(s)
	return append(fp, fpItem{p: unsafe.Pointer(unsafe.StringData(s)), n: tag<<fpTagShift | uint64(len(s))})
}

// fpFull reports (and records) that the fingerprint is unusable.
func fpFull(fp []fpItem, a *fpAcc) bool {
	if len(fp) > fpMaxItems {
		a.bad = true
	}
	return a.bad
}

// fpContent appends c (non-nil); a.bad reports a content that cannot be
// memoized.
func fpContent(fp []fpItem, a *fpAcc, c *genai.Content) []fpItem {
	fp = fpTag(fp, tgContent, uint64(len(c.Parts)))
	for _, p := range c.Parts {
		fp = fpPart(fp, a, p)
		if fpFull(fp, a) {
			break
		}
	}
	return fp
}

// Present-field bits of a part.
const (
	pfFunctionCall = 1 << iota
	pfFunctionResponse
	pfInlineData
	pfFileData
	pfExecutableCode
	pfCodeExecutionResult
	pfToolCall
	pfToolResponse
)

// partFields returns the set of p's pointer fields that are not nil, as pf* bits.
func partFields(p *genai.Part) uint64 {
	var set uint64
	if p.FunctionCall != nil {
		set |= pfFunctionCall
	}
	if p.FunctionResponse != nil {
		set |= pfFunctionResponse
	}
	if p.InlineData != nil {
		set |= pfInlineData
	}
	if p.FileData != nil {
		set |= pfFileData
	}
	if p.ExecutableCode != nil {
		set |= pfExecutableCode
	}
	if p.CodeExecutionResult != nil {
		set |= pfCodeExecutionResult
	}
	if p.ToolCall != nil {
		set |= pfToolCall
	}
	if p.ToolResponse != nil {
		set |= pfToolResponse
	}
	return set
}

// fpPart mirrors partMilli: every field it reads, nothing else.
func fpPart(fp []fpItem, a *fpAcc, p *genai.Part) []fpItem {
	if p == nil {
		return fpTag(fp, tgNilPart, 0)
	}
	set := partFields(p)
	fp = fpTag(fp, tgPart, set)
	fp = fpString(fp, a, tgStr, p.Text)
	if set == 0 {
		return fp
	}
	if fc := p.FunctionCall; fc != nil {
		fp = fpString(fp, a, tgStr, fc.Name)
		fp = fpMap(fp, a, fc.Args)
	}
	if fr := p.FunctionResponse; fr != nil {
		fp = fpString(fp, a, tgStr, fr.Name)
		fp = fpMap(fp, a, fr.Response)
		fp = fpTag(fp, tgList, uint64(len(fr.Parts)))
		for _, rp := range fr.Parts {
			if rp == nil {
				fp = fpTag(fp, tgNilPart, 0)
				continue
			}
			var rs uint64
			if rp.InlineData != nil {
				rs |= pfInlineData
			}
			if rp.FileData != nil {
				rs |= pfFileData
			}
			fp = fpTag(fp, tgRespPart, rs)
			if rp.InlineData != nil {
				fp = fpBlob(fp, a, rp.InlineData.MIMEType, rp.InlineData.Data)
			}
			if rp.FileData != nil {
				fp = fpString(fp, a, tgStr, rp.FileData.MIMEType)
				fp = fpString(fp, a, tgStr, rp.FileData.FileURI)
			}
		}
	}
	if b := p.InlineData; b != nil {
		fp = fpBlob(fp, a, b.MIMEType, b.Data)
	}
	if fd := p.FileData; fd != nil {
		fp = fpString(fp, a, tgStr, fd.MIMEType)
		fp = fpString(fp, a, tgStr, fd.FileURI)
	}
	if ec := p.ExecutableCode; ec != nil {
		fp = fpString(fp, a, tgStr, string(ec.Language))
		fp = fpString(fp, a, tgStr, ec.Code)
	}
	if cr := p.CodeExecutionResult; cr != nil {
		fp = fpString(fp, a, tgStr, string(cr.Outcome))
		fp = fpString(fp, a, tgStr, cr.Output)
	}
	if tc := p.ToolCall; tc != nil {
		fp = fpString(fp, a, tgStr, string(tc.ToolType))
		fp = fpMap(fp, a, tc.Args)
	}
	if tr := p.ToolResponse; tr != nil {
		fp = fpString(fp, a, tgStr, string(tr.ToolType))
		fp = fpMap(fp, a, tr.Response)
	}
	return fp
}

// fpBlob mirrors blobMilli: the cost depends on the MIME type and the
// length of the data, except for text data, whose bytes are counted (not
// memoized: a deep copy duplicates them).
func fpBlob(fp []fpItem, a *fpAcc, mime string, data []byte) []fpItem {
	if len(data) > 0 && !strings.HasPrefix(strings.ToLower(mime), "image/") && isTextMIME(mime) {
		a.bad = true
		return fp
	}
	fp = fpTag(fp, tgBlob, uint64(len(data)))
	return fpString(fp, a, tgStr, mime)
}

// fpMap appends a map[string]any with its entries sorted by key identity
// (a map's keys are distinct strings, so distinct identities). It is not
// recursive, so the caller's buffer stays on its stack: nested maps and
// lists are fingerprinted into a buffer of their own by fpDeep.
func fpMap(fp []fpItem, a *fpAcc, m map[string]any) []fpItem {
	if m == nil {
		return fpTag(fp, tgNilMap, 0)
	}
	fp = fpTag(fp, tgMap, uint64(len(m)))
	if len(m) > fpMaxItems {
		a.bad = true
		return fp
	}
	var buf [fpInlineKVs]fpKV
	kvs := buf[:0]
	for k, v := range m {
		kvs = append(kvs, fpKV{k: k, v: v})
	}
	sortKVs(kvs)
	for i := range kvs {
		fp = fpString(fp, a, tgStr, kvs[i].k)
		var flat bool
		if fp, flat = fpFlat(fp, a, kvs[i].v); !flat {
			fp = append(fp, fpDeep(a, kvs[i].v)...)
		}
		if fpFull(fp, a) {
			break
		}
	}
	return fp
}

// fpDeep fingerprints a nested value into a new buffer.
func fpDeep(a *fpAcc, v any) []fpItem {
	return fpValue(make([]fpItem, 0, 16), a, v, 1)
}

// fpMapR is fpMap for nested maps (recursive).
func fpMapR(fp []fpItem, a *fpAcc, m map[string]any, depth int) []fpItem {
	if m == nil {
		return fpTag(fp, tgNilMap, 0)
	}
	fp = fpTag(fp, tgMap, uint64(len(m)))
	if depth > fpMaxDepth || len(m) > fpMaxItems {
		a.bad = true
		return fp
	}
	var buf [fpInlineKVs]fpKV
	kvs := buf[:0]
	for k, v := range m {
		kvs = append(kvs, fpKV{k: k, v: v})
	}
	sortKVs(kvs)
	for i := range kvs {
		fp = fpString(fp, a, tgStr, kvs[i].k)
		fp = fpValue(fp, a, kvs[i].v, depth+1)
		if fpFull(fp, a) {
			break
		}
	}
	return fp
}

func fpStrMap(fp []fpItem, a *fpAcc, m map[string]string) []fpItem {
	fp = fpTag(fp, tgStrMap, uint64(len(m)))
	if len(m) > fpMaxItems {
		a.bad = true
		return fp
	}
	var buf [fpInlineKVs]fpKV
	kvs := buf[:0]
	for k, s := range m {
		kvs = append(kvs, fpKV{k: k, s: s})
	}
	sortKVs(kvs)
	for i := range kvs {
		fp = fpString(fp, a, tgStr, kvs[i].k)
		fp = fpString(fp, a, tgStr, kvs[i].s)
	}
	return fp
}

// kvCmp orders map entries by key identity: the empty key (no identity)
// first, then by data address, then by length.
func kvCmp(a, b *fpKV) int {
	if len(a.k) == 0 || len(b.k) == 0 {
		return len(a.k) - len(b.k)
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.StringData(a.k))), uintptr(unsafe.Pointer(unsafe.StringData(b.k)))
	switch {
	case pa < pb:
		return -1
	case pa > pb:
		return 1
	}
	return len(a.k) - len(b.k)
}

// sortKVs sorts map entries by key identity: insertion sort for the small
// maps of tool calls, slices.SortFunc beyond.
func sortKVs(kvs []fpKV) {
	if len(kvs) > 12 {
		slices.SortFunc(kvs, func(a, b fpKV) int { return kvCmp(&a, &b) })
		return
	}
	for i := 1; i < len(kvs); i++ {
		for j := i; j > 0 && kvCmp(&kvs[j], &kvs[j-1]) < 0; j-- {
			kvs[j], kvs[j-1] = kvs[j-1], kvs[j]
		}
	}
}

// fpFlat appends the values of (*textCounter).value that hold no nested
// any values; flat is false for the others (nothing appended).
func fpFlat(fp []fpItem, a *fpAcc, v any) (_ []fpItem, flat bool) {
	switch x := v.(type) {
	case nil:
		return fpTag(fp, tgNil, 0), true
	case string:
		return fpString(fp, a, tgStr, x), true
	case bool:
		if x {
			return fpTag(fp, tgTrue, 0), true
		}
		return fpTag(fp, tgFalse, 0), true
	case float64:
		return append(fp, fpItem{n: tgFloat << fpTagShift}, fpItem{n: math.Float64bits(x)}), true
	case float32:
		// Counted as float64(x).
		return append(fp, fpItem{n: tgFloat << fpTagShift}, fpItem{n: math.Float64bits(float64(x))}), true
	case int:
		return fpInt(fp, x < 0, absInt(int64(x))), true
	case int64:
		return fpInt(fp, x < 0, absInt(x)), true
	case int32:
		return fpInt(fp, x < 0, absInt(int64(x))), true
	case uint64:
		return fpInt(fp, false, x), true
	case uint:
		return fpInt(fp, false, uint64(x)), true
	case json.Number:
		return fpString(fp, a, tgNumber, string(x)), true
	case []string:
		fp = fpTag(fp, tgStrList, uint64(len(x)))
		if len(x) > fpMaxItems {
			a.bad = true
			return fp, true
		}
		for _, s := range x {
			fp = fpString(fp, a, tgStr, s)
		}
		return fp, true
	case map[string]string:
		return fpStrMap(fp, a, x), true
	case []byte:
		return fpTag(fp, tgBytes, uint64(len(x))), true
	}
	return fp, false
}

// fpValue mirrors (*textCounter).value for the types it handles directly
// (recursive).
func fpValue(fp []fpItem, a *fpAcc, v any, depth int) []fpItem {
	if depth > fpMaxDepth || fpFull(fp, a) {
		a.bad = true
		return fp
	}
	fp, flat := fpFlat(fp, a, v)
	if flat {
		return fp
	}
	switch x := v.(type) {
	case map[string]any:
		return fpMapR(fp, a, x, depth)
	case []any:
		fp = fpTag(fp, tgList, uint64(len(x)))
		for _, e := range x {
			fp = fpValue(fp, a, e, depth+1)
			if a.bad {
				break
			}
		}
		return fp
	}
	// *genai.Schema, typed values walked by reflection: not memoized.
	a.bad = true
	return fp
}

// fpInt appends an integer as the counter sees it: sign and magnitude.
func fpInt(fp []fpItem, neg bool, abs uint64) []fpItem {
	var n uint64
	if neg {
		n = 1
	}
	return append(fp, fpItem{n: tgInt<<fpTagShift | n}, fpItem{n: abs})
}

// fpSum hashes a fingerprint to find its memo entry (a hit still compares
// every item, so collisions only cost a miss).
func fpSum(fp []fpItem) uint64 {
	const k = 0x9E3779B97F4A7C15
	h := uint64(len(fp))
	for _, it := range fp {
		h = (h ^ uint64(uintptr(it.p)) ^ bits.RotateLeft64(it.n, 32)) * k
	}
	return h ^ h>>29
}

// memoEntry is one memoized content. items, milli and size never change
// after creation, so the lock-free path may read them.
type memoEntry struct {
	items []fpItem
	milli int64
	size  int
	// next is the entry looked up right after this one last time (adk-go
	// sends the same history in the same order on every call): the next
	// lookup verifies the content against it without hashing or locking.
	next atomic.Pointer[memoEntry]
	// skip is the entry looked up two steps after this one last time: the
	// second guess when next was wrong because the previous entry occurs
	// more than once in the history (identical tool results).
	skip atomic.Pointer[memoEntry]
	// epoch is the memo epoch of the last use (eviction order).
	epoch atomic.Uint32
	dead  atomic.Bool // evicted
}

// contentMemo maps fingerprint hashes to entries, bounded by bytes: when
// it holds more than maxBytes, the entries least recently used (by epoch;
// a new epoch starts at each sweep) are evicted down to half of it.
type contentMemo struct {
	mu       sync.Mutex // guards all, bytes, links between entries
	all      map[uint64]*memoEntry
	bytes    int
	maxBytes int
	epoch    atomic.Uint32
	last     atomic.Pointer[memoEntry] // the entry of the previous lookup
	last2    atomic.Pointer[memoEntry] // and of the one before
	hits     atomic.Uint64
	misses   atomic.Uint64
	skips    atomic.Uint64
}

// touch marks e as used in the current epoch.
func (m *contentMemo) touch(e *memoEntry) {
	if ep := m.epoch.Load(); e.epoch.Load() != ep {
		e.epoch.Store(ep)
	}
}

// memoCursor is the position of a sequence of lookups: the entries of the
// two previous lookups, and the hits counted locally (added to the memo's
// counter once per sequence).
type memoCursor struct {
	last, last2 *memoEntry
	hits        uint64
}

// advance moves the cursor to e.
func (cur *memoCursor) advance(e *memoEntry) {
	cur.last2, cur.last = cur.last, e
}

// predicted returns the entry that followed cur.last last time (or, when
// that one does not match, the one that followed cur.last2 two steps
// later), if c matches it exactly. Lock-free.
func (m *contentMemo) predicted(c *genai.Content, cur *memoCursor) *memoEntry {
	if cur.last == nil {
		return nil
	}
	if cand := cur.last.next.Load(); cand != nil {
		if rest, ok := vContent(cand.items, c); ok && len(rest) == 0 {
			if p2 := cur.last2; p2 != nil && p2.skip.Load() != cand && !p2.dead.Load() {
				p2.skip.Store(cand)
			}
			m.hit(cand, cur)
			return cand
		}
	}
	if cur.last2 == nil {
		return nil
	}
	if cand := cur.last2.skip.Load(); cand != nil {
		if rest, ok := vContent(cand.items, c); ok && len(rest) == 0 {
			m.hit(cand, cur)
			return cand
		}
	}
	return nil
}

func (m *contentMemo) hit(e *memoEntry, cur *memoCursor) {
	m.touch(e)
	cur.advance(e)
	cur.hits++
}

// lookup finds the entry of fingerprint fp (hash h) and links it after
// the cursor's entries. Called with mu held.
func (m *contentMemo) lookup(h uint64, fp []fpItem, cur *memoCursor) *memoEntry {
	e := m.all[h]
	if e == nil || !slices.Equal(e.items, fp) {
		return nil
	}
	m.touch(e)
	m.link(e, cur)
	cur.hits++
	return e
}

// link records e as following the cursor's entries and moves the cursor
// to e. Called with mu held.
func (m *contentMemo) link(e *memoEntry, cur *memoCursor) {
	if prev := cur.last; prev != nil && !prev.dead.Load() {
		prev.next.Store(e)
	}
	if p2 := cur.last2; p2 != nil && !p2.dead.Load() {
		p2.skip.Store(e)
	}
	cur.advance(e)
}

// begin returns a cursor continuing the previous sequence of lookups.
func (m *contentMemo) begin() memoCursor {
	return memoCursor{last: m.last.Load(), last2: m.last2.Load()}
}

// end publishes a sequence's position and hits.
func (m *contentMemo) end(cur *memoCursor) {
	if cur.last != nil {
		m.last.Store(cur.last)
		m.last2.Store(cur.last2)
	}
	if cur.hits > 0 {
		m.hits.Add(cur.hits)
	}
}

// put adds the entry of fingerprint fp (hash h). Called with mu held.
func (m *contentMemo) put(h uint64, fp []fpItem, strBytes int, milli int64, cur *memoCursor) {
	size := memoEntryOverhead + len(fp)*int(unsafe.Sizeof(fpItem{})) + strBytes
	if size > m.maxBytes/2 {
		return
	}
	if m.all == nil {
		m.all = make(map[uint64]*memoEntry)
	}
	if old := m.all[h]; old != nil {
		// Hash collision (or a racing insert of the same content): the
		// newer entry wins.
		m.bytes -= old.size
		old.dead.Store(true)
		old.next.Store(nil)
		old.skip.Store(nil)
	}
	e := &memoEntry{items: slices.Clone(fp), milli: milli, size: size}
	e.epoch.Store(m.epoch.Load())
	m.all[h] = e
	m.bytes += size
	m.link(e, cur)
	if m.bytes > m.maxBytes {
		m.sweep()
	}
}

// sweep evicts the least recently used entries down to half the budget
// and starts a new epoch. Called with mu held.
func (m *contentMemo) sweep() {
	type aged struct {
		h     uint64
		e     *memoEntry
		epoch uint32
	}
	list := make([]aged, 0, len(m.all))
	for h, e := range m.all {
		list = append(list, aged{h, e, e.epoch.Load()})
	}
	slices.SortFunc(list, func(a, b aged) int { return int(a.epoch) - int(b.epoch) })
	for _, a := range list {
		if m.bytes <= m.maxBytes/2 {
			break
		}
		delete(m.all, a.h)
		m.bytes -= a.e.size
		a.e.dead.Store(true)
		a.e.next.Store(nil)
		a.e.skip.Store(nil)
	}
	// No live entry keeps an evicted one (and its strings) alive.
	for _, e := range m.all {
		if n := e.next.Load(); n != nil && n.dead.Load() {
			e.next.Store(nil)
		}
		if n := e.skip.Load(); n != nil && n.dead.Load() {
			e.skip.Store(nil)
		}
	}
	if l := m.last.Load(); l != nil && l.dead.Load() {
		m.last.CompareAndSwap(l, nil)
	}
	if l := m.last2.Load(); l != nil && l.dead.Load() {
		m.last2.CompareAndSwap(l, nil)
	}
	m.epoch.Add(1)
}

// The v* functions verify a content against a stored fingerprint without
// building one: each consumes the items describing its value and returns
// the rest, or false at the first difference. Strings are compared by
// identity, map keys by content (a map of the stored length holding every
// stored key holds exactly those keys), so a match means the content is
// what the fingerprint describes and costs the stored estimate. The walk
// is bounded by the stored items, whatever the content (cycles included).

func vTag(items []fpItem, tag, v uint64) ([]fpItem, bool) {
	if len(items) == 0 || items[0].n != tag<<fpTagShift|v || items[0].p != nil {
		return nil, false
	}
	return items[1:], true
}

func vString(items []fpItem, tag uint64, s string) ([]fpItem, bool) {
	if len(items) == 0 || items[0].n != tag<<fpTagShift|uint64(len(s)) {
		return nil, false
	}
	if len(s) > 0 && items[0].p != unsafe.Pointer(unsafe.StringData(s)) {
		return nil, false
	}
	return items[1:], true
}

// vKey returns the map key stored in items[0].
func vKey(items []fpItem) (string, []fpItem, bool) {
	if len(items) == 0 || items[0].n>>fpTagShift != tgStr {
		return "", nil, false
	}
	n := int(items[0].n & (1<<fpTagShift - 1))
	if n == 0 {
		return "", items[1:], true
	}
	return unsafe.String((*byte)(items[0].p), n), items[1:], true
}

func vContent(items []fpItem, c *genai.Content) ([]fpItem, bool) {
	items, ok := vTag(items, tgContent, uint64(len(c.Parts)))
	for _, p := range c.Parts {
		if !ok {
			return nil, false
		}
		items, ok = vPart(items, p)
	}
	return items, ok
}

func vPart(items []fpItem, p *genai.Part) ([]fpItem, bool) {
	if p == nil {
		return vTag(items, tgNilPart, 0)
	}
	set := partFields(p)
	items, ok := vTag(items, tgPart, set)
	if ok {
		items, ok = vString(items, tgStr, p.Text)
	}
	if !ok || set == 0 {
		return items, ok
	}
	if fc := p.FunctionCall; fc != nil {
		if items, ok = vString(items, tgStr, fc.Name); !ok {
			return nil, false
		}
		if items, ok = vMap(items, fc.Args); !ok {
			return nil, false
		}
	}
	if fr := p.FunctionResponse; fr != nil {
		if items, ok = vString(items, tgStr, fr.Name); !ok {
			return nil, false
		}
		if items, ok = vMap(items, fr.Response); !ok {
			return nil, false
		}
		if items, ok = vTag(items, tgList, uint64(len(fr.Parts))); !ok {
			return nil, false
		}
		for _, rp := range fr.Parts {
			if rp == nil {
				if items, ok = vTag(items, tgNilPart, 0); !ok {
					return nil, false
				}
				continue
			}
			var rs uint64
			if rp.InlineData != nil {
				rs |= pfInlineData
			}
			if rp.FileData != nil {
				rs |= pfFileData
			}
			if items, ok = vTag(items, tgRespPart, rs); !ok {
				return nil, false
			}
			if rp.InlineData != nil {
				if items, ok = vBlob(items, rp.InlineData.MIMEType, rp.InlineData.Data); !ok {
					return nil, false
				}
			}
			if rp.FileData != nil {
				if items, ok = vString(items, tgStr, rp.FileData.MIMEType); ok {
					items, ok = vString(items, tgStr, rp.FileData.FileURI)
				}
				if !ok {
					return nil, false
				}
			}
		}
	}
	if b := p.InlineData; b != nil {
		if items, ok = vBlob(items, b.MIMEType, b.Data); !ok {
			return nil, false
		}
	}
	if fd := p.FileData; fd != nil {
		if items, ok = vString(items, tgStr, fd.MIMEType); ok {
			items, ok = vString(items, tgStr, fd.FileURI)
		}
		if !ok {
			return nil, false
		}
	}
	if ec := p.ExecutableCode; ec != nil {
		if items, ok = vString(items, tgStr, string(ec.Language)); ok {
			items, ok = vString(items, tgStr, ec.Code)
		}
		if !ok {
			return nil, false
		}
	}
	if cr := p.CodeExecutionResult; cr != nil {
		if items, ok = vString(items, tgStr, string(cr.Outcome)); ok {
			items, ok = vString(items, tgStr, cr.Output)
		}
		if !ok {
			return nil, false
		}
	}
	if tc := p.ToolCall; tc != nil {
		if items, ok = vString(items, tgStr, string(tc.ToolType)); ok {
			items, ok = vMap(items, tc.Args)
		}
		if !ok {
			return nil, false
		}
	}
	if tr := p.ToolResponse; tr != nil {
		if items, ok = vString(items, tgStr, string(tr.ToolType)); ok {
			items, ok = vMap(items, tr.Response)
		}
		if !ok {
			return nil, false
		}
	}
	return items, true
}

// vBlob: a stored blob was never text data (those are not memoized), and
// the same MIME string means the same MIME type.
func vBlob(items []fpItem, mime string, data []byte) ([]fpItem, bool) {
	items, ok := vTag(items, tgBlob, uint64(len(data)))
	if !ok {
		return nil, false
	}
	return vString(items, tgStr, mime)
}

func vMap(items []fpItem, m map[string]any) ([]fpItem, bool) {
	if m == nil {
		return vTag(items, tgNilMap, 0)
	}
	items, ok := vTag(items, tgMap, uint64(len(m)))
	for range len(m) {
		if !ok {
			return nil, false
		}
		var k string
		if k, items, ok = vKey(items); !ok {
			return nil, false
		}
		v, found := m[k]
		if !found {
			return nil, false
		}
		items, ok = vValue(items, v)
	}
	return items, ok
}

func vValue(items []fpItem, v any) ([]fpItem, bool) {
	if len(items) == 0 {
		return nil, false
	}
	switch x := v.(type) {
	case nil:
		return vTag(items, tgNil, 0)
	case string:
		return vString(items, tgStr, x)
	case bool:
		if x {
			return vTag(items, tgTrue, 0)
		}
		return vTag(items, tgFalse, 0)
	case float64:
		return vRaw(items, tgFloat, 0, math.Float64bits(x))
	case float32:
		return vRaw(items, tgFloat, 0, math.Float64bits(float64(x)))
	case int:
		return vInt(items, x < 0, absInt(int64(x)))
	case int64:
		return vInt(items, x < 0, absInt(x))
	case int32:
		return vInt(items, x < 0, absInt(int64(x)))
	case uint64:
		return vInt(items, false, x)
	case uint:
		return vInt(items, false, uint64(x))
	case json.Number:
		return vString(items, tgNumber, string(x))
	case map[string]any:
		return vMap(items, x)
	case []any:
		items, ok := vTag(items, tgList, uint64(len(x)))
		for _, e := range x {
			if !ok {
				return nil, false
			}
			items, ok = vValue(items, e)
		}
		return items, ok
	case []string:
		items, ok := vTag(items, tgStrList, uint64(len(x)))
		for _, s := range x {
			if !ok {
				return nil, false
			}
			items, ok = vString(items, tgStr, s)
		}
		return items, ok
	case map[string]string:
		items, ok := vTag(items, tgStrMap, uint64(len(x)))
		for range len(x) {
			if !ok {
				return nil, false
			}
			var k string
			if k, items, ok = vKey(items); !ok {
				return nil, false
			}
			s, found := x[k]
			if !found {
				return nil, false
			}
			items, ok = vString(items, tgStr, s)
		}
		return items, ok
	case []byte:
		return vTag(items, tgBytes, uint64(len(x)))
	}
	return nil, false
}

func vRaw(items []fpItem, tag, v, raw uint64) ([]fpItem, bool) {
	items, ok := vTag(items, tag, v)
	if !ok || len(items) == 0 || items[0].n != raw || items[0].p != nil {
		return nil, false
	}
	return items[1:], true
}

func vInt(items []fpItem, neg bool, abs uint64) ([]fpItem, bool) {
	var n uint64
	if neg {
		n = 1
	}
	return vRaw(items, tgInt, n, abs)
}
