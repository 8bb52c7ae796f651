package recall

import (
	"errors"
	"io/fs"
)

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// memoryOutput is an output held in memory (one entry of a history turn), paged like a saved one.
func memoryOutput(name string, data []byte) *output {
	lay, chunks := Split(data, ChunkBytes(int64(len(data))))
	lay.index()
	o := &output{name: name, lay: lay, cache: map[int][]byte{}}
	for i, c := range chunks {
		o.cache[i] = c
	}
	return o
}
