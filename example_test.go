package adkctx_test

import (
	"errors"
	"fmt"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/processors/truncate"
)

// A configuration with every part on: a model the built-in table does not know, tighter limits,
// smaller tool results, AGENTS.md instructions and compaction with the defaults. The glue of
// each adk-go major version (package hooks) takes it as is; Validate reports every invalid field
// at once, each a *adkctx.ConfigError naming its path.
func ExampleConfig() {
	cfg := adkctx.Config{
		Models:     []budget.ModelInfo{{Name: "my-local-llama", ContextWindow: 32_768, MaxOutputTokens: 4_096}},
		Limits:     budget.LimitConfig{SoftFraction: 0.6},
		Truncation: truncate.Config{MaxBytes: 8 << 10},
		Instructions: &adkctx.InstructionsConfig{
			Discovery: agentsmd.Config{NoGlobal: true},
			Merge:     instructions.Config{MaxBytes: 16 << 10},
		},
		Compaction: &compaction.Config{},
	}
	fmt.Println("valid:", cfg.Validate() == nil)

	cfg.Limits.SoftFraction = 1.5
	cfg.Truncation.MaxBytes = 10
	for _, err := range cfg.Validate().(interface{ Unwrap() []error }).Unwrap() {
		var bad *adkctx.ConfigError
		if errors.As(err, &bad) {
			fmt.Println(bad.Field, bad.ErrorKind())
		}
	}
	// Output:
	// valid: true
	// Limits.SoftFraction config
	// Truncation.MaxBytes config
}

// Hooks.Check and Hooks.Close return the wiring mistakes they found, joined: match each with
// errors.As, and read its Problem (the log's "problem" field) to tell them apart.
func ExampleWiringError() {
	err := errors.Join(&adkctx.WiringError{Problem: "plugin_missing", Message: "the runner does not run adkctx's plugin"})
	var wiring *adkctx.WiringError
	if errors.As(err, &wiring) {
		fmt.Println(wiring.Problem)
	}
	// Output:
	// plugin_missing
}
