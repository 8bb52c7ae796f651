package budget

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCalibratorRule(t *testing.T) {
	type step struct {
		observe            bool
		estimate, reported int // observe: estimated/reported; else Calibrate(estimate)
		want               int // Calibrate result (ignored when observe)
		factor             float64
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"nothing observed: estimate as is", []step{
			{estimate: 1000, want: 1000, factor: 1},
		}},
		{"anchor plus scaled growth", []step{
			{observe: true, estimate: 1000, reported: 1200, factor: 1.2},
			// 1200 reported + (1500-1000) × 1.2.
			{estimate: 1500, want: 1800, factor: 1.2},
			// Same request: exactly the reported count.
			{estimate: 1000, want: 1200 * 1, factor: 1.2},
		}},
		{"request shrank: estimate times factor", []step{
			{observe: true, estimate: 10_000, reported: 5_000, factor: 0.5},
			{estimate: 4_000, want: 2_000, factor: 0.5},
		}},
		{"EWMA smoothing", []step{
			{observe: true, estimate: 1000, reported: 1000, factor: 1},
			// sample 2.0 → 0.3×2 + 0.7×1 = 1.3; anchor moves to (2000, 4000).
			{observe: true, estimate: 2000, reported: 4000, factor: 1.3},
			{estimate: 3000, want: 4000 + 1300, factor: 1.3},
		}},
		{"ratio clamped", []step{
			{observe: true, estimate: 100, reported: 100_000, factor: 4},
			{estimate: 50, want: 200, factor: 4},
		}},
		{"invalid observations ignored", []step{
			{observe: true, estimate: 1000, reported: 0, factor: 1},
			{observe: true, estimate: 0, reported: 1000, factor: 1},
			{observe: true, estimate: 1000, reported: -5, factor: 1},
			{estimate: 700, want: 700, factor: 1},
		}},
		{"negative estimate", []step{
			{estimate: -10, want: 0, factor: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCalibratorWithConfig(CalibratorConfig{MinSampleTokens: -1})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				if s.observe {
					c.Observe("s1", "gemini-2.5-flash", s.estimate, s.reported)
				} else if got := c.Calibrate("s1", "gemini-2.5-flash", s.estimate); got != s.want {
					t.Errorf("step %d: Calibrate(%d) = %d, want %d", i, s.estimate, got, s.want)
				}
				if f := c.Factor("s1", "gemini-2.5-flash"); math.Abs(f-s.factor) > 1e-9 {
					t.Errorf("step %d: Factor = %v, want %v", i, f, s.factor)
				}
			}
		})
	}
}

