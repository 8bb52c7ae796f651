// Package instructions finds the AGENTS.md files of a working directory and
// merges them into one instruction text for the model, with provenance and a
// byte budget. A Loader caches the result per working directory.
//
// agentsmd.Config says how files are found and read; package agentsmd
// documents those rules. The discovery itself lives in
// instructions/internal/discover, used only by the Loader.
//
// # Format
//
// A non-empty merged text starts with the line "# Instructions from AGENTS.md
// files" and a single precedence statement (later, more deeply nested files win; the user's
// explicit requests override all of them), followed by one section per file,
// global first, then project root → … → working directory:
//
//	<agents_md path="~/.config/adkctx/AGENTS.md" scope="global">
//	...
//	</agents_md>
//
//	<agents_md path="svc/api/AGENTS.md">
//	...
//	</agents_md>
//
// Paths are relative to the project root (slash-separated); the global file
// is shown as "~/..." when it lives under the home directory. The text is
// meant for req.Config.SystemInstruction (appended as a part of its own by
// the glue), never for the agent's templated Instruction, so
// `{braces}` in the files are harmless.
//
// # Budget
//
// Config.MaxBytes (default 32768) bounds len(Merged.Text), everything
// included; it always holds. Unlike Codex, which fills its budget root-first
// and silently drops the most specific file, the Loader shrinks from the LEAST
// specific side: the global file first, then the root, and so on. A file is
// cut keeping its head (titles and overviews usually come first), on a rune
// boundary, and a visible marker starting with markerPrefix follows the kept
// part:
//
//	[adkctx: AGENTS.md file "AGENTS.md" was cut to fit the instruction budget: kept the first 1200 of 40000 bytes]
//
// A file that could keep fewer than 64 bytes is omitted instead and replaced
// by a one-line marker naming it; a file so small that its omission marker
// would be longer than the file itself is kept whole (omitting it would not
// free any room). If even the markers of the less specific
// files leave no room, they collapse into one summary marker and only then is
// the working directory's own file cut (head kept, with its marker). Markers
// appear if and only if something was cut (Merged.Truncated), and
// Merged.Sources records for every file its size, how much was kept and
// whether it was cut or omitted.
//
// # Loader
//
// Loader.Load(ctx, workDir) caches the merged result per working directory
// (bounded, least recently used evicted). Each call re-stats the paths that
// decided the result and re-reads only after a
// change of existence, type, size or modification time. One zap info entry
// with the fields work_dir, root, files, bytes, truncated, skipped and
// skipped_paths is logged when the merged result of a working directory
// changes (including the first load), never on cache hits. No instruction
// text is ever logged.
//
// The Loader holds no lock while it uses the file system. A discovery runs
// in a goroutine of its own and is shared by the Loads of the same working
// directory that arrive meanwhile; Loads of other directories never wait
// for it, and Load gives up when its context is done (the discovery
// goes on and fills the cache). The Loader passes Config.MaxBytes to the
// discovery as its text budget (agentsmd.Config.TextBudget, unless set): no
// file or import is read beyond what the merged text can hold.
package instructions
