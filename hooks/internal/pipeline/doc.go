// Package pipeline holds only tests: each drives one request processor through adk-go v1's own
// runner and llmagent, with nothing of adkctx's glue in between, to show the processor does its
// job inside adk-go's pipeline (what adk-go adds to a request before and after the callback).
// The processors themselves live in the adk-go-free root module: processors/request.
package pipeline