// Small requests anchor the count but do not teach the ratio (default
// MinSampleTokens = 1,000); DeltaFloor keeps growth from being scaled down.
func TestCalibratorSmallSamplesAndFloor(t *testing.T) {
	c := NewCalibrator()
	c.Observe("s", "m", 500, 1000)
	if f := c.Factor("s", "m"); f != 1 {
		t.Errorf("Factor after a small sample = %v, want 1", f)
	}
	if got := c.Calibrate("s", "m", 800); got != 1300 {
		t.Errorf("Calibrate(800) = %d, want 1000 reported + 300 growth", got)
	}
	c.Observe("s", "m", 2000, 1000) // ratio 0.5
	floored, _ := NewCalibratorWithConfig(CalibratorConfig{DeltaFloor: 1})
	floored.Observe("s", "m", 2000, 1000)
	got := []int{c.Calibrate("s", "m", 3000), floored.Calibrate("s", "m", 3000), floored.Calibrate("s", "m", 1000)}
	// growth 1000 × 0.5; growth 1000 × max(0.5, 1); shrink: 1000 × 0.5.
	if diff := cmp.Diff([]int{1500, 2000, 500}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCalibratorDropAnchor(t *testing.T) {
	c := NewCalibrator()
	c.Observe("s", "m", 10_000, 8_000) // ratio 0.8
	c.Observe("s", "other", 10_000, 12_000)
	c.DropAnchor("s")
	c.DropAnchor("unknown")
	got := []int{c.Calibrate("s", "m", 12_000), c.Calibrate("s", "other", 1_000)}
	// Without the anchor: estimate × ratio, even though the request grew.
	if diff := cmp.Diff([]int{9_600, 1_200}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	c.Observe("s", "m", 12_000, 9_000)
	if got := c.Calibrate("s", "m", 13_000); got <= 9_000 {
		t.Errorf("after a new observation: %d, want the new anchor 9,000 + growth", got)
	}
}

func TestCalibratorKeys(t *testing.T) {
	c := NewCalibrator()
	c.Observe("s1", "models/Gemini-2.5-Flash", 1000, 2000) // 1,000 = MinSampleTokens: a sample
	got := map[string]float64{
		"same model, other spelling": c.Factor("s1", "gemini-2.5-flash"),
		"other model":                c.Factor("s1", "gpt-5"),
		"other session":              c.Factor("s2", "gemini-2.5-flash"),
	}
	want := map[string]float64{"same model, other spelling": 2, "other model": 1, "other session": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("factors (-want +got):\n%s", diff)
	}
	c.Forget("s1")
	if f := c.Factor("s1", "gemini-2.5-flash"); f != 1 {
		t.Errorf("after Forget: Factor = %v, want 1", f)
	}
	if n := c.Sessions(); n != 0 {
		t.Errorf("after Forget: %d sessions tracked", n)
	}
	var nilCal *Calibrator
	nilCal.Observe("s", "m", 1, 1)
	nilCal.Forget("s")
	if got := nilCal.Calibrate("s", "m", 10); got != 10 || nilCal.Factor("s", "m") != 1 {
		t.Errorf("nil Calibrator: Calibrate = %d", got)
	}
}

func TestCalibratorEvictsLeastRecentlyUsed(t *testing.T) {
	c, err := NewCalibratorWithConfig(CalibratorConfig{MaxSessions: 3, MinSampleTokens: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		c.Observe(fmt.Sprint("s", i), "m", 100, 200)
	}
	c.Calibrate("s0", "m", 100) // s0 becomes most recent; s1 is the oldest
	c.Observe("s3", "m", 100, 300)
	got := map[string]float64{}
	for i := range 4 {
		got[fmt.Sprint("s", i)] = c.Factor(fmt.Sprint("s", i), "m")
	}
	want := map[string]float64{"s0": 2, "s1": 1, "s2": 2, "s3": 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after eviction (-want +got):\n%s", diff)
	}
	if n := c.Sessions(); n != 3 {
		t.Errorf("Sessions() = %d, want 3", n)
	}
}

func TestCalibratorConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		cfg   CalibratorConfig
		field string
	}{
		{CalibratorConfig{}, ""},
		{CalibratorConfig{MaxSessions: -1}, "MaxSessions"},
		{CalibratorConfig{Alpha: 1.5}, "Alpha"},
		{CalibratorConfig{MinFactor: -1}, "MinFactor"},
		{CalibratorConfig{MinFactor: 2, MaxFactor: 1}, "MaxFactor"},
		{CalibratorConfig{DeltaFloor: -1}, "DeltaFloor"},
		{CalibratorConfig{MinSampleTokens: -1}, ""},
	} {
		err := tt.cfg.Validate()
		var ce *ConfigError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", tt.cfg, err)
		case tt.field != "" && (!errors.As(err, &ce) || ce.Field != tt.field || !errors.Is(err, ErrInvalidConfig)):
			t.Errorf("%+v: error %v, want *ConfigError on %s", tt.cfg, err, tt.field)
		}
		if _, err2 := NewCalibratorWithConfig(tt.cfg); (err2 != nil) != (err != nil) {
			t.Errorf("%+v: NewCalibratorWithConfig error %v, Validate %v", tt.cfg, err2, err)
		}
	}
}

func TestCalibratorConcurrent(t *testing.T) {
	c, _ := NewCalibratorWithConfig(CalibratorConfig{MaxSessions: 16})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				s := fmt.Sprint("s", (g*500+i)%40)
				c.Observe(s, "m", 1000+i, 1100+i)
				if got := c.Calibrate(s, "m", 1000+i); got < 0 {
					t.Errorf("negative calibrated %d", got)
				}
				_ = c.Factor(s, "m")
				if i%97 == 0 {
					c.Forget(s)
				}
			}
		}()
	}
	wg.Wait()
	if n := c.Sessions(); n > 16 {
		t.Errorf("Sessions() = %d, want ≤ 16", n)
	}
}
