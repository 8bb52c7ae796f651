// Package request holds what adkctx shows of a model request: LLMRequest (the fields it reads and
// changes of adk-go's request), Normalize (the step that makes a history's calls and responses
// valid, which a program may also run alone) and BudgetExceededError (the error returned when a
// request cannot fit the model's context window, recognised with errors.As).
//
// adkctx runs its other steps (truncation of function responses already in history, the AGENTS.md
// text, the budget) inside the engine; the glue of each adk-go major version runs them all in
// BeforeModel, in the order the package documentation of hooks gives.
package request
