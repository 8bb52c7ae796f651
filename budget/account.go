package budget

import (
	"encoding/json"
	"math"

	"google.golang.org/genai"
)

// Usage is the token usage of one model response, or a sum of them.
type Usage struct {
	Prompt  int `json:"prompt,omitempty"`  // PromptTokenCount: the whole request as the model counted it
	Output  int `json:"output,omitempty"`  // CandidatesTokenCount
	Cached  int `json:"cached,omitempty"`  // CachedContentTokenCount (part of Prompt)
	Thought int `json:"thought,omitempty"` // ThoughtsTokenCount
	ToolUse int `json:"toolUse,omitempty"` // ToolUsePromptTokenCount
	Total   int `json:"total,omitempty"`   // TotalTokenCount (computed when the model leaves it 0)
}

// UsageFrom converts genai usage metadata; nil gives the zero Usage.
func UsageFrom(md *genai.GenerateContentResponseUsageMetadata) Usage {
	if md == nil {
		return Usage{}
	}
	u := Usage{
		Prompt:  int(md.PromptTokenCount),
		Output:  int(md.CandidatesTokenCount),
		Cached:  int(md.CachedContentTokenCount),
		Thought: int(md.ThoughtsTokenCount),
		ToolUse: int(md.ToolUsePromptTokenCount),
		Total:   int(md.TotalTokenCount),
	}
	if u.Total == 0 {
		u.Total = u.Prompt + u.ToolUse + u.Output + u.Thought
	}
	return u
}

// Add returns u + o field by field.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		Prompt: u.Prompt + o.Prompt, Output: u.Output + o.Output, Cached: u.Cached + o.Cached,
		Thought: u.Thought + o.Thought, ToolUse: u.ToolUse + o.ToolUse, Total: u.Total + o.Total,
	}
}

// Report is a session's token accounting.
//
// Total is the sum over model calls: what was billed, not the current context size (each call's
// Prompt already holds the history). Last is the newest call: Last.Prompt is the best measure of
// the current context.
type Report struct {
	// Known is false when the report knows nothing of the session: the hooks served none of its
	// model calls and restored none of its accounting (a session they never served, or one
	// forgotten since); every other field is then zero but TurnsRemaining, -1. A Report of a
	// Tally is known.
	Known bool
	// Turns counts user turns (invocations); ModelCalls counts model calls.
	Turns, ModelCalls int
	Total, Last       Usage
	// AvgTurnGrowth is the mean growth of the prompt per user turn, over the turns where it grew
	// (a drop — compaction, trimming — is not growth). 0 before two turns.
	AvgTurnGrowth float64
	// TurnsRemaining is how many more user turns of average growth fit before the soft limit;
	// 0 when at or over it; -1 when unknown.
	TurnsRemaining int
	Soft, Hard     int
}

// Tally is the running aggregate behind a Report. The zero value is empty; the hooks keep one
// per session and store it with every model response (it encodes to JSON), so a process that
// reads only the newest part of a session rebuilds it whole.
type Tally struct {
	turns, calls     int
	total, last      Usage
	turnStartPrompt  int // prompt of the first call of the current turn
	growthSum, nGrow int
	lastTurn         string
}

// Add records one model call of user turn turn (an invocation id).
func (t *Tally) Add(turn string, u Usage) {
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
func (t *Tally) Report(l Limits) Report {
	r := Report{Known: true, Turns: t.turns, ModelCalls: t.calls, Total: t.total, Last: t.last, Soft: l.Soft, Hard: l.Hard, TurnsRemaining: -1}
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
	Turns           int    `json:"turns"`
	Calls           int    `json:"calls"`
	Total           Usage  `json:"total"`
	Last            Usage  `json:"last"`
	TurnStartPrompt int    `json:"turnStartPrompt,omitempty"`
	GrowthSum       int    `json:"growthSum,omitempty"`
	Grown           int    `json:"grown,omitempty"`
	LastTurn        string `json:"lastTurn,omitempty"`
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
