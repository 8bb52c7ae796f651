// Package recalltools gives an adk-go agent the recall tools: read a saved tool output by line
// or byte range, search saved outputs, search the turns that summaries cover, read one covered
// turn (package recall does the work).
//
// With adkctx wired by Wire, ask the hooks for them: the notes the model reads then name them,
// and each compaction keeps what the tools read (package hooks, Hooks.RecallTools):
//
//	tools, err := h.RecallTools()
//	agent, err := llmagent.New(llmagent.Config{..., Tools: append(myTools, tools...)})
//	rc, err := h.Wire(runner.Config{..., Agent: agent, ArtifactService: artifacts})
//
// New builds them on an artifact service alone, for a runner without adkctx's hooks (the saved
// outputs are then the application's, and no history is written).
//
// The list is static (the same four declarations on every request, so a provider's prompt cache
// keeps serving the prefix). Each call reads only the calling session's data: the app, user and
// session come from the tool context, names are validated ([recall.ValidateOutputName]), history
// is filtered by the caller's branch (and, on adk-go v2, isolation scope). Calls never log queries
// or results; errors come back as the tool's result ({"error": "..."}) for the model to read and
// correct its call.
//
// Artifacts is the runner's artifact service. With hooks/dbartifact (SQLite or PostgreSQL) a
// page read costs one or two 32 KiB chunks; other services (adk-go's in-memory and GCS) are read
// whole on each call, which the results' bounds do not change.
package recalltools
