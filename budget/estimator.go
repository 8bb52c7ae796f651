package budget

import (
	"container/list"
	"sync"
	"unsafe"

	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

const (
	// cacheMinBytes is the smallest string an Estimator caches.
	cacheMinBytes = 512
	// DefaultEstimatorCacheBytes bounds the string bytes an Estimator
	// keeps cached (and therefore alive).
	DefaultEstimatorCacheBytes = 64 << 20
)

// strKey identifies a string by its data pointer and length. Go strings are
// immutable and the cache entry keeps the pointer (so the memory) alive, so
// the same key always means the same bytes.
type strKey struct {
	p *byte
	n int
}

type cacheEntry struct {
	key   strKey
	milli int64
}

// Estimator gives the same results as the package-level Estimate functions
// but remembers costs by identity, at two levels:
//
//   - whole contents, keyed by a structural fingerprint that reads no
//     string bytes: which parts and fields are set, every string's data
//     pointer and length, map entries (in a canonical order), numbers.
//     adk-go rebuilds req.Contents from session events on every model call
//     with deep copies that keep string data shared, so an unchanged
//     history content is counted once per process, not once per call. As
//     the history comes in the same order every call, the content that
//     followed the previous one last time is tried first, by walking the
//     content against its stored fingerprint (no hashing, no lock);
//   - strings of 512 bytes or more, so a new content that reuses a long
//     string (a tool output) does not scan it again.
//
// Cached and uncached results are identical: a content hit matches the
// whole fingerprint (strings by identity, map keys by content), and the
// memo keeps the referenced string data alive, so an address is never
// reused for other bytes while its entry exists. Maps and slices are
// mutable and are always walked. Contents holding values the fingerprint
// does not describe (typed structs, schemas, text inline data, nesting
// deeper than 32) are counted directly. Safe for concurrent use; a nil
// *Estimator does not cache.
//
// Memory: the string cache references at most maxBytes of string data
// (least recently used evicted); the content memo holds at most maxBytes
// more, counting its fingerprints and the strings they reference (least
// recently used evicted down to half when full). Those strings usually
// live in session events anyway.
type Estimator struct {
	mu           sync.Mutex
	maxBytes     int
	bytes        int
	m            map[strKey]*list.Element
	lru          *list.List
	hits, misses uint64
	// topHits and topMisses count the lookups made outside a content
	// counted for the memo.
	topHits, topMisses uint64

	memo contentMemo
}

// NewEstimator returns an Estimator caching up to maxBytes of string data
// (≤ 0: DefaultEstimatorCacheBytes).
func NewEstimator(maxBytes int) *Estimator {
	if maxBytes <= 0 {
		maxBytes = DefaultEstimatorCacheBytes
	}
	return &Estimator{maxBytes: maxBytes, m: make(map[strKey]*list.Element), lru: list.New(),
		memo: contentMemo{maxBytes: maxBytes}}
}

// contentMilli is contentMilli through the content memo.
func (e *Estimator) contentMilli(c *genai.Content) int64 {
	if e == nil || c == nil {
		return contentMilli(c, e, false)
	}
	cur := e.memo.begin()
	m := e.memoMilli(c, &cur)
	e.memo.end(&cur)
	return m
}

// memoMilli counts c (non-nil) through the memo, continuing cur.
func (e *Estimator) memoMilli(c *genai.Content, cur *memoCursor) int64 {
	if p := e.memo.predicted(c, cur); p != nil {
		return p.milli
	}
	var buf [fpInline]fpItem
	var acc fpAcc
	fp := fpContent(buf[:0], &acc, c)
	if acc.bad {
		e.memo.skips.Add(1)
		return contentMilli(c, e, false)
	}
	h := fpSum(fp)
	e.memo.mu.Lock()
	hit := e.memo.lookup(h, fp, cur)
	e.memo.mu.Unlock()
	if hit != nil {
		return hit.milli
	}
	e.memo.misses.Add(1)
	m := contentMilli(c, e, true)
	e.memo.mu.Lock()
	e.memo.put(h, fp, acc.bytes, m, cur)
	e.memo.mu.Unlock()
	return m
}

// rawMilli returns the cost of s counted in isolation, safety factor not
// applied (the caller's counter applies it), through the string cache.
// nested: the lookup happens while counting a content for the memo.
func (e *Estimator) rawMilli(s string, nested bool) int64 {
	if e == nil || len(s) > e.maxBytes {
		var t textCounter
		t.add(s)
		return t.finish()
	}
	k := strKey{unsafe.StringData(s), len(s)}
	e.mu.Lock()
	if el, ok := e.m[k]; ok {
		e.lru.MoveToFront(el)
		e.hits++
		if !nested {
			e.topHits++
		}
		m := el.Value.(*cacheEntry).milli
		e.mu.Unlock()
		return m
	}
	e.misses++
	if !nested {
		e.topMisses++
	}
	e.mu.Unlock()
	var t textCounter
	t.add(s)
	m := t.finish()
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.m[k]; ok {
		return m
	}
	e.m[k] = e.lru.PushFront(&cacheEntry{key: k, milli: m})
	e.bytes += k.n
	for e.bytes > e.maxBytes {
		old := e.lru.Back()
		ce := old.Value.(*cacheEntry)
		e.lru.Remove(old)
		delete(e.m, ce.key)
		e.bytes -= ce.key.n
	}
	return m
}

// EstimateText is EstimateText with the cache.
func (e *Estimator) EstimateText(s string) int {
	var t textCounter
	t.cache = e
	t.text(s)
	return milliToTokens(scaled(t.finish()))
}

// EstimateContent is EstimateContent with the cache.
func (e *Estimator) EstimateContent(c *genai.Content) int {
	return milliToTokens(e.contentMilli(c))
}

// EstimateContents is EstimateContents with the cache.
func (e *Estimator) EstimateContents(cs []*genai.Content) int {
	if e == nil {
		return EstimateContents(cs)
	}
	cur := e.memo.begin()
	var m int64
	for _, c := range cs {
		if c != nil {
			m += e.memoMilli(c, &cur)
		}
	}
	e.memo.end(&cur)
	return milliToTokens(m)
}

// EstimateEach stores EstimateContent(cs[i]) in sizes[i] (sizes must be at
// least as long as cs) and returns the sum of those figures (each rounded
// up on its own, unlike EstimateContents). It gives the same figures as
// calling EstimateContent on each content in order, at a lower cost: the
// lookups of one call share a position in the memo instead of publishing
// it after every content, so concurrent sessions do not disturb each
// other's predictions.
func (e *Estimator) EstimateEach(cs []*genai.Content, sizes []int) int {
	sizes = sizes[:len(cs)]
	total := 0
	if e == nil {
		for i, c := range cs {
			sizes[i] = EstimateContent(c)
			total += sizes[i]
		}
		return total
	}
	cur := e.memo.begin()
	for i, c := range cs {
		sizes[i] = 0
		if c != nil {
			sizes[i] = milliToTokens(e.memoMilli(c, &cur))
		}
		total += sizes[i]
	}
	e.memo.end(&cur)
	return total
}

// EstimateRequest is EstimateRequest with the cache.
func (e *Estimator) EstimateRequest(req *model.LLMRequest) int {
	if e == nil || req == nil {
		return EstimateRequest(req)
	}
	cur := e.memo.begin()
	var m int64
	if req.Config != nil {
		if si := req.Config.SystemInstruction; si != nil {
			m += e.memoMilli(si, &cur)
		}
		m += toolsMilli(req.Config.Tools)
	}
	for _, c := range req.Contents {
		if c != nil {
			m += e.memoMilli(c, &cur)
		}
	}
	e.memo.end(&cur)
	return milliToTokens(m)
}

// EstimatorStats describes an Estimator's caches.
type EstimatorStats struct {
	// Entries and Bytes describe the string cache (strings of 512 bytes
	// or more).
	Entries, Bytes int
	// Hits and Misses count the answers at the level asked: one per
	// content looked up in the memo, plus one per long string looked up
	// outside it (EstimateText, contents that cannot be memoized). The
	// string lookups made while counting a content that missed the memo
	// are in StringHits and StringMisses only.
	Hits, Misses uint64
	// StringHits and StringMisses count every string cache lookup.
	StringHits, StringMisses uint64
	// ContentEntries and ContentBytes describe the content memo (bytes
	// accounted: fingerprints and the strings they reference);
	// ContentSkips counts contents that cannot be memoized and were
	// counted directly (see Estimator).
	ContentEntries, ContentBytes int
	ContentHits, ContentMisses   uint64
	ContentSkips                 uint64
}

// Stats returns the cache figures.
func (e *Estimator) Stats() EstimatorStats {
	if e == nil {
		return EstimatorStats{}
	}
	e.mu.Lock()
	st := EstimatorStats{Entries: len(e.m), Bytes: e.bytes, Hits: e.topHits, Misses: e.topMisses,
		StringHits: e.hits, StringMisses: e.misses}
	e.mu.Unlock()
	e.memo.mu.Lock()
	st.ContentEntries, st.ContentBytes = len(e.memo.all), e.memo.bytes
	e.memo.mu.Unlock()
	st.ContentHits, st.ContentMisses, st.ContentSkips = e.memo.hits.Load(), e.memo.misses.Load(), e.memo.skips.Load()
	st.Hits += st.ContentHits
	st.Misses += st.ContentMisses
	return st
}
