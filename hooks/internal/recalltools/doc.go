// Package recalltools builds the recall tools of Hooks.RecallTools for adk-go: read a saved
// tool output by line or byte range, search saved outputs, search the turns that summaries
// cover, read one covered turn. The core runs each call (glue.Engine.Recall); this package
// declares the tools, turns the runner's artifact service into the calling session's
// recall.Store, and hands the engine the call.
//
// The list is static (the same four declarations on every request, so a provider's prompt cache
// keeps serving the prefix). Each call reads only the calling session's data: the app, user and
// session come from the tool context, names are validated, history is filtered by the caller's
// branch (and, on adk-go v2, isolation scope). Calls never log queries or results; errors come
// back as the tool's result ({"error": "..."}) for the model to read and correct its call.
//
// With hooks/dbartifact (SQLite or PostgreSQL) a page read costs one or two 32 KiB chunks; other
// services (adk-go's in-memory and GCS) are read whole on each call, which the results' bounds
// do not change.
package recalltools
