package budget

import (
	"container/list"
	"fmt"
	"math"
	"sync"
)

// Calibrator defaults.
const (
	DefaultMaxSessions     = 10_000
	DefaultCalibrateAlpha  = 0.3
	DefaultMinFactor       = 0.25
	DefaultMaxFactor       = 4.0
	DefaultMinSampleTokens = 1_000
)

// CalibratorConfig configures NewCalibratorWithConfig. Zero values select
// the defaults.
type CalibratorConfig struct {
	// MaxSessions bounds the number of sessions tracked; the least recently
	// used session is evicted beyond it. Default 10,000.
	MaxSessions int
	// Alpha is the weight of a new observation in the EWMA of the
	// reported/estimated ratio, in (0, 1]. Default 0.3.
	Alpha float64
	// MinFactor and MaxFactor clamp the ratio. Defaults 0.25 and 4.
	MinFactor, MaxFactor float64
	// DeltaFloor, when > 0, is the smallest factor applied to the growth
	// since the last observation. The learned ratio describes the mix of
	// content seen so far; a large new tool output of another kind can
	// have another ratio, so a ratio below 1 may under-count the new part.
	// DeltaFloor = 1 makes the calibrated figure never less than
	// last reported + raw estimate of the growth (the estimator itself is
	// biased upward). Default 0: the learned ratio as is.
	DeltaFloor float64
	// MinSampleTokens: an observation whose estimate is below it updates
	// the anchor (last estimate / last reported) but not the ratio: on a
	// tiny request fixed overheads (hidden system tokens, framing) dominate
	// and the ratio says nothing about the content. Default 1,000; a
	// negative value disables the threshold.
	MinSampleTokens int
}

func (c CalibratorConfig) withDefaults() CalibratorConfig {
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultCalibrateAlpha
	}
	if c.MinFactor == 0 {
		c.MinFactor = DefaultMinFactor
	}
	if c.MaxFactor == 0 {
		c.MaxFactor = DefaultMaxFactor
	}
	if c.MinSampleTokens == 0 {
		c.MinSampleTokens = DefaultMinSampleTokens
	}
	return c
}

// Validate checks the configuration after defaults.
func (c CalibratorConfig) Validate() error {
	d := c.withDefaults()
	switch {
	case d.MaxSessions < 0:
		return &ConfigError{Field: "MaxSessions", Value: c.MaxSessions, Reason: "must be ≥ 0 (0 selects the default)"}
	case math.IsNaN(d.Alpha) || d.Alpha <= 0 || d.Alpha > 1:
		return &ConfigError{Field: "Alpha", Value: c.Alpha, Reason: "must be in (0, 1]"}
	case math.IsNaN(d.MinFactor) || d.MinFactor <= 0:
		return &ConfigError{Field: "MinFactor", Value: c.MinFactor, Reason: "must be > 0"}
	case math.IsNaN(d.MaxFactor) || d.MaxFactor < d.MinFactor:
		return &ConfigError{Field: "MaxFactor", Value: c.MaxFactor, Reason: fmt.Sprintf("must be ≥ MinFactor (%v)", d.MinFactor)}
	case math.IsNaN(d.DeltaFloor) || d.DeltaFloor < 0:
		return &ConfigError{Field: "DeltaFloor", Value: c.DeltaFloor, Reason: "must be ≥ 0"}
	}
	return nil
}

// calState is what the calibrator knows about one (session, model).
type calState struct {
	factor       float64 // EWMA of reported/estimated (valid when samples > 0)
	lastEstimate int     // our estimate of the last observed request
	lastReported int     // the model's reported prompt tokens for it
	observations int     // anchors recorded
	samples      int     // observations that updated factor
}

type calSession struct {
	id     string
	models map[string]*calState
	elem   *list.Element
}

// Calibrator learns, per session and model, how the model's reported prompt
// token count relates to our estimate, and turns a fresh estimate into the
// best guess of the current usage. It is safe for concurrent use and keeps
// at most MaxSessions sessions (least recently used evicted).
//
// The rule (learned the hard way by other systems): current usage = the
// latest reported prompt count + the estimate of what was added since,
// scaled by the learned ratio. Counts are never summed across events. When
// the request shrank since the last observation (compaction or trimming
// happened), the anchor no longer applies and the result is estimate ×
// ratio.
type Calibrator struct {
	cfg      CalibratorConfig
	mu       sync.Mutex
	sessions map[string]*calSession
	lru      *list.List // front = most recently used; values are *calSession
}

// NewCalibrator returns a Calibrator with the default configuration.
func NewCalibrator() *Calibrator {
	c, _ := NewCalibratorWithConfig(CalibratorConfig{})
	return c
}

