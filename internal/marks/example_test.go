package marks_test

import (
	"fmt"
	"strings"

	"github.com/adkctx/adkctx/internal/marks"
	"github.com/adkctx/adkctx/processors/truncate"
)

// A cut's marker line is read back from a stored result: what the original held and where the
// whole of it was saved.
func ExampleFind() {
	log := strings.Repeat("compiling...\n", 400) + "FAIL: exit status 1\n"
	out, _ := truncate.Text(log, truncate.Config{MaxLines: 5}, `full output saved as artifact "build.log"`)
	for _, f := range marks.Find(out) {
		fmt.Printf("original %d lines, %d bytes; %s\n", f.OriginalLines, f.OriginalBytes, f.Note)
		fmt.Println(out[f.Start:f.End] == f.Mark.String())
	}
	// Output:
	// original 401 lines, 5220 bytes; full output saved as artifact "build.log"
	// true
}
