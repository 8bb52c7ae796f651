// Package response holds the steps adkctx runs on what comes back from the model and the tools:
// UsageOf reads the token usage of a non-partial model response (for per-session accounting and
// estimator calibration, in AfterModel), and TruncateToolResult bounds a tool's result with
// package truncate before adk-go stores it (in AfterTool).
//
// The steps are pure functions over adk-go and genai values; the callback glue lives in hooks.
package response
