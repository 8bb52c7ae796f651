package errkind

import (
	"context"
	"errors"
)

// classifyContext recognizes a passed deadline or a cancellation anywhere in the chain: the
// caller's decision, whatever layer reported it.
func classifyContext(err error) (Kind, string, bool) {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout, "deadline exceeded", true
	case errors.Is(err, context.Canceled):
		return Canceled, "canceled", true
	}
	return "", "", false
}
