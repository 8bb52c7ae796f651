package recall

import (
	"bytes"
	"time"
	"unicode/utf8"
)

const (
	// defaultChunkBytes is the size Split aims at for one chunk (32 KiB): a page read costs one
	// or two chunks.
	defaultChunkBytes = 32 << 10
	// maxChunks bounds the chunks of one saved output: past maxChunks × defaultChunkBytes
	// (128 MiB) chunks grow instead, so a layout stays small (a few bytes per chunk).
	maxChunks = 4096
)

// Chunk describes one chunk of a saved output.
type Chunk struct {
	// Size is the chunk's length in bytes.
	Size int
	// Newlines counts the '\n' bytes in the chunk.
	Newlines int
}

// Layout is what a page reader needs to know of one version of a saved output, recorded when it
// is saved: its size, type and chunks.
type Layout struct {
	Version  int64
	MIMEType string
	// Size is the output's length in bytes.
	Size int64
	// Text reports whether the output is valid UTF-8 (a text output; else binary).
	Text bool
	// EndsWithNewline reports whether the last byte is '\n' (the last line is then complete).
	EndsWithNewline bool
	Created         time.Time
	Chunks          []Chunk
}

// chunkBytes returns the chunk size for an output of size bytes: [defaultChunkBytes], or larger
// so that no output has more than [maxChunks] chunks.
func chunkBytes(size int64) int {
	if n := (size + maxChunks - 1) / maxChunks; n > defaultChunkBytes {
		return int(n)
	}
	return defaultChunkBytes
}

// Split cuts data into chunks of at most size bytes (at least 64; 0: 32 KiB, more for outputs
// over 128 MiB so that none has more than 4096 chunks): after the last newline in the chunk's
// second half when there is one, else on a UTF-8 boundary when data is text. It returns the
// layout (Version, MIMEType and Created left for the caller) and the chunks themselves, sharing
// data's memory.
func Split(data []byte, size int) (*Layout, [][]byte) {
	if size <= 0 {
		size = chunkBytes(int64(len(data)))
	}
	size = max(size, 64)
	text := utf8.Valid(data)
	l := &Layout{Size: int64(len(data)), Text: text}
	var chunks [][]byte
	for rest := data; len(rest) > 0; {
		n := min(len(rest), size)
		if n < len(rest) {
			if nl := bytes.LastIndexByte(rest[n/2:n], '\n'); nl >= 0 {
				n = n/2 + nl + 1
			} else if text {
				for n > 1 && !utf8.RuneStart(rest[n]) {
					n--
				}
			}
		}
		chunks = append(chunks, rest[:n])
		l.Chunks = append(l.Chunks, Chunk{Size: n, Newlines: bytes.Count(rest[:n], []byte{'\n'})})
		rest = rest[n:]
	}
	l.EndsWithNewline = len(data) > 0 && data[len(data)-1] == '\n'
	return l, chunks
}
