package llmtest

import "google.golang.org/adk/v2/agent"

// toolContext is what adk-go v2 hands a function tool (hooks/internal/llmtest has v1's; the rest
// of this package is generated from it).
type toolContext = agent.Context
