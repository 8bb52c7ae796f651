// Package config holds adkctx's one configuration error shape, used by every package's
// validation (exported as adkctx.ConfigError).
package config

import (
	"errors"
	"fmt"

	"github.com/adkctx/adkctx/internal/errkind"
)

// Error reports one invalid configuration field: its name (dotted from the top-level config, e.g.
// "Compaction.Interval"), the value given (nil when not meaningful) and why it is refused.
// Validation joins every problem found (errors.Join); match one with errors.As.
type Error struct {
	Field  string
	Value  any
	Reason string
}

func (e *Error) Error() string {
	if e.Value == nil {
		return fmt.Sprintf("adkctx: invalid %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("adkctx: invalid %s = %v: %s", e.Field, e.Value, e.Reason)
}

// ErrorKind classifies the error for logs and metrics.
func (e *Error) ErrorKind() string { return string(errkind.Config) }

// Errorf returns an *Error for field.
func Errorf(field string, value any, format string, args ...any) *Error {
	return &Error{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// Leaves returns the errors err joins (errors.Join, nested joins flattened in order), or err
// alone; nil for nil. Validation's problems are its leaves.
func Leaves(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, Leaves(e)...)
	}
	return out
}

// Nest prefixes the field of every *Error in err (a single error or an errors.Join of them) with
// prefix and a dot, so a nested config's problems name their full path. Other errors are kept.
func Nest(prefix string, err error) error {
	if err == nil {
		return nil
	}
	errs := Leaves(err)
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		var ce *Error
		if errors.As(e, &ce) {
			c := *ce
			c.Field = prefix + "." + c.Field
			out = append(out, &c)
			continue
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}
