package plan

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"

	. "github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/processors/request"
)

// fuzzAgent scripts a coding session from fuzz bytes: invocations of calls and responses of every
// kind the pairing knows (with and without ids, parallel, long-running answered later by the
// client, confirmations answered later, never answered), some failing, with compactions after
// and inside invocations.
type fuzzAgent struct {
	r     *fuzzReader
	store *memStore
	c     *testCompactor
	n     int
	// pending client answers: events the client sends at the start of a later invocation.
	later [][]Event
	// open long-running calls and confirmation requests: event ids that must stay raw.
	openLR   map[string]bool // call event id → still unanswered by the client
	openConf map[string]bool // request event id → unconfirmed
}

func (a *fuzzAgent) id(s string) string {
	a.n++
	return fmt.Sprintf("%s-%d", s, a.n)
}

// invocation appends invocation k; it returns the compaction requests to run after it.
func (a *fuzzAgent) invocation(t *testing.T, k int) {
	inv := fmt.Sprintf("i%d", k)
	evs := []Event{userEv(a.id("u"), inv, fmt.Sprintf("Step %d, please.", k))}
	if len(a.later) > 0 && a.r.intn(2) == 0 {
		ans := a.later[0]
		a.later = a.later[1:]
		for _, e := range ans {
			e.InvocationID = inv
			evs = append(evs, e)
			if lr, ok := e.Metadata["_lr"].(string); ok {
				delete(a.openLR, lr)
			}
			if rq, ok := e.Metadata["_conf"].(string); ok {
				delete(a.openConf, rq)
			}
		}
	}
	a.store.add(evs...)
	for s, steps := 0, a.r.intn(4); s < steps; s++ {
		cid := a.id("call")
		switch a.r.intn(7) {
		case 0, 1: // a call and its response
			a.store.add(callEv(a.id("c"), inv, cid, "read_file", map[string]any{"path": fmt.Sprintf("f%d.go", a.r.intn(5))}),
				respEv(a.id("r"), inv, cid, "read_file", nil))
		case 2: // id-less calls, answered in order
			a.store.add(callsEv(a.id("c"), inv, &genai.FunctionCall{Name: "grep"}, &genai.FunctionCall{Name: "grep"}),
				respEv(a.id("r"), inv, "", "grep", nil), respEv(a.id("r"), inv, "", "grep", nil))
		case 3: // parallel calls; a token compaction may come between the responses
			c2 := a.id("call")
			a.store.add(callsEv(a.id("c"), inv, &genai.FunctionCall{ID: cid, Name: "read_file"}, &genai.FunctionCall{ID: c2, Name: "list_dir"}),
				respEv(a.id("r"), inv, cid, "read_file", nil))
			a.maybeLiveCompaction(t, inv)
			a.store.add(respEv(a.id("r"), inv, c2, "list_dir", nil))
		case 4: // long-running: the tool answers "pending" at once, the client later
			call := lrCallEv(a.id("c"), inv, cid, "approve")
			a.openLR[call.ID] = true
			a.store.add(call, respEv(a.id("r"), inv, cid, "approve", map[string]any{"status": "pending"}))
			ans := clientRespEv(a.id("a"), "", cid, "approve", map[string]any{"status": "approved"})
			ans.Metadata = map[string]any{"_lr": call.ID}
			a.later = append(a.later, []Event{ans})
		case 5: // a confirmation, answered later
			conf := a.id("conf")
			req := respEv(a.id("q"), inv, cid, "delete_file", map[string]any{"error": "requires confirmation"})
			req.ConfirmationIDs = []string{cid}
			a.openConf[req.ID] = true
			a.store.add(callEv(a.id("c"), inv, cid, "delete_file", map[string]any{"path": "old.log"}), req,
				callEv(a.id("k"), inv, conf, confirmationCallName, map[string]any{"originalFunctionCall": map[string]any{"id": cid}}))
			ans := clientRespEv(a.id("a"), "", conf, confirmationCallName, map[string]any{"confirmed": true})
			ans.Metadata = map[string]any{"_conf": req.ID}
			a.later = append(a.later, []Event{ans, respEv(a.id("r"), "", cid, "delete_file", map[string]any{"deleted": true})})
		default: // a call never answered (plain history once its invocation ends)
			a.store.add(callEv(a.id("c"), inv, cid, "build", nil))
		}
		a.maybeLiveCompaction(t, inv)
	}
	switch a.r.intn(8) {
	case 0:
		a.store.add(Event{ID: a.id("err"), InvocationID: inv, Author: "agent", ErrorCode: "500", Final: true})
	case 1: // no final answer
	default:
		a.store.add(modelEv(a.id("m"), inv, fmt.Sprintf("Step %d done.", k)))
	}
	switch a.r.intn(4) {
	case 0, 1, 2:
		a.compact(t, Selection{Trigger: TriggerInvocations, Invocation: inv}, inv)
	default:
		a.compact(t, Selection{Trigger: TriggerManual, Invocation: inv}, inv)
	}
}

