package engine

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/internal/errkind"
)

// instructionsStep appends the merged AGENTS.md text of the session's working directory to the
// request's system instruction (steps.InjectInstructions). A load failure is logged and leaves
// the request as it is.
func (e *Engine) instructionsStep(ctx context.Context, c *chain) stepReport {
	merged, ok := e.agentsMD(ctx, c)
	if !ok {
		return instructionsReport{}
	}
	steps.InjectInstructions(c.req, merged.Text)
	return instructionsReport{bytes: len(merged.Text), skipped: len(merged.Skipped)}
}

// agentsMD returns the merged AGENTS.md text of the session's working directory, loaded once per
// request (the recall step sizes the instruction with it before this step adds it); false when
// AGENTS.md is off or the load failed (logged once).
func (e *Engine) agentsMD(ctx context.Context, c *chain) (instructions.Merged, bool) {
	if e.loader == nil {
		return instructions.Merged{}, false
	}
	if !c.agents.loaded {
		c.agents.loaded = true
		dir := e.workDirFor(c.state)
		merged, err := e.loader.Load(ctx, dir)
		if err != nil {
			kind, msg := errkind.Of(err)
			e.log.Warn("agents.md instructions unavailable", zap.String("session_id", c.sessionID), zap.String("work_dir", dir),
				zap.String("error_kind", string(kind)), zap.String("error", msg))
			return instructions.Merged{}, false
		}
		c.agents.merged, c.agents.ok = merged, true
	}
	return c.agents.merged, c.agents.ok
}

// workDirFor is the working directory whose AGENTS.md files apply to a session: the one its
// state names (InstructionsConfig.WorkDirStateKey), or the configured one.
func (e *Engine) workDirFor(state StateReader) string {
	if key := e.cfg.Instructions.WorkDirStateKey; key != "" && state != nil {
		if v, err := state.Get(key); err == nil {
			if dir, ok := v.(string); ok && dir != "" {
				return dir
			}
		}
	}
	return e.workDir
}

// instructionsReport reports the AGENTS.md text injected and the files left out of it.
type instructionsReport struct{ bytes, skipped int }

func (r instructionsReport) logFields(f []zap.Field) []zap.Field {
	return append(f, zap.Int("instruction_bytes", r.bytes))
}

func (instructionsReport) spanAttrs(a []attribute.KeyValue) []attribute.KeyValue { return a }

func (r instructionsReport) record(t *telemetry) {
	ctx := context.Background() // no exemplars, as in telemetry.decision
	if r.bytes > 0 {
		t.instrBytes.Record(ctx, int64(r.bytes))
	}
	if r.skipped > 0 {
		t.filesSkipped.Add(ctx, int64(r.skipped))
	}
}
