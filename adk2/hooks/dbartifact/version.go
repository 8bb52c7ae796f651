package dbartifact

// What differs between adk-go v1 and v2 for this package, and only that: the rest is generated
// from the adk-go v1 glue (package github.com/adkctx/adkctx/hooks/dbartifact) by
// go run ./internal/cmd/glue2 in the core module.

import "time"

// createTime is an artifact version's creation time as adk-go v2 reports it.
func createTime(t time.Time) time.Time { return t }
