// Package replay drives recorded sessions (package trajectory) through adk-go v1's real runner
// and llmagent: a scripted model answers each model call with the recorded reply of that step,
// and one tool per recorded tool name returns each call's recorded output. A session is
// replayed once without adkctx and once per adkctx configuration, each into a fresh in-memory
// session service, and every request the model receives is counted and scored (package refs).
//
// What adkctx decided is read from its zap logs through an observer core — "budget decision"
// entries (action, contents_dropped) and "compaction" entries — the public seam any
// application has. Compaction runs synchronously (Compaction.Synchronous), so a replay is
// deterministic: in production it runs in the background, and a summary may then reach a
// request one model call later than here.
package replay
