package truncate_test

import (
	"fmt"
	"strings"

	"github.com/adkctx/adkctx/processors/truncate"
)

func ExampleText() {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "step %d ok\n", i)
	}
	b.WriteString("FAIL: exit status 1\n")

	out, st := truncate.Text(b.String(), truncate.Config{MaxLines: 7}, `full output saved as artifact "build.log"`)
	fmt.Print(out)
	fmt.Println(st.OmittedLines, "lines omitted of", st.OriginalLines)
	// Output:
	// step 1 ok
	// step 2 ok
	// step 3 ok
	// [... output truncated: 15 lines and 159 bytes omitted; original 21 lines, 231 bytes; full output saved as artifact "build.log" ...]
	// step 19 ok
	// step 20 ok
	// FAIL: exit status 1
	// 15 lines omitted of 21
}

func ExampleValue() {
	result := map[string]any{
		"exit_code": 2,
		"stdout":    strings.Repeat("compiling...\n", 5000),
	}
	out, st := truncate.Value(result, truncate.Config{}, "")
	fmt.Println(st.StringsCut, len(out.(map[string]any)["stdout"].(string)) <= truncate.DefaultMaxBytes)
	fmt.Println(len(result["stdout"].(string))) // the input is not modified
	// Output:
	// 1 true
	// 65000
}
