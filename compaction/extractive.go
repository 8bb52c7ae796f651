package compaction

import (
	"context"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/textcut"
)

// Defaults of ExtractiveSummarizer.
const (
	// defaultExtractiveMaxBytes bounds an extractive summary, unless the user's messages need
	// more: they get their budget (UserTextTokens), the rest extractiveOtherBytes. The record of
	// what the tools did and returned gets its room on top (recordRoomBytes at most).
	defaultExtractiveMaxBytes = 6 << 10
	extractiveOtherBytes      = 2 << 10
)

// ExtractiveSummarizer summarizes without a model: its summary is the ledger (the user's goal
// and messages, verbatim within UserTextTokens, files and paths the tools used with exact call
// counts, what the tools did and returned — files the shell commands read with their line
// ranges, wrote, created and removed, commands with their exit status, failing tests, the paths
// and file:line locations outputs named, identifying values calls passed and results returned —,
// errors seen, the last answers), within the summary bound and MaxBytes, deterministic (equal
// input gives equal bytes). It is the offline summarizer and the fallback of an LLMSummarizer.
// The zero value is ready to use.
type ExtractiveSummarizer struct {
	// MaxBytes caps the summary text. Default 6 KiB, or more when the goal and the user's
	// messages within their budget (UserTextTokens) and 2 KiB for the rest need it; plus the
	// record of what the tools did and returned, up to 4 KiB. A MaxBytes set here is a hard cap:
	// the user's messages are shortened to fit it when they must, after everything else was
	// dropped.
	MaxBytes int
}

// Name returns "extractive".
func (s *ExtractiveSummarizer) Name() string { return "extractive" }

// Summarize implements Summarizer.
func (s *ExtractiveSummarizer) Summarize(_ context.Context, in SummaryInput) (*Summary, error) {
	if in.Ledger == nil || len(in.Events) == 0 {
		return nil, nil
	}
	bytes := s.MaxBytes
	if bytes <= 0 {
		bytes = max(defaultExtractiveMaxBytes, len(in.Ledger.userSection(UserTextTokens))+extractiveOtherBytes) + in.Ledger.recordRoom()
	}
	c := composition{mode: summaryWhole, own: modelWritten(in.Previous, in.PreviousSummarizer), tokens: in.MaxTokens, bytes: bytes}
	text := composeSummary(c, in.Ledger)
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	return &Summary{Content: genai.NewContentFromText(text, genai.RoleUser), Summarizer: s.Name(), composed: &c}, nil
}

// extractiveText is the extractive summary of ledger l within the summary bound maxTokens (0:
// none; a rejected fallback would stop compaction) and maxBytes, after prev, the head of a
// summary another summarizer wrote ("" for none).
func extractiveText(l *Ledger, prev string, maxTokens, maxBytes int) string {
	lim := renderLimits{bytes: maxBytes, keepUser: userBudget(maxTokens)}
	return fitContent(maxTokens, func(tokens int) string {
		lim.tokens = tokens
		return renderAfter(l, prev, lim)
	})
}

// renderAfter is the ledger within lim, after prev, the head of a summary another summarizer
// wrote (an LLM summary before a fallback holds what no ledger records: decisions, reasoning),
// when there is room for it.
func renderAfter(l *Ledger, prev string, lim renderLimits) string {
	text := l.render(lim, false)
	if prev == "" {
		return text
	}
	for room := lim.bytes - len(text) - len(earlierSummary) - 1; room > 200; room /= 2 {
		if out := earlierSummary + textcut.Bytes(prev, room) + "\n" + text; lim.fits(out) {
			return out
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
	case !facts && (strings.HasPrefix(text, secGoal) || strings.HasPrefix(text, secMessages)):
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
