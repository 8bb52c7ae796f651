package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress draws a spinner on a terminal while the model or a compaction runs. It draws nothing
// when its writer is not a terminal (pipes, files, tests).
type progress struct {
	w  io.Writer
	on bool
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, on: isTerminal(w)}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// start shows label with a spinner until the returned stop is called.
func (p *progress) start(label string) (stop func()) {
	if p == nil || !p.on {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(p.w, "\r%s %s…", spinnerFrames[i%len(spinnerFrames)], label)
			select {
			case <-done:
				fmt.Fprint(p.w, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}
