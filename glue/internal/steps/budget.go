package steps

import (
	"fmt"
	"math"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/glue/internal/calibrate"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/truncate"
)

// Action is what EnforceBudget did, as reported in the "budget decision" log entry.
type Action string

// The actions.
const (
	// ActionNone: below the soft limit, sent as is.
	ActionNone Action = "none"
	// ActionCompactionNeeded: above the soft limit, below the hard one: sent as is, compaction due.
	ActionCompactionNeeded Action = "compaction_needed"
	// ActionTrimmed: above the hard limit: parts of the history were left out or cut.
	ActionTrimmed Action = "trimmed"
	// ActionRejected: even the newest turn alone does not fit; the model is not called.
	ActionRejected Action = "rejected"
)

// BudgetInput is what EnforceBudget needs besides the request.
type BudgetInput struct {
	// Limits of the request's model.
	Limits budget.Limits
	// Predict turns our estimate of the whole request into the predicted count of the model
	// (calibrate.Calibration.Predict). Nil: the estimate, with no margin.
	Predict func(estimate int) calibrate.Prediction
	// Pinned reports the contents never left out, only cut as a last resort: the summary of
	// earlier conversation. Nil: none.
	Pinned func(*genai.Content) bool
	// Measures are what is known of the request's contents (their estimated tokens); nil:
	// they are estimated here.
	Measures *Measures
	// PreviousTurnsDropped is how many turns the previous trimmed request of the same history
	// left out: a request that still fits leaving out the same turns leaves them out again, so
	// its prefix is the previous request's and a provider's prompt cache keeps serving it.
	PreviousTurnsDropped int
}

// BudgetDecision says what EnforceBudget found and did. Token figures are the model's predicted
// count unless their name says "estimated".
type BudgetDecision struct {
	Action Action
	// EstimatedTokens is our estimate of the request as it came in; PredictedTokens the model's
	// predicted count of it and Margin the safety added for the hard limit.
	EstimatedTokens, PredictedTokens, Margin int
	// MarginSource says whether Margin is a prior (the model has reported no count yet) or
	// learned from the model's counts; empty when Predict gave none.
	MarginSource budget.MarginSource
	// MarginWaived reports that a prior margin was dropped because the request did not fit
	// with it: the request was checked, and sent, by the prediction alone (see EnforceBudget).
	MarginWaived bool
	// FinalEstimatedTokens and FinalTokens describe the request as sent.
	FinalEstimatedTokens, FinalTokens int
	// FixedTokens is the estimate of what is never trimmed: system instruction and tools.
	FixedTokens int
	// OverSoft reports that the request as it came in passed the soft limit.
	OverSoft bool
	// TurnsDropped and ContentsDropped count the turns and the contents left out whole.
	TurnsDropped, ContentsDropped int
	// TokensDropped is what trimming took out of the request, in predicted tokens: the contents
	// left out whole plus what cutting took from the contents kept (the newest function
	// responses, the summary). The note put in their place is not subtracted.
	TokensDropped int
	// ExchangesDropped counts model steps (with their calls and responses) left out of the
	// newest turn's tool loop.
	ExchangesDropped int
	// ResponsesCut counts function responses of the newest turn cut to share one budget.
	ResponsesCut int
	// SummaryPresent, SummaryTokens and SummaryCut describe the pinned summary.
	SummaryPresent bool
	SummaryTokens  int
	SummaryCut     bool
	// MessageCut reports that the newest turn's user message was cut head and tail: nothing
	// else left made the request fit.
	MessageCut bool
	// FloorTokens is the predicted count of what a request keeps before anything it needs is
	// cut: system instruction and tools, the summary, the newest turn's first content (the
	// user's message, the task) and its newest step (the model's last content and what follows
	// it). A request is trimmed while its floor fits (FloorTokens + Margin ≤ the hard limit)
	// only when the history a compaction left beside that floor is too large.
	FloorTokens int
}

