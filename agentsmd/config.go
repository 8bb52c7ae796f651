package agentsmd

import (
	"errors"
	"fmt"
	"github.com/adkctx/adkctx/internal/config"
	"path/filepath"
	"strings"

	"go.uber.org/zap"
)

// maxConfigBytes bounds MaxFileBytes and TextBudget, so that the read limit
// derived from them cannot overflow.
const maxConfigBytes int64 = 1 << 30

// Config configures how AGENTS.md files are found and read: where the
// global file is, what marks the project root, which names are tried, and
// the read limits. instructions.NewLoader takes it; so does
// adkctx.InstructionsConfig.Discovery. The zero value is valid and uses the
// defaults stated on each field.
type Config struct {
	// GlobalFile is the user-wide instruction file read before any project
	// file. Empty: <os.UserConfigDir()>/adkctx/AGENTS.md, that is
	// $XDG_CONFIG_HOME/adkctx/AGENTS.md or ~/.config/adkctx/AGENTS.md on Linux.
	// A missing global file is not an error.
	GlobalFile string
	// NoGlobal disables the global file entirely.
	NoGlobal bool
	// RootMarkers are names whose presence (file or directory) marks a
	// directory as the project root. Default [".git"] (a file for worktrees
	// and submodules, a directory otherwise). The nearest ancestor of the
	// working directory holding ANY of the markers is the root; see the
	// package documentation for go.mod below .git.
	RootMarkers []string
	// FallbackNames are extra per-directory file names tried, in order, after
	// AGENTS.override.md and AGENTS.md (e.g. "CLAUDE.md"). Plain names only.
	FallbackNames []string
	// MaxFileBytes is the per-file read cap: at most MaxFileBytes+1 bytes
	// are read from one file, and a longer file is cut to it (on a rune
	// boundary) with a visible note. Default 64 KiB; at most 1 GiB.
	MaxFileBytes int64
	// TextBudget is how much instruction text the caller can use at most
	// (instructions.Loader passes its Config.MaxBytes). Files are read from
	// the working directory up to the root, then the global file; once the
	// files read so far hold TextBudget bytes of text, their remaining
	// imports and the less specific files are not read (they are listed in
	// instructions.Merged.Skipped), because the caller could not use them.
	// Default 32 KiB (the default of instructions.Config.MaxBytes); at most
	// 1 GiB.
	TextBudget int64
	// MaxImportDepth is the maximum @path import nesting. Default 5.
	MaxImportDepth int
	// Logger receives one warning per skipped file or import. nil: no logs.
	Logger *zap.Logger
}

// Validate reports every invalid field as an *adkctx.ConfigError (joined).
func (c Config) Validate() error {
	var errs []error
	if c.MaxFileBytes < 0 || c.MaxFileBytes > maxConfigBytes {
		errs = append(errs, config.Errorf("MaxFileBytes", c.MaxFileBytes, "must be between 0 (default) and 1 GiB"))
	}
	if c.TextBudget < 0 || c.TextBudget > maxConfigBytes {
		errs = append(errs, config.Errorf("TextBudget", c.TextBudget, "must be between 0 (default) and 1 GiB"))
	}
	if c.MaxImportDepth < 0 {
		errs = append(errs, config.Errorf("MaxImportDepth", c.MaxImportDepth, "must be ≥ 0 (0 means default)"))
	}
	for i, m := range c.RootMarkers {
		if err := checkPlainName(m); err != nil {
			errs = append(errs, config.Errorf(fmt.Sprintf("RootMarkers[%d]", i), m, "%v", err))
		}
	}
	for i, n := range c.FallbackNames {
		if err := checkPlainName(n); err != nil {
			errs = append(errs, config.Errorf(fmt.Sprintf("FallbackNames[%d]", i), n, "%v", err))
		}
	}
	return errors.Join(errs...)
}

func checkPlainName(n string) error {
	switch {
	case n == "":
		return errors.New("empty name")
	case n == "." || n == "..":
		return fmt.Errorf("%q is not a file name", n)
	case strings.ContainsAny(n, `/\`) || n != filepath.Base(n):
		return fmt.Errorf("%q must be a plain name without path separators", n)
	}
	return nil
}
