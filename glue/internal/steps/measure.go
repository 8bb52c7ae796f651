package steps

import (
	"fmt"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/exact"
)

// Measure is what the steps know of one content: its fingerprint and its estimated tokens
// (budget.EstimateContent).
//
// The fingerprint is a hash of every byte of the content the model can be sent (role, every
// part's texts, calls, arguments, responses and their values, in order), keyed by a seed drawn
// when the process starts: contents that differ anywhere have different prints but with the
// probability of a 64-bit collision under a key nobody knows. adk-go rebuilds every content of
// a request from the same events, so equal fingerprints at the same position of two consecutive
// requests of one stream are the same content: its size is not estimated again, it is not
// truncated again, and the longest run of them is what a provider's prompt cache can serve.
// Those decisions rest on the print alone (the previous request's contents are not kept to
// compare); where a match would put one content in another's place (the requests kept for an
// LLM summarizer), the contents are compared field by field as well.
type Measure struct {
	Print  uint64
	Tokens int
}

// Measures holds the measures of a request's contents by content. A step never changes a
// content in place: it replaces what it changes with a new content, which has no measure yet
// and is measured when asked. So a measure recorded for a content stays true for it, and one
// Measures serves a request through every step. Check verifies that invariant. Use NewMeasures.
type Measures struct {
	// base are the contents the request came in with and their measures (Tokens < 0: not
	// estimated yet), looked up by position first: most steps change nothing.
	base  []*genai.Content
	baseM []Measure
	// of holds every other measured content, and base's once a content was asked for by itself.
	of map[*genai.Content]Measure
	// check: Check compares each measured content's print with its print now.
	check bool
	// last is the contents Prints was last asked for, and its answer.
	last       []*genai.Content
	lastPrints []uint64
	lastSizes  []int
}

// NewMeasures returns the Measures of a request that came in with contents, whose measures are
// known (base, aligned with contents; Tokens < 0: estimated when asked; nil: none known). With
// check, Check verifies the measures (tests: it prints every content again).
func NewMeasures(contents []*genai.Content, base []Measure, check bool) *Measures {
	m := &Measures{check: check}
	if len(base) == len(contents) {
		m.base, m.baseM = contents, base
	}
	return m
}

// Of returns the measure of c, measuring what is not known of it yet.
func (m *Measures) Of(c *genai.Content) Measure {
	if m.of == nil {
		m.of = make(map[*genai.Content]Measure, len(m.base))
		for i, b := range m.base {
			m.of[b] = m.baseM[i]
		}
	}
	ms, ok := m.of[c]
	switch {
	case !ok:
		ms = Measure{Print: Fingerprint(c), Tokens: budget.EstimateContent(c)}
	case ms.Tokens < 0:
		ms.Tokens = budget.EstimateContent(c)
	default:
		return ms
	}
	m.of[c] = ms
	return ms
}

// Check reports a content among contents changed in place since it was measured (its measure
// then lies). It needs a Measures made with check.
func (m *Measures) Check(contents []*genai.Content) error {
	if !m.check {
		return nil
	}
	for i, c := range contents {
		if ms, ok := m.known(i, c); ok && ms.Print != Fingerprint(c) {
			return fmt.Errorf("request: content %d was changed in place after it was measured", i)
		}
	}
	return nil
}

// known returns the measure of c, at position i of its request, when it was measured.
func (m *Measures) known(i int, c *genai.Content) (Measure, bool) {
	if i < len(m.base) && m.base[i] == c {
		return m.baseM[i], true
	}
	ms, ok := m.of[c]
	return ms, ok
}

// Prints returns the fingerprints of contents and their estimated tokens (shared: do not
// modify them).
func (m *Measures) Prints(contents []*genai.Content) (prints []uint64, sizes []int) {
	if len(contents) > 0 && len(contents) == len(m.last) && &contents[0] == &m.last[0] {
		return m.lastPrints, m.lastSizes
	}
	prints, sizes = make([]uint64, len(contents)), make([]int, len(contents))
	for i, c := range contents {
		if i < len(m.base) && m.base[i] == c {
			if m.baseM[i].Tokens < 0 {
				m.baseM[i].Tokens = budget.EstimateContent(c)
				if m.of != nil {
					m.of[c] = m.baseM[i]
				}
			}
			prints[i], sizes[i] = m.baseM[i].Print, m.baseM[i].Tokens
			continue
		}
		ms := m.Of(c)
		prints[i], sizes[i] = ms.Print, ms.Tokens
	}
	m.last, m.lastPrints, m.lastSizes = contents, prints, sizes
	return prints, sizes
}

// Fingerprint returns c's print: a keyed hash of every byte of c the model can be sent (see
// Measure).
func Fingerprint(c *genai.Content) uint64 { return exact.Print(c) }
