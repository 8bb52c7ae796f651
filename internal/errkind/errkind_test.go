package errkind_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/internal/errkind"
)

type classified struct {
	Kind errkind.Kind
	Msg  string
}

func of(err error) classified {
	k, m := errkind.Of(err)
	return classified{k, m}
}

// budgetError stands for adkctx's own typed errors.
type budgetError struct{ need, have int }

func (e *budgetError) Error() string           { return fmt.Sprintf("needs %d tokens, %d fit", e.need, e.have) }
func (e *budgetError) ErrorKind() errkind.Kind { return errkind.Budget }

func TestOf(t *testing.T) {
	const secret = "my prompt: the launch codes are 0000"
	tests := []struct {
		name string
		err  error
		want classified
	}{
		{"nil", nil, classified{errkind.None, ""}},
		{"kinded, wrapped with text", fmt.Errorf("turn %q: %w", secret, &budgetError{9000, 8000}),
			classified{errkind.Budget, "needs 9000 tokens, 8000 fit"}},
		{"unknown", errors.New(secret), classified{errkind.Unknown, "*errors.errorString"}},
		{"unknown, wrapped", fmt.Errorf("call: %w", errors.New(secret)), classified{errkind.Unknown, "*fmt.wrapError"}},
		{"deadline", fmt.Errorf("%s: %w", secret, context.DeadlineExceeded), classified{errkind.Timeout, "deadline exceeded"}},
		{"canceled", fmt.Errorf("%s: %w", secret, context.Canceled), classified{errkind.Canceled, "canceled"}},
		{"joined: first match wins", errors.Join(errors.New(secret), context.Canceled), classified{errkind.Canceled, "canceled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, of(tt.err)); diff != "" {
				t.Errorf("Of (-want +got):\n%s", diff)
			}
		})
	}
}
