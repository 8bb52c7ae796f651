package recalltools

// What differs between adk-go v1 and v2 for this package, and only that: the rest is generated
// for adk-go v2 (adk2/internal/recalltools) by go run ./internal/cmd/glue2.

import (
	"time"

	"google.golang.org/adk/agent"
)

// toolContext is what adk-go v1 hands a function tool.
type toolContext = agent.ToolContext

// scope is the caller's isolation scope: adk-go v1 has none.
func scope(toolContext) string { return "" }

// createdAt is an artifact version's creation time, which adk-go v1 reports in Unix seconds.
func createdAt(seconds float64) time.Time { return time.Unix(0, int64(seconds*1e9)) }
