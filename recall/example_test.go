package recall_test

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/adkctx/adkctx/recall"
)

// chunkedArtifacts is the part of an artifact service that page reads need: each saved version
// cut into chunks, with its layout beside them (a database keeps both as rows, as
// hooks/dbartifact does). It implements recall.ChunkStore.
type chunkedArtifacts struct {
	mu      sync.Mutex
	outputs map[string]*savedOutput // by app/user/session/name
}

type savedOutput struct {
	versions map[int64]savedVersion
	last     int64 // the last version saved
}

type savedVersion struct {
	layout recall.Layout // Split's, with the version's number, type and time
	chunks [][]byte
}

// newest returns o's newest version (0: none).
func (o *savedOutput) newest() int64 {
	var n int64
	for v := range o.versions {
		n = max(n, v)
	}
	return n
}

func (a *chunkedArtifacts) RecallStore(app, user, session string) recall.Store {
	return &sessionOutputs{a: a, prefix: app + "/" + user + "/" + session + "/"}
}

// sessionOutputs is one session's outputs: every key starts with prefix.
type sessionOutputs struct {
	a      *chunkedArtifacts
	prefix string
}

func (s *sessionOutputs) Save(_ context.Context, name string, data []byte, mime string) (int64, error) {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	lay, chunks := recall.Split(data, 0)
	o := s.a.outputs[s.prefix+name]
	if o == nil {
		o = &savedOutput{versions: map[int64]savedVersion{}}
		s.a.outputs[s.prefix+name] = o
	}
	o.last++
	lay.Version, lay.MIMEType, lay.Created = o.last, mime, time.Now()
	o.versions[o.last] = savedVersion{layout: *lay, chunks: chunks}
	return o.last, nil
}

func (s *sessionOutputs) Layout(_ context.Context, name string) (*recall.Layout, error) {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	o := s.a.outputs[s.prefix+name]
	if o == nil || len(o.versions) == 0 {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	lay := o.versions[o.newest()].layout
	return &lay, nil
}

func (s *sessionOutputs) ReadChunks(_ context.Context, name string, version int64, first, count int) ([][]byte, error) {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	var v savedVersion
	if o := s.a.outputs[s.prefix+name]; o != nil {
		v = o.versions[version]
	}
	if first < 0 || count < 0 || first+count > len(v.chunks) {
		return nil, fmt.Errorf("%s v%d chunks %d+%d: %w", name, version, first, count, fs.ErrNotExist)
	}
	return v.chunks[first : first+count], nil
}

func (s *sessionOutputs) Recent(_ context.Context, prefix string, skip, limit int) ([]recall.OutputInfo, error) {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	var out []recall.OutputInfo
	for key, o := range s.a.outputs {
		if name, ok := strings.CutPrefix(key, s.prefix); ok && strings.HasPrefix(name, prefix) && len(o.versions) > 0 {
			out = append(out, recall.OutputInfo{Name: name, Created: o.versions[o.newest()].layout.Created})
		}
	}
	slices.SortFunc(out, func(a, b recall.OutputInfo) int { return b.Created.Compare(a.Created) })
	if skip >= len(out) {
		return nil, nil
	}
	return out[skip:min(len(out), skip+limit)], nil
}

func (s *sessionOutputs) Delete(_ context.Context, name string, version int64) error {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	if o := s.a.outputs[s.prefix+name]; o != nil {
		delete(o.versions, version)
	}
	return nil
}

// An artifact service that keeps each saved output in chunks, with the layout Split recorded,
// gives the recall tools page reads: a page of a 2 MB test log costs the one chunk that holds it.
func ExampleChunkStore() {
	var artifacts recall.ChunkStore = &chunkedArtifacts{outputs: map[string]*savedOutput{}}
	st := artifacts.RecallStore("app", "u", "s1")
	ctx := context.Background()
	var log strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&log, "=== RUN   TestCase%05d\n--- PASS: TestCase%05d (0.01s)\n", i, i)
	}
	const name = "adkctx-tool-output-run_tests-c1.txt"
	if _, err := st.Save(ctx, name, []byte(log.String()), "text/plain"); err != nil {
		panic(err)
	}

	lay, err := st.Layout(ctx, name)
	if err != nil {
		panic(err)
	}
	var lines int
	for _, c := range lay.Chunks {
		lines += c.Newlines
	}
	fmt.Printf("version %d: %d bytes, %d lines, %d chunks\n", lay.Version, lay.Size, lines, len(lay.Chunks))
	page, err := st.ReadChunks(ctx, name, lay.Version, 20, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("chunk 20: %d bytes, starts %q\n", len(page[0]), strings.SplitN(string(page[0]), "\n", 2)[0])
	// Output:
	// version 1: 2240000 bytes, 80000 lines, 69 chunks
	// chunk 20: 32760 bytes, starts "=== RUN   TestCase11700"
}

// The tools' names, as the model calls them: an agent's instruction may name them.
func Example_toolNames() {
	fmt.Println(recall.ToolReadOutput, recall.ToolSearchOutputs, recall.ToolSearchHistory, recall.ToolReadTurn)
	// Output:
	// read_saved_output search_saved_outputs search_history read_turn
}
