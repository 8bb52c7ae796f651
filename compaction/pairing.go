package compaction

import (
	"slices"

	"google.golang.org/genai"
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
func pairCalls(events []Event, scope string, live bool, running string) pairing {
	pr := pairing{links: map[int][]int{}, pending: map[int]bool{}}
	type call struct {
		pos                    int
		id                     string
		answered, userAnswered bool
	}
	var calls []*call
	byID := map[string]*call{}
	idless := map[string][]*call{}
	lastResp := map[string]int{}
	confOrig := map[string]string{}   // confirmation call id → original call id
	confCalls := map[string][]int{}   // original call id → positions of confirmation calls
	confAnswered := map[string]bool{} // original call id → answered
	type request struct {
		pos int
		id  string
	}
	var requests []request
	tasks := map[string]bool{} // isolation scopes of the session: adk-go v2 names a task's scope by its call id
	for i := range events {
		e := &events[i]
		if e.Scope != "" {
			tasks[e.Scope] = true
		}
		if e.Scope != scope || e.isMarkerOnly() {
			continue
		}
		var parts []*genai.Part
		if e.Content != nil {
			parts = e.Content.Parts
		}
		for _, part := range parts {
			if part == nil {
				continue
			}
			if fc := part.FunctionCall; fc != nil {
				c := &call{pos: i, id: fc.ID}
				calls = append(calls, c)
				if fc.ID == "" {
					idless[fc.Name] = append(idless[fc.Name], c)
				} else if _, dup := byID[fc.ID]; !dup {
					byID[fc.ID] = c
				}
				if orig := originalCallID(fc); fc.Name == confirmationCallName && orig != "" {
					confCalls[orig] = append(confCalls[orig], i)
					if fc.ID != "" {
						confOrig[fc.ID] = orig
					}
				}
			}
			if fr := part.FunctionResponse; fr != nil {
				if fr.ID == "" {
					if q := idless[fr.Name]; len(q) > 0 {
						q[0].answered = true
						pr.link(q[0].pos, i)
						idless[fr.Name] = q[1:]
					}
					continue
				}
				if c, ok := byID[fr.ID]; ok {
					c.answered = true
					c.userAnswered = c.userAnswered || e.Author == "user"
					pr.link(c.pos, i)
				}
				lastResp[fr.ID] = i
				if orig, ok := confOrig[fr.ID]; ok && fr.Name == confirmationCallName {
					confAnswered[orig] = true
				}
			}
		}
		for _, id := range e.ConfirmationIDs {
			requests = append(requests, request{pos: i, id: id})
		}
	}
	for _, c := range calls {
		e := &events[c.pos]
		switch {
		case c.id != "" && slices.Contains(e.LongRunningToolIDs, c.id):
			if !c.userAnswered {
				pr.pending[c.pos] = true
			}
		case !c.answered && live && e.InvocationID == running:
			pr.pending[c.pos] = true
		case !c.answered && c.id != "" && tasks[c.id]:
			// An open task: adk-go v2 finds it again (and its input) through this call.
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
		if !confAnswered[r.id] && lastResp[r.id] <= r.pos {
			pr.pending[r.pos] = true
		}
	}
	return pr
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
