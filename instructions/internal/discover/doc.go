// Package discover finds and safely reads the AGENTS.md files of a working
// directory for instructions.Loader.
//
// The rules it follows (sources and order, project root, imports, safe
// reading, budget) are documented to users in package agentsmd, whose
// Config it takes and whose Scope, Skip and WorkDirError it reports. The
// defaults of Config's zero fields live here (withDefaults).
//
// Discover returns a Discovery: the files, with their text and imports
// expanded, and what was skipped. Discovery.Stale re-stats the paths that
// decided it, so the Loader re-reads only after a change on disk. Stats
// counts the file system work, for tests and benchmarks.
package discover
