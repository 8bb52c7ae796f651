package compaction

import (
	"context"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/processors/truncate"
)

// DefaultExtractiveMaxBytes bounds an extractive summary.
const DefaultExtractiveMaxBytes = 6 << 10

// ExtractiveSummarizer summarizes without a model: its summary is the ledger (the user's goal,
// every explicit instruction verbatim, recent requests, files and paths the tools used with
// exact call counts, errors seen, the last answers), bounded to MaxBytes, deterministic (equal
// input gives equal bytes). It is the offline summarizer and the fallback of an LLMSummarizer.
// The zero value is ready to use.
type ExtractiveSummarizer struct {
	// MaxBytes caps the summary text. Default DefaultExtractiveMaxBytes.
	MaxBytes int
}

// Name returns "extractive".
func (s *ExtractiveSummarizer) Name() string { return "extractive" }

// Summarize implements Summarizer.
func (s *ExtractiveSummarizer) Summarize(_ context.Context, in SummaryInput) (*Summary, error) {
	if in.Ledger == nil || len(in.Events) == 0 {
		return nil, nil
	}
	maxBytes := s.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultExtractiveMaxBytes
	}
	text := in.Ledger.render(maxBytes, false)
	// A summary another summarizer wrote (an LLM summary before a fallback) holds what no
	// ledger records (decisions, reasoning): keep its head.
	if prev := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(textOf(in.Previous)), SummaryHeader)); prev != "" &&
		!strings.HasPrefix(prev, secGoal) && !strings.HasPrefix(prev, secInstructions) {
		room := maxBytes - len(text) - len(earlierSummary) - 1
		if room > 200 {
			text = earlierSummary + truncate.Bytes(oneLine(prev), room) + "\n" + text
		}
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	return &Summary{Content: genai.NewContentFromText(text, genai.RoleUser), Summarizer: s.Name()}, nil
}

const earlierSummary = "Earlier summary: "
