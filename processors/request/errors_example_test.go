package request_test

import (
	"errors"
	"fmt"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/processors/request"
)

// A run whose newest turn alone cannot fit the model's window ends with a
// *request.BudgetExceededError (the model is not called): match it with errors.As to tell the
// user what to shorten.
func ExampleBudgetExceededError() {
	// What adk-go's runner yields when the budget refused the request.
	var err error = fmt.Errorf("run: %w", &request.BudgetExceededError{
		Model: "gemini-2.5-flash", Window: 1_048_576, HardLimit: 933_888,
		NewestTurnTokens: 950_000, FixedTokens: 2_000, RequestTokens: 1_200_000,
		Margin: 95_000, MarginSource: budget.MarginPrior,
	})
	var tooBig *request.BudgetExceededError
	if errors.As(err, &tooBig) {
		fmt.Printf("the message needs %d tokens, the model takes %d\n", tooBig.NewestTurnTokens, tooBig.HardLimit-tooBig.FixedTokens)
		fmt.Println(tooBig.MarginSource == budget.MarginPrior, tooBig.MarginSource == budget.MarginLearned)
		fmt.Println("kind:", tooBig.ErrorKind()) // the "error_kind" of adkctx's logs and metrics
	}
	// Output:
	// the message needs 950000 tokens, the model takes 931888
	// true false
	// kind: budget
}
