package llmtest

import "google.golang.org/adk/agent"

// toolContext is what adk-go v1 hands a function tool (adk2/internal/llmtest has v2's).
type toolContext = agent.ToolContext
