// Package hooks wires adkctx into adk-go v1 (google.golang.org/adk): one constructor, New, and
// one call, Hooks.Wire, that adds adkctx's plugin and session-service wrapper to a
// runner.Config. It is glue only: every decision is made by adkctx's adk-go-independent packages
// (budget, processors/..., compaction, agentsmd, instructions) through an engine shared with the
// adk-go v2 glue (module github.com/adkctx/adkctx/adk2).
//
// What runs where:
//
//	BeforeRun:   restore the session's calibration and accounting from its events (any process
//	             can serve any turn); check the wiring (a run whose session is not read
//	             through the wrapper is refused with a *adkctx.WiringError)
//	BeforeModel: AGENTS.md instructions → truncate history → normalize calls → budget (summary
//	             pinned) → one "budget decision" log entry; a request over the soft limit
//	             schedules a compaction
//	AfterModel:  usage: calibration, accounting, a call record stored with the response
//	AfterTool:   head+tail truncation of the result before it is stored (full output saved as an
//	             artifact when the runner has an artifact service)
//	OnEvent:     at the hard limit with a compaction pending, wait for it before the next request
//	AfterRun:    schedule the sliding-window compaction (in the background by default)
//
// The session wrapper shows adk-go the compacted view (summary + recent events) while every
// original event stays in the underlying service. Everything is safe for concurrent use.
package hooks
