package compaction

import (
	"google.golang.org/genai"
)

// How a summary is composed with its ledger (Marker.SummaryLedger).
const (
	summaryWhole = "whole" // the ledger rendered (extractive), after an optional head
	summaryFacts = "facts" // a model's text, the ledger's facts appended
)

// composition is how a summarizer composed its summary from its own text and the ledger: enough
// to compose the same bytes again from a stored ledger (composeSummary).
type composition struct {
	mode   string // summaryWhole or summaryFacts
	own    string // the model's text, or the head kept of an earlier model-written summary
	tokens int    // the summary bound it was rendered within
	bytes  int    // summaryWhole: the byte cap of the ledger's rendering
}

// composeSummary returns the summary text c composes with ledger l.
func composeSummary(c composition, l *Ledger) string {
	if l == nil {
		l = &Ledger{}
	}
	switch c.mode {
	case summaryWhole:
		return extractiveText(l, c.own, c.tokens, c.bytes)
	case summaryFacts:
		return appendFacts(c.own, l, c.tokens)
	}
	return c.own
}

// compositionOf returns how m's summary is composed (ok false: CompactedContent is the summary).
func compositionOf(m *Marker) (composition, bool) {
	if m.SummaryLedger == "" {
		return composition{}, false
	}
	return composition{mode: m.SummaryLedger, own: textOf(m.CompactedContent), tokens: m.SummaryTokens, bytes: m.SummaryBytes}, true
}

// Summary returns the summary m stands for (without SummaryHeader, which a view adds), given
// its whole ledger l (Marker.Ledger, or the chain's deltas applied to the last whole one): the
// ledger composed with CompactedContent when SummaryLedger says so, else CompactedContent.
func (m *Marker) Summary(l *Ledger) *genai.Content {
	if c, ok := compositionOf(m); ok {
		return genai.NewContentFromText(composeSummary(c, l), genai.RoleUser)
	}
	return m.CompactedContent
}

// SetSummary stores s in m as the summary of what m covers, whose whole ledger is l: as
// CompactedContent or, when s is one of this package's summaries composed with l, only the
// summarizer's own text and how to compose it again (SummaryLedger, SummaryTokens,
// SummaryBytes): the ledger the marker stores is then not stored a second time as text.
// m.Summary(l) returns s's text either way.
func (m *Marker) SetSummary(s *Summary, l *Ledger) {
	m.CompactedContent = s.Content
	m.SummaryLedger, m.SummaryTokens, m.SummaryBytes = "", 0, 0 // a summary m held before
	if c := s.composed; c != nil && composeSummary(*c, l) == textOf(s.Content) {
		m.SummaryLedger, m.SummaryTokens, m.SummaryBytes = c.mode, c.tokens, c.bytes
		m.CompactedContent = nil
		if c.own != "" {
			m.CompactedContent = genai.NewContentFromText(c.own, genai.RoleUser)
		}
	}
}
