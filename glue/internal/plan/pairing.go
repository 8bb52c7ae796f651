package plan

import (
	"slices"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
)

// confirmationCallName is the function call adk-go emits to ask a client to confirm a tool call
// (adk-go's toolconfirmation.FunctionCallName, the same in v1 and v2).
const confirmationCallName = "adk_request_confirmation"

// pairing links the positions of events whose calls and responses belong together and marks
// the positions holding a pending call.
type pairing struct {
	links   map[int][]int
	pending map[int]bool
}

func (p *pairing) link(a, b int) {
	if a != b {
		p.links[a] = append(p.links[a], b)
		p.links[b] = append(p.links[b], a)
	}
}

// pairCalls pairs function calls with their responses among the events of scope: by id, and by
// name and order for id-less calls. A call is pending when it is long-running and the client
// (author "user") has not answered it yet — a long-running tool answers "pending" itself at once
// — or when it has no response and belongs to the running invocation, which may still be
// running (live), or when it has no response and its id names an isolation scope of the session
// (adk-go v2 runs a delegated task in the scope named by the delegating call's id, and resumes
// the task, with that call's arguments as its input, until the call is answered). A requested tool confirmation is pending until answered; its request is
// linked to the original call and to the confirmation call.
func pairCalls(events []compaction.Event, scope string, live bool, running string) pairing {
	p := &pairer{pairing: pairing{links: map[int][]int{}, pending: map[int]bool{}},
		byID: map[string]*pairedCall{}, idless: map[string][]*pairedCall{}, lastResp: map[string]int{},
		confOrig: map[string]string{}, confCalls: map[string][]int{}, confAnswered: map[string]bool{}, tasks: map[string]bool{}}
	for i := range events {
		e := &events[i]
		if e.Scope != "" {
			p.tasks[e.Scope] = true
		}
		if e.Scope != scope || isMarkerOnly(e) {
			continue
		}
		if e.Content != nil {
			for _, part := range e.Content.Parts {
				if part == nil {
					continue
				}
				if fc := part.FunctionCall; fc != nil {
					p.call(fc, i)
				}
				if fr := part.FunctionResponse; fr != nil {
					p.response(fr, e, i)
				}
			}
		}
		p.requestsOf(e, i)
	}
	p.markPending(events, live, running)
	return p.pairing
}

// pairedCall is one function call seen by a pairer.
type pairedCall struct {
	pos                    int
	id                     string
	answered, userAnswered bool
}

// confirmationRequest is a tool confirmation an event requests.
type confirmationRequest struct {
	pos int
	id  string
}

// pairer is the state of one pairCalls scan.
type pairer struct {
	pairing
	calls        []*pairedCall
	byID         map[string]*pairedCall
	idless       map[string][]*pairedCall // by name, unanswered, in order
	lastResp     map[string]int           // call id → position of its last response
	confOrig     map[string]string        // confirmation call id → original call id
	confCalls    map[string][]int         // original call id → positions of confirmation calls
	confAnswered map[string]bool          // original call id → answered
	requests     []confirmationRequest
	tasks        map[string]bool // isolation scopes of the session: adk-go v2 names a task's scope by its call id
}

// call records a call at pos (and, for a confirmation call, the call it wraps).
func (p *pairer) call(fc *genai.FunctionCall, pos int) {
	c := &pairedCall{pos: pos, id: fc.ID}
	p.calls = append(p.calls, c)
	if fc.ID == "" {
		p.idless[fc.Name] = append(p.idless[fc.Name], c)
	} else if _, dup := p.byID[fc.ID]; !dup {
		p.byID[fc.ID] = c
	}
	if orig := originalCallID(fc); fc.Name == confirmationCallName && orig != "" {
		p.confCalls[orig] = append(p.confCalls[orig], pos)
		if fc.ID != "" {
			p.confOrig[fc.ID] = orig
		}
	}
}

// response pairs a response at pos with its call: by id, or by name and order when id-less.
func (p *pairer) response(fr *genai.FunctionResponse, e *compaction.Event, pos int) {
	if fr.ID == "" {
		if q := p.idless[fr.Name]; len(q) > 0 {
			q[0].answered = true
			p.link(q[0].pos, pos)
			p.idless[fr.Name] = q[1:]
		}
		return
	}
	if c, ok := p.byID[fr.ID]; ok {
		c.answered = true
		c.userAnswered = c.userAnswered || e.Author == "user"
		p.link(c.pos, pos)
	}
	p.lastResp[fr.ID] = pos
	if orig, ok := p.confOrig[fr.ID]; ok && fr.Name == confirmationCallName {
		p.confAnswered[orig] = true
	}
}

// requestsOf records the tool confirmations e requests.
func (p *pairer) requestsOf(e *compaction.Event, pos int) {
	for _, id := range e.ConfirmationIDs {
		p.requests = append(p.requests, confirmationRequest{pos: pos, id: id})
	}
}

// markPending marks the pending calls and confirmation requests, and links each request to its
// original call and confirmation calls.
func (p *pairer) markPending(events []compaction.Event, live bool, running string) {
	for _, c := range p.calls {
		e := &events[c.pos]
		switch {
		case c.id != "" && slices.Contains(e.LongRunningToolIDs, c.id):
			if !c.userAnswered {
				p.pending[c.pos] = true
			}
		case !c.answered && live && e.InvocationID == running:
			p.pending[c.pos] = true
		case !c.answered && c.id != "" && p.tasks[c.id]:
			// An open task: adk-go v2 finds it again (and its input) through this call.
			p.pending[c.pos] = true
		}
	}
	for _, r := range p.requests {
		if c, ok := p.byID[r.id]; ok {
			p.link(c.pos, r.pos)
		}
		for _, cp := range p.confCalls[r.id] {
			p.link(r.pos, cp)
		}
		if !p.confAnswered[r.id] && p.lastResp[r.id] <= r.pos {
			p.pending[r.pos] = true
		}
	}
}

// originalCallID returns the id of the call a confirmation call wraps ("" if none): the args hold
// it as *genai.FunctionCall in memory and as a map after a database round trip.
func originalCallID(fc *genai.FunctionCall) string {
	switch v := fc.Args["originalFunctionCall"].(type) {
	case *genai.FunctionCall:
		if v != nil {
			return v.ID
		}
	case genai.FunctionCall:
		return v.ID
	case map[string]any:
		id, _ := v["id"].(string)
		return id
	}
	return ""
}