func (a *fuzzAgent) maybeLiveCompaction(t *testing.T, inv string) {
	if a.r.intn(3) == 0 {
		a.compact(t, Selection{Trigger: TriggerTokens, Invocation: inv, Live: true, TokenLimit: 100 + 10*a.r.next()}, inv)
	}
}

// compact runs r and checks the session's invariants.
func (a *fuzzAgent) compact(t *testing.T, r Selection, inv string) {
	t.Helper()
	// The request the model was last sent: the view, as adk-go sends it.
	before := a.store.snapshot()
	var shown []Item // the items the request shows, one per content
	last := &request.LLMRequest{Model: "gemini-2.5-flash"}
	r.Sent = []*request.LLMRequest{last}
	for _, it := range NewViewer(nil).View(before) {
		c := it.Summary
		switch {
		case c == nil && it.Content != nil:
			c = it.Content
		case c == nil:
			c = before[it.Index].Content
		}
		if c == nil || len(c.Parts) == 0 {
			continue // adk-go sends nothing for it
		}
		shown = append(shown, it)
		last.Contents = append(last.Contents, sentContent(c))
	}
	m, err := a.c.Compact(context.Background(), r)
	if err != nil {
		t.Fatalf("Compact(%s, %s): %v", r.Trigger, inv, err)
	}
	if m != nil {
		checkPrefix(t, a.c.cfg.Summarizer.(*recorder).last(t).Prefix, last, before, shown, m)
	}
	events := a.store.snapshot()
	p := NewViewer(nil).plan(events)
	// A call and everything paired with it are covered together or not at all.
	pr := pairCalls(events, "", false, "")
	for i, links := range pr.links {
		for _, j := range links {
			if p.covered[i] != p.covered[j] {
				t.Fatalf("after %s compaction at %s: %s covered=%v but its pair %s covered=%v",
					r.Trigger, inv, events[i].ID, p.covered[i], events[j].ID, p.covered[j])
			}
		}
	}
	// Pending calls stay raw.
	for i := range events {
		if p.covered[i] && (a.openLR[events[i].ID] || a.openConf[events[i].ID]) {
			t.Fatalf("after %s compaction at %s: pending %s covered", r.Trigger, inv, events[i].ID)
		}
	}
	assertNoRepeatedRange(t, events)
	if m == nil {
		return
	}
	// Excerpts: raw events with tool results, of invocations that ended, never the invocation
	// that triggered a live compaction; the excerpt keeps its call's id and name.
	byID := map[string]int{}
	for i := range events {
		byID[events[i].ID] = i
	}
	items := NewViewer(nil).View(events)
	previous := newestAnswered(events)
	for _, id := range m.ExcerptedEventIDs {
		i, ok := byID[id]
		switch {
		case !ok || p.covered[i] || !hasFunctionResponse(&events[i]):
			t.Fatalf("after %s compaction at %s: excerpt of %s, which is not a raw tool result", r.Trigger, inv, id)
		case r.Live && events[i].InvocationID == inv:
			t.Fatalf("after a live compaction at %s: %s of the running invocation excerpted", inv, id)
		case events[i].InvocationID == previous:
			t.Fatalf("after %s compaction at %s: %s of %s, the newest invocation the model answered (the next request's previous turn), excerpted", r.Trigger, inv, id, previous)
		}
		answered := false
		for j := i + 1; j < len(events) && !answered; j++ {
			e := &events[j]
			answered = e.InvocationID == events[i].InvocationID && e.Author != "user" && e.Content != nil &&
				e.Content.Role == genai.RoleModel && textOf(e.Content) != "" && !hasFunctionResponse(e)
		}
		if !answered {
			t.Fatalf("after %s compaction at %s: %s excerpted though no answer of the model follows it", r.Trigger, inv, id)
		}
	}
	for _, it := range items {
		if it.Content == nil {
			continue
		}
		orig := events[it.Index].Content
		if len(it.Content.Parts) != len(orig.Parts) {
			t.Fatalf("after %s compaction at %s: the excerpt of %s has %d parts, the event %d", r.Trigger, inv, events[it.Index].ID, len(it.Content.Parts), len(orig.Parts))
		}
		for k, part := range it.Content.Parts {
			if fr, o := part.FunctionResponse, orig.Parts[k].FunctionResponse; (fr == nil) != (o == nil) || fr != nil && (fr.ID != o.ID || fr.Name != o.Name) {
				t.Fatalf("after %s compaction at %s: the excerpt of %s changed its pairing", r.Trigger, inv, events[it.Index].ID)
			}
		}
	}
	// The newest invocation's user message stays raw; a sliding window keeps R whole
	// invocations.
	groups := invocationGroups(events, p, "")
	if len(groups) == 0 {
		t.Fatalf("after %s compaction at %s: nothing left raw", r.Trigger, inv)
	}
	for i := range events {
		if events[i].InvocationID == inv && isUser(&events[i]) && textOf(events[i].Content) != "" && p.covered[i] {
			t.Fatalf("after %s compaction at %s: the newest user message %s was covered", r.Trigger, inv, events[i].ID)
		}
	}
	if r.Trigger == TriggerInvocations {
		keep := map[string]bool{}
		for _, g := range groups[max(len(groups)-WithDefaults(a.c.cfg).RetainRecentInvocations, 0):] {
			keep[g.inv] = true
		}
		for i := range events {
			if p.covered[i] && keep[events[i].InvocationID] {
				t.Fatalf("after a sliding compaction at %s: %s of a retained invocation covered", inv, events[i].ID)
			}
		}
	}
	// Every invocation with covered events is counted once.
	withContent, covered := map[string]bool{}, map[string]bool{}
	for i := range events {
		if hasContent(&events[i]) {
			withContent[events[i].InvocationID] = true
		}
		if p.covered[i] && events[i].InvocationID != "" {
			covered[events[i].InvocationID] = true
		}
	}
	invocations := 0
	for inv := range covered {
		if withContent[inv] {
			invocations++
		}
	}
	if m.Invocations != invocations || m.Ledger.Invocations != invocations {
		t.Fatalf("after %s compaction at %s: marker counts %d invocations, ledger %d, truth %d",
			r.Trigger, inv, m.Invocations, m.Ledger.Invocations, invocations)
	}
	// The ledger counts every covered call exactly once.
	tools := toolCounts(coveredEvents(events))
	if diff := cmp.Diff(tools, m.Ledger.Tools, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("after %s compaction at %s: ledger tool counts (-truth +ledger):\n%s", r.Trigger, inv, diff)
	}
}

