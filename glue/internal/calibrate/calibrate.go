package calibrate

import (
	"math"

	"github.com/adkctx/adkctx/budget"
)

// Calibration constants.
const (
	// calibrationAlpha is the weight of a new observation in the ratio's moving average.
	calibrationAlpha = 0.3
	// minFactor and maxFactor clamp the learned ratio.
	minFactor, maxFactor = 0.25, 4.0
	// minSampleTokens: a request estimated below this anchors but does not teach the ratio (on a
	// tiny request, fixed overheads dominate).
	minSampleTokens = 1_000
	// priorMargin is the safety added to new (not yet reported) content before any observation:
	// the estimator is within [1.0, 1.25] of o200k, but the learned ratio comes from the mix seen
	// so far and new content of another kind (a large file after prose) can be counted higher.
	priorMargin = 0.25
	// fullMarginPrior is the same for a prediction with no anchor (after a shrink).
	fullMarginPrior = 0.10
	// marginDecay makes an old large error count less at each observation without one.
	marginDecay = 0.97
	// minMarginDelta: errors on smaller new content are too noisy to learn from.
	minMarginDelta = 256
)

// Calibration learns, for one session and model, how the model's reported prompt token count
// relates to our estimate, and predicts the count of the next request. The zero value is ready:
// it predicts the estimate itself. It is a plain value: the hooks keep one per session and model
// under the session's lock, and store it with every model response (it encodes to JSON).
//
// The prediction is the latest reported count plus the estimate of what was added since, scaled
// by the learned ratio (counts are never summed across events). When the request shrank since
// (compaction, trimming) the anchor no longer applies and it is estimate × ratio. Each
// prediction comes with a safety margin learned from the observed errors: the largest recent
// under-count relative to the unanchored part, so the hard limit holds by the provider's count,
// most of all right after large new content.
type Calibration struct {
	// Factor is the learned reported/estimated ratio (1 until a request of at least 1,000
	// estimated tokens was observed).
	Factor  float64 `json:"factor,omitempty"`
	Samples int     `json:"samples,omitempty"`
	// Anchor: our estimate of the last observed request and the count reported for it.
	AnchorEstimate int `json:"anchorEstimate,omitempty"`
	AnchorReported int `json:"anchorReported,omitempty"`
	// DeltaMargin and FullMargin are the learned safety margins, relative to the unanchored
	// part of an anchored prediction and to an unanchored prediction.
	DeltaMargin float64 `json:"deltaMargin,omitempty"`
	FullMargin  float64 `json:"fullMargin,omitempty"`
	// Observations counts Observe calls that were used.
	Observations int `json:"observations,omitempty"`
}

// Prediction is what Calibration.Predict returns.
type Prediction struct {
	// Tokens is the predicted reported count; Margin the safety to add for a hard limit.
	Tokens, Margin int
	// Anchored reports a prediction from the last reported count.
	Anchored bool
	// MarginSource says whether Margin is a prior or learned from reported counts. A budget
	// may waive a prior margin rather than refuse a request its estimate alone fits (see
	// the budget step); a learned one it always adds.
	MarginSource budget.MarginSource
}

func (c *Calibration) factor() float64 {
	if c.Samples == 0 || c.Factor <= 0 {
		return 1
	}
	return c.Factor
}

func (c *Calibration) margins() (delta, full float64) {
	if c.Observations == 0 {
		return priorMargin, fullMarginPrior
	}
	return c.DeltaMargin, c.FullMargin
}

// Predict predicts the reported count of a request we estimate at estimate tokens.
func (c *Calibration) Predict(estimate int) Prediction {
	estimate = max(estimate, 0)
	f := c.factor()
	dm, fm := c.margins()
	source := budget.MarginPrior
	if c.Observations > 0 {
		source = budget.MarginLearned
	}
	if c.Observations > 0 && c.AnchorReported > 0 && estimate >= c.AnchorEstimate {
		delta := float64(estimate-c.AnchorEstimate) * f
		return Prediction{Tokens: c.AnchorReported + int(math.Ceil(delta)), Margin: int(math.Ceil(delta * dm)), Anchored: true, MarginSource: source}
	}
	p := float64(estimate) * f
	return Prediction{Tokens: int(math.Ceil(p)), Margin: int(math.Ceil(p * fm)), MarginSource: source}
}

// Observe records that a request we estimated at estimate tokens was reported as reported
// prompt tokens. Non-positive values are ignored.
func (c *Calibration) Observe(estimate, reported int) {
	if estimate <= 0 || reported <= 0 {
		return
	}
	// Learn the error of the prediction made before this observation.
	pred := c.Predict(estimate)
	dm, fm := c.margins()
	if pred.Anchored {
		if delta := float64(estimate-c.AnchorEstimate) * c.factor(); delta >= minMarginDelta {
			dm = learnMargin(dm, float64(reported-pred.Tokens)/delta)
		}
	} else if pred.Tokens >= minMarginDelta {
		fm = learnMargin(fm, float64(reported-pred.Tokens)/float64(pred.Tokens))
	}
	c.DeltaMargin, c.FullMargin = dm, fm
	if estimate >= minSampleTokens {
		sample := math.Min(maxFactor, math.Max(minFactor, float64(reported)/float64(estimate)))
		if c.Samples == 0 {
			c.Factor = sample
		} else {
			c.Factor = math.Min(maxFactor, math.Max(minFactor, calibrationAlpha*sample+(1-calibrationAlpha)*c.Factor))
		}
		c.Samples++
	}
	c.AnchorEstimate, c.AnchorReported = estimate, reported
	c.Observations++
}

// learnMargin keeps the largest recent relative under-count: a larger error replaces the
// margin at once, a smaller one lets it decay slowly.
func learnMargin(margin, err float64) float64 {
	err = math.Min(math.Max(err, 0), 1)
	return math.Max(err, margin*marginDecay)
}
