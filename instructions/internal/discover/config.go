package discover

import (
	"cmp"

	"go.uber.org/zap"

	"github.com/adkctx/adkctx/agentsmd"
)

// The defaults of agentsmd.Config's zero fields. agentsmd.Config's field
// comments state them to users; this is their only home in code.
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
)

// defaultRootMarkers returns a fresh copy of the default root markers ([".git"]).
func defaultRootMarkers() []string { return []string{".git"} }

// withDefaults returns c with zero fields replaced by defaults.
func withDefaults(c agentsmd.Config) agentsmd.Config {
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
func readLimit(c agentsmd.Config) int64 { return 4 * (c.TextBudget + c.MaxFileBytes + 1) }

// candidateNames returns the per-directory names in precedence order.
func candidateNames(c agentsmd.Config) []string {
	names := make([]string, 0, 2+len(c.FallbackNames))
	names = append(names, overrideName, defaultName)
	for _, n := range c.FallbackNames {
		if n != overrideName && n != defaultName {
			names = append(names, n)
		}
	}
	return names
}
