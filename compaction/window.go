package compaction

import (
	"slices"

	"github.com/adkctx/adkctx/budget"
	"go.uber.org/zap"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"
)

// windowParams are the resolved inputs of a window selection.
type windowParams struct {
	trigger      Trigger
	interval     int // θ ≥ 1
	overlap      int // ω ≥ 0
	retainTokens int // resolved retention in tokens (0 = events only)
	retainEvents int
	tokenLimit   int // 0 = off
	// live is true when the invocation `running` is still in progress
	// (mid-invocation compaction): its unanswered calls are pending and it
	// is not counted as a completed invocation.
	live    bool
	running string // invocation in progress or just finished ("" = last event's)
}

// window is one selected compaction: the range (in m's range fields), the
// summarizer input and bookkeeping for the conflict check and the log.
type window struct {
	m       *Marker      // range fields set; content and tokens not yet
	input   SummaryInput // previous summary + raw events to summarize
	trigger Trigger      // effective trigger (invocations may become tokens)
	cut     int          // raw position of the last in-range event
	// covered are the events the marker covers; newlyCovered those of them
	// that were raw in the view before.
	covered      map[*session.Event]bool
	newlyCovered int
	// originalTokens estimates what the covered part weighs in the view
	// now (previous summaries included).
	originalTokens int
	invocations    int // completed invocations counted (sliding window)
	runningInv     string
	lastStreamTS   int64 // max µs timestamp in the snapshot
}

// Reasons a selection returns when there is nothing to do (log values).
const (
	reasonEmpty          = "empty_session"
	reasonFailed         = "failed_invocation"
	reasonBelowInterval  = "below_interval"
	reasonNothingNew     = "nothing_new"
	reasonEverythingTail = "everything_retained"
)

