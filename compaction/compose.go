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

// summaryOf returns the summary m shows, its ledger l (the marker's whole ledger) composed in
// when m says so.
func summaryOf(m *Marker, l *Ledger) *genai.Content {
	if c, ok := compositionOf(m); ok {
		return genai.NewContentFromText(composeSummary(c, l), genai.RoleUser)
	}
	return m.CompactedContent
}
