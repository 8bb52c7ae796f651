// Package lru is the one bounded cache of adkctx: a map that keeps its most recently used
// entries and drops the least recently used one beyond its capacity. Every piece of per-session
// or per-name state in adkctx lives in one of these, so memory stays bounded however many
// sessions, models or directories a process sees.
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
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// New returns a cache holding at most capacity entries (capacity < 1 is treated as 1).
func New[K comparable, V any](capacity int) *Cache[K, V] {
	return &Cache[K, V]{max: max(capacity, 1), items: map[K]*list.Element{}, order: list.New()}
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
	if el, ok := c.items[k]; ok {
		el.Value.(*entry[K, V]).val = v
		c.order.MoveToFront(el)
		return
	}
	c.items[k] = c.order.PushFront(&entry[K, V]{key: k, val: v})
	for len(c.items) > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(*entry[K, V]).key)
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
	if el, ok := c.items[k]; ok {
		c.order.Remove(el)
		delete(c.items, k)
	}
}

// DeleteFunc removes every entry whose key del reports.
func (c *Cache[K, V]) DeleteFunc(del func(K) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, el := range c.items {
		if del(k) {
			c.order.Remove(el)
			delete(c.items, k)
		}
	}
}

// Len returns the number of entries.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
