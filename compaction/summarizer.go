package compaction

import (
	"context"
	"errors"
	"fmt"

	"github.com/adkctx/adkctx/budget"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

// Summary is what a [Summarizer] returns: the content that replaces the
// summarized events (role "user"; plain text WITHOUT the
// "[Summary of earlier conversation]" header, which [View] adds), the
// usage of the call that produced it (zero for model-free summarizers) and
// the summarizer's name (recorded in [Marker.Summarizer]).
type Summary struct {
	Content    *genai.Content
	Usage      budget.Usage
	Summarizer string
}

// SummaryInput is what a [Summarizer] summarizes: the previous (rolled-up)
// summary, if any, followed by the raw events of the window in stream order.
// Events never contains marker events. Summarizers must not mutate either.
type SummaryInput struct {
	Events   []*session.Event
	Previous *genai.Content
}

// Summarizer turns a window of events (plus the previous summary) into the
// content that replaces them. It returns (nil, nil) when there is nothing to
// summarize. Implementations must be safe for concurrent use.
type Summarizer interface {
	Summarize(ctx context.Context, in SummaryInput) (*Summary, error)
}

// ErrNoSummarizer is returned by [Config.Validate] when no summarizer can be
// used.
var ErrNoSummarizer = errors.New("compaction: no summarizer configured")

// SummaryRejectedError reports a summarizer reply that cannot be used as a
// summary: empty, thought-only, or cut off (finish reason other than STOP).
type SummaryRejectedError struct {
	// Summarizer names the summarizer whose reply was rejected.
	Summarizer string
	// Reason is one of "empty", "thought_only", "finish_reason", "model_error".
	Reason string
	// FinishReason is the reply's finish reason when Reason is
	// "finish_reason"; ErrorCode the model's error code for "model_error".
	FinishReason genai.FinishReason
	ErrorCode    string
}

func (e *SummaryRejectedError) Error() string {
	msg := fmt.Sprintf("compaction: summarizer %s: reply rejected: %s", e.Summarizer, e.Reason)
	if e.FinishReason != "" {
		msg += " (finish reason " + string(e.FinishReason) + ")"
	}
	if e.ErrorCode != "" {
		msg += " (error code " + e.ErrorCode + ")"
	}
	return msg
}

// SummarizerError wraps a failure of a summarizer (transport error, timeout,
// panic, rejected reply).
type SummarizerError struct {
	Summarizer string
	Err        error
}

func (e *SummarizerError) Error() string {
	return fmt.Sprintf("compaction: summarizer %s failed: %v", e.Summarizer, e.Err)
}

func (e *SummarizerError) Unwrap() error { return e.Err }

// summarizerName returns the name a summarizer reports, for logs and
// markers.
func summarizerName(s Summarizer) string {
	type named interface{ Name() string }
	if n, ok := s.(named); ok {
		return n.Name()
	}
	if s == nil {
		return ""
	}
	return fmt.Sprintf("%T", s)
}

// runSummarizer calls s, converting a panic into an error and validating the
// result shape.
func runSummarizer(ctx context.Context, s Summarizer, in SummaryInput) (sum *Summary, err error) {
	name := summarizerName(s)
	defer func() {
		if r := recover(); r != nil {
			sum, err = nil, &SummarizerError{Summarizer: name, Err: fmt.Errorf("panic: %v", r)}
		}
	}()
	sum, err = s.Summarize(ctx, in)
	if err != nil {
		var se *SummarizerError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, &SummarizerError{Summarizer: name, Err: err}
	}
	if sum == nil {
		return nil, nil
	}
	if sum.Content == nil || !hasText(sum.Content) {
		return nil, &SummarizerError{Summarizer: name, Err: &SummaryRejectedError{Summarizer: name, Reason: "empty"}}
	}
	if sum.Summarizer == "" {
		sum.Summarizer = name
	}
	return sum, nil
}
