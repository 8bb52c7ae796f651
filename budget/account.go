package budget

import (
	"container/list"
	"iter"
	"math"
	"sync"

	"go.uber.org/zap"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

// Usage is the token usage of one model response (or a sum of them).
type Usage struct {
	Prompt  int // PromptTokenCount: the whole request as the model counted it
	Output  int // CandidatesTokenCount
	Cached  int // CachedContentTokenCount (part of Prompt)
	Thought int // ThoughtsTokenCount
	ToolUse int // ToolUsePromptTokenCount
	Total   int // TotalTokenCount (computed when the model leaves it 0)
}

// UsageFrom converts genai usage metadata; nil gives the zero Usage. When
// TotalTokenCount is 0 the total is Prompt + ToolUse + Output + Thought.
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
		Prompt:  u.Prompt + o.Prompt,
		Output:  u.Output + o.Output,
		Cached:  u.Cached + o.Cached,
		Thought: u.Thought + o.Thought,
		ToolUse: u.ToolUse + o.ToolUse,
		Total:   u.Total + o.Total,
	}
}

// Turn is one non-partial model response with usage.
type Turn struct {
	InvocationID, Model string
	Usage               Usage
}

// Report summarizes a session's token usage.
//
// Total is the sum over turns: what was billed, NOT the current context size
// (each turn's Prompt already contains all earlier history). Last is the
// newest turn: Last.Prompt is the best measure of the current context.
type Report struct {
	SessionID string
	Turns     int
	Total     Usage
	Last      Usage
	// AvgTurnGrowth is the mean growth of Prompt from one turn to the next,
	// over the turns where it grew (a drop — compaction or trimming — is not
	// growth and is left out). 0 with fewer than two turns.
	AvgTurnGrowth float64
	// TurnsRemaining is how many more turns of average growth fit before the
	// soft limit: (Soft − Last.Prompt − Last.Output) / AvgTurnGrowth,
	// rounded down; 0 when already at or over it; -1 when unknown (no
	// growth measured yet or no soft limit).
	TurnsRemaining int
	Soft, Hard     int
}

// LogFields returns the report as zap fields with stable snake_case keys.
func (r Report) LogFields() []zap.Field {
	return []zap.Field{
		zap.String("session_id", r.SessionID),
		zap.Int("turns", r.Turns),
		zap.Int("total_prompt_tokens", r.Total.Prompt),
		zap.Int("total_output_tokens", r.Total.Output),
		zap.Int("total_cached_tokens", r.Total.Cached),
		zap.Int("total_thought_tokens", r.Total.Thought),
		zap.Int("total_tokens", r.Total.Total),
		zap.Int("last_prompt_tokens", r.Last.Prompt),
		zap.Int("last_output_tokens", r.Last.Output),
		zap.Int("last_cached_tokens", r.Last.Cached),
		zap.Int("last_thought_tokens", r.Last.Thought),
		zap.Int("last_total_tokens", r.Last.Total),
		zap.Float64("avg_turn_growth", r.AvgTurnGrowth),
		zap.Int("turns_remaining", r.TurnsRemaining),
		zap.Int("soft_limit", r.Soft),
		zap.Int("hard_limit", r.Hard),
	}
}

// tally is the running aggregate behind a Report; Record and
// ReportFromEvents share it so both give the same Report.
type tally struct {
	turns       int
	total, last Usage
	growthSum   int
	growthN     int
}

func (t *tally) add(u Usage) {
	if t.turns > 0 && u.Prompt > t.last.Prompt {
		t.growthSum += u.Prompt - t.last.Prompt
		t.growthN++
	}
	t.turns++
	t.total = t.total.Add(u)
	t.last = u
}

func (t *tally) report(sessionID string, l Limits) Report {
	r := Report{SessionID: sessionID, Turns: t.turns, Total: t.total, Last: t.last, Soft: l.Soft, Hard: l.Hard, TurnsRemaining: -1}
	if t.growthN > 0 {
		r.AvgTurnGrowth = float64(t.growthSum) / float64(t.growthN)
	}
	if l.Soft > 0 && t.turns > 0 {
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

type acctSession struct {
	id   string
	t    tally
	elem *list.Element
}

// Accountant keeps per-session usage from Record calls. It is safe for
// concurrent use and keeps at most MaxSessions sessions (least recently used
// evicted; ReportFromEvents rebuilds an evicted session from its events).
type Accountant struct {
	maxSessions int
	mu          sync.Mutex
	sessions    map[string]*acctSession
	lru         *list.List
}

// NewAccountant returns an Accountant keeping up to DefaultMaxSessions.
func NewAccountant() *Accountant {
	return NewAccountantWithLimit(DefaultMaxSessions)
}

// NewAccountantWithLimit returns an Accountant keeping up to maxSessions
// sessions (≤ 0: DefaultMaxSessions).
func NewAccountantWithLimit(maxSessions int) *Accountant {
	if maxSessions <= 0 {
		maxSessions = DefaultMaxSessions
	}
	return &Accountant{maxSessions: maxSessions, sessions: make(map[string]*acctSession), lru: list.New()}
}

// Record adds one turn (a non-partial model response with usage) to the
// session. A nil Accountant ignores it.
func (a *Accountant) Record(sessionID string, t Turn) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[sessionID]
	if s == nil {
		s = &acctSession{id: sessionID}
		s.elem = a.lru.PushFront(s)
		a.sessions[sessionID] = s
		for len(a.sessions) > a.maxSessions {
			old := a.lru.Back()
			a.lru.Remove(old)
			delete(a.sessions, old.Value.(*acctSession).id)
		}
	} else {
		a.lru.MoveToFront(s.elem)
	}
	s.t.add(t.Usage)
}

// Report returns the session's report under limits l (Soft/Hard and
// TurnsRemaining come from l). An unknown session gives Turns 0 and
// TurnsRemaining -1.
func (a *Accountant) Report(sessionID string, l Limits) Report {
	var t tally
	if a != nil {
		a.mu.Lock()
		if s := a.sessions[sessionID]; s != nil {
			t = s.t
		}
		a.mu.Unlock()
	}
	return t.report(sessionID, l)
}

// Forget drops the session.
func (a *Accountant) Forget(sessionID string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[sessionID]; s != nil {
		a.lru.Remove(s.elem)
		delete(a.sessions, sessionID)
	}
}

// TurnFromEvent returns the turn an event represents, false for nil
// events, partial events and events without usage metadata.
func TurnFromEvent(e *session.Event) (Turn, bool) {
	if e == nil || e.Partial || e.UsageMetadata == nil {
		return Turn{}, false
	}
	return Turn{InvocationID: e.InvocationID, Model: e.ModelVersion, Usage: UsageFrom(e.UsageMetadata)}, true
}

// ReportFromEvents rebuilds the report from stored session events (e.g.
// sess.Events().All()): every non-partial event with UsageMetadata is one
// turn, in order. It gives the same Report as Record over the same turns.
// A nil sequence gives an empty report.
func ReportFromEvents(sessionID string, events iter.Seq[*session.Event], l Limits) Report {
	var t tally
	if events != nil {
		for e := range events {
			if turn, ok := TurnFromEvent(e); ok {
				t.add(turn.Usage)
			}
		}
	}
	return t.report(sessionID, l)
}
