package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/adkctx/adkctx/compaction"
)

// panicSecret stands for conversation text a summarizer panics with.
const panicSecret = "my key is sk-live-9d8f7a6s5d4f"

// secretStringer panics with a value whose String quotes the secret.
type secretStringer struct{}

func (secretStringer) String() string { return panicSecret }

// A summarizer's panic becomes an error that names the panic value's Go type and the function that
// panicked, never the value: it is logged, and the value may quote what the summarizer read.
func TestSummarizerPanicCarriesNoValue(t *testing.T) {
	tests := []struct {
		name     string
		panics   func()
		wantType string
	}{
		{"string", func() { panic(panicSecret) }, "string"},
		{"error", func() { panic(errors.New(panicSecret)) }, "*errors.errorString"},
		{"wrapped error", func() { panic(fmt.Errorf("reading %q: %w", panicSecret, context.Canceled)) }, "*fmt.wrapError"},
		{"stringer", func() { panic(secretStringer{}) }, "plan.secretStringer"},
		{"runtime error", func() {
			s := strings.Fields(panicSecret)
			_ = s[len(s)] // index out of range
		}, "runtime.boundsError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &funcSummarizer{name: "panicky", f: func(context.Context, SummaryInput) (*Summary, error) {
				tt.panics()
				return nil, nil
			}}
			_, err := runSummarizer(t.Context(), s, SummaryInput{}, 0)
			var pe *panicError
			if !errors.As(err, &pe) {
				t.Fatalf("runSummarizer = %v, want a panic error", err)
			}
			msg := pe.Error()
			if strings.Contains(err.Error(), "sk-live") {
				t.Errorf("error %q carries the panic value", err)
			}
			// The panic site is the test's function literal that panicked (or the runtime's caller
			// of it), named by its package path.
			want := "panic (" + tt.wantType + ") in github.com/adkctx/adkctx/glue/internal/plan.TestSummarizerPanicCarriesNoValue.func"
			if !strings.HasPrefix(msg, want) {
				t.Errorf("panic error = %q, want %q…", msg, want)
			}
		})
	}
}
