package budget

import (
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
	// forgotten since); every other field is then zero but TurnsRemaining, -1.
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
