package compaction

import (
	"context"

	"github.com/adkctx/adkctx/budget"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/textcut"
)

// defaultExtractiveMaxBytes bounds an extractive summary.
const defaultExtractiveMaxBytes = 6 << 10

// ExtractiveSummarizer summarizes without a model: its summary is the ledger (the user's goal,
// every explicit instruction verbatim, recent requests, files and paths the tools used with
// exact call counts, errors seen, the last answers), bounded to MaxBytes, deterministic (equal
// input gives equal bytes). It is the offline summarizer and the fallback of an LLMSummarizer.
// The zero value is ready to use.
type ExtractiveSummarizer struct {
	// MaxBytes caps the summary text. Default 6 KiB.
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
		maxBytes = defaultExtractiveMaxBytes
	}
	var text string
	for {
		text = s.render(in, maxBytes)
		// Stay under the compactor's bound: a rejected fallback would stop compaction.
		if in.MaxTokens <= 0 || budget.EstimateText(text) <= in.MaxTokens || maxBytes < 256 {
			break
		}
		maxBytes = maxBytes * 4 / 5
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	return &Summary{Content: genai.NewContentFromText(text, genai.RoleUser), Summarizer: s.Name()}, nil
}

// render is the ledger in maxBytes, after the head of a summary another summarizer wrote (an LLM
// summary before a fallback holds what no ledger records: decisions, reasoning).
func (s *ExtractiveSummarizer) render(in SummaryInput, maxBytes int) string {
	text := in.Ledger.render(maxBytes, false)
	if prev := modelWritten(in.Previous, in.PreviousSummarizer); prev != "" {
		room := maxBytes - len(text) - len(earlierSummary) - 1
		if room > 200 {
			text = earlierSummary + textcut.Bytes(prev, room) + "\n" + text
		}
	}
	return text
}

const earlierSummary = "Earlier summary: "

// modelWritten returns the part of a previous summary that a model wrote, one line: "" for an
// extractive summary (the ledger restates it). The ledger facts appended to an LLM summary are
// left out (the new ledger restates them, up to date), and so is the ledger part of an extractive
// summary that kept an earlier LLM summary's head.
func modelWritten(prev *genai.Content, by string) string {
	text, facts := previousSummary(prev)
	switch {
	case by == "extractive" && !strings.HasPrefix(text, earlierSummary):
		return ""
	case strings.HasPrefix(text, earlierSummary):
		line, _, _ := strings.Cut(text, "\n")
		return strings.TrimSpace(strings.TrimPrefix(line, earlierSummary))
	case !facts && (strings.HasPrefix(text, secGoal) || strings.HasPrefix(text, secInstructions)):
		return ""
	}
	return oneLine(text)
}

// previousSummary returns the text of a previous summary without SummaryHeader and without the
// ledger facts an LLM summary ends with (reporting whether it had them).
func previousSummary(c *genai.Content) (text string, facts bool) {
	text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(textOf(c)), SummaryHeader))
	if i := strings.LastIndex(text, secRecord); i >= 0 {
		return strings.TrimSpace(text[:i]), true
	}
	return text, false
}