// The visible notes put where history was left out. Their text does not change with the token
// figures, so two requests that leave out the same turns are byte-identical there.
const (
	trimNoteFormat = "[adkctx: %d earlier conversation turns were left out of this request to fit the model's context window.]"
	loopNoteFormat = "[adkctx: %d earlier conversation turns and the %d oldest model steps of the current turn " +
		"(with their tool calls and results) were left out of this request to fit the model's context window.]"
)

// EnforceBudget counts the whole request (system instruction, tools, contents) against the
// model's limits. Below the soft limit it does nothing; below the hard limit (predicted count
// plus margin) it reports that compaction is due. Above, it makes the request fit, in this
// order, stopping as soon as it fits:
//
//  1. leave out the oldest whole turns — never the pinned summary, never the newest turn; a turn
//     starts at a user message and holds every call and response after it, so a call is never
//     split from its response. It leaves out at least PreviousTurnsDropped turns (same prefix as
//     the previous request), and when it must leave out more it goes down to halfway between the
//     soft and the hard limit, so the next requests fit without moving the cut again;
//  2. leave out the oldest complete steps of the newest turn's tool loop (its user message and
//     newest step stay);
//  3. cut the newest turn's function responses to one shared budget (head and tail kept);
//  4. cut the pinned summary head and tail, with a visible marker;
//  5. once the model has acted on the newest turn's user message (the turn has a step), keep
//     only that message and the newest step, and cut the step's function responses, the summary
//     and the message to shares of what is left, each head and tail with a visible marker (a long
//     task beside a long system instruction in a small window: the agent goes on with its work
//     rather than stop in the middle of it; a message too large for the window before the model
//     saw it is refused, so the application can tell the person);
//  6. when the margin is a prior (budget.MarginPrior: the model has reported no count yet),
//     drop it (MarginWaived) and, unless the prediction alone fits as is, take steps 1–4 again
//     against the prediction alone: a first request its estimate fits is sent, and the model's
//     count calibrates the next ones, rather than refused on a guess;
//  7. refuse with a *BudgetExceededError, leaving req unchanged.
//
// One visible note replaces what was left out. No content of req is modified: changed contents
// are new values in a new req.Contents slice.
func EnforceBudget(req *request.LLMRequest, in BudgetInput) (BudgetDecision, error) {
	var d BudgetDecision
	d.Action = ActionNone
	if req == nil {
		return d, nil
	}
	predict := in.Predict
	if predict == nil {
		predict = func(n int) calibrate.Prediction { return calibrate.Prediction{Tokens: n} }
	}
	if req.Config != nil {
		d.FixedTokens = budget.EstimateRequest(nil, req.Config)
	}
	t := newTrimmer(req.Contents, in.Measures, in.Pinned)
	d.EstimatedTokens = d.FixedTokens + t.total
	p := predict(d.EstimatedTokens)
	d.PredictedTokens, d.Margin, d.MarginSource = p.Tokens, p.Margin, p.MarginSource
	d.FinalEstimatedTokens, d.FinalTokens = d.EstimatedTokens, d.PredictedTokens
	d.OverSoft = d.PredictedTokens > in.Limits.Soft
	d.SummaryPresent, d.SummaryTokens = t.pinnedTokens > 0, t.pinnedTokens
	d.FloorTokens = scale(d.FixedTokens+t.floorTokens(), float64(d.PredictedTokens)/float64(max(d.EstimatedTokens, 1)))
	switch {
	case d.PredictedTokens <= in.Limits.Soft:
		return d, nil
	case d.PredictedTokens+d.Margin <= in.Limits.Hard:
		d.Action = ActionCompactionNeeded
		return d, nil
	}

	before := d
	out, k, f, ok := t.fit(&d, in, d.PredictedTokens+d.Margin)
	if !ok && d.MarginSource == budget.MarginPrior && d.Margin > 0 {
		// The model has reported no count yet: the margin is a guess at our estimate's error,
		// not a measure of it. Refusing fails for certain; sending what the estimate alone fits
		// either succeeds or teaches the calibration the model's count. So a prior margin is
		// dropped before a refusal (a learned one never is).
		d = before
		d.MarginWaived = true
		if d.PredictedTokens <= in.Limits.Hard {
			d.Action = ActionCompactionNeeded
			return d, nil
		}
		out, k, f, ok = t.fit(&d, in, d.PredictedTokens)
	}
	// Figures reported as predicted counts scale by the prediction alone, without the margin.
	predicted := float64(d.PredictedTokens) / float64(max(d.EstimatedTokens, 1))
	if !ok {
		d.Action = ActionRejected
		return d, &request.BudgetExceededError{
			Model: req.Model, Window: in.Limits.Window, HardLimit: in.Limits.Hard, Margin: d.Margin, MarginSource: d.MarginSource,
			NewestTurnTokens: scale(t.newestTokens(), predicted), FixedTokens: scale(d.FixedTokens, predicted), RequestTokens: d.PredictedTokens,
		}
	}
	if k > 0 {
		d.TurnsDropped = k
	}
	d.ContentsDropped = t.dropped
	d.TokensDropped = scale(t.droppedTokens+t.cutTokens, predicted)
	d.Action = ActionTrimmed
	req.Contents = out
	d.FinalEstimatedTokens = d.FixedTokens + t.estimate(out)
	d.FinalTokens = scale(d.FinalEstimatedTokens, f)
	return d, nil
}

