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
