package request

import (
	"fmt"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// Budget actions, as reported in BudgetDecision.Action and in the "budget decision" log entry.
const (
	// ActionNone: the request is below the soft limit and is sent as is.
	ActionNone = "none"
	// ActionCompactionNeeded: the request is above the soft limit but below the hard limit; it is
	// sent as is and the session is marked for compaction.
	ActionCompactionNeeded = "compaction_needed"
	// ActionTrimmed: the request was above the hard limit; the oldest whole turns were left out.
	ActionTrimmed = "trimmed"
	// ActionRejected: even the newest turn alone does not fit; the model is not called.
	ActionRejected = "rejected"
)

// BudgetInput is what EnforceBudget needs besides the request.
type BudgetInput struct {
	// Limits of the request's model (see budget.NewLimits).
	Limits budget.Limits
	// Calibrate turns a raw estimate of the whole request into the current-usage figure (see
	// budget.Calibrator.Calibrate). Nil means the raw estimate is used as is.
	Calibrate func(estimate int) int
}

// BudgetDecision says what EnforceBudget found and did. All token figures are calibrated unless
// their name says "estimated".
type BudgetDecision struct {
	Action string
	// EstimatedTokens is the raw estimate of the request as it came in; CalibratedTokens the same
	// request after calibration.
	EstimatedTokens  int
	CalibratedTokens int
	// FinalEstimatedTokens and FinalTokens describe the request as it leaves (after trimming).
	FinalEstimatedTokens int
	FinalTokens          int
	// FixedTokens is the raw estimate of what cannot be trimmed: system instruction and tools.
	FixedTokens int
	// OverSoft reports that the request (before trimming) passed the soft limit: compaction is due.
	OverSoft bool
	// TurnsDropped, ContentsDropped and TokensDropped describe what trimming left out.
	TurnsDropped    int
	ContentsDropped int
	TokensDropped   int
	// ExchangesDropped counts the model contents (with the responses answering their calls) left
	// out of the newest turn's tool loop, when leaving out every older turn was not enough.
	ExchangesDropped int
}

// CalibrationFactor is CalibratedTokens / EstimatedTokens: how much more (or less) the model
// counts than the raw estimate. 1 when either is unknown.
func (d BudgetDecision) CalibrationFactor() float64 {
	if d.EstimatedTokens <= 0 || d.CalibratedTokens <= 0 {
		return 1
	}
	return float64(d.CalibratedTokens) / float64(d.EstimatedTokens)
}

// BudgetExceededError is returned when the newest turn, with the system instruction and tools, does
// not fit under the hard limit on its own. The model is not called. Recognise it with errors.As.
type BudgetExceededError struct {
	Model string
	// Window and HardLimit are the model's context window and the hard limit in tokens.
	Window, HardLimit int
	// NewestTurnTokens is the calibrated size of the newest turn; FixedTokens the calibrated size of
	// the system instruction and tool declarations; RequestTokens the whole request as it came in.
	NewestTurnTokens, FixedTokens, RequestTokens int
}

func (e *BudgetExceededError) Error() string {
	return fmt.Sprintf("adkctx: request for model %q does not fit its context budget: the newest turn needs about %d tokens "+
		"and the system instruction and tools %d more, over the hard limit of %d tokens (window %d; whole request %d)",
		e.Model, e.NewestTurnTokens, e.FixedTokens, e.HardLimit, e.Window, e.RequestTokens)
}

// trimMarkerFormat is the visible note put in place of the turns left out of a request;
// loopMarkerFormat the one put after the newest user message when the oldest exchanges of its
// tool loop were left out too.
const (
	trimMarkerFormat = "[adkctx: %d earlier conversation turns (about %d tokens) were left out of this request " +
		"to fit the model's context window.]"
	loopMarkerFormat = "[adkctx: %d earlier conversation turns and the %d oldest model steps of the current turn " +
		"(with their tool calls and results; about %d tokens in all) were left out of this request to fit the model's context window.]"
)

// EnforceBudget estimates the whole request (system instruction, tools, contents) against the
// model's limits. Below the soft limit it does nothing; between soft and hard it reports that
// compaction is due; above the hard limit it drops the oldest whole turns — a turn starts at a user
// message and holds every call and response after it, so a call is never split from its response —
// and puts one visible marker content in their place. The newest turn is never dropped. When it is
// a user message followed by a tool loop (model calls and their responses) that does not fit even
// alone, the loop's oldest complete steps are left out instead — the user message and the newest
// step are always kept, and a call is never split from its responses — with the marker put right
// after the user message. If that does not fit either, EnforceBudget returns a
// *BudgetExceededError and leaves req unchanged.
//
// It runs in O(len(req.Contents)) and does not modify any content of req; it only replaces
// req.Contents with a shorter slice when it trims.
func EnforceBudget(req *model.LLMRequest, in BudgetInput) (BudgetDecision, error) {
	calibrate := in.Calibrate
	if calibrate == nil {
		calibrate = func(n int) int { return n }
	}
	var d BudgetDecision
	if req == nil {
		d.Action = ActionNone
		return d, nil
	}
	// Each content is counted once; the request total is the fixed part plus their sum.
	if req.Config != nil {
		d.FixedTokens = budget.EstimateContent(req.Config.SystemInstruction) + budget.EstimateTools(req.Config.Tools)
	}
	sizes := make([]int, len(req.Contents))
	contentTokens := budget.EstimateEach(req.Contents, sizes)
	d.EstimatedTokens = d.FixedTokens + contentTokens
	d.CalibratedTokens = calibrate(d.EstimatedTokens)
	d.FinalEstimatedTokens, d.FinalTokens = d.EstimatedTokens, d.CalibratedTokens
	d.OverSoft = d.CalibratedTokens > in.Limits.Soft

	switch {
	case d.CalibratedTokens <= in.Limits.Soft:
		d.Action = ActionNone
		return d, nil
	case d.CalibratedTokens <= in.Limits.Hard:
		d.Action = ActionCompactionNeeded
		return d, nil
	}

	// Above the hard limit. Scale raw estimates by the session's calibration factor.
	factor := d.CalibrationFactor()
	scaled := func(raw int) int { return int(float64(raw)*factor + 0.5) }

	starts := turnStarts(req.Contents)
	newest := starts[len(starts)-1]
	newestTokens := 0
	for _, s := range sizes[newest:] {
		newestTokens += s
	}
	markerTokens := budget.EstimateContent(trimMarker(len(starts), contentTokens))

	// Walk the turn boundaries from the oldest: the first boundary where the rest fits wins.
	remaining := contentTokens
	for k := 1; k < len(starts); k++ {
		for _, s := range sizes[starts[k-1]:starts[k]] {
			remaining -= s
		}
		if scaled(d.FixedTokens+markerTokens+remaining) > in.Limits.Hard {
			continue
		}
		dropped := contentTokens - remaining
		marker := trimMarker(k, scaled(dropped))
		kept := make([]*genai.Content, 0, 1+len(req.Contents)-starts[k])
		kept = append(kept, marker)
		kept = append(kept, req.Contents[starts[k]:]...)
		req.Contents = kept

		d.Action = ActionTrimmed
		d.TurnsDropped = k
		d.ContentsDropped = starts[k]
		d.TokensDropped = scaled(dropped)
		d.FinalEstimatedTokens = d.FixedTokens + budget.EstimateContent(marker) + remaining
		d.FinalTokens = scaled(d.FinalEstimatedTokens)
		return d, nil
	}

	// Every older turn left out is not enough: leave out the oldest steps of the newest turn's tool
	// loop, keeping its user message.
	if first := newest; isUserMessage(req.Contents[first]) {
		olderTokens := contentTokens - newestTokens
		loopMarkerTokens := budget.EstimateContent(loopMarker(len(starts), len(req.Contents), contentTokens))
		rest := newestTokens - sizes[first] // tokens of Contents[first+1:]
		calls, responses, steps := 0, 0, 0
		for j := first + 2; j < len(req.Contents); j++ {
			prev := req.Contents[j-1]
			rest -= sizes[j-1]
			c, r := countFunctionParts(prev)
			calls, responses = calls+c, responses+r
			if prev != nil && prev.Role == genai.RoleModel {
				steps++
			}
			// A step starts at a model content right after the responses of the previous one;
			// everything before it must be answered within the part left out.
			if steps == 0 || calls != responses || !isStepStart(req.Contents, j) {
				continue
			}
			if scaled(d.FixedTokens+loopMarkerTokens+sizes[first]+rest) > in.Limits.Hard {
				continue
			}
			dropped := olderTokens + newestTokens - sizes[first] - rest
			marker := loopMarker(len(starts)-1, steps, scaled(dropped))
			kept := make([]*genai.Content, 0, 2+len(req.Contents)-j)
			kept = append(kept, req.Contents[first], marker)
			kept = append(kept, req.Contents[j:]...)
			req.Contents = kept

			d.Action = ActionTrimmed
			d.TurnsDropped = len(starts) - 1
			d.ExchangesDropped = steps
			d.ContentsDropped = first + (j - first - 1)
			d.TokensDropped = scaled(dropped)
			d.FinalEstimatedTokens = d.FixedTokens + sizes[first] + budget.EstimateContent(marker) + rest
			d.FinalTokens = scaled(d.FinalEstimatedTokens)
			return d, nil
		}
	}

	d.Action = ActionRejected
	return d, &BudgetExceededError{
		Model:            req.Model,
		Window:           in.Limits.Window,
		HardLimit:        in.Limits.Hard,
		NewestTurnTokens: scaled(newestTokens),
		FixedTokens:      scaled(d.FixedTokens),
		RequestTokens:    d.CalibratedTokens,
	}
}

// turnStarts returns the index of the first content of every turn, oldest first. A turn starts at a
// user content that carries something other than function responses (a user message, a summary),
// and is not another agent's output that adk-go rewrote as user context ("For context:"): that
// belongs to the turn of the user message that started it. Contents before the first turn start
// form a turn of their own. The result is never empty.
func turnStarts(contents []*genai.Content) []int {
	starts := []int{0}
	for i, c := range contents {
		if i > 0 && isUserMessage(c) {
			starts = append(starts, i)
		}
	}
	return starts
}

// foreignContextHeader is the first part adk-go gives the user content it makes of another
// agent's event (llminternal.ConvertForeignEvent).
const foreignContextHeader = "For context:"

func isUserMessage(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleUser {
		return false
	}
	if len(c.Parts) > 0 && c.Parts[0] != nil && c.Parts[0].Text == foreignContextHeader {
		return false
	}
	for _, p := range c.Parts {
		if p != nil && p.FunctionResponse == nil {
			return true
		}
	}
	return false
}

// isStepStart reports whether contents[j] (j ≥ 1) starts a step of a tool loop: a model content
// right after a user content (the responses answering the previous step).
func isStepStart(contents []*genai.Content, j int) bool {
	c, prev := contents[j], contents[j-1]
	return c != nil && c.Role == genai.RoleModel && prev != nil && prev.Role == genai.RoleUser
}

func loopMarker(turns, steps, tokens int) *genai.Content {
	return genai.NewContentFromText(fmt.Sprintf(loopMarkerFormat, turns, steps, tokens), genai.RoleUser)
}

func trimMarker(turns, tokens int) *genai.Content {
	return genai.NewContentFromText(fmt.Sprintf(trimMarkerFormat, turns, tokens), genai.RoleUser)
}
