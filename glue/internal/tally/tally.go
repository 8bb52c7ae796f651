package tally

import (
	"encoding/json"
	"math"

	"github.com/adkctx/adkctx/budget"
)

// Tally is the running aggregate behind a budget.Report. The zero value is empty; the engine
// keeps one per session and stores it in every call record (it encodes to JSON), so a process
// that reads only the newest part of a session rebuilds it whole.
type Tally struct {
	turns, calls     int
	total, last      budget.Usage
	turnStartPrompt  int // prompt of the first call of the current turn
	growthSum, nGrow int
	lastTurn         string
}

// Add records one model call of user turn turn (an invocation id).
func (t *Tally) Add(turn string, u budget.Usage) {
	if turn != t.lastTurn || t.calls == 0 {
		if t.turns > 0 && u.Prompt > t.turnStartPrompt {
			t.growthSum += u.Prompt - t.turnStartPrompt
			t.nGrow++
		}
		t.turns++
		t.turnStartPrompt = u.Prompt
		t.lastTurn = turn
	}
	t.calls++
	t.total = t.total.Add(u)
	t.last = u
}

// Report returns the accounting under limits l.
func (t *Tally) Report(l budget.Limits) budget.Report {
	r := budget.Report{Known: true, Turns: t.turns, ModelCalls: t.calls, Total: t.total, Last: t.last, Soft: l.Soft, Hard: l.Hard, TurnsRemaining: -1}
	if t.nGrow > 0 {
		r.AvgTurnGrowth = float64(t.growthSum) / float64(t.nGrow)
	}
	if l.Soft > 0 && t.calls > 0 {
		room := l.Soft - t.last.Prompt - t.last.Output
		switch {
		case room <= 0:
			r.TurnsRemaining = 0
		case r.AvgTurnGrowth > 0:
			r.TurnsRemaining = int(math.Floor(float64(room) / r.AvgTurnGrowth))
		}
	}
	return r
}

// tallyJSON is a Tally's stored form.
type tallyJSON struct {
	Turns           int          `json:"turns"`
	Calls           int          `json:"calls"`
	Total           budget.Usage `json:"total"`
	Last            budget.Usage `json:"last"`
	TurnStartPrompt int          `json:"turnStartPrompt,omitempty"`
	GrowthSum       int          `json:"growthSum,omitempty"`
	Grown           int          `json:"grown,omitempty"`
	LastTurn        string       `json:"lastTurn,omitempty"`
}

// MarshalJSON encodes the tally.
func (t Tally) MarshalJSON() ([]byte, error) {
	return json.Marshal(tallyJSON{Turns: t.turns, Calls: t.calls, Total: t.total, Last: t.last,
		TurnStartPrompt: t.turnStartPrompt, GrowthSum: t.growthSum, Grown: t.nGrow, LastTurn: t.lastTurn})
}

// UnmarshalJSON decodes a tally MarshalJSON encoded.
func (t *Tally) UnmarshalJSON(b []byte) error {
	var j tallyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = Tally{turns: j.Turns, calls: j.Calls, total: j.Total, last: j.Last, turnStartPrompt: j.TurnStartPrompt,
		growthSum: j.GrowthSum, nGrow: j.Grown, lastTurn: j.LastTurn}
	return nil
}
