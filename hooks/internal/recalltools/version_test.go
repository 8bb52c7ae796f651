package recalltools_test

import "google.golang.org/adk/agent"

// toolCtx is what adk-go v1 hands a function tool.
type toolCtx = agent.ToolContext
