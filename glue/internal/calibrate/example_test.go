package calibrate_test

import (
	"fmt"

	"github.com/adkctx/adkctx/glue/internal/calibrate"
)

// Calibrate: the model reported 1,150 prompt tokens for a request we estimated at 1,000. The
// next request adds 200 estimated tokens.
func ExampleCalibration() {
	var cal calibrate.Calibration
	cal.Observe(1_000, 1_150)
	fmt.Printf("factor %.2f\n", cal.Factor)
	// Growth: latest reported count + new part × factor, with a margin for the new part.
	p := cal.Predict(1_200)
	fmt.Println("grown:", p.Tokens, "margin:", p.Margin)
	// After compaction the request shrank: estimate × factor.
	fmt.Println("compacted:", cal.Predict(400).Tokens)
	// Output:
	// factor 1.15
	// grown: 1380 margin: 58
	// compacted: 460
}
