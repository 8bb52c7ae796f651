package dbartifact

import (
	"encoding/binary"
	"errors"

	"github.com/adkctx/adkctx/recall"
)

// encodeLayout encodes a layout's text flag and chunks compactly (varints), stored beside the
// version's chunks; decodeLayout reads it back.
func encodeLayout(l *recall.Layout) []byte {
	b := make([]byte, 0, 16+4*len(l.Chunks))
	b = append(b, 1) // format version
	flags := uint64(0)
	if l.Text {
		flags |= 1
	}
	if l.EndsWithNewline {
		flags |= 2
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(len(l.Chunks)))
	for _, c := range l.Chunks {
		b = binary.AppendUvarint(b, uint64(c.Size))
		b = binary.AppendUvarint(b, uint64(c.Newlines))
	}
	return b
}

var errBadLayout = errors.New("dbartifact: layout does not decode")

// decodeLayout reads what encodeLayout wrote into a layout (Size is the chunks' sum; Version,
// MIMEType and Created are the caller's).
func decodeLayout(b []byte) (*recall.Layout, error) {
	if len(b) == 0 || b[0] != 1 {
		return nil, errBadLayout
	}
	b = b[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	flags, ok := next()
	if !ok {
		return nil, errBadLayout
	}
	count, ok := next()
	if !ok || count > uint64(len(b)) {
		return nil, errBadLayout
	}
	l := &recall.Layout{Text: flags&1 != 0, EndsWithNewline: flags&2 != 0, Chunks: make([]recall.Chunk, 0, count)}
	for range count {
		size, ok1 := next()
		nl, ok2 := next()
		if !ok1 || !ok2 || size == 0 || size > 1<<40 || nl > size {
			return nil, errBadLayout
		}
		l.Chunks = append(l.Chunks, recall.Chunk{Size: int(size), Newlines: int(nl)})
		l.Size += int64(size)
	}
	if len(b) != 0 {
		return nil, errBadLayout
	}
	return l, nil
}
