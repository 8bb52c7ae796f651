package budget

import (
	"cmp"
	"errors"
	"math"

	"github.com/adkctx/adkctx/internal/config"
)

// Defaults of LimitConfig.
const (
	defaultOutputReserveFraction = 0.10
	defaultSoftFraction          = 0.70
	defaultHardFraction          = 0.95
)

// LimitConfig configures LimitsFor. The zero value uses the defaults.
type LimitConfig struct {
	// ReservedOutputTokens, when > 0, is the number of tokens kept free for
	// the model's answer. Default 0: min(model max output,
	// OutputReserveFraction × window).
	ReservedOutputTokens int
	// OutputReserveFraction caps the default output reserve as a fraction of
	// the window. Default 0.10.
	OutputReserveFraction float64
	// SoftFraction of the usable input is the soft limit ("compaction
	// needed"). Default 0.70.
	SoftFraction float64
	// HardFraction of the usable input is the hard limit (never sent above).
	// Default 0.95.
	HardFraction float64
}

func (c LimitConfig) withDefaults() LimitConfig {
	c.OutputReserveFraction = cmp.Or(c.OutputReserveFraction, defaultOutputReserveFraction)
	c.SoftFraction = cmp.Or(c.SoftFraction, defaultSoftFraction)
	c.HardFraction = cmp.Or(c.HardFraction, defaultHardFraction)
	return c
}

func checkFraction(field string, v float64) error {
	if math.IsNaN(v) || v <= 0 || v > 1 {
		return config.Errorf(field, v, "must be in (0, 1] (0 selects the default)")
	}
	return nil
}

// Validate checks c after applying defaults: fractions in (0, 1], soft ≤ hard,
// ReservedOutputTokens ≥ 0. Every problem is an *adkctx.ConfigError; all are joined.
func (c LimitConfig) Validate() error {
	var errs []error
	if c.ReservedOutputTokens < 0 {
		errs = append(errs, config.Errorf("ReservedOutputTokens", c.ReservedOutputTokens, "must be ≥ 0"))
	}
	d := c.withDefaults()
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"OutputReserveFraction", d.OutputReserveFraction},
		{"SoftFraction", d.SoftFraction},
		{"HardFraction", d.HardFraction},
	} {
		if err := checkFraction(f.name, f.v); err != nil {
			errs = append(errs, err)
		}
	}
	if d.SoftFraction > d.HardFraction {
		errs = append(errs, config.Errorf("SoftFraction", d.SoftFraction, "must be ≤ HardFraction (%v)", d.HardFraction))
	}
	return errors.Join(errs...)
}

// Limits are the token limits of one model under a LimitConfig.
type Limits struct {
	Model string // model name as looked up
	Known bool   // false: registry fallback figures
	// Source says where the window comes from.
	Source WindowSource
	// Window is the context window; ReservedOutput the tokens kept free for
	// the answer; Usable = Window − ReservedOutput.
	Window, ReservedOutput, Usable int
	// Soft = SoftFraction × Usable ("compaction needed");
	// Hard = HardFraction × Usable (never send above).
	Soft, Hard int
}

// newLimits computes the limits for info under cfg. Zero config fields take
// their defaults; invalid values (which Validate reports) are replaced by
// the defaults too, so newLimits never fails. A non-positive window takes
// fallbackContextWindow. The reserve never exceeds half the window.
func newLimits(info ModelInfo, known bool, cfg LimitConfig) Limits {
	c := cfg.withDefaults()
	if checkFraction("", c.OutputReserveFraction) != nil {
		c.OutputReserveFraction = defaultOutputReserveFraction
	}
	if checkFraction("", c.SoftFraction) != nil {
		c.SoftFraction = defaultSoftFraction
	}
	if checkFraction("", c.HardFraction) != nil {
		c.HardFraction = defaultHardFraction
	}
	if c.SoftFraction > c.HardFraction {
		c.SoftFraction = c.HardFraction
	}
	window := info.ContextWindow
	if window <= 0 {
		window = fallbackContextWindow
	}
	reserve := cfg.ReservedOutputTokens
	if reserve <= 0 {
		reserve = fracOf(c.OutputReserveFraction, window)
		if info.MaxOutputTokens > 0 && info.MaxOutputTokens < reserve {
			reserve = info.MaxOutputTokens
		}
	}
	if reserve > window/2 {
		reserve = window / 2
	}
	usable := window - reserve
	return Limits{
		Model:          info.Name,
		Known:          known,
		Source:         info.Source,
		Window:         window,
		ReservedOutput: reserve,
		Usable:         usable,
		Soft:           fracOf(c.SoftFraction, usable),
		Hard:           fracOf(c.HardFraction, usable),
	}
}

// fracOf returns ⌊f × n⌋, tolerant of binary rounding (0.7 × 180,000 is
// 126,000, not 125,999).
func fracOf(f float64, n int) int {
	return int(math.Floor(f*float64(n) + 1e-6))
}

// LimitsFor looks model up in r (nil: built-ins) and returns its limits under cfg (Limits.Known
// says whether the model was found; an unknown one gets the fallback window). Zero config fields
// take their defaults; invalid values (which LimitConfig.Validate reports) are replaced by the
// defaults too, so LimitsFor never fails. The output reserve never exceeds half the window.
func LimitsFor(r *Registry, model string, cfg LimitConfig) Limits {
	info, known := r.Lookup(model)
	return newLimits(info, known, cfg)
}