// checkPrefix checks the prefix a summarizer got (nil: none) against the request it was cut
// from (req, built from the view shown of before): it is the request's first contents, shows
// every event m newly covers that the request showed, and ends with one of them.
func checkPrefix(t *testing.T, prefix, req *request.LLMRequest, before []Event, shown []Item, m *Marker) {
	t.Helper()
	if prefix == nil {
		return
	}
	n := len(prefix.Contents)
	if n == 0 || n > len(req.Contents) {
		t.Fatalf("prefix of %d contents from a request of %d", n, len(req.Contents))
	}
	for i := range n {
		if prefix.Contents[i] != req.Contents[i] {
			t.Fatalf("prefix content %d is not the request's", i)
		}
	}
	newly := map[string]bool{}
	for _, id := range m.EventIDs {
		newly[id] = true
	}
	isNew := func(it Item) bool { return it.Summary == nil && newly[before[it.Index].ID] }
	for i, it := range shown {
		if i >= n && isNew(it) {
			t.Fatalf("prefix of %d contents leaves out covered event %s (content %d)", n, before[it.Index].ID, i)
		}
	}
	if !isNew(shown[n-1]) {
		t.Fatalf("prefix of %d contents ends with content that shows no newly covered event", n)
	}
}

// FuzzCompactWindow drives a scripted session through sliding, token (mid-invocation) and manual
// compactions and checks after each one: pairs are covered together, pending calls stay raw, no
// event is summarized twice, the newest user message and the R newest invocations stay raw, the
// ledger's counts are exact.
func FuzzCompactWindow(f *testing.F) {
	for _, s := range []string{"", "\x01\x02\x03\x04\x05\x06\x07", "\x00\x03\x04\x04\x05\x05\x03\x00\x02\x01\x00",
		"\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x00\x00\x00\x00\x00\x00",
		"\x02\x00\x04\x00\x00\x05\x01\x00\x01\x01\x02\x00\x03\x00\x00\x01\x00\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"} {
		f.Add(uint8(1), uint8(1), []byte(s))
		f.Add(uint8(2), uint8(2), []byte(s))
	}
	f.Fuzz(func(t *testing.T, interval, retain uint8, data []byte) {
		store := newStore()
		c, _ := newCompactor(t, Config{Interval: 1 + int(interval%4), RetainRecentInvocations: 1 + int(retain%3), Summarizer: &recorder{text: "S"}}, store)
		a := &fuzzAgent{r: &fuzzReader{data: data}, store: store, c: c, openLR: map[string]bool{}, openConf: map[string]bool{}}
		for k := 1; k <= 12; k++ {
			a.invocation(t, k)
		}
	})
}

// newestAnswered is the newest invocation whose last event with content is an answer of the
// model (text, no call or result): the previous turn of the next request.
func newestAnswered(events []Event) string {
	newest := ""
	last := map[string]*Event{}
	var order []string
	for i := range events {
		e := &events[i]
		if e.Content == nil || len(e.Content.Parts) == 0 {
			continue
		}
		if _, seen := last[e.InvocationID]; !seen {
			order = append(order, e.InvocationID)
		}
		last[e.InvocationID] = e
	}
	for _, inv := range order {
		e := last[inv]
		if e.Author != "user" && e.Content.Role == genai.RoleModel && isAnswer(e.Content) {
			newest = inv
		}
	}
	return newest
}
