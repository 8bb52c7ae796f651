package dbartifact

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adkctx/adkctx/recall"
)

// A layout survives its encoding, whatever the output: empty, text, a last line without a
// newline, binary.
func TestLayoutEncoding(t *testing.T) {
	for _, data := range [][]byte{nil, []byte(strings.Repeat("line\n", 3000)), []byte("no newline"), bytes.Repeat([]byte{0xff, 0, '\n'}, 5000)} {
		lay, _ := recall.Split(data, 1000)
		back, err := decodeLayout(encodeLayout(lay))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(lay, back, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("decoded layout (-want +got):\n%s", diff)
		}
	}
}

// Whatever bytes a row holds as a layout, decodeLayout returns a layout whose chunks sum to
// its size and whose encoding decodes to it again, or an error; it never panics.
func FuzzDecodeLayout(f *testing.F) {
	lay, _ := recall.Split([]byte("a\nbb\nccc\n"+strings.Repeat("x", 300)), 64)
	f.Add(encodeLayout(lay))
	f.Add([]byte{})
	f.Add([]byte{1, 3, 1, 10, 2})
	f.Add([]byte{1, 0, 200, 200, 200, 200, 200, 200, 200, 200, 200, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		lay, err := decodeLayout(b)
		if err != nil {
			return
		}
		var sum int64
		for _, c := range lay.Chunks {
			if c.Size <= 0 || c.Newlines > c.Size {
				t.Fatalf("chunk %+v", c)
			}
			sum += int64(c.Size)
		}
		if sum != lay.Size {
			t.Fatalf("chunks sum to %d, size %d", sum, lay.Size)
		}
		again, err := decodeLayout(encodeLayout(lay))
		if err != nil {
			t.Fatalf("%x decodes to a layout whose encoding does not decode: %v", b, err)
		}
		if diff := cmp.Diff(lay, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%x: the layout changed through its encoding (-want +got):\n%s", b, diff)
		}
	})
}
