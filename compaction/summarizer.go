package compaction

import (
	"context"
	"fmt"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/processors/request"
)

// Summarizer turns the events a compaction newly covers (plus the summary it rolls up) into the
// content that replaces them. It returns (nil, nil) when there is nothing to summarize.
// Implementations must be safe for concurrent use and should honour ctx; the compactor stops
// waiting for them at Config.Timeout either way.
type Summarizer interface {
	Summarize(ctx context.Context, in SummaryInput) (*Summary, error)
}

// SummaryInput is what a Summarizer summarizes.
type SummaryInput struct {
	// Previous is the summary being rolled up (nil for the first compaction).
	Previous *genai.Content
	// Context are raw events just before Events, given again for continuity (Config.Overlap
	// invocations). They are already summarized in Previous: do not count them again.
	Context []Event
	// Events are the events this summary newly covers, in stream order.
	Events []Event
	// Ledger is the exact record of everything covered, Events included: the user's goal and
	// instructions, tool calls per path, errors, last answers.
	Ledger *Ledger
	// Limits returns the token limits the hooks apply to a model (their registry and
	// Config.Models): a summarizer calling a model sizes its prompt with it. Nil: the built-in
	// registry.
	Limits func(model string) budget.Limits
	// PreviousSummarizer names the summarizer that wrote Previous ("extractive", "llm:<model>").
	PreviousSummarizer string
	// MaxTokens is the largest summary, in estimated tokens, the compactor accepts (a larger one
	// is rejected); a summarizer should stay under it. 0: no bound.
	MaxTokens int
	// Prefix is a request the session's model was sent (the newest of the last few that shows
	// every event this summary covers, in order) cut right after the content that shows the last
	// one: the conversation as the model was sent it, the previous summary first. It is nil when
	// unknown, or when no request sent shows every covered event in order as far as they can be
	// matched (calls by name and arguments, texts by role and text, a response right after the
	// content before it; an event showing only media or code cannot be). An LLMSummarizer on the
	// same model sends it with its instruction appended: a provider's prompt cache still holds
	// it, so it costs a fraction of a transcript.
	Prefix *request.LLMRequest
}

func (in SummaryInput) limits(model string) budget.Limits {
	if in.Limits != nil {
		return in.Limits(model)
	}
	return budget.LimitsFor(nil, model, budget.LimitConfig{})
}

// Summary is what a Summarizer returns: the content that replaces the covered events (role
// user, plain text without SummaryHeader, which views add), the usage of the model call that
// produced it (zero for model-free summarizers) and the summarizer's name.
type Summary struct {
	Content    *genai.Content
	Usage      budget.Usage
	Summarizer string
	// SharedPrefix: the prompt was the agent's conversation (SummaryInput.Prefix), not a
	// transcript.
	SharedPrefix bool

	// composed, set by this package's summarizers, is how Content was composed with the
	// ledger: a marker then stores only the summarizer's own text.
	composed *composition
}

// SummaryRejectedError reports a summarizer reply that cannot be used: "empty", "thought_only",
// "tool_call" (the model called a tool), "finish_reason" (cut off), "model_error" or "too_large"
// (bigger than what it replaces or than Config.MaxSummaryTokens).
type SummaryRejectedError struct {
	Summarizer   string
	Reason       string
	FinishReason genai.FinishReason
	ErrorCode    string
	// Tokens and Limit are the summary's estimated size and the bound it broke ("too_large").
	Tokens, Limit int

	usage budget.Usage // of the rejected call
}

func (e *SummaryRejectedError) Error() string {
	msg := fmt.Sprintf("compaction: summarizer %s: reply rejected: %s", e.Summarizer, e.Reason)
	switch {
	case e.FinishReason != "":
		msg += " (finish reason " + string(e.FinishReason) + ")"
	case e.ErrorCode != "":
		msg += " (error code " + e.ErrorCode + ")"
	case e.Reason == "too_large":
		msg += fmt.Sprintf(" (%d tokens, limit %d)", e.Tokens, e.Limit)
	}
	return msg
}

// ErrorKind classifies the error for logs and metrics.
func (e *SummaryRejectedError) ErrorKind() string { return string(errkind.InvalidReply) }

// SummarizerError wraps a failure of a summarizer: its error, a timeout, a panic or a rejected
// reply.
type SummarizerError struct {
	Summarizer string
	Err        error
}

func (e *SummarizerError) Error() string {
	return fmt.Sprintf("compaction: summarizer %s failed: %v", e.Summarizer, e.Err)
}

func (e *SummarizerError) Unwrap() error { return e.Err }
