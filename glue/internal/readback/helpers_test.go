package readback

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/adkctx/adkctx/recall"
)

// defaultChunkBytes is the chunk size recall.Split aims at (32 KiB).
const defaultChunkBytes = 32 << 10

// memStore is a Store in memory that keeps outputs in chunks as a chunked artifact service does,
// and counts the chunk bytes it hands out.
type memStore struct {
	mu         sync.Mutex
	chunkBytes int
	clock      int64
	outputs    map[string][]*memVersion // name → versions, oldest first
	chunkReads int64
}

type memVersion struct {
	version int64
	lay     *recall.Layout
	chunks  [][]byte
	created time.Time
}

func newMemStore(chunkBytes int) *memStore {
	return &memStore{chunkBytes: chunkBytes, outputs: map[string][]*memVersion{}}
}

func (m *memStore) Layout(_ context.Context, name string) (*recall.Layout, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.outputs[name]
	if len(vs) == 0 {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	v := vs[len(vs)-1]
	lay := *v.lay
	return &lay, nil
}

func (m *memStore) ReadChunks(_ context.Context, name string, version int64, first, count int) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.outputs[name] {
		if v.version == version {
			if first < 0 || first+count > len(v.chunks) {
				return nil, fmt.Errorf("chunks %d+%d of %d", first, count, len(v.chunks))
			}
			for _, c := range v.chunks[first : first+count] {
				m.chunkReads += int64(len(c))
			}
			return v.chunks[first : first+count], nil
		}
	}
	return nil, fmt.Errorf("%s v%d: %w", name, version, fs.ErrNotExist)
}

func (m *memStore) Recent(_ context.Context, prefix string, skip, limit int) ([]recall.OutputInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var all []recall.OutputInfo
	for name, vs := range m.outputs {
		if strings.HasPrefix(name, prefix) && len(vs) > 0 {
			all = append(all, recall.OutputInfo{Name: name, Created: vs[len(vs)-1].created})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Created.After(all[j].Created) })
	if skip >= len(all) {
		return nil, nil
	}
	return all[skip:min(len(all), skip+limit)], nil
}

func (m *memStore) Save(_ context.Context, name string, data []byte, mime string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	lay, chunks := recall.Split(append([]byte(nil), data...), m.chunkBytes)
	vs := m.outputs[name]
	version := int64(1)
	if len(vs) > 0 {
		version = vs[len(vs)-1].version + 1
	}
	m.clock++
	lay.Version, lay.MIMEType, lay.Created = version, mime, time.Unix(m.clock, 0)
	m.outputs[name] = append(vs, &memVersion{version: version, lay: lay, chunks: chunks, created: lay.Created})
	return version, nil
}

func (m *memStore) Delete(_ context.Context, name string, version int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.outputs[name]
	for i, v := range vs {
		if v.version == version {
			m.outputs[name] = append(vs[:i:i], vs[i+1:]...)
		}
	}
	if len(m.outputs[name]) == 0 {
		delete(m.outputs, name)
	}
	return nil
}

func (m *memStore) reads() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.chunkReads
}

// testLog returns a test log of n lines; line i (from 1) is "line i: ..." with varying length.
func testLog(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d: === RUN TestThing%d %s\n", i, i%97, strings.Repeat("x", i%53))
	}
	return b.String()
}