// fit makes the request fit under the hard limit, its estimates scaled to total (the predicted
// count, with or without the margin): the trimming steps of EnforceBudget, in order. f is the
// scale used.
func (t *trimmer) fit(d *BudgetDecision, in BudgetInput, total int) (out []*genai.Content, k int, f float64, ok bool) {
	f = float64(total) / float64(max(d.EstimatedTokens, 1))
	fits := func(raw, limit int) bool { return float64(raw)*f <= float64(limit) }
	hard := in.Limits.Hard
	relaxed := (in.Limits.Soft + in.Limits.Hard) / 2
	out, k, ok = t.dropTurns(d.FixedTokens, hard, relaxed, in.PreviousTurnsDropped, fits)
	if !ok {
		out, ok = t.dropSteps(d.FixedTokens, hard, fits, d)
	}
	if !ok {
		out, ok = t.cutResponses(d.FixedTokens, hard, f, d)
	}
	if !ok {
		out, ok = t.cutSummary(d.FixedTokens, hard, f, out, d)
	}
	if !ok {
		out, ok = t.cutToStep(d.FixedTokens, hard, f, d)
	}
	return out, k, f, ok
}

func scale(raw int, f float64) int { return int(math.Ceil(float64(raw) * f)) }

// trimmer holds a request's contents split into the pinned contents and turns.
type trimmer struct {
	contents     []*genai.Content
	sizes        []int
	measures     *Measures
	pinned       []bool
	pinnedTokens int
	total        int
	starts       []int // first content of each turn (pinned contents excluded)

	dropped, droppedTokens int
	cutTokens              int // taken from the contents kept by cutting them
}

// estimate is the estimated tokens of contents (an assembled request): measured once each, new
// ones (notes, cut contents) when first asked.
func (t *trimmer) estimate(contents []*genai.Content) int {
	n := 0
	for _, c := range contents {
		n += t.measures.Of(c).Tokens
	}
	return n
}

func newTrimmer(contents []*genai.Content, m *Measures, pinned func(*genai.Content) bool) *trimmer {
	if m == nil {
		m = NewMeasures(contents, nil, false)
	}
	_, sizes := m.Prints(contents)
	t := &trimmer{contents: contents, sizes: sizes, measures: m, pinned: make([]bool, len(contents))}
	for i, c := range contents {
		t.total += t.sizes[i]
		if pinned != nil && c != nil && pinned(c) {
			t.pinned[i] = true
			t.pinnedTokens += t.sizes[i]
			continue
		}
		if len(t.starts) == 0 || isUserMessage(c) {
			t.starts = append(t.starts, i)
		}
	}
	return t
}

