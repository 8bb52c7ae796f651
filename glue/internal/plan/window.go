package plan

import (
	"encoding/json"
	"maps"
	"slices"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/record"
)

// windowParams are the resolved inputs of one window selection.
type windowParams struct {
	trigger           compaction.Trigger
	interval          int // θ ≥ 1
	overlap           int // ω ≥ 0
	retainInvocations int // R ≥ 1
	// retainTokens is the raw tail a token-triggered or manual compaction keeps; tokenLimit
	// (the soft limit, history tokens) caps how much the R whole invocations may weigh. 0: off.
	retainTokens, tokenLimit int
	// reserve is what joins the view before the next request (Selection.Reserve).
	reserve int
	// excerptBytes: the tool results of the ended invocations left raw, but the newest, are shown
	// cut to this size (0: whole).
	excerptBytes int
	running      string // invocation in progress or just finished
	live         bool   // running is still in progress
	scope        string
}

// window is one selected compaction.
type window struct {
	m        *compaction.Marker // range, chain and counts set; content and tokens not yet
	input    compaction.SummaryInput
	original int   // estimated tokens of what the marker replaces in the view
	covered  []int // positions newly covered
	// shrunk estimates what the marker takes out of the view besides the summary it adds: the
	// covered events and the previous summary as the view shows them, and the tool results
	// it newly shows as excerpts.
	shrunk int
}

// ledgerSnapshotEvery is how often a marker stores its ledger whole (see Marker.Ledger): the
// first marker of a session and every 8th after it. A process that has not read a session yet
// reads back to the last of them once, at most 7 compactions.
const ledgerSnapshotEvery = 8

// Reasons a selection gives when there is nothing to do (log values).
const (
	reasonEmpty          = "empty_session"
	reasonFailed         = "failed_invocation"
	reasonBelowInterval  = "below_interval"
	reasonNothingNew     = "nothing_new"
	reasonEverythingTail = "everything_retained"
)

// group is one invocation's raw events in the view, in stream order.
type group struct {
	inv     string
	idx     []int
	content bool // holds an event with content (only such groups count as invocations)
	tokens  int
}

