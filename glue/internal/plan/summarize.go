package plan

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/internal/record"
)

// panicError is a summarizer panic: the Go type of the value it panicked with and the function
// that panicked, never the value, which may quote what the summarizer read (the error is logged).
type panicError struct{ valueType, site string }

// newPanicError describes recovered value r. Call it from the deferred function that recovered.
func newPanicError(r any) *panicError {
	return &panicError{valueType: fmt.Sprintf("%T", r), site: panicSite()}
}

func (e *panicError) Error() string {
	if e.site == "" {
		return "panic (" + e.valueType + ")"
	}
	return "panic (" + e.valueType + ") in " + e.site
}

func (e *panicError) ErrorKind() string { return string(errkind.Panic) }

// panicSite returns the function that panicked: the first frame outside the runtime below the
// runtime's panic frames, as the deferred function calling newPanicError sees the stack.
func panicSite() string {
	pc := make([]uintptr, 32)
	// Skip runtime.Callers, panicSite, newPanicError and the deferred function.
	frames := runtime.CallersFrames(pc[:runtime.Callers(4, pc)])
	inRuntime := false
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "runtime.") {
			inRuntime = true
		} else if inRuntime {
			return f.Function
		}
		if !more {
			return ""
		}
	}
}

// summarizerName returns the name a summarizer reports, for logs and markers.
func summarizerName(s compaction.Summarizer) string {
	if n, ok := s.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", s)
}

// runSummarizer calls s and waits for it at most until ctx is done: a summarizer that ignores
// its context cannot hold a compaction (or a session's compaction slot) past the timeout; its
// late result is discarded. Panics become errors. The reply is checked: it must have text and
// be at most maxTokens (estimated) tokens.
func runSummarizer(ctx context.Context, s compaction.Summarizer, in compaction.SummaryInput, maxTokens int) (*compaction.Summary, error) {
	name := summarizerName(s)
	if err := ctx.Err(); err != nil {
		// Not started: whether a summarizer that ignores ctx finished before the select saw ctx
		// done would decide the outcome.
		return nil, &compaction.SummarizerError{Summarizer: name, Err: err}
	}
	in.MaxTokens = maxTokens
	type result struct {
		sum *compaction.Summary
		err error
	}
	done := make(chan result, 1) // buffered: a late reply never blocks the abandoned goroutine
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: newPanicError(r)}
			}
		}()
		sum, err := s.Summarize(ctx, in)
		done <- result{sum, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		select {
		case r = <-done: // finished too: use it
		default:
			r.err = ctx.Err()
		}
	}
	if r.err != nil {
		var se *compaction.SummarizerError
		if errors.As(r.err, &se) {
			return nil, r.err
		}
		return nil, &compaction.SummarizerError{Summarizer: name, Err: r.err}
	}
	if r.sum == nil {
		return nil, nil
	}
	reject := func(reason string, tokens int) error {
		return &compaction.SummarizerError{Summarizer: name, Err: &compaction.SummaryRejectedError{Summarizer: name, Reason: reason, Tokens: tokens, Limit: maxTokens}}
	}
	if r.sum.Content == nil || !record.HasText(r.sum.Content) {
		return nil, reject("empty", 0)
	}
	if tokens := budget.EstimateContent(r.sum.Content); maxTokens > 0 && tokens > maxTokens {
		return nil, reject("too_large", tokens)
	}
	if r.sum.Summarizer == "" {
		r.sum.Summarizer = name
	}
	return r.sum, nil
}