// newest is the index of the newest turn's first content (len(contents) when there is none).
func (t *trimmer) newest() int {
	if len(t.starts) == 0 {
		return len(t.contents)
	}
	return t.starts[len(t.starts)-1]
}

// floorTokens is the estimate of the pinned contents, the newest turn's first content and its
// newest step: the model's last content and everything after it (see BudgetDecision.FloorTokens).
func (t *trimmer) floorTokens() int {
	n := t.pinnedTokens
	start := t.newest()
	if start >= len(t.contents) {
		return n
	}
	n += t.sizes[start]
	step := len(t.contents) - 1
	for step > start && (t.contents[step] == nil || t.contents[step].Role != genai.RoleModel) {
		step--
	}
	for i := max(step, start+1); i < len(t.contents); i++ {
		if !t.pinned[i] {
			n += t.sizes[i]
		}
	}
	return n
}

func (t *trimmer) newestTokens() int {
	n := 0
	for _, s := range t.sizes[t.newest():] {
		n += s
	}
	return n
}

// assemble builds the pinned contents before from, then tail, and counts what is left out: every
// other content before from, plus skipped contents (left out after from).
func (t *trimmer) assemble(from int, skipped []int, tail ...*genai.Content) []*genai.Content {
	out := make([]*genai.Content, 0, len(tail)+2)
	t.dropped, t.droppedTokens = 0, 0
	for i := range from {
		if t.pinned[i] {
			out = append(out, t.contents[i])
			continue
		}
		t.dropped++
		t.droppedTokens += t.sizes[i]
	}
	for _, i := range skipped {
		t.dropped++
		t.droppedTokens += t.sizes[i]
	}
	return append(out, tail...)
}

// dropTurns leaves out the oldest k ≥ 1 whole turns (not the newest): the smallest k that fits
// under hard, at least previous when that still fits, extended down to relaxed for a new cut.
func (t *trimmer) dropTurns(fixed, hard, relaxed, previous int, fits func(raw, limit int) bool) ([]*genai.Content, int, bool) {
	n := len(t.starts)
	rest := make([]int, n) // tokens of the turns from k on, pinned contents included once
	for k := n - 1; k >= 0; k-- {
		end := len(t.contents)
		if k+1 < n {
			end = t.starts[k+1]
			rest[k] = rest[k+1]
		}
		for i := t.starts[k]; i < end; i++ {
			if !t.pinned[i] {
				rest[k] += t.sizes[i]
			}
		}
	}
	noteTokens := budget.EstimateContent(trimNote(n))
	size := func(k int) int { return fixed + t.pinnedTokens + noteTokens + rest[k] }
	for k := 1; k < n; k++ {
		if !fits(size(k), hard) {
			continue
		}
		switch {
		case previous >= k && previous < n && fits(size(previous), hard):
			k = previous
		default:
			for k+1 < n && !fits(size(k), relaxed) {
				k++
			}
		}
		return t.assemble(t.starts[k], nil, append([]*genai.Content{trimNote(k)}, t.contents[t.starts[k]:]...)...), k, true
	}
	return nil, 0, false
}