// selectWindow decides what to compact in raw (a session's stored events in
// stream order, markers included). It is a pure function of its inputs. It
// returns nil and a reason when there is nothing to do.
//
// Every selection is a roll-up: the range starts at the first event of the
// session and ends at the cut, so the new marker subsumes every live marker
// and at most one summary is live. The trigger only decides the cut:
//   - invocations: once ≥ θ completed invocations are uncovered, the cut is
//     the end of the θ-th of them (oldest first); ω earlier invocations are
//     given to the summarizer again for continuity. With a token limit the
//     cut never enters the token retention tail (the strategies compose).
//   - tokens / manual: everything but the retention tail (newest events
//     summing ≤ retainTokens, at least retainEvents events).
//
// Never split: a call and its response are covered together or not at all;
// pending calls (long-running without response, unanswered tool
// confirmations, unanswered calls of the live invocation) stay raw via
// ExcludedEventIDs (with everything paired to them); an orphaned call of a
// finished invocation is plain history and is covered.
func selectWindow(raw []*session.Event, p windowParams, logger *zap.Logger) (*window, string) {
	if logger == nil {
		logger = zap.NewNop()
	}
	posOf := make(map[*session.Event]int, len(raw))
	var nonMarker []int
	var lastTS int64
	for i, e := range raw {
		if e == nil {
			continue
		}
		posOf[e] = i
		if ts := e.Timestamp.UnixMicro(); ts > lastTS {
			lastTS = ts
		}
		if !IsCompactionEvent(e) {
			nonMarker = append(nonMarker, i)
		}
	}
	if len(nonMarker) == 0 {
		return nil, reasonEmpty
	}
	running := p.running
	if running == "" {
		running = raw[nonMarker[len(nonMarker)-1]].InvocationID
	}
	trigger := p.trigger
	if trigger == "" {
		trigger = TriggerInvocations
	}
	if trigger == TriggerInvocations && !p.live && invocationFailed(raw, running) {
		return nil, reasonFailed
	}

	view := View(raw, logger)
	inView := make(map[*session.Event]bool, len(view))
	var summaries []*session.Event
	for _, e := range view {
		if IsSummaryEvent(e) {
			summaries = append(summaries, e)
			continue
		}
		inView[e] = true
	}
	// hiddenMax: the last position covered by a live marker; the roll-up
	// must reach at least there so it subsumes every live marker.
	hiddenMax := -1
	for _, i := range nonMarker {
		if !inView[raw[i]] {
			hiddenMax = i
		}
	}
	if trigger == TriggerInvocations && p.tokenLimit > 0 && estimateEvents(view) >= p.tokenLimit {
		trigger = TriggerTokens
	}

	// Unanswered calls of the running invocation are pending when it may
	// still be running: a live compaction, or a token/manual one made
	// without knowing (after an invocation, its orphans are history).
	pr := pairCalls(raw, p.live || p.trigger == TriggerTokens || p.trigger == TriggerManual, running)

	w := &window{trigger: trigger, runningInv: running, lastStreamTS: lastTS}
	cut := -1
	var overlapEvents []*session.Event
	switch trigger {
	case TriggerTokens, TriggerManual:
		tail := retentionStart(view, p.retainTokens, p.retainEvents)
		if tail == 0 {
			return nil, reasonEverythingTail
		}
		if tail == len(view) {
			cut = nonMarker[len(nonMarker)-1]
		} else {
			cut = posOf[view[tail]] - 1
		}
	default: // invocations
		// Events the live (newest valid) marker left raw on purpose: a
		// roll-up recomputes exclusions, so older markers do not matter.
		oldExcluded := map[string]bool{}
		for k := len(raw) - 1; k >= 0; k-- {
			if !IsCompactionEvent(raw[k]) {
				continue
			}
			if m, err := ReadMarker(raw[k]); err == nil {
				for _, id := range m.ExcludedEventIDs {
					oldExcluded[id] = true
				}
				break
			}
		}
		var invs []string
		seen := map[string]bool{}
		firstPos := map[string]int{}
		for _, e := range view {
			if !inView[e] || pr.pending[posOf[e]] || (e.ID != "" && oldExcluded[e.ID]) {
				continue
			}
			inv := e.InvocationID
			if p.live && inv == running {
				continue
			}
			if !seen[inv] {
				seen[inv] = true
				invs = append(invs, inv)
				firstPos[inv] = posOf[e]
			}
		}
		lastPos := map[string]int{}
		for _, i := range nonMarker {
			lastPos[raw[i].InvocationID] = i
		}
		// With a token limit the strategies compose: only invocations that
		// ended before the token retention tail count, so a sliding-window
		// compaction moves the cut by θ invocations beyond the tail (and
		// never cuts into it) instead of running after every invocation.
		tailPos := len(raw)
		if p.tokenLimit > 0 {
			if tail := retentionStart(view, p.retainTokens, p.retainEvents); tail < len(view) {
				tailPos = posOf[view[tail]]
			}
			eligible := invs[:0:0]
			for _, inv := range invs {
				if lastPos[inv] < tailPos {
					eligible = append(eligible, inv)
				}
			}
			invs = eligible
		}
		w.invocations = len(invs)
		if len(invs) < p.interval {
			return nil, reasonBelowInterval
		}
		cut = min(lastPos[invs[p.interval-1]], tailPos-1)
		// ω invocations just before the first uncovered one, raw.
		if p.overlap > 0 {
			start := firstPos[invs[0]]
			var ovInvs []string
			for k := len(nonMarker) - 1; k >= 0 && len(ovInvs) < p.overlap; k-- {
				i := nonMarker[k]
				if i >= start {
					continue
				}
				inv := raw[i].InvocationID
				if !slices.Contains(ovInvs, inv) && !seen[inv] {
					ovInvs = append(ovInvs, inv)
				}
			}
			for _, i := range nonMarker {
				if i < start && slices.Contains(ovInvs, raw[i].InvocationID) && !inView[raw[i]] {
					overlapEvents = append(overlapEvents, raw[i])
				}
			}
		}
	}
	cut = max(cut, hiddenMax)
	if cut < 0 {
		return nil, reasonNothingNew
	}

	// Events that must stay raw: pending ones, and everything paired with
	// an event beyond the cut or with another must-stay-raw event. Only
	// events raw in the view now qualify: what a live marker already hides
	// stays hidden, so the roll-up always subsumes the live marker (one
	// summary live).
	mustRaw := map[int]bool{}
	var queue []int
	for _, i := range nonMarker {
		if i > cut {
			break
		}
		if !inView[raw[i]] {
			continue
		}
		seed := pr.pending[i]
		for _, j := range pr.links[i] {
			if j > cut {
				seed = true
			}
		}
		if seed && !mustRaw[i] {
			mustRaw[i] = true
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, j := range pr.links[i] {
			if j <= cut && !mustRaw[j] && inView[raw[j]] {
				mustRaw[j] = true
				queue = append(queue, j)
			}
		}
	}

	// Must-stay-raw events after the last covered one need no listing.
	for cut >= 0 && (IsCompactionEvent(raw[cut]) || mustRaw[cut]) {
		cut--
	}
	if cut < 0 {
		return nil, reasonNothingNew
	}
	m := &Marker{}
	n := m.SetRange(raw, 0, cut, func(e *session.Event) bool { return mustRaw[posOf[e]] })
	if n == 0 {
		return nil, reasonNothingNew
	}
	w.m, w.cut = m, cut
	w.covered = make(map[*session.Event]bool, n)
	var newEvents []*session.Event
	for _, i := range nonMarker {
		if i > cut {
			break
		}
		if mustRaw[i] {
			continue
		}
		e := raw[i]
		w.covered[e] = true
		if inView[e] {
			newEvents = append(newEvents, e)
			w.originalTokens += budget.EstimateContent(e.Content)
		}
	}
	w.newlyCovered = len(newEvents)
	if w.newlyCovered == 0 {
		return nil, reasonNothingNew
	}
	var prevParts []*genai.Part
	for _, s := range summaries {
		w.originalTokens += budget.EstimateContent(s.Content)
		for _, part := range s.Content.Parts {
			if part != nil && !part.Thought {
				cp := *part
				prevParts = append(prevParts, &cp)
			}
		}
	}
	if len(prevParts) > 0 {
		w.input.Previous = &genai.Content{Role: genai.RoleUser, Parts: prevParts}
	}
	for _, e := range overlapEvents {
		if !mustRaw[posOf[e]] {
			w.input.Events = append(w.input.Events, e)
		}
	}
	w.input.Events = append(w.input.Events, newEvents...)
	return w, ""
}

// estimateEvents estimates the contents of events (a view).
func estimateEvents(events []*session.Event) int {
	total := 0
	for _, e := range events {
		if e != nil {
			total += budget.EstimateContent(e.Content)
		}
	}
	return total
}

// retentionStart returns the index in view of the first event of the
// retention tail: the newest events whose estimated tokens sum ≤
// retainTokens, and at least retainEvents of them. The tail never includes
// a summary. len(view) means an empty tail.
func retentionStart(view []*session.Event, retainTokens, retainEvents int) int {
	sum, k := 0, 0
	j := len(view)
	for j > 0 {
		e := view[j-1]
		if IsSummaryEvent(e) {
			break
		}
		t := budget.EstimateContent(e.Content)
		if k < retainEvents || sum+t <= retainTokens {
			sum += t
			k++
			j--
			continue
		}
		break
	}
	return j
}

// invocationFailed reports whether invocation inv ended with an error or
// without a final response.
func invocationFailed(raw []*session.Event, inv string) bool {
	var last, lastNonUser *session.Event
	for _, e := range raw {
		if e == nil || IsCompactionEvent(e) || e.InvocationID != inv {
			continue
		}
		last = e
		if e.Author != "user" {
			lastNonUser = e
		}
	}
	if last == nil {
		return false // nothing to judge
	}
	if last.ErrorCode != "" || (lastNonUser != nil && lastNonUser.ErrorCode != "") {
		return true
	}
	return lastNonUser == nil || !lastNonUser.IsFinalResponse()
}

// pairing links events whose calls and responses belong together and marks
// the events holding a pending call.
type pairing struct {
	links   map[int][]int
	pending map[int]bool
}

func (p *pairing) link(a, b int) {
	if a == b {
		return
	}
	p.links[a] = append(p.links[a], b)
	p.links[b] = append(p.links[b], a)
}

// pairCalls pairs function calls with their responses over the whole
// stream: by id, and by name + order for id-less calls. A call is pending
// when it is long-running and the client (author "user") has not answered
// it yet (adk-go stores the tool's own interim "pending" response right
// away; the final one comes from the client, possibly invocations later),
// or when it has no response and belongs to the running invocation
// (live is true when that invocation may still be running). A requested tool
// confirmation is pending until answered; its request event is linked to the
// original call and to the adk_request_confirmation call.
func pairCalls(raw []*session.Event, live bool, running string) pairing {
	pr := pairing{links: map[int][]int{}, pending: map[int]bool{}}
	type call struct {
		pos      int
		id, name string
		answered bool
		// userAnswered: a response authored by the user (client) arrived.
		// A long-running tool answers "pending" itself right away; only
		// the client's response completes it.
		userAnswered bool
	}
	var calls []*call
	byID := map[string]*call{}
	idless := map[string][]*call{}
	lastRespPos := map[string]int{}
	confCallOrig := map[string]string{} // adk_request_confirmation call id → original call id
	confCalls := map[string][]int{}     // original call id → positions of confirmation calls
	confAnswered := map[string]bool{}   // original call id → user answered
	type rtc struct {
		pos int
		id  string
	}
	var requests []rtc

	for i, e := range raw {
		if e == nil || IsCompactionEvent(e) {
			continue
		}
		if e.Content != nil {
			for _, part := range e.Content.Parts {
				if part == nil {
					continue
				}
				if fc := part.FunctionCall; fc != nil {
					c := &call{pos: i, id: fc.ID, name: fc.Name}
					calls = append(calls, c)
					if fc.ID != "" {
						if _, dup := byID[fc.ID]; !dup {
							byID[fc.ID] = c
						}
					} else {
						idless[fc.Name] = append(idless[fc.Name], c)
					}
					if fc.Name == toolconfirmation.FunctionCallName {
						if orig, err := toolconfirmation.OriginalCallFrom(fc); err == nil && orig != nil && orig.ID != "" {
							confCalls[orig.ID] = append(confCalls[orig.ID], i)
							if fc.ID != "" {
								confCallOrig[fc.ID] = orig.ID
							}
						}
					}
				}
				if fr := part.FunctionResponse; fr != nil {
					if fr.ID != "" {
						if c, ok := byID[fr.ID]; ok {
							c.answered = true
							c.userAnswered = c.userAnswered || e.Author == "user"
							pr.link(c.pos, i)
						}
						lastRespPos[fr.ID] = i
						if orig, ok := confCallOrig[fr.ID]; ok && fr.Name == toolconfirmation.FunctionCallName {
							confAnswered[orig] = true
						}
					} else if q := idless[fr.Name]; len(q) > 0 {
						q[0].answered = true
						pr.link(q[0].pos, i)
						idless[fr.Name] = q[1:]
					}
				}
			}
		}
		for k := range e.Actions.RequestedToolConfirmations {
			requests = append(requests, rtc{pos: i, id: k})
		}
	}
	for _, c := range calls {
		e := raw[c.pos]
		switch {
		case c.id != "" && slices.Contains(e.LongRunningToolIDs, c.id):
			if !c.userAnswered {
				pr.pending[c.pos] = true
			}
		case !c.answered && live && e.InvocationID == running:
			pr.pending[c.pos] = true
		}
	}
	for _, r := range requests {
		if c, ok := byID[r.id]; ok {
			pr.link(c.pos, r.pos)
		}
		for _, cp := range confCalls[r.id] {
			pr.link(r.pos, cp)
		}
		if confAnswered[r.id] || lastRespPos[r.id] > r.pos {
			continue
		}
		pr.pending[r.pos] = true
	}
	return pr
}
