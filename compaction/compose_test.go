package compaction

import (
	"context"
	"testing"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/processors/response"
)

// A summary set on a marker reads back the same through Summary, whether this package's
// summarizer composed it with the ledger (the marker then stores only its own text) or not, on a
// new marker and on one that held another summary (a marker written from a copy of the one it
// rolls up).
func TestSetSummaryReadsBack(t *testing.T) {
	events := concat(toolTurn("i1", "read_file", "cmd/main.go"), turn("i2"))
	l := (*Ledger)(nil).Apply(NewLedgerDelta(events, 2))
	in := SummaryInput{Events: events, Ledger: l, MaxTokens: 1024}
	for _, tc := range []struct {
		name        string
		s           Summarizer
		wantLedger  string // SummaryLedger
		wantContent bool   // CompactedContent stored
	}{
		{"extractive", &ExtractiveSummarizer{}, summaryWhole, false},
		{"llm", &LLMSummarizer{Model: &fakeModel{replies: []*response.LLMResponse{reply("Goal: read main.go.", genai.FinishReasonStop)}}}, summaryFacts, true},
		{"other", &funcSummarizer{name: "other", f: func(context.Context, SummaryInput) (*Summary, error) {
			return &Summary{Content: genai.NewContentFromText("plain summary", genai.RoleUser)}, nil
		}}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, err := tc.s.Summarize(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			held := &Marker{SummaryLedger: summaryWhole, SummaryTokens: 7, SummaryBytes: 300,
				CompactedContent: genai.NewContentFromText("an older head", genai.RoleUser)}
			for _, m := range []*Marker{{}, held} {
				m.SetSummary(sum, l)
				if m.SummaryLedger != tc.wantLedger || (m.CompactedContent != nil) != tc.wantContent {
					t.Errorf("SetSummary: summaryLedger %q, content stored %v; want %q, %v", m.SummaryLedger, m.CompactedContent != nil, tc.wantLedger, tc.wantContent)
				}
				if got, want := textOf(m.Summary(l)), textOf(sum.Content); got != want {
					t.Errorf("Summary = %q, want the summary set, %q", got, want)
				}
				if tc.wantLedger != "" && textOf(m.Summary(&Ledger{Goal: "another"})) == textOf(sum.Content) {
					t.Errorf("a composed summary does not depend on the ledger it is given")
				}
			}
		})
	}
}
