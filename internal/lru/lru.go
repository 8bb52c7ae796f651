// Package lru is the one bounded cache of adkctx: a map that keeps its most recently used
// entries and drops the least recently used one beyond its capacity. Every piece of per-session
// or per-name state in adkctx lives in one of these, so memory stays bounded however many
// sessions, models or directories a process sees. A cache of values whose sizes vary widely
// (marker records, resolved ledgers) also bounds the sum of their weights (NewWeighted).
package lru

import (
	"container/list"
	"sync"
)

// Cache is a concurrency-safe LRU map. The zero value is not usable; use New.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	items map[K]*list.Element
	order *list.List // front: most recently used
	// weigh, when set, gives a value's weight; the weights of the entries add up to weight,
	// at most maxWeight.
	weigh             func(V) int
	weight, maxWeight int
}

type entry[K comparable, V any] struct {
	key    K
	val    V
	weight int
}

// New returns a cache holding at most capacity entries (capacity < 1 is treated as 1).
func New[K comparable, V any](capacity int) *Cache[K, V] {
	return &Cache[K, V]{max: max(capacity, 1), items: map[K]*list.Element{}, order: list.New()}
}

// NewWeighted returns a cache holding at most capacity entries whose weights (weigh: a value's
// size in bytes, say; negative counts as 0) add up to at most maxWeight. The least recently used
// entries go first; a value heavier than maxWeight alone is not kept.
func NewWeighted[K comparable, V any](capacity, maxWeight int, weigh func(V) int) *Cache[K, V] {
	c := New[K, V](capacity)
	c.weigh, c.maxWeight = weigh, max(maxWeight, 0)
	return c
}

// Get returns the value for k and marks it used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// Put stores v for k, evicting the least recently used entry when full.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, v)
}

func (c *Cache[K, V]) putLocked(k K, v V) {
	w := 0
	if c.weigh != nil {
		if w = max(c.weigh(v), 0); w > c.maxWeight {
			c.deleteLocked(k) // too heavy to keep: an older value for k would be stale
			return
		}
	}
	if el, ok := c.items[k]; ok {
		e := el.Value.(*entry[K, V])
		c.weight += w - e.weight
		e.val, e.weight = v, w
		c.order.MoveToFront(el)
	} else {
		c.items[k] = c.order.PushFront(&entry[K, V]{key: k, val: v, weight: w})
		c.weight += w
	}
	for len(c.items) > c.max || c.weight > c.maxWeight && c.weigh != nil {
		c.removeLocked(c.order.Back())
	}
}

func (c *Cache[K, V]) removeLocked(el *list.Element) {
	e := el.Value.(*entry[K, V])
	c.order.Remove(el)
	delete(c.items, e.key)
	c.weight -= e.weight
}

func (c *Cache[K, V]) deleteLocked(k K) {
	if el, ok := c.items[k]; ok {
		c.removeLocked(el)
	}
}

// Update runs f on the value for k under the cache's lock, creating it with create when absent
// (create may be nil: then f receives the zero value and ok=false only if absent). The value f
// returns is stored. Use it for read-modify-write of per-key state.
func (c *Cache[K, V]) Update(k K, create func() V, f func(v V) V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var v V
	if el, ok := c.items[k]; ok {
		c.order.MoveToFront(el)
		v = el.Value.(*entry[K, V]).val
	} else if create != nil {
		v = create()
	}
	c.putLocked(k, f(v))
}

// Delete removes k.
func (c *Cache[K, V]) Delete(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deleteLocked(k)
}

// DeleteFunc removes every entry whose key del reports.
func (c *Cache[K, V]) DeleteFunc(del func(K) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, el := range c.items {
		if del(k) {
			c.removeLocked(el)
		}
	}
}

// Len returns the number of entries.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// Weight returns the sum of the entries' weights (0 for a cache made by New).
func (c *Cache[K, V]) Weight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.weight
}