// dropSteps leaves out every older turn and the oldest complete steps of the newest turn's tool
// loop, keeping its user message and its newest step.
func (t *trimmer) dropSteps(fixed, hard int, fits func(raw, limit int) bool, d *BudgetDecision) ([]*genai.Content, bool) {
	first := t.newest()
	if first >= len(t.contents) || !isUserMessage(t.contents[first]) {
		return nil, false
	}
	older := len(t.starts) - 1
	noteTokens := budget.EstimateContent(loopNote(older, len(t.contents)))
	rest := 0
	for _, s := range t.sizes[first+1:] {
		rest += s
	}
	calls, responses, steps := 0, 0, 0
	for j := first + 2; j < len(t.contents); j++ {
		prev := t.contents[j-1]
		rest -= t.sizes[j-1]
		c, r := countFunctionParts(prev)
		calls, responses = calls+c, responses+r
		if prev != nil && prev.Role == genai.RoleModel {
			steps++
		}
		// A step starts at a model content right after the responses of the previous one;
		// everything before it must be answered within the part left out.
		if steps == 0 || calls != responses || !isStepStart(t.contents, j) {
			continue
		}
		if !fits(fixed+t.pinnedTokens+noteTokens+t.sizes[first]+rest, hard) {
			continue
		}
		var skipped []int
		for i := first + 1; i < j; i++ {
			skipped = append(skipped, i)
		}
		tail := append([]*genai.Content{t.contents[first], loopNote(older, steps)}, t.contents[j:]...)
		d.TurnsDropped, d.ExchangesDropped = older, steps
		return t.assemble(first, skipped, tail...), true
	}
	return nil, false
}

// cutResponses leaves out every older turn and cuts the newest turn's function responses to one
// shared budget: what remains under hard after everything else of the request.
func (t *trimmer) cutResponses(fixed, hard int, f float64, d *BudgetDecision) ([]*genai.Content, bool) {
	first := t.newest()
	if first >= len(t.contents) {
		return nil, false
	}
	older := len(t.starts) - 1
	note := trimNote(older)
	other, nResp, respTokens := fixed+t.pinnedTokens+budget.EstimateContent(note), 0, 0
	for i := first; i < len(t.contents); i++ {
		c := t.contents[i]
		for _, p := range partsOf(c) {
			if p.FunctionResponse != nil {
				nResp++
			}
		}
		other += t.sizes[i]
	}
	if nResp == 0 {
		return nil, false
	}
	for i := first; i < len(t.contents); i++ {
		respTokens += responseTokens(t.contents[i])
	}
	other -= respTokens
	room := int(float64(hard)/f) - other
	if room <= 0 {
		return nil, false
	}
	// Text costs at most one token per byte; at 2 bytes per token the cut is safe for text and
	// JSON alike, and re-estimated below.
	for _, bytesPerToken := range []int{3, 2, 1} {
		share := room * bytesPerToken / nResp
		if share < 256 {
			break
		}
		cut, n := cutNewestResponses(t.contents[first:], share)
		if older > 0 {
			cut = append([]*genai.Content{note}, cut...)
		}
		out := t.assemble(first, nil, cut...)
		if float64(fixed+t.estimate(out))*f <= float64(hard) {
			d.TurnsDropped, d.ResponsesCut = older, n
			t.cutTokens = t.shrinkage(t.contents[first:], cut[len(cut)-(len(t.contents)-first):])
			return out, true
		}
	}
	return nil, false
}

// responseTokens estimates the function responses of c (with one content's overhead).
func responseTokens(c *genai.Content) int {
	var parts []*genai.Part
	for _, p := range partsOf(c) {
		if p.FunctionResponse != nil {
			parts = append(parts, p)
		}
	}
	if parts == nil {
		return 0
	}
	return budget.EstimateContent(&genai.Content{Parts: parts})
}

// cutNewestResponses cuts every function response in cs to share bytes (copy-on-write).
func cutNewestResponses(cs []*genai.Content, share int) ([]*genai.Content, int) {
	out := make([]*genai.Content, len(cs))
	cut := 0
	for i, c := range cs {
		var n int
		out[i], n, _ = truncate.Responses(c, truncate.Config{MaxBytes: share, MaxLines: max(share/40, 16)}, nil)
		cut += n
	}
	return out, cut
}

