// Package pipeline holds only tests: each drives one of the core's public steps (request.Normalize,
// truncate.Responses, instructions.Loader) through adk-go v1's own runner and llmagent, with
// nothing of adkctx's glue in between, to show the step does its job inside adk-go's pipeline
// (what adk-go adds to a request before and after the callback).
package pipeline
