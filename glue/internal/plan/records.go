package plan

import (
	"bytes"
	"encoding/json"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/exact"
)

// maxRecords and maxRecordsBytes bound the marker records a Viewer keeps parsed: the markers of
// the reads of about a few hundred active sessions, at most 32 MiB of record text (about twice
// that in memory, with the markers parsed from them).
const (
	maxRecords      = 2048
	maxRecordsBytes = 32 << 20
)

// maxCachedRecordBytes is the largest record (as JSON text, or estimated for a map) a Viewer
// keeps parsed: a ledger snapshot is far below it; a larger record is parsed on each view.
const maxCachedRecordBytes = 256 << 10

// parsedRecord is a marker record as a Viewer parsed it: a copy of the record and what it
// parsed to (a marker, or why it is invalid), and the key of the marker's resolved ledger.
type parsedRecord struct {
	raw  any
	m    *compaction.Marker
	err  error
	key  resolvedKey
	size int // about how many bytes raw's text and the key's record take
}

// readMarker returns what e's record parses to, parsing it only when the Viewer has not parsed
// an equal record under e's id before: a view parses each marker of a session once, not once per
// request. Equal means equal values, compared in full (exact.ValueEqual: ids are not trusted to
// be unique); a record holding anything but JSON values (or JSON text as bytes) is parsed every
// time. The record is read from e once: what is parsed is what is compared and kept. The marker
// returned is shared: callers never change it.
func (v *Viewer) readMarker(e *compaction.Event) (*compaction.Marker, resolvedKey, error) {
	raw := e.Metadata[compaction.MetadataKey]
	if e.ID != "" {
		if p, ok := v.records.Get(e.ID); ok && exact.ValueEqual(p.raw, raw) {
			return p.m, p.key, p.err
		}
	}
	// The value compared and kept, read once (hasRecord(e): raw is not nil).
	m, err := compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: map[string]any{compaction.MetadataKey: raw}})
	var key resolvedKey
	if err == nil {
		key = keyOfMarker(e.ID, m)
	}
	if e.ID != "" {
		if cp, size, ok := copyRecord(raw, 0); ok && size <= maxCachedRecordBytes {
			v.records.Put(e.ID, parsedRecord{raw: cp, m: m, err: err, key: key, size: size + len(key.record)})
		}
	}
	return m, key, err
}

// copyRecord returns a deep copy of a record made of JSON values, and about how many bytes its
// text takes; ok is false for a record holding any other value (not kept) or nested past
// maxRecordDepth.
func copyRecord(r any, depth int) (cp any, size int, ok bool) {
	if depth > maxRecordDepth {
		return nil, 0, false
	}
	switch x := r.(type) {
	case nil:
		return nil, 4, true
	case bool:
		return x, 5, true
	case float64:
		return x, 24, true
	case string:
		return x, len(x) + 2, true
	case json.Number:
		return x, len(x), true
	case json.RawMessage:
		return bytes.Clone(x), len(x), true
	case []byte:
		return bytes.Clone(x), len(x), true
	case []any:
		out := make([]any, len(x))
		size = 2
		for i := range x {
			c, n, ok := copyRecord(x[i], depth+1)
			if !ok {
				return nil, 0, false
			}
			out[i], size = c, size+n+1
		}
		return out, size, true
	case map[string]any:
		out := make(map[string]any, len(x))
		size = 2
		for k, xv := range x {
			c, n, ok := copyRecord(xv, depth+1)
			if !ok {
				return nil, 0, false
			}
			out[k], size = c, size+len(k)+n+4
		}
		return out, size, true
	}
	return nil, 0, false
}

// maxRecordDepth bounds the nesting of a record a Viewer keeps (a marker nests a few levels).
const maxRecordDepth = 64
