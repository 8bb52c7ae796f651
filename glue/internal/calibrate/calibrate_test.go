package calibrate_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/glue/internal/calibrate"
)

// A margin is a prior until the model reports a count, learned from then on, anchored or not;
// a count too small to teach the ratio still makes the margin learned (it anchors the next
// prediction).
func TestPredictionNamesItsMarginSource(t *testing.T) {
	type got struct {
		Source   budget.MarginSource
		Anchored bool
	}
	tests := []struct {
		name     string
		observe  [][2]int // estimate, reported
		estimate int
		want     got
	}{
		{"no count yet", nil, 3_467, got{budget.MarginPrior, false}},
		{"a count ignored (non-positive)", [][2]int{{3_467, 0}}, 3_467, got{budget.MarginPrior, false}},
		{"one count, grown since", [][2]int{{3_467, 3_300}}, 3_600, got{budget.MarginLearned, true}},
		{"one small count, grown since", [][2]int{{200, 180}}, 3_600, got{budget.MarginLearned, true}},
		{"counts, shrunk since", [][2]int{{3_467, 3_300}, {3_500, 3_350}}, 1_200, got{budget.MarginLearned, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c calibrate.Calibration
			for _, o := range tc.observe {
				c.Observe(o[0], o[1])
			}
			p := c.Predict(tc.estimate)
			if diff := cmp.Diff(tc.want, got{p.MarginSource, p.Anchored}); diff != "" {
				t.Errorf("prediction %+v (-want +got):\n%s", p, diff)
			}
			if p.Margin <= 0 {
				t.Errorf("margin %d, want > 0", p.Margin)
			}
		})
	}
}
