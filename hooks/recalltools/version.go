package recalltools

// What differs between adk-go v1 and v2 for this package, and only that: the rest is generated
// for adk-go v2 (adk2/hooks/recalltools) by go run ./internal/cmd/glue2.

import (
	"time"

	"google.golang.org/adk/agent"

	"github.com/adkctx/adkctx/recall"
)

// toolContext is what adk-go v1 hands a function tool.
type toolContext = agent.ToolContext

// viewer is who calls: adk-go v1 has branches and no isolation scope.
func viewer(tc toolContext) recall.Viewer {
	return recall.Viewer{Branch: tc.Branch()}
}

// createdAt is an artifact version's creation time, which adk-go v1 reports in Unix seconds.
func createdAt(seconds float64) time.Time { return time.Unix(0, int64(seconds*1e9)) }
