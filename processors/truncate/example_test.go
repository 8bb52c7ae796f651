package truncate_test

import (
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/processors/truncate"
)

func ExampleText() {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "step %d ok\n", i)
	}
	b.WriteString("FAIL: exit status 1\n")

	cfg := truncate.Config{MaxLines: 7}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	out, st := truncate.Text(b.String(), cfg, `full output saved as artifact "build.log"`)
	fmt.Print(out)
	fmt.Println(st.OmittedLines, "lines omitted of", st.OriginalLines)
	fmt.Println("byte limit by default:", cfg.WithDefaults().MaxBytes)
	// Output:
	// step 1 ok
	// step 2 ok
	// step 3 ok
	// [... output truncated: 15 lines and 159 bytes omitted; original 21 lines, 231 bytes; full output saved as artifact "build.log" ...]
	// step 19 ok
	// step 20 ok
	// FAIL: exit status 1
	// 15 lines omitted of 21
	// byte limit by default: 10240
}

func ExampleValue() {
	result := map[string]any{
		"exit_code": 2,
		"stdout":    strings.Repeat("compiling...\n", 5000),
		"files":     []any{"a.go", "b.go"},
	}
	// The note names where the caller stores each cut leaf whole.
	note := func(c truncate.Cut) string {
		return fmt.Sprintf("cut %d of %d at %q", c.Index+1, c.Count, c.Path)
	}
	out, st := truncate.Value(result, truncate.Config{MaxLines: 6}, note)
	fmt.Print(out.(map[string]any)["stdout"])
	fmt.Println(st.StringsCut, len(result["stdout"].(string))) // the input is not modified
	// Output:
	// compiling...
	// [... output truncated: 4997 lines and 64961 bytes omitted; original 5000 lines, 65000 bytes; cut 1 of 1 at "/stdout" ...]
	// compiling...
	// compiling...
	// 1 65000
}

// Cut the function responses of a content, as a request built from a history stored before
// truncation existed holds them: the content is copied where it changes, never modified, and a
// reader finds the cut by its marker line.
func ExampleResponses() {
	c := genai.NewContentFromFunctionResponse("run_tests", map[string]any{
		"exit_code": 1,
		"output":    strings.Repeat("=== RUN TestX\n--- PASS: TestX\n", 400) + "FAIL: TestInvoice\n",
	}, genai.RoleUser)
	cut, n, st := truncate.Responses(c, truncate.Config{MaxLines: 5}, nil)
	out := cut.Parts[0].FunctionResponse.Response["output"].(string)
	fmt.Println(n, "response cut;", st.OmittedLines, "of", st.OriginalLines, "lines omitted")
	fmt.Println(strings.Contains(out, truncate.MarkerPrefix), strings.HasSuffix(out, "FAIL: TestInvoice\n"))
	fmt.Println(cut != c, len(c.Parts[0].FunctionResponse.Response["output"].(string)))
	// Output:
	// 1 response cut; 797 of 801 lines omitted
	// true true
	// true 12018
}
