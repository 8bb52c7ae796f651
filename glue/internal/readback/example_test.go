package readback_test

import (
	"fmt"

	recall "github.com/adkctx/adkctx/glue/internal/readback"
)

func ExampleParseRange() {
	for _, s := range []string{"120-180", "3000", "-50", "bytes=0-4095", "0-10"} {
		r, err := recall.ParseRange(s)
		if err != nil {
			fmt.Println("error:", recall.IsInputError(err))
			continue
		}
		fmt.Printf("%s start=%d end=%d bounded=%v last=%d\n", r.Unit, r.Start, r.End, r.Bounded, r.Last)
	}
	// Output:
	// lines start=120 end=180 bounded=true last=0
	// lines start=3000 end=0 bounded=false last=0
	// lines start=1 end=0 bounded=false last=50
	// bytes start=0 end=4095 bounded=true last=0
	// error: true
}

func ExampleIsTool() {
	fmt.Println(recall.IsTool("read_saved_output"), recall.IsTool("read_file"))
	fmt.Println(recall.OutputNote("adkctx-tool-output-run_tests-c1.txt"))
	// Output:
	// true false
	// full output saved as "adkctx-tool-output-run_tests-c1.txt"; read it with read_saved_output
}
