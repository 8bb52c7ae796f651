package recalltools_test

import "google.golang.org/adk/v2/agent"

// toolCtx is what adk-go v2 hands a function tool.
type toolCtx = agent.Context
