package errkind

import (
	"context"
	"errors"
	"fmt"
)

// Placeholders; each is replaced by its own file.

func classifyContext(err error) (Kind, string, bool) {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout, "deadline exceeded", true
	case errors.Is(err, context.Canceled):
		return Canceled, "canceled", true
	}
	return "", "", false
}

func classifyModel(error) (Kind, string, bool)    { return "", "", false }
func classifySQLite(error) (Kind, string, bool)   { return "", "", false }
func classifyNetwork(error) (Kind, string, bool)  { return "", "", false }

func typeName(err error) string { return fmt.Sprintf("%T", err) }
