// Package hooks connects adkctx to adk-go: one constructor, New, returns the callbacks to put in
// llmagent.Config, a plugin for runner.Config, and a session.Service wrapper.
//
// adk-go v1.7.0 has no pluggable request processors, so adkctx's processors (packages
// processors/request and processors/response) run inside these callbacks, in a fixed order:
//
//	BeforeModel: instructions → truncate history → normalize calls → budget → one log entry
//	AfterModel:  usage accounting and estimator calibration (non-partial responses only)
//	AfterTool:   the result is bounded before it is stored (head+tail of long strings, first and
//	             last elements of long lists); each cut string is kept whole, byte-exact, as its
//	             own artifact named in its marker when the runner has an artifact service
//	Plugin:      the same three, plus compaction after each invocation (AfterRun) and, when a
//	             request passed the soft limit, before the next event is stored (OnEvent)
//
// Compaction reads history through the wrapper returned by SessionService: sessions it returns
// show adk-go the compacted view (summary + recent events) while every original event stays in
// the underlying service.
//
// Everything is safe for concurrent use by many sessions and by parallel tool calls.
package hooks
