package recall

import (
	"context"
	"time"
)

// Store is one session's saved outputs, as recall reads and writes them. The glue builds one per
// tool call from the calling session's app, user and session ids, so nothing else is reachable.
// Implementations must be safe for concurrent use.
type Store interface {
	// Layout describes the newest version of the saved output name; an error wrapping
	// fs.ErrNotExist when there is none.
	Layout(ctx context.Context, name string) (*Layout, error)
	// ReadChunks returns chunks [first, first+count) of the given version of name, as its
	// layout describes them.
	ReadChunks(ctx context.Context, name string, version int64, first, count int) ([][]byte, error)
	// Recent lists the saved outputs whose names start with prefix, newest first: it skips the
	// first skip and returns at most limit.
	Recent(ctx context.Context, prefix string, skip, limit int) ([]OutputInfo, error)
	// Save stores data as a new version of name and returns that version.
	Save(ctx context.Context, name string, data []byte, mimeType string) (int64, error)
	// Delete removes one version of name.
	Delete(ctx context.Context, name string, version int64) error
}

// OutputInfo names one saved output and when its newest version was saved.
type OutputInfo struct {
	Name    string
	Created time.Time
}

// ChunkStore is implemented by artifact services that keep outputs in chunks with their layout
// (hooks/dbartifact): the glue reads a session's outputs through the Store it returns, a page at
// a time, and loads other services' artifacts whole.
type ChunkStore interface {
	// RecallStore returns the saved outputs of one session: its own artifacts, none of the
	// user-scoped ("user:") ones.
	RecallStore(app, user, session string) Store
}
