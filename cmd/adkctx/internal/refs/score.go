package refs

import (
	"strings"

	"google.golang.org/genai"
)

// Request is what a model was sent at one step, as far as scoring reads it.
type Request struct {
	// System is the system instruction's text.
	System string
	// Contents are the request's contents, as sent.
	Contents []*genai.Content
}

// SystemText returns the text parts of a system instruction, one per line.
func SystemText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			parts = append(parts, p.Text)
		}
	}
	return joinLines(parts)
}

// Text renders what a content shows the model: its text parts, and each call's and response's
// name, keys and values (keys sorted), one per line.
func Text(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	add := func(s string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		if p.Text != "" {
			add(p.Text)
		}
		if fc := p.FunctionCall; fc != nil {
			add(fc.Name)
			walk(fc.Args, add)
		}
		if fr := p.FunctionResponse; fr != nil {
			add(fr.Name)
			walk(fr.Response, add)
		}
	}
	return b.String()
}

// StepScore is what one request kept.
type StepScore struct {
	Refs, RefsKept   int
	Facts, FactsKept int
	// Head reports the task's head present (false when the plan has none).
	Head bool
	// Missed are the references the request did not hold, sorted.
	Missed []string
}

// Scorer scores the requests of one replay of a session. It remembers what it learned of each
// distinct content text, so a request costs the contents new since the previous one. It is not
// safe for concurrent use; use one per replay.
type Scorer struct {
	plan   *Plan
	texts  map[string]*textIndex
	factID map[string]int32
	// stamp[f] == gen marks fact f found in the request being scored.
	stamp []uint32
	gen   uint32
}

type textIndex struct {
	tokens map[string]struct{}
	// facts are the ids (indexes into Plan.Facts) of the facts the text holds.
	facts []int32
	head  bool
}

// NewScorer returns a scorer of requests against p.
func NewScorer(p *Plan) *Scorer {
	s := &Scorer{plan: p, texts: map[string]*textIndex{}, factID: make(map[string]int32, len(p.Facts)), stamp: make([]uint32, len(p.Facts))}
	for i, f := range p.Facts {
		s.factID[f] = int32(i)
	}
	return s
}

func (s *Scorer) index(text string) *textIndex {
	if ix, ok := s.texts[text]; ok {
		return ix
	}
	ix := &textIndex{tokens: map[string]struct{}{}}
	Each(text, func(t string) {
		if _, ok := ix.tokens[t]; ok {
			return
		}
		ix.tokens[t] = struct{}{}
		if id, ok := s.factID[t]; ok {
			ix.facts = append(ix.facts, id)
		}
	})
	ix.head = s.plan.Head != "" && strings.Contains(normalize(text), s.plan.Head)
	s.texts[text] = ix
	return ix
}

// Score scores the request sent at step k (an index into Plan.Steps).
func (s *Scorer) Score(k int, req Request) StepScore {
	ixs := make([]*textIndex, 0, len(req.Contents)+1)
	if req.System != "" {
		ixs = append(ixs, s.index(req.System))
	}
	for _, c := range req.Contents {
		ixs = append(ixs, s.index(Text(c)))
	}
	has := func(tok string) bool {
		for _, ix := range ixs {
			if _, ok := ix.tokens[tok]; ok {
				return true
			}
		}
		return false
	}
	st := s.plan.Steps[k]
	sc := StepScore{Refs: len(st.Refs), Facts: st.FactsDue}
	for _, r := range st.Refs {
		if has(r) {
			sc.RefsKept++
		} else {
			sc.Missed = append(sc.Missed, r)
		}
	}
	s.gen++
	for _, ix := range ixs {
		sc.Head = sc.Head || ix.head
		for _, id := range ix.facts {
			if int(id) < st.FactsDue && s.stamp[id] != s.gen {
				s.stamp[id] = s.gen
				sc.FactsKept++
			}
		}
	}
	return sc
}

// Score scores a whole replay: requests[k] is the request sent at step k of s, nil when none was
// sent (a refused or unreplayed step scores nothing kept). It is Analyze and a Scorer in one call.
func Score(p *Plan, requests []*Request) []StepScore {
	sc := NewScorer(p)
	out := make([]StepScore, len(p.Steps))
	for k := range p.Steps {
		if k < len(requests) && requests[k] != nil {
			out[k] = sc.Score(k, *requests[k])
			continue
		}
		st := p.Steps[k]
		out[k] = StepScore{Refs: len(st.Refs), Facts: st.FactsDue, Missed: st.Refs}
	}
	return out
}
