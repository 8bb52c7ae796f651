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
// but remembers the cost of every string of 512 bytes or more by identity.
// adk-go rebuilds req.Contents from session events on every model call
// with deep copies that keep string data shared, so history text and tool
// outputs are scanned once per process instead of once per call. Safe for
// concurrent use; a nil *Estimator does not cache.
//
// Memory: the cache holds references to at most maxBytes of string data
// (least recently used evicted); those strings usually live in session
// events anyway.
type Estimator struct {
	mu           sync.Mutex
	maxBytes     int
	bytes        int
	m            map[strKey]*list.Element
	lru          *list.List
	hits, misses uint64
}

// NewEstimator returns an Estimator caching up to maxBytes of string data
// (≤ 0: DefaultEstimatorCacheBytes).
func NewEstimator(maxBytes int) *Estimator {
	if maxBytes <= 0 {
		maxBytes = DefaultEstimatorCacheBytes
	}
	return &Estimator{maxBytes: maxBytes, m: make(map[strKey]*list.Element), lru: list.New()}
}

// rawMilli returns the cost of s counted in isolation, safety factor not
// applied (the caller's counter applies it).
func (e *Estimator) rawMilli(s string) int64 {
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
		m := el.Value.(*cacheEntry).milli
		e.mu.Unlock()
		return m
	}
	e.misses++
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
	return milliToTokens(contentMilli(c, e))
}

// EstimateContents is EstimateContents with the cache.
func (e *Estimator) EstimateContents(cs []*genai.Content) int {
	var m int64
	for _, c := range cs {
		m += contentMilli(c, e)
	}
	return milliToTokens(m)
}

// EstimateRequest is EstimateRequest with the cache.
func (e *Estimator) EstimateRequest(req *model.LLMRequest) int {
	return milliToTokens(requestMilli(req, e))
}

// EstimatorStats describes an Estimator's cache.
type EstimatorStats struct {
	Entries, Bytes int
	Hits, Misses   uint64
}

// Stats returns the cache figures.
func (e *Estimator) Stats() EstimatorStats {
	if e == nil {
		return EstimatorStats{}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return EstimatorStats{Entries: len(e.m), Bytes: e.bytes, Hits: e.hits, Misses: e.misses}
}
