package request

import (
	"fmt"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/errkind"
)

// BudgetExceededError is returned when the newest turn, with the system instruction, the tools
// and the summary, does not fit under the hard limit even after every cut. The model is not
// called. Recognise it with errors.As.
type BudgetExceededError struct {
	Model             string
	Window, HardLimit int
	// NewestTurnTokens, FixedTokens and RequestTokens are predicted counts of the newest turn,
	// of the system instruction and tools, and of the whole request as it came in.
	NewestTurnTokens, FixedTokens, RequestTokens int
	// Margin is the safety margin of the prediction and MarginSource where it comes from (see
	// budget.MarginSource). A learned margin (or one of unnamed source) is added: the request is
	// refused when the newest turn, the fixed part and the margin do not fit under HardLimit. A
	// prior margin (the model has reported no count yet) is not: the request is refused only when
	// the newest turn and the fixed part alone do not fit.
	Margin       int
	MarginSource budget.MarginSource
}

func (e *BudgetExceededError) Error() string {
	var margin string
	switch {
	case e.Margin <= 0:
		margin = ", with no safety margin"
	case e.MarginSource == budget.MarginPrior:
		margin = fmt.Sprintf(", even without a safety margin (the model has reported no token count for this session yet: "+
			"its prior margin of %d was not added)", e.Margin)
	case e.MarginSource == budget.MarginLearned:
		margin = fmt.Sprintf(", plus a safety margin of %d learned from the token counts the model reported", e.Margin)
	default:
		margin = fmt.Sprintf(", plus a safety margin of %d", e.Margin)
	}
	return fmt.Sprintf("adkctx: request for model %q does not fit its context budget: the newest turn needs about %d tokens "+
		"and the system instruction and tools %d more%s, over the hard limit of %d tokens (window %d; whole request %d without a margin)",
		e.Model, e.NewestTurnTokens, e.FixedTokens, margin, e.HardLimit, e.Window, e.RequestTokens)
}

// ErrorKind classifies the error for logs and metrics.
func (e *BudgetExceededError) ErrorKind() string { return string(errkind.Budget) }