// cutSummary cuts the pinned contents head and tail so that out fits under hard.
func (t *trimmer) cutSummary(fixed, hard int, f float64, out []*genai.Content, d *BudgetDecision) ([]*genai.Content, bool) {
	if t.pinnedTokens == 0 {
		return nil, false
	}
	if out == nil {
		first := t.newest()
		out = t.assemble(first, nil, append([]*genai.Content{trimNote(len(t.starts) - 1)}, t.contents[first:]...)...)
		d.TurnsDropped = len(t.starts) - 1
	}
	total := fixed + t.estimate(out)
	over := int(math.Ceil(float64(total)-float64(hard)/f)) + 16
	if over <= 0 {
		return out, true
	}
	room := t.pinnedTokens - over
	if room < 64 {
		return nil, false
	}
	res := make([]*genai.Content, len(out))
	copy(res, out)
	for i, c := range res {
		if c == nil || !t.isPinned(c) {
			continue
		}
		text := contentText(c)
		cut, _ := truncate.Text(text, truncate.Config{MaxBytes: room * 2, MaxLines: math.MaxInt32}, "summary cut to fit the context window")
		res[i] = genai.NewContentFromText(cut, genai.Role(c.Role))
	}
	if float64(fixed+t.estimate(res))*f > float64(hard) {
		return nil, false
	}
	d.SummaryCut = true
	t.cutTokens = t.shrinkage(out, res)
	return res, true
}

// minShareTokens is the least a cut content keeps of its share: below it, cutting leaves too
// little to act on and the request is refused instead.
const minShareTokens = 64

// cutToStep keeps the pinned contents, the newest turn's user message and its newest step (the
// model's last content and what follows it), and cuts the step's function responses, the pinned
// contents and the user's message, head and tail, to shares of what the rest leaves under hard:
// a part that needs less than an equal share keeps what it needs, the others share the rest. A
// turn with no step yet is left to the refusal.
func (t *trimmer) cutToStep(fixed, hard int, f float64, d *BudgetDecision) ([]*genai.Content, bool) {
	first := t.newest()
	if first >= len(t.contents) || !isUserMessage(t.contents[first]) {
		return nil, false
	}
	step := len(t.contents) - 1
	for step > first && (t.contents[step] == nil || t.contents[step].Role != genai.RoleModel) {
		step--
	}
	if step == first {
		return nil, false // the model has not acted on the message yet
	}
	older, steps := len(t.starts)-1, 0
	for j := first + 1; j < step; j++ {
		if t.contents[j] != nil && t.contents[j].Role == genai.RoleModel {
			steps++
		}
	}
	var note *genai.Content
	switch {
	case steps > 0:
		note = loopNote(older, steps)
	case older > 0:
		note = trimNote(older)
	}
	tail := t.contents[step:]
	respTokens := 0
	for _, c := range tail {
		respTokens += responseTokens(c)
	}
	message := t.sizes[first]
	other := fixed + budget.EstimateContent(note) + t.estimate(tail) - respTokens
	room := int(float64(hard)/f) - other
	shares := fairShares(room, []int{respTokens, t.pinnedTokens, message})
	if shares == nil {
		return nil, false
	}
	var skipped []int
	for i := first + 1; i < step; i++ {
		skipped = append(skipped, i)
	}
	nResp := 0
	for _, c := range tail {
		_, r := countFunctionParts(c)
		nResp += r
	}
	for _, bytesPerToken := range []int{3, 2, 1} {
		cutTail, cutResps := tail, 0
		if shares[0] < respTokens {
			cutTail, cutResps = cutNewestResponses(tail, max(shares[0]*bytesPerToken/max(nResp, 1), 256))
		}
		msg := t.contents[first]
		if shares[2] < message {
			msg = cutText(msg, shares[2]*bytesPerToken, "message cut to fit the context window")
		}
		kept := []*genai.Content{msg}
		if note != nil {
			kept = append(kept, note)
		}
		out := t.assemble(first, skipped, append(kept, cutTail...)...)
		summaryCut := false
		if shares[1] < t.pinnedTokens {
			for i, c := range out {
				if c != nil && t.isPinned(c) {
					if nc := cutText(c, shares[1]*bytesPerToken, "summary cut to fit the context window"); nc != c {
						out[i], summaryCut = nc, true
					}
				}
			}
		}
		if float64(fixed+t.estimate(out))*f > float64(hard) {
			continue
		}
		d.TurnsDropped, d.ExchangesDropped, d.ResponsesCut = older, steps, cutResps
		d.SummaryCut, d.MessageCut = summaryCut, msg != t.contents[first]
		before := t.assemble(first, skipped, append(append([]*genai.Content{t.contents[first]}, kept[1:]...), tail...)...)
		t.cutTokens = t.shrinkage(before, out)
		return out, true
	}
	return nil, false
}

