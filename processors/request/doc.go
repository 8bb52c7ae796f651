// Package request holds the steps adkctx runs on a model request in the BeforeModel callback,
// after adk-go has built it (system instruction, tools, history) and before the model is called.
// Each step is a plain function over *LLMRequest, the fields adkctx reads and changes of adk-go's
// request. adkctx runs them in this order, after the recall tools' notes:
//
//  1. TruncateFunctionResponses cuts large function responses already in history (stored before
//     truncation existed, or produced by other agents) with the AfterTool rules (package truncate).
//  2. Normalize makes calls and responses valid: every call answered in the next content, in call
//     order (synthetic "aborted" responses where missing), orphan responses removed. It pairs by
//     id, and by name and position where adk-go has blanked its own "adk-" ids.
//  3. InjectInstructions appends the merged AGENTS.md text to the system instruction.
//  4. EnforceBudget estimates the request against the model's limits, trims the oldest whole
//     turns above the hard limit, or refuses with a *BudgetExceededError. A prior safety margin
//     (no count reported yet) is waived before a refusal.
//
// Measures carries each content's print and size through the steps, so a content is measured
// once. The steps never modify a Content, Part or map reachable from the request they are given
// (session events may share them): what they change they replace with copies. Truncation and
// normalization are idempotent, so running them on every model call is safe. The steps return
// what they did (TruncateReport, NormalizeReport, BudgetDecision) and log nothing: the caller
// reports it.
package request