// NewCalibratorWithConfig returns a Calibrator or the Validate error.
func NewCalibratorWithConfig(cfg CalibratorConfig) (*Calibrator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Calibrator{cfg: cfg.withDefaults(), sessions: make(map[string]*calSession), lru: list.New()}, nil
}

func (c *Calibrator) clamp(f float64) float64 {
	return math.Min(c.cfg.MaxFactor, math.Max(c.cfg.MinFactor, f))
}

// get returns the state for (session, model), touching the session in the
// LRU. create adds it when missing. Must be called with c.mu held.
func (c *Calibrator) get(sessionID, model string, create bool) *calState {
	s := c.sessions[sessionID]
	if s == nil {
		if !create {
			return nil
		}
		s = &calSession{id: sessionID, models: make(map[string]*calState)}
		s.elem = c.lru.PushFront(s)
		c.sessions[sessionID] = s
		for len(c.sessions) > c.cfg.MaxSessions {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.sessions, old.Value.(*calSession).id)
		}
	} else {
		c.lru.MoveToFront(s.elem)
	}
	model = NormalizeModelName(model)
	st := s.models[model]
	if st == nil && create {
		st = &calState{}
		s.models[model] = st
	}
	return st
}

// Observe records that a request we estimated at estimated tokens was
// reported by the model as reported prompt tokens: it becomes the anchor
// for Calibrate and, when estimated ≥ MinSampleTokens, a sample of the
// ratio. Observations with reported ≤ 0 or estimated ≤ 0 are ignored. A nil
// Calibrator ignores it.
func (c *Calibrator) Observe(sessionID, model string, estimated, reported int) {
	if c == nil || estimated <= 0 || reported <= 0 {
		return
	}
	sample := c.clamp(float64(reported) / float64(estimated))
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.get(sessionID, model, true)
	if estimated >= c.cfg.MinSampleTokens {
		if st.samples == 0 {
			st.factor = sample
		} else {
			st.factor = c.clamp(c.cfg.Alpha*sample + (1-c.cfg.Alpha)*st.factor)
		}
		st.samples++
	}
	st.lastEstimate = estimated
	st.lastReported = reported
	st.observations++
}

// Calibrate turns estimate (our estimate of the request about to be sent)
// into the calibrated current usage for (session, model):
//   - nothing observed yet: estimate;
//   - factor is 1 until a sample of at least MinSampleTokens was observed;
//   - estimate ≥ the last observed estimate: last reported + (estimate −
//     last estimate) × max(factor, DeltaFloor);
//   - the request shrank (compaction, trimming): estimate × factor.
//
// Results are rounded up and never negative.
func (c *Calibrator) Calibrate(sessionID, model string, estimate int) int {
	if estimate <= 0 {
		estimate = 0
	}
	if c == nil {
		return estimate
	}
	c.mu.Lock()
	st := c.get(sessionID, model, false)
	var s calState
	if st != nil {
		s = *st
	}
	c.mu.Unlock()
	if st == nil || (s.observations == 0 && s.samples == 0) {
		return estimate
	}
	if s.samples == 0 {
		s.factor = 1
	}
	if s.observations == 0 {
		// Anchor dropped (DropAnchor): the ratio still applies.
		return int(math.Ceil(float64(estimate) * s.factor))
	}
	if estimate >= s.lastEstimate {
		f := math.Max(s.factor, c.cfg.DeltaFloor)
		return s.lastReported + int(math.Ceil(float64(estimate-s.lastEstimate)*f))
	}
	return int(math.Ceil(float64(estimate) * s.factor))
}

// Factor returns the learned reported/estimated ratio for (session, model),
// 1 when nothing has been observed.
func (c *Calibrator) Factor(sessionID, model string) float64 {
	if c == nil {
		return 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.get(sessionID, model, false); st != nil && st.samples > 0 {
		return st.factor
	}
	return 1
}

// DropAnchor forgets the session's last observed request (for every model)
// but keeps the learned ratio: call it when the history was rewritten
// (compaction, trimming) in a way that may not make the next request
// smaller, so the old reported count is no longer a valid base. The next
// Calibrate returns estimate × ratio until the next Observe.
func (c *Calibrator) DropAnchor(sessionID string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sessions[sessionID]; s != nil {
		for _, st := range s.models {
			st.observations, st.lastEstimate, st.lastReported = 0, 0, 0
		}
	}
}

// Forget drops everything known about the session.
func (c *Calibrator) Forget(sessionID string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sessions[sessionID]; s != nil {
		c.lru.Remove(s.elem)
		delete(c.sessions, sessionID)
	}
}

// Sessions returns the number of sessions currently tracked.
func (c *Calibrator) Sessions() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}