// fairShares splits room among parts that need need[i] each: a part needing at most an equal
// share of what is left keeps what it needs, the others share the rest equally. It returns nil
// when a part that needs something would get less than minShareTokens.
func fairShares(room int, need []int) []int {
	shares := make([]int, len(need))
	open := 0
	for _, n := range need {
		if n > 0 {
			open++
		}
	}
	left := room
	for open > 0 {
		each := left / open
		settled := false
		for i, n := range need {
			if n > 0 && shares[i] == 0 && n <= each {
				shares[i], left, open, settled = n, left-n, open-1, true
			}
		}
		if settled {
			continue
		}
		if each < minShareTokens {
			return nil
		}
		for i, n := range need {
			if n > 0 && shares[i] == 0 {
				shares[i] = each
			}
		}
		break
	}
	return shares
}

// cutText returns c with its text cut head and tail to about maxBytes (its other parts kept, the
// text in one part where its first text was), with a visible marker saying why.
func cutText(c *genai.Content, maxBytes int, why string) *genai.Content {
	whole := contentText(c)
	text, _ := truncate.Text(whole, truncate.Config{MaxBytes: max(maxBytes, 256), MaxLines: math.MaxInt32}, why)
	if text == whole {
		return c // nothing to cut (no text, or it fits): not reported as cut
	}
	nc := &genai.Content{Role: c.Role}
	placed := false
	for _, p := range partsOf(c) {
		switch {
		case p.Text == "" || p.Thought:
			nc.Parts = append(nc.Parts, p)
		case !placed:
			nc.Parts, placed = append(nc.Parts, &genai.Part{Text: text}), true
		}
	}
	return nc
}

// shrinkage is what cutting took from contents: the estimated tokens of before less those of
// after, content by content (after[i] replaces before[i]).
func (t *trimmer) shrinkage(before, after []*genai.Content) int {
	n := 0
	for i, c := range before {
		if after[i] != c {
			n += t.estimate(before[i:i+1]) - t.estimate(after[i:i+1])
		}
	}
	return max(n, 0)
}

func (t *trimmer) isPinned(c *genai.Content) bool {
	for i, p := range t.contents {
		if p == c {
			return t.pinned[i]
		}
	}
	return false
}

func contentText(c *genai.Content) string {
	s := ""
	for _, p := range partsOf(c) {
		if p.Text != "" && !p.Thought {
			if s != "" {
				s += "\n"
			}
			s += p.Text
		}
	}
	return s
}

func partsOf(c *genai.Content) []*genai.Part {
	if c == nil {
		return nil
	}
	out := make([]*genai.Part, 0, len(c.Parts))
	for _, p := range c.Parts {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// foreignContextHeader is the first part adk-go gives the user content it makes of another
// agent's event.
const foreignContextHeader = "For context:"

// isUserMessage reports whether c starts a turn: a user content with something other than
// function responses, and not another agent's output adk-go rewrote as context.
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

func trimNote(turns int) *genai.Content {
	return genai.NewContentFromText(fmt.Sprintf(trimNoteFormat, turns), genai.RoleUser)
}

func loopNote(turns, steps int) *genai.Content {
	return genai.NewContentFromText(fmt.Sprintf(loopNoteFormat, turns, steps), genai.RoleUser)
}

// countFunctionParts counts the function call and function response parts of c (nil: none).
func countFunctionParts(c *genai.Content) (calls, resps int) {
	if c == nil {
		return 0, 0
	}
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		if p.FunctionCall != nil {
			calls++
		}
		if p.FunctionResponse != nil {
			resps++
		}
	}
	return calls, resps
}
