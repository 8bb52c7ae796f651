package lru

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCache(t *testing.T) {
	c := New[string, int](3)
	for i, k := range []string{"a", "b", "c"} {
		c.Put(k, i)
	}
	if v, ok := c.Get("a"); !ok || v != 0 {
		t.Fatalf("Get(a) = %d, %v", v, ok)
	}
	c.Put("d", 3) // evicts b, the least recently used (a was just read)
	var got []string
	for _, k := range []string{"a", "b", "c", "d"} {
		if _, ok := c.Get(k); ok {
			got = append(got, k)
		}
	}
	if diff := cmp.Diff([]string{"a", "c", "d"}, got); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	c.Update("e", func() int { return 10 }, func(v int) int { return v + 1 })
	c.Update("e", nil, func(v int) int { return v + 1 })
	if v, _ := c.Get("e"); v != 12 {
		t.Errorf("Update: e = %d, want 12", v)
	}
	c.DeleteFunc(func(k string) bool { return k < "d" })
	c.Delete("e")
	if c.Len() != 1 {
		t.Errorf("Len = %d after deletes, want 1", c.Len())
	}
	if New[int, int](0).max != 1 {
		t.Error("capacity below 1 is not 1")
	}
}

// Concurrent use stays bounded (run with -race).
func TestCacheConcurrent(t *testing.T) {
	c := New[string, int](100)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				k := fmt.Sprint(g, "-", i)
				c.Update(k, nil, func(v int) int { return v + 1 })
				c.Get(k)
			}
		}()
	}
	wg.Wait()
	if n := c.Len(); n != 100 {
		t.Errorf("Len = %d, want the capacity 100", n)
	}
	keys := []string{}
	c.DeleteFunc(func(k string) bool { keys = append(keys, k); return true })
	if len(slices.Compact(slices.Sorted(slices.Values(keys)))) != 100 || c.Len() != 0 {
		t.Errorf("DeleteFunc saw %d keys, left %d", len(keys), c.Len())
	}
}

// A weighted cache keeps the most recently used entries whose weights fit its bound, whatever
// their number; a value heavier than the bound is not kept, nor is an older value for its key.
func TestWeighted(t *testing.T) {
	size := func(s string) int { return len(s) }
	kept := func(c *Cache[string, string]) []string {
		var ks []string
		for _, k := range []string{"a", "b", "c", "d", "e"} {
			if _, ok := c.Get(k); ok {
				ks = append(ks, k)
			}
		}
		return ks
	}
	c := NewWeighted[string, string](100, 10, size)
	c.Put("a", "aaaa")
	c.Put("b", "bbbb")
	c.Put("c", "cc")
	if got := c.Weight(); got != 10 {
		t.Fatalf("Weight = %d, want 10", got)
	}
	c.Put("d", "ddd") // 13 > 10: a, the least recently used, goes
	if diff := cmp.Diff([]string{"b", "c", "d"}, kept(c)); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	c.Put("b", "b") // a lighter value for a kept key: the weight follows it
	if got := c.Weight(); got != 6 {
		t.Errorf("Weight after replacing b = %d, want 6", got)
	}
	c.Put("c", "ccccccccccc") // heavier than the bound: not kept, the old c dropped too
	if diff := cmp.Diff([]string{"b", "d"}, kept(c)); diff != "" {
		t.Errorf("kept after a too heavy value (-want +got):\n%s", diff)
	}
	c.Update("e", func() string { return "" }, func(v string) string { return v + "eeeeee" })
	c.Delete("b")
	c.DeleteFunc(func(k string) bool { return k == "d" })
	if c.Weight() != 6 || c.Len() != 1 {
		t.Errorf("after deletes: weight %d over %d entries, want 6 over 1", c.Weight(), c.Len())
	}
}