// selectWindow decides what to compact among events (one session's stored events in stream
// order, markers included), given their current plan. It is a pure function of its inputs and
// returns nil and a reason when there is nothing to do.
//
// Every compaction rolls up: the new marker names the live one as Previous, so its summary
// replaces the live summary and covers the raw events it selects. What it leaves raw:
//   - always the newest invocations: for the sliding window (invocations trigger) the last
//     max(R, live marker's KeepInvocations) completed invocations, so the raw tail a token
//     trigger kept is not wiped; it fires once θ more invocations are raw;
//   - for the token trigger and manual compactions, the newest invocations up to retainTokens
//     (at least R whole ones while they fit tokenLimit); an invocation too large on its own
//     keeps its user message and its newest steps raw;
//   - pending calls (long-running without the client's answer, unanswered confirmations, the
//     running invocation's unanswered calls), and everything paired with a raw event: a call
//     and its response are covered together or not at all.
func selectWindow(events []compaction.Event, p *plan, w windowParams) (*window, string) {
	groups := invocationGroups(events, p, w.scope)
	if len(groups) == 0 {
		return nil, reasonEmpty
	}
	live := p.live[w.scope]
	var keepFloor int
	if live.m != nil && live.m.Trigger != compaction.TriggerInvocations {
		keepFloor = live.m.KeepInvocations // the tail a token compaction chose: do not wipe it
	}
	if w.trigger == compaction.TriggerInvocations && !w.live && invocationFailed(events, w.running) {
		return nil, reasonFailed
	}
	completed := groups
	if w.live {
		completed = slices.DeleteFunc(slices.Clone(groups), func(g group) bool { return g.inv == w.running })
	}

	pr := pairCalls(events, w.scope, w.live || w.trigger != compaction.TriggerInvocations, w.running)
	masked := map[int]bool{} // raw tool results the view shows as excerpts (see tokenTail)
	tail, keepInvocations, reason := rawTail(events, groups, completed, w, max(w.retainInvocations, keepFloor), masked)
	if tail == nil {
		return nil, reason
	}

	// Candidates: raw, not in the tail, not pending; then close over pairs.
	cover := map[int]bool{}
	for _, g := range groups {
		for _, i := range g.idx {
			if !tail[i] && !pr.pending[i] && events[i].ID != "" {
				cover[i] = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for i := range cover {
			for _, j := range pr.links[i] {
				if !cover[j] && !p.covered[j] {
					delete(cover, i)
					changed = true
					break
				}
			}
		}
	}
	var excerpts []string
	if w.excerptBytes > 0 {
		excerpts = toolResultsLeft(events, completed, cover)
		for _, i := range slices.Sorted(maps.Keys(masked)) {
			if !cover[i] && events[i].ID != "" && !slices.Contains(excerpts, events[i].ID) {
				excerpts = append(excerpts, events[i].ID)
			}
		}
	}
	if len(cover) == 0 && (len(masked) == 0 || !newExcerpts(live.m, excerpts)) {
		return nil, reasonNothingNew
	}
	// With nothing to cover, masking alone brings the history within the tail: a marker that
	// only shows older tool results as excerpts (Marker.MasksOnly) and keeps the summary it
	// rolls up.
	newly := slices.Sorted(maps.Keys(cover))
	win := buildWindow(events, p, w, newly, newInvocations(events, p, w.scope, groups, newly), keepInvocations)
	if len(excerpts) > 0 {
		win.m.ExcerptedEventIDs, win.m.ExcerptBytes = excerpts, w.excerptBytes
	}
	win.shrunk = shrinkage(events, p, live, win)
	return win, ""
}

// shrunk estimates the tokens marker win.m takes out of the view of events (plan p, whose
// winning marker is live) besides its summary: the covered events and live's summary as the
// view shows them, and the tool results it shows as excerpts that the view shows whole.
func shrinkage(events []compaction.Event, p *plan, live liveMarker, win *window) int {
	var shown map[string]int // the results live shows as excerpts
	if live.m != nil {
		shown = excerptsOf(map[string]liveMarker{win.m.Scope: live})[win.m.Scope]
	}
	size := func(i int, n int) int {
		c := events[i].Content
		if n > 0 {
			if ex := excerptOf(c, n); ex != nil {
				c = ex
			}
		}
		return budget.EstimateContent(c)
	}
	out := 0
	for _, i := range win.covered {
		out += size(i, shown[events[i].ID])
	}
	if live.summary != nil && len(win.covered) > 0 { // replaced by the new summary
		out += budget.EstimateContent(summaryContent(live.summary))
	}
	for _, id := range win.m.ExcerptedEventIDs {
		if shown[id] > 0 {
			continue // an excerpt already
		}
		for i := range events {
			if events[i].ID == id && events[i].Scope == win.m.Scope && !p.covered[i] {
				out += size(i, 0) - size(i, win.m.ExcerptBytes)
				break
			}
		}
	}
	return out
}

// newExcerpts reports whether excerpts names a tool result the live marker m (nil: none) does
// not show as an excerpt already.
func newExcerpts(m *compaction.Marker, excerpts []string) bool {
	for _, id := range excerpts {
		if m == nil || !slices.Contains(m.ExcerptedEventIDs, id) {
			return true
		}
	}
	return false
}

// rawTail marks the events the compaction leaves raw (its tail) and returns the marker's
// KeepInvocations; a nil tail and a reason when there is nothing to do. keep is the number of
// completed invocations a sliding window keeps. masked receives the tool results of the tail the
// view shows as excerpts (tokenTail).
func rawTail(events []compaction.Event, groups, completed []group, w windowParams, keep int, masked map[int]bool) (map[int]bool, int, string) {
	tail := map[int]bool{}
	if w.trigger != compaction.TriggerInvocations { // tokens, manual
		kept, whole := tokenTail(events, groups, w, tail, masked)
		if kept == len(groups) && whole {
			return nil, 0, reasonEverythingTail
		}
		return tail, max(w.retainInvocations, kept), ""
	}
	n := len(completed)
	if !slidingDue(n, w.interval, keep) {
		return nil, 0, reasonBelowInterval
	}
	for _, g := range completed[n-keep:] {
		for _, i := range g.idx {
			tail[i] = true
		}
	}
	for _, g := range groups { // the running invocation, when live
		if w.live && g.inv == w.running {
			for _, i := range g.idx {
				tail[i] = true
			}
		}
	}
	// The floor a token compaction set holds for this one compaction; the next sliding window
	// keeps R again.
	return tail, w.retainInvocations, ""
}

// toolResultsLeft returns the ids of the events with tool results that the compaction leaves raw
// (not in cover) in ended invocations (see ended) older than the newest ended one: what the view
// shows as excerpts. The newest ended invocation — the previous turn of the next request — keeps
// its results whole, and so does every invocation after it, which may still be running (a
// trigger that waited behind another compaction, a manual compaction during a turn).
func toolResultsLeft(events []compaction.Event, completed []group, cover map[int]bool) []string {
	newest := -1
	for k, g := range completed {
		if ended(events, g) {
			newest = k
		}
	}
	var out []string
	for _, g := range completed[:max(newest, 0)] {
		if !ended(events, g) {
			continue
		}
		for _, i := range g.idx {
			if !cover[i] && events[i].ID != "" && events[i].Content != nil && hasFunctionResponse(&events[i]) {
				out = append(out, events[i].ID)
			}
		}
	}
	return out
}

// newInvocations counts the invocations (groups) of which newly holds the first covered event:
// an invocation is counted once, when its first event is covered, whether the rest (a pending
// call, the raw part of a split invocation) is covered now or later.
func newInvocations(events []compaction.Event, p *plan, scope string, groups []group, newly []int) int {
	already := map[string]bool{}
	for i := range events {
		if p.covered[i] && events[i].Scope == scope {
			already[events[i].InvocationID] = true
		}
	}
	groupOf := make(map[int]int, len(newly))
	for k, g := range groups {
		for _, i := range g.idx {
			groupOf[i] = k
		}
	}
	counted := map[int]bool{}
	for _, i := range newly {
		k, ok := groupOf[i]
		if ok && !counted[k] && !already[groups[k].inv] {
			counted[k] = true
		}
	}
	return len(counted)
}

// tokenTail marks in tail the events a token-triggered or manual compaction keeps raw and
// returns how many groups it kept (whole or in part) and whether all of them were kept whole.
//
// An invocation too large to keep whole (a long tool loop) keeps its user message and its newest
// steps, and masks before it summarizes: the newest tool results, up to ¾ of the tail, stay
// whole; older results of the steps it keeps are shown as excerpts (marked in masked; the recall
// tools read them whole), so the tail holds more of the agent's own calls and text — what it
// reuses most — and the summary takes only steps that no longer fit even so.
func tokenTail(events []compaction.Event, groups []group, w windowParams, tail, masked map[int]bool) (kept int, whole bool) {
	tokens := 0
	whole = true
	for k := len(groups) - 1; k >= 0; k-- {
		g := groups[k]
		fits := tokens+g.tokens <= w.retainTokens
		// R whole invocations stay raw while they leave room under the limit (a quarter of it), so
		// the compaction still brings the history well below the limit.
		// The running invocation (a tool loop) is forced only with room for what is on its way
		// (w.reserve); an ended one keeps the previous turn raw whatever comes next.
		reserve := 0
		if w.live && g.inv == w.running {
			reserve = w.reserve
		}
		forced := kept < w.retainInvocations && (w.tokenLimit == 0 || tokens+g.tokens <= w.tokenLimit*3/4-reserve)
		if fits || forced || w.retainTokens == 0 && kept < w.retainInvocations {
			for _, i := range g.idx {
				tail[i] = true
			}
			tokens += g.tokens
			kept++
			continue
		}
		if kept == 0 {
			// The newest invocation alone is too large: keep its user message and its newest
			// steps raw (the pair closure keeps calls with their responses).
			kept, whole = 1, false
			splitTail(events, g, w, tail, masked)
		}
		break
	}
	return kept, whole
}

// splitTail marks in tail the user message and the newest steps of invocation g that fit
// w.retainTokens, older tool results beyond the newest half of that counted (and marked in
// masked) as the excerpts the view shows of them.
func splitTail(events []compaction.Event, g group, w windowParams, tail, masked map[int]bool) {
	budgetLeft := w.retainTokens
	for _, i := range g.idx {
		if !isUser(&events[i]) || events[i].Content == nil || hasFunctionResponse(&events[i]) {
			break
		}
		tail[i] = true
		budgetLeft -= budget.EstimateContent(events[i].Content)
	}
	wholeResults := w.retainTokens * 3 / 4 // tokens of the newest results kept whole
	newest := true                         // the newest result always stays whole
	for j := len(g.idx) - 1; j >= 0; j-- {
		i := g.idx[j]
		if tail[i] {
			continue
		}
		t := budget.EstimateContent(events[i].Content)
		if e := &events[i]; e.Content != nil && hasFunctionResponse(e) {
			if wholeResults >= t || newest || w.excerptBytes <= 0 {
				wholeResults -= t
				newest = false
			} else if ex := excerptOf(e.Content, w.excerptBytes); ex != nil {
				if cut := budget.EstimateContent(ex); cut < t {
					t = cut
					masked[i] = true
				}
			}
		}
		// The newest stored event stays, unless another is on its way (w.reserve): it is then
		// not the newest step of the next request, and a large tool result the model has read
		// may go where the limit leaves no room for it.
		if t > budgetLeft && (j < len(g.idx)-1 || w.reserve > 0) {
			delete(masked, i)
			break
		}
		tail[i] = true
		budgetLeft -= t
	}
}

func hasFunctionResponse(e *compaction.Event) bool {
	for _, p := range e.Content.Parts {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// ended reports whether invocation g ended with the model's answer: its last event with content
// (events without content and without an error are bookkeeping: state changes, workflow
// events) comes from the model, holds text, and neither calls a tool nor is a tool result. Every
// tool result before it was read and answered. A long-running call, a result that skips the
// model's summarization (adk-go counts both as final) or an error leaves it open.
func ended(events []compaction.Event, g group) bool {
	for k := len(g.idx) - 1; k >= 0; k-- {
		e := &events[g.idx[k]]
		switch {
		case e.ErrorCode != "":
			return false
		case isMarkerOnly(e) || !hasContent(e):
			continue
		}
		return !isUser(e) && e.Content.Role == genai.RoleModel && isAnswer(e.Content)
	}
	return false
}

// isAnswer reports whether c holds text and no call or result.
func isAnswer(c *genai.Content) bool {
	text := false
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.FunctionCall != nil || p.FunctionResponse != nil:
			return false
		case p.Text != "" && !p.Thought:
			text = true
		}
	}
	return text
}

// invocationGroups returns the raw (uncovered) events of scope in the view, grouped by
// invocation in order of first appearance. An event without an invocation id belongs to the
// group before it (or the first one); a group without any content (workflow bookkeeping, state
// changes) is not an invocation of its own and joins the group before it.
func invocationGroups(events []compaction.Event, p *plan, scope string) []group {
	var groups []group
	at := map[string]int{}
	var orphans []int // id-less events before the first group
	for i := range events {
		e := &events[i]
		if e.Scope != scope || p.covered[i] || isMarkerOnly(e) || e.Partial {
			continue
		}
		k, ok := at[e.InvocationID]
		switch {
		case e.InvocationID == "" && len(groups) == 0:
			orphans = append(orphans, i)
			continue
		case e.InvocationID == "":
			k = len(groups) - 1
		case !ok:
			at[e.InvocationID] = len(groups)
			groups = append(groups, group{inv: e.InvocationID})
			k = len(groups) - 1
		}
		g := &groups[k]
		g.idx = append(g.idx, i)
		g.content = g.content || hasContent(e)
		g.tokens += budget.EstimateContent(e.Content)
	}
	if len(groups) == 0 {
		if len(orphans) == 0 {
			return nil
		}
		groups = []group{{}}
	}
	groups[0].idx = append(orphans, groups[0].idx...)
	// Merge content-less groups into their predecessor (or successor, for the first).
	out := groups[:0]
	for _, g := range groups {
		if !g.content && len(out) > 0 {
			last := &out[len(out)-1]
			last.idx = append(last.idx, g.idx...)
			last.tokens += g.tokens
			continue
		}
		out = append(out, g)
	}
	if len(out) > 1 && !out[0].content {
		out[1].idx = append(out[0].idx, out[1].idx...)
		out[1].tokens += out[0].tokens
		out = out[1:]
	}
	for k := range out {
		slices.Sort(out[k].idx)
	}
	return out
}

// invocationFailed reports whether invocation inv ended with an error or without a final
// response.
func invocationFailed(events []compaction.Event, inv string) bool {
	var last, lastNonUser *compaction.Event
	for i := range events {
		e := &events[i]
		if isMarkerOnly(e) || e.InvocationID != inv {
			continue
		}
		last = e
		if e.Author != "user" {
			lastNonUser = e
		}
	}
	if last == nil {
		return false
	}
	if last.ErrorCode != "" || lastNonUser != nil && lastNonUser.ErrorCode != "" {
		return true
	}
	return lastNonUser == nil || !lastNonUser.Final
}

// buildWindow makes the marker and the summarizer input of a selection.
func buildWindow(events []compaction.Event, p *plan, w windowParams, newly []int, invocations, keep int) *window {
	live := p.live[w.scope]
	m := &compaction.Marker{Scope: w.scope, Seq: 1, Trigger: w.trigger, KeepInvocations: keep, Version: record.Version}
	if live.m != nil {
		m.Seq = live.m.Seq + 1
		m.Previous = live.id
		m.EventCount, m.Invocations = live.m.EventCount, live.m.Invocations
		m.StartTimestamp, m.EndTimestamp = live.m.StartTimestamp, live.m.EndTimestamp
		m.FirstEventID, m.FirstInvocationID = live.m.FirstEventID, live.m.FirstInvocationID
	}
	win := &window{m: m, covered: newly}
	for _, i := range newly {
		e := &events[i]
		m.EventIDs = append(m.EventIDs, e.ID)
		// The range is informative (coverage is by id): an event without a usable timestamp
		// (zero, before 1970) is left out of it rather than making the marker invalid.
		if ts := record.Seconds(e.Timestamp); ts > 0 && ts <= record.MaxSeconds {
			if m.StartTimestamp == 0 || ts < m.StartTimestamp {
				m.StartTimestamp = ts
			}
			m.EndTimestamp = max(m.EndTimestamp, ts)
		}
		if m.FirstEventID == "" {
			m.FirstEventID, m.FirstInvocationID = e.ID, e.InvocationID
		}
		m.LastEventID, m.LastInvocationID = e.ID, e.InvocationID
		win.input.Events = append(win.input.Events, *e)
		win.original += budget.EstimateContent(e.Content)
	}
	m.EventCount += len(newly)
	m.Invocations += invocations
	if live.m != nil && live.summary != nil {
		win.input.Previous, win.input.PreviousSummarizer = live.summary, live.m.Summarizer
		win.original += budget.EstimateContent(summaryContent(live.summary))
	}
	win.input.Context = overlapEvents(events, p, w)
	delta := compaction.NewLedgerDelta(win.input.Events, invocations)
	win.input.Ledger = live.ledger.Apply(delta)
	// The ledger is stored whole every ledgerSnapshotEvery markers; in between, what this one
	// adds to the ledger of the marker it rolls up (resolved above: its chain is in events).
	switch {
	case live.m == nil || (m.Seq-1)%ledgerSnapshotEvery == 0:
		m.Ledger = win.input.Ledger
	case live.m.Ledger != nil:
		m.LedgerDelta, m.LedgerFrom = delta, record.Seconds(events[live.at].Timestamp)
	default:
		m.LedgerDelta, m.LedgerFrom = delta, live.m.LedgerFrom
	}
	// The whole ledger is stored instead of the delta when the marker holding the ledger it
	// continues has no usable timestamp, or when the delta is the larger record: the ledger keeps
	// bounded entries, a delta every step it covers (the first compaction of a long session written
	// without adkctx, a sliding window over turns of hundreds of tool calls), so the record stays
	// within the ledger's bounds. Both resolve to the same ledger.
	if m.LedgerDelta != nil && (m.LedgerFrom <= 0 || !encodesSmaller(m.LedgerDelta, win.input.Ledger)) {
		m.Ledger, m.LedgerDelta, m.LedgerFrom = win.input.Ledger, nil, 0
	}
	return win
}

// encodesSmaller reports whether delta's stored form is smaller than the whole ledger's (false
// when either cannot be encoded: the whole ledger is then stored, and its encoding checked).
func encodesSmaller(delta *compaction.LedgerDelta, whole *compaction.Ledger) bool {
	d, err := json.Marshal(delta)
	if err != nil {
		return false
	}
	w, err := json.Marshal(whole)
	return err == nil && len(d) < len(w)
}

// overlapEvents returns the events of the last ω invocations already covered in scope, raw, for
// the summarizer's continuity.
func overlapEvents(events []compaction.Event, p *plan, w windowParams) []compaction.Event {
	if w.overlap <= 0 {
		return nil
	}
	var invs []string
	for i := len(events) - 1; i >= 0 && len(invs) <= w.overlap; i-- {
		e := &events[i]
		if p.covered[i] && e.Scope == w.scope && e.InvocationID != "" && !slices.Contains(invs, e.InvocationID) {
			invs = append(invs, e.InvocationID)
		}
	}
	if len(invs) > w.overlap {
		invs = invs[:w.overlap]
	}
	var out []compaction.Event
	for i := range events {
		if p.covered[i] && events[i].Scope == w.scope && slices.Contains(invs, events[i].InvocationID) {
			out = append(out, events[i])
		}
	}
	return out
}
