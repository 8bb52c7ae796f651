package recall

import (
	"errors"
	"fmt"
	"io/fs"
)

// InputError is a request a recall tool cannot serve as asked: a bad range, an unknown name, a
// query that does not compile. Its message is written for the model, which reads it as the tool's
// result and can correct its call.
type InputError struct {
	Msg string
}

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// ErrNotFound is returned (wrapped) when a saved output or a turn does not exist in the session.
// It wraps fs.ErrNotExist, as adk-go's artifact services' "not found" errors do.
var ErrNotFound = fmt.Errorf("recall: not found: %w", fs.ErrNotExist)

// IsInputError reports whether err is an *InputError or a *PatternError: a request the model
// can correct.
func IsInputError(err error) bool {
	var ie *InputError
	var pe *PatternError
	return errors.As(err, &ie) || errors.As(err, &pe)
}

// CorruptError is a stored history segment or layout that does not parse: a store that lost or
// changed bytes. The call fails with it; nothing else is read.
type CorruptError struct {
	Name string
	Msg  string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("recall: saved output %q is corrupt: %s", e.Name, e.Msg)
}
