package recall

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Split's chunks hold the data in order, each within the size asked for, cut after a newline
// when one is in the chunk's second half, else on a rune boundary of text; the layout says what
// they hold.
func TestSplitLayout(t *testing.T) {
	lines := strings.Repeat("line of a test log, ünïcödé\n", 500)
	for _, tc := range []struct {
		name string
		data []byte
		size int
	}{
		{"empty", nil, 0},
		{"lines", []byte(lines), 1000},
		{"no final newline", []byte(strings.TrimSuffix(lines, "\n")), 1000},
		{"one long text line", []byte(strings.Repeat("ä", 5000)), 999},
		{"binary", bytes.Repeat([]byte{0xff, 0, '\n', 1}, 3000), 700},
		{"default size", []byte(strings.Repeat(lines, 20)), 0},
		{"size below the floor", []byte(lines), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lay, chunks := Split(tc.data, tc.size)
			size := tc.size
			switch {
			case size <= 0:
				size = defaultChunkBytes
			case size < 64:
				size = 64
			}
			text := utf8.Valid(tc.data)
			if got := bytes.Join(chunks, nil); !bytes.Equal(got, tc.data) {
				t.Fatalf("the chunks do not hold the data")
			}
			want := &Layout{Size: int64(len(tc.data)), Text: text, EndsWithNewline: bytes.HasSuffix(tc.data, []byte("\n"))}
			for i, c := range chunks {
				if len(c) == 0 || len(c) > size {
					t.Errorf("chunk %d: %d bytes, want 1..%d", i, len(c), size)
				}
				if text && !utf8.Valid(c) {
					t.Errorf("chunk %d cuts a rune", i)
				}
				if i < len(chunks)-1 && bytes.IndexByte(c[len(c)/2:], '\n') >= 0 && c[len(c)-1] != '\n' {
					t.Errorf("chunk %d ends mid-line with a newline in its second half", i)
				}
				want.Chunks = append(want.Chunks, Chunk{Size: len(c), Newlines: bytes.Count(c, []byte("\n"))})
			}
			if diff := cmp.Diff(want, lay); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
		})
	}
}

// A layout of a very large output keeps at most maxChunks chunks.
func TestChunkBytesBoundsChunks(t *testing.T) {
	for _, size := range []int64{0, 1, defaultChunkBytes * maxChunks, defaultChunkBytes*maxChunks + 1, 1 << 40} {
		n := chunkBytes(size)
		if n < defaultChunkBytes || (size+int64(n)-1)/int64(n) > maxChunks {
			t.Errorf("chunkBytes(%d) = %d: %d chunks", size, n, (size+int64(n)-1)/int64(n))
		}
	}
}
