// Package adkctx is the configuration of adkctx, the context layer for agents built on adk-go:
// session-history compaction, per-model token budgets, tool-output truncation, valid
// call/response history and merged AGENTS.md instructions.
//
// Configure it with a Config and wire it into a runner with the glue of your adk-go major
// version: package hooks for google.golang.org/adk (v1), package adk2/hooks of the module
// github.com/adkctx/adkctx/adk2 for google.golang.org/adk/v2. Everything that decides —
// budgets, estimation, truncation, normalization, compaction, AGENTS.md — lives in the
// adk-go-independent packages budget, processors/..., compaction, agentsmd and instructions.
package adkctx

import (
	"errors"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/internal/config"
	"github.com/adkctx/adkctx/internal/modelname"
	"github.com/adkctx/adkctx/processors/truncate"
)

// Config configures adkctx. The zero value is valid: budgets, truncation and normalization on
// with every default below; AGENTS.md instructions and compaction off.
type Config struct {
	// Logger receives every budget decision, truncation, compaction and instructions change
	// (never conversation text). Default: zap.NewNop().
	Logger *zap.Logger

	// Models adds or overrides model limits, matched like the built-in table (by name prefix,
	// ignoring case, "models/" and version suffixes). An entry without a ContextWindow keeps the
	// built-in (or fallback) window and overrides what it sets. Each entry must name a model no
	// other entry names, and a ContextWindow it sets is at least budget.MinContextWindow (1,024
	// tokens); see budget.ModelInfo.Validate. Default: none.
	Models []budget.ModelInfo

	// Limits sets the output reserve and the soft and hard limits. Default: reserve min(max
	// output, 10% of the window), soft 70%, hard 95% of what remains.
	Limits budget.LimitConfig

	// Truncation bounds each tool result before it is stored, and every function response in
	// history before it is sent. Default: 10 KiB and 256 lines, head and tail kept.
	Truncation truncate.Config

	// NoFullOutputArtifacts turns off saving the untruncated tool result as an artifact (named in
	// the truncation marker). Default: saved when the runner has an artifact service.
	NoFullOutputArtifacts bool

	// Instructions, when set, merges AGENTS.md files into every model request's system
	// instruction. Default: nil (off).
	Instructions *InstructionsConfig

	// Compaction, when set, turns on session-history compaction. Default: nil (off).
	Compaction *compaction.Config

	// MeterProvider receives adkctx's metrics and TracerProvider its spans. Default: the global
	// providers (otel.GetMeterProvider, otel.GetTracerProvider), which cost nothing until an
	// application installs an SDK.
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider
}

// InstructionsConfig configures AGENTS.md discovery and merging.
type InstructionsConfig struct {
	// WorkDir is the working directory whose AGENTS.md files apply (from the project root down
	// to it). It must exist. Default: the process's working directory.
	WorkDir string
	// WorkDirStateKey, when set, names a session-state key holding the working directory, so one
	// process serves sessions in different repositories. A session without it uses WorkDir.
	WorkDirStateKey string
	// Discovery configures where files are found and how they are read.
	Discovery agentsmd.Config
	// Merge configures the merged text (total byte budget, default 32 KiB).
	Merge instructions.Config
}

// ConfigError reports one invalid configuration field; validation joins every problem found.
// Match it with errors.As.
type ConfigError = config.Error

// Validate reports every invalid field of c as a *ConfigError (joined with errors.Join).
func (c *Config) Validate() error {
	var errs []error
	errs = append(errs, config.Nest("Limits", c.Limits.Validate()), config.Nest("Truncation", c.Truncation.Validate()))
	first := map[string]int{} // normalized name → index of its first entry
	for i, m := range c.Models {
		errs = append(errs, config.Nest(fmt.Sprintf("Models[%d]", i), m.Validate()))
		name := modelname.Normalize(m.Name)
		if name == "" {
			continue
		}
		if j, ok := first[name]; ok {
			errs = append(errs, config.Errorf(fmt.Sprintf("Models[%d].Name", i), m.Name,
				"names the model Models[%d] names (%q): one entry per model, or the first wins unseen", j, c.Models[j].Name))
			continue
		}
		first[name] = i
	}
	if ic := c.Instructions; ic != nil {
		if ic.WorkDir != "" {
			if st, err := os.Stat(ic.WorkDir); err != nil || !st.IsDir() {
				errs = append(errs, config.Errorf("Instructions.WorkDir", ic.WorkDir, "is not a directory"))
			}
		}
		errs = append(errs, config.Nest("Instructions.Discovery", ic.Discovery.Validate()), config.Nest("Instructions.Merge", ic.Merge.Validate()))
	}
	errs = append(errs, config.Nest("Compaction", c.Compaction.Validate()))
	return errors.Join(errs...)
}

// WiringError reports a wiring mistake: a Hooks never wired, a runner whose session service is
// not wrapped or that bypasses adkctx's plugin, a second session store, recall tools without an
// artifact service, a session database without adkctx's index. Those found while adkctx runs are
// also logged once (the index at warn level, the others at error level); Hooks.Check and
// Hooks.Close return them, joined, so a mistake is found without a logger. Every refusal of
// Hooks.Wire is one, and a run refused because its session service is not wrapped returns one
// from adk-go's Runner.Run. Match it with errors.As and its Problem.
type WiringError struct {
	// Problem is the kind of mistake (the log's "problem" field), one of: "not_wired",
	// "view_missing", "plugin_missing", "second_store", "recall_without_artifacts",
	// "session_index_missing"; refused by Hooks.Wire: "session_service_missing",
	// "agent_missing", "already_wired", "second_store", "second_artifact_service",
	// "artifact_service_not_ready", "recall_without_artifacts".
	Problem string
	// Message says what goes wrong because of it and how to fix it.
	Message string
	// Err is the error behind the mistake, if any (an artifact service's readiness check):
	// errors.Is and errors.As reach it.
	Err error
}

func (e *WiringError) Error() string { return "adkctx is wired wrong: " + e.Message }

// Unwrap returns Err.
func (e *WiringError) Unwrap() error { return e.Err }
