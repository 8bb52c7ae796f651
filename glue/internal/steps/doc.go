// Package steps holds the work of the steps the engine runs on a model request, a model response
// and a tool result, each a plain function over the core's values.
//
// In BeforeModel, after adk-go has built the request and before the model is called, the engine
// runs these over *request.LLMRequest, in this order, after the recall tools' notes:
//
//  1. TruncateFunctionResponses cuts large function responses already in history (stored before
//     truncation existed, or produced by other agents) with the AfterTool rules (package truncate).
//  2. request.Normalize (public) makes calls and responses valid.
//  3. InjectInstructions appends the merged AGENTS.md text to the system instruction.
//  4. EnforceBudget estimates the request against the model's limits, trims the oldest whole
//     turns above the hard limit, or refuses with a *request.BudgetExceededError. A prior safety
//     margin (no count reported yet) is waived before a refusal.
//
// Measures carries each content's print and size through the steps, so a content is measured
// once. The steps never modify a Content, Part or map reachable from the request they are given
// (session events may share them): what they change they replace with copies. Truncation is
// idempotent, so running it on every model call is safe. The steps return what they did
// (TruncateReport, BudgetDecision) and log nothing: the engine reports it.
//
// In AfterModel, UsageOf reads the token usage of a final (non-partial) response, for the
// session's accounting and the estimator's calibration. In AfterTool, TruncateToolResult bounds a
// tool's result with package truncate before adk-go stores it.
package steps
