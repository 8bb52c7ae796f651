package readback

import (
	"errors"
	"fmt"
	"io/fs"
)

// inputError is a request a recall tool cannot serve as asked: a bad range, an unknown name, a
// query that does not compile. Its message is written for the model, which reads it as the tool's
// result and can correct its call.
type inputError struct {
	Msg string
}

func (e *inputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &inputError{Msg: fmt.Sprintf(format, args...)}
}

// errNotFound is returned (wrapped) when a saved output or a turn does not exist in the session.
// It wraps fs.ErrNotExist, as adk-go's artifact services' "not found" errors do.
var errNotFound = fmt.Errorf("recall: not found: %w", fs.ErrNotExist)

// IsInputError reports whether err is an *inputError or a *PatternError: a request the model
// can correct.
func IsInputError(err error) bool {
	var ie *inputError
	var pe *PatternError
	return errors.As(err, &ie) || errors.As(err, &pe)
}

// corruptError is a stored history segment or layout that does not parse: a store that lost or
// changed bytes. The call fails with it; nothing else is read.
type corruptError struct {
	Name string
	Msg  string
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("recall: saved output %q is corrupt: %s", e.Name, e.Msg)
}
