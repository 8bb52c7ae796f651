package readback

import (
	"errors"
	"io/fs"

	"github.com/adkctx/adkctx/recall"
)

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// memoryOutput is an output held in memory (one entry of a history turn), paged like a saved one.
func memoryOutput(name string, data []byte) *output {
	lay, chunks := recall.Split(data, 0)
	o := newOutput(nil, name, lay)
	for i, c := range chunks {
		o.cache[i] = c
	}
	return o
}
