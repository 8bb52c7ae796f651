// Package agentsmd configures how AGENTS.md instruction files are found and
// read, and names what that reports.
//
// Config holds the settings: the global file, the root markers, extra file
// names and the read limits. Pass it to instructions.NewLoader, or set
// adkctx.InstructionsConfig.Discovery. The Loader does the discovery and
// merges the files into one text (package instructions).
//
// A discovery reports each file's Scope (instructions.Source.Scope) and
// every file it refused as a Skip (instructions.Merged.Skipped). An unusable
// working directory is a *WorkDirError.
//
// The rules below say which files a discovery reads, in what order, and what
// it refuses.
//
// # Sources and order
//
// A discovery returns files in this order:
//
//  1. the global file: Config.GlobalFile, by default
//     <os.UserConfigDir()>/adkctx/AGENTS.md ($XDG_CONFIG_HOME/adkctx/AGENTS.md,
//     else ~/.config/adkctx/AGENTS.md on Linux). Optional; Config.NoGlobal
//     disables it;
//  2. one file per directory, from the project root down to the working
//     directory (root first, working directory last).
//
// In each directory the first usable name wins: AGENTS.override.md, then
// AGENTS.md, then Config.FallbackNames in order. A candidate that exists but
// is refused (empty, binary, unreadable, unsafe symlink, ...) is reported as
// a Skip and the next name is tried. So an empty AGENTS.override.md does NOT
// silence AGENTS.md.
//
// # Project root
//
// The project root is the nearest directory, starting at the working
// directory and walking up, that holds any of Config.RootMarkers (default
// [".git"]; a marker may be a file or a directory, so a `.git` file of a git
// worktree or submodule counts). Nearest wins and all markers are equal: with
// RootMarkers = ["go.mod", ".git"] a go.mod in a module below the repository's
// .git makes the MODULE directory the root, so files above it (including the
// repository's top-level AGENTS.md) are not read. Use only ".git" if you want
// the repository to be the root. Without any marker up to the file system
// root only the working directory itself is searched (Merged.Root ==
// Merged.WorkDir).
//
// # Imports
//
// A file may import another with an @path token; the token is replaced by
// the imported file's text (recursively). An import token is '@' at the start
// of a line or right after a space or tab, followed by non-whitespace
// characters; trailing punctuation (. , ; : ! ? ) ] } ' ") is dropped; the
// path must end in ".md" (any case) or start with "./" or "../" and must not
// contain '`' or '@'. So "@docs/style.md", "@./notes.txt" and
// "@../shared/RULES.md" are imports, while "me@example.com", "@alice", "(@x.md)"
// and "\@x.md" are not. Tokens in code are left alone: fenced code blocks
// (``` or ~~~), inline code spans (`...`, matched on one line) and indented
// code blocks (4 columns, a tab counting to the next multiple of 4, beyond
// the enclosing list item's content, after a blank line, a heading or the
// start of the file; an indented line right after a paragraph line
// continues the paragraph, as in CommonMark). Block quotes are not
// recognised.
//
// Paths are relative to the directory where the importing file was found
// (for a symlinked file: the link's directory); absolute paths are accepted.
// An import must lie inside the project root (for the global file and its
// imports: inside the global file's directory or, when the global file is a
// symlink, its target's directory) and is opened below it (see Safe
// reading). The global file itself may be a symlink to anywhere (it is the
// user's own file, e.g. managed with dotfiles); project files may not.
// Imports nest at most Config.MaxImportDepth (5) levels; cycles are
// detected; every file is used at most once (identity by os.SameFile, so
// hard links and symlinks to the same file are one file; files are read from
// the working directory up, so the more specific file keeps a file that two
// files import). A failed import is replaced in the text by a visible note
// such as "[import @x.md skipped: outside project root]" and reported as a
// Skip.
//
// # Safe reading
//
//   - Project files and their imports are opened through an os.Root of the
//     project root (the global file's imports through one of its
//     directory), which resolves every path component and symlink itself
//     and refuses any that leads outside. There is no window between a check
//     and the open: a directory swapped for a symlink to elsewhere while
//     a discovery runs cannot make it read a file outside. Symlinks that stay
//     inside are followed; absolute symlinks are refused (an os.Root rule).
//     The global file is opened on its own.
//   - Only regular files are read. A special file (FIFO, socket, device,
//     directory) named AGENTS.md is refused without being opened. Every open
//     is non-blocking (O_NONBLOCK, and O_NOCTTY, on Unix) and the OPENED
//     file's type decides (fstat), not the path's: a FIFO or device swapped
//     in between never makes a discovery wait, and is refused.
//   - At most MaxFileBytes+1 bytes are read from a file, never the whole
//     file. A longer file is TRUNCATED to MaxFileBytes (default 64 KiB, cut
//     on a rune boundary) with a visible "[agentsmd: file ... truncated ...]"
//     note and Source.FileTruncated; it is not skipped.
//   - A NUL byte in the first 8 KiB marks a binary file: skipped.
//   - Invalid UTF-8 is replaced with U+FFFD.
//   - Empty or whitespace-only files are skipped.
//   - Unreadable files (permissions, I/O errors) are skipped.
//
// # Budget
//
// Config.TextBudget (default 32 KiB; instructions.Loader passes its
// MaxBytes) is how much text the caller can use. Files are read from the
// working directory up to the root, then the global file: the order in
// which the merged text gives up files when it must. A file's imports are
// read only while its text (imports expanded so far), plus the text of the
// more specific files, is below the budget. The rest of the file keeps its
// @tokens as they are, with one Skip for the file. Once the budget is full,
// the less specific files are not read at all (one Skip each). The merged
// text is the same as with everything read, since it could not hold more;
// only the sizes its cut markers quote are smaller. So one AGENTS.md
// importing a thousand 64 KiB files reads two files.
//
// Refused files use no text budget, so the bytes one discovery reads are
// bounded apart: a file is opened only while the bytes read in all stay
// within 4 × (TextBudget + MaxFileBytes + 1) (else Skip "not read: the read
// limit ...").
//
// # Errors, logs and work done
//
// Every skip is a Skip and one zap warning with the fields "path" and
// "reason", in output order. A problem with a file never makes a discovery
// fail. Only an invalid Config (*adkctx.ConfigError) or an unusable working
// directory (*WorkDirError) does.
//
// A discovery never lists a directory: it stats the known candidate names
// on the path only, so wide trees cost nothing extra. It records every path
// whose state decided the result. instructions.Loader re-stats them on each
// Load and re-reads only after a change on disk. Output order is
// deterministic.
package agentsmd
