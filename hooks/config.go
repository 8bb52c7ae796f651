package hooks

import (
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/processors/truncate"
)

// Config configures New. The zero value is valid: budgets, truncation and normalization on, with
// every default below; AGENTS.md instructions and compaction off.
type Config struct {
	// Logger receives every budget decision, truncation, compaction and instructions change.
	// Default: zap.NewNop().
	Logger *zap.Logger

	// Models adds or overrides model context windows (matched like the built-in registry: by
	// name prefix, ignoring "models/" and version suffixes). Default: none.
	Models []budget.ModelInfo

	// Limits sets the output reserve and the soft and hard limits as fractions of the usable
	// window. Default: reserve min(max output, 10% of the window), soft 70%, hard 95% of usable.
	Limits budget.LimitConfig

	// Truncation bounds each tool result before it is stored, and every function response in
	// history before it is sent. Default: 10 KiB and 256 lines, head and tail kept.
	Truncation truncate.Config

	// KeepFullOutputs saves every string (or []byte) cut from a tool result whole, byte for byte,
	// and the elements a long list or map left out (as JSON), each as its own artifact named in
	// its marker, when the runner has an artifact service: adkctx-tool-output-<tool>-<call>.txt,
	// or -<call>-<n>.txt for the n-th of several; .bin (application/octet-stream) instead of .txt
	// (text/plain; charset=utf-8) when the bytes are not valid UTF-8. Default (nil): true.
	KeepFullOutputs *bool

	// Instructions, when set, merges AGENTS.md files into every model request's system
	// instruction. Default: nil (off).
	Instructions *InstructionsConfig

	// Compaction, when set, turns on session-history compaction: SessionService must wrap the
	// runner's session service and Plugin must be registered with the runner. Default: nil (off).
	Compaction *compaction.Config
}

// InstructionsConfig configures AGENTS.md discovery and merging.
type InstructionsConfig struct {
	// WorkDir is the working directory whose AGENTS.md files apply (from the project root down to
	// it). Default: the process's working directory at New.
	WorkDir string
	// WorkDirStateKey, when set, names a session-state key holding the working directory, so one
	// process can serve sessions in different repositories. A session without the key uses WorkDir.
	WorkDirStateKey string
	// Discovery configures where files are found and how they are read (root markers, global file,
	// read caps, imports).
	Discovery agentsmd.Config
	// Merge configures the merged text (total byte budget, default 32 KiB).
	Merge instructions.Config
}

// ErrInvalidConfig wraps every configuration error returned by New.
var ErrInvalidConfig = errors.New("adkctx: invalid configuration")

func (c *Config) validate() error {
	if err := c.Limits.Validate(); err != nil {
		return fmt.Errorf("%w: limits: %w", ErrInvalidConfig, err)
	}
	if err := c.Truncation.Validate(); err != nil {
		return fmt.Errorf("%w: truncation: %w", ErrInvalidConfig, err)
	}
	for _, m := range c.Models {
		if m.Name == "" || m.ContextWindow <= 0 || m.MaxOutputTokens < 0 {
			return fmt.Errorf("%w: model override %q needs a name and a positive context window", ErrInvalidConfig, m.Name)
		}
	}
	if c.Compaction != nil {
		if err := c.Compaction.Validate(); err != nil {
			return fmt.Errorf("%w: compaction: %w", ErrInvalidConfig, err)
		}
	}
	return nil
}

func (c *Config) keepFullOutputs() bool {
	return c.KeepFullOutputs == nil || *c.KeepFullOutputs
}
