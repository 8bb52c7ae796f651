package agentsmd

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/adkctx/adkctx/internal/config"
	"path/filepath"
	"strings"

	"go.uber.org/zap"
)

// Defaults used when the corresponding Config field is zero.
const (
	// defaultMaxFileBytes is the per-file read cap (64 KiB). At most
	// MaxFileBytes+1 bytes are ever read from one file; longer files are
	// truncated to the cap (on a rune boundary) with a visible note.
	defaultMaxFileBytes int64 = 64 << 10
	// defaultTextBudget is the default Config.TextBudget (32 KiB, the default
	// budget of instructions.Config.MaxBytes).
	defaultTextBudget int64 = 32 << 10
	// defaultMaxImportDepth is the maximum nesting depth of @path imports.
	defaultMaxImportDepth = 5
	// overrideName is the per-directory file that wins over AGENTS.md.
	overrideName = "AGENTS.override.md"
	// defaultName is the standard per-directory file name.
	defaultName = "AGENTS.md"
	// globalSubdir is the folder below the user's config directory that holds
	// the default global file: <UserConfigDir>/adkctx/AGENTS.md.
	globalSubdir = "adkctx"
	// binarySniffBytes is how much of a file is searched for a NUL byte.
	binarySniffBytes = 8 << 10
	// maxConfigBytes bounds MaxFileBytes and TextBudget, so that the read
	// limit derived from them cannot overflow.
	maxConfigBytes int64 = 1 << 30
)

// defaultRootMarkers returns a fresh copy of the default root markers ([".git"]).
func defaultRootMarkers() []string { return []string{".git"} }

// Config configures Discover. The zero value is valid and uses the defaults.
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
	// MaxFileBytes is the per-file read cap. Default defaultMaxFileBytes;
	// at most 1 GiB.
	MaxFileBytes int64
	// TextBudget is how much instruction text the caller can use at most
	// (instructions.Loader passes its Config.MaxBytes). Files are read from
	// the working directory up to the root, then the global file; once the
	// files read so far hold TextBudget bytes of text, their remaining
	// imports and the less specific files are not read (they are listed in
	// Discovery.Skipped), because the caller could not use them. Default
	// defaultTextBudget; at most 1 GiB.
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

// withDefaults returns c with zero fields replaced by defaults.
func (c Config) withDefaults() Config {
	c.MaxFileBytes = cmp.Or(c.MaxFileBytes, defaultMaxFileBytes)
	c.TextBudget = cmp.Or(c.TextBudget, defaultTextBudget)
	c.MaxImportDepth = cmp.Or(c.MaxImportDepth, defaultMaxImportDepth)
	if len(c.RootMarkers) == 0 {
		c.RootMarkers = defaultRootMarkers()
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return c
}

// readLimit bounds the bytes one discovery reads, used or refused: room for
// the text budget, the overshoot of the file that fills it, and a few
// refused (binary, empty) files. Only valid after withDefaults.
func (c Config) readLimit() int64 { return 4 * (c.TextBudget + c.MaxFileBytes + 1) }

// candidateNames returns the per-directory names in precedence order.
func (c Config) candidateNames() []string {
	names := make([]string, 0, 2+len(c.FallbackNames))
	names = append(names, overrideName, defaultName)
	for _, n := range c.FallbackNames {
		if n != overrideName && n != defaultName {
			names = append(names, n)
		}
	}
	return names
}
