// Package request holds the steps adkctx runs on a model request in the BeforeModel callback,
// after adk-go has built it (system instruction, tools, history) and before the model is called.
// Each step is a plain function over *model.LLMRequest; package hooks runs them in this order:
//
//  1. InjectInstructions appends the merged AGENTS.md text to the system instruction.
//  2. TruncateFunctionResponses cuts large function responses already in history (stored before
//     truncation existed, or produced by other agents) with the same head+tail rules as the
//     AfterTool truncation (package truncate).
//  3. Normalize makes calls and responses valid: every call answered in the next content, in call
//     order (synthetic "aborted" responses where missing), orphan responses removed. It pairs by
//     id, and by name and position where adk-go has blanked its own "adk-" ids.
//  4. EnforceBudget estimates the request against the model's limits, trims the oldest whole
//     turns above the hard limit, or refuses with a *BudgetExceededError; a prior safety margin
//     (no count reported yet) is waived before a refusal.
//
// The steps never modify a Content, Part or map reachable from the request they are given
// (session events may share them): what they change they replace with copies. Truncation and
// normalization are idempotent, so running them on every model call is safe.
package request
