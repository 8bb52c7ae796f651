// Package recall is the storage of the recall tools (hooks' RecallTools): the saved outputs of
// one session that the tools read back — the full tool outputs truncation saved, and the history
// segments a compaction writes of the turns it summarizes — and the tools' names.
//
// The glue keeps them in the runner's artifact service and reads a session's through a [Store].
// An artifact service that keeps outputs in chunks with their [Layout] (hooks/dbartifact on
// SQLite or PostgreSQL) implements [ChunkStore], and a page of a 2 MB output then costs one
// 32 KiB chunk; other services (adk-go's in-memory and GCS ones) are loaded whole on each call.
// To give your own artifact service page reads, cut each saved version with [Split], keep the
// chunks and the layout beside them (hooks/dbartifact keeps a few varints per chunk), and return
// from RecallStore a Store that reads them back.
//
// Nothing in this package logs.
package recall
