package recall_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/adkctx/adkctx/recall"
)

// chunkedArtifacts is the part of an artifact service that page reads need: each saved version
// cut into chunks, with its encoded layout beside them (a database keeps both as rows, as
// hooks/dbartifact does). It implements recall.ChunkStore.
type chunkedArtifacts struct {
	mu       sync.Mutex
	versions map[recall.Key]savedVersion // Version set: one saved version
	newest   map[recall.Key]int64        // Version 0: the newest version of the name
}

type savedVersion struct {
	layout []byte // recall.EncodeLayout's
	chunks [][]byte
}

// save is what the service's Save does besides its own bookkeeping.
func (a *chunkedArtifacts) save(k recall.Key, data []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	lay, chunks := recall.Split(data, 0)
	name := k // Version 0
	k.Version = a.newest[name] + 1
	a.versions[k] = savedVersion{layout: recall.EncodeLayout(lay), chunks: chunks}
	a.newest[name] = k.Version
}

func (a *chunkedArtifacts) OutputLayout(_ context.Context, k recall.Key) (*recall.Layout, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if k.Version == 0 {
		k.Version = a.newest[k]
	}
	v, ok := a.versions[k]
	if !ok {
		return nil, fmt.Errorf("%s: %w", k.Name, fs.ErrNotExist)
	}
	lay, err := recall.DecodeLayout(v.layout)
	if err != nil {
		return nil, err
	}
	lay.Version, lay.MIMEType = k.Version, "text/plain"
	return lay, nil
}

func (a *chunkedArtifacts) ReadOutputChunks(_ context.Context, k recall.Key, first, count int) ([][]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.versions[k]
	if !ok || first < 0 || count < 0 || first+count > len(v.chunks) {
		return nil, fmt.Errorf("%s v%d chunks %d+%d: %w", k.Name, k.Version, first, count, fs.ErrNotExist)
	}
	return v.chunks[first : first+count], nil
}

func (a *chunkedArtifacts) RecentOutputs(_ context.Context, k recall.Key, prefix string, skip, limit int) ([]recall.OutputInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []recall.OutputInfo
	for nk := range a.newest {
		if nk.AppName == k.AppName && nk.UserID == k.UserID && nk.SessionID == k.SessionID && strings.HasPrefix(nk.Name, prefix) {
			out = append(out, recall.OutputInfo{Name: nk.Name})
		}
	}
	if skip >= len(out) {
		return nil, nil
	}
	return out[skip:min(len(out), skip+limit)], nil
}

// An artifact service that keeps each saved output in chunks, with the layout Split recorded,
// gives the recall tools page reads: a page of a 2 MB test log costs the one chunk that holds it.
func ExampleChunkStore() {
	var store recall.ChunkStore = &chunkedArtifacts{versions: map[recall.Key]savedVersion{}, newest: map[recall.Key]int64{}}
	k := recall.Key{AppName: "app", UserID: "u", SessionID: "s1", Name: "adkctx-tool-output-run_tests-c1.txt"}
	var log strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&log, "=== RUN   TestCase%05d\n--- PASS: TestCase%05d (0.01s)\n", i, i)
	}
	store.(*chunkedArtifacts).save(k, []byte(log.String()))

	ctx := context.Background()
	lay, err := store.OutputLayout(ctx, k)
	if err != nil {
		panic(err)
	}
	var lines int
	for _, c := range lay.Chunks {
		lines += c.Newlines
	}
	fmt.Printf("version %d: %d bytes, %d lines, %d chunks\n", lay.Version, lay.Size, lines, len(lay.Chunks))
	k.Version = lay.Version
	page, err := store.ReadOutputChunks(ctx, k, 20, 1)
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
