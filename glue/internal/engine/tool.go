package engine

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/glue/internal/readback"
	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/processors/truncate"
)

// SaveFunc saves an artifact of the current session (the glue wraps adk-go's agent.Artifacts).
type SaveFunc func(ctx context.Context, name string, part *genai.Part) error

// ErrNoArtifactService is what a SaveFunc returns when the runner turns out to have no artifact
// service: the output is cut without being saved, as when there is no SaveFunc, and nothing is
// logged.
var ErrNoArtifactService = errors.New("adkctx: the runner has no artifact service")

// AfterTool cuts a tool result (head and tail kept, with a marker) before it is stored. When save
// is not nil, each cut (a string or []byte, or the elements a long list left out) is saved whole,
// byte for byte, as its own artifact named in its marker. It returns nil when the result is kept
// as is.
func (e *Engine) AfterTool(ctx context.Context, c Call, tool, callID string, result map[string]any, save SaveFunc) map[string]any {
	if result == nil {
		return nil
	}
	var cuts []fullOutput
	var note func(truncate.Cut) string
	// A recall tool's result is bounded below the truncation limit: should it be cut anyway,
	// it is not saved again.
	if save != nil && !e.cfg.NoFullOutputArtifacts && !readback.IsTool(tool) {
		// With read_saved_output in the agent's last request, the note says how to read it.
		withTools := e.recallOutputs(c)
		note = func(cut truncate.Cut) string {
			out := fullOutput{cut: cut, text: isText(cut)}
			out.name = readback.OutputName(tool, callID, cut.Index, cut.Count, out.text)
			cuts = append(cuts, out)
			if withTools {
				return readback.OutputNote(out.name)
			}
			return fmt.Sprintf("full output saved as artifact %q", out.name)
		}
	}
	kept, stats := steps.TruncateToolResult(result, e.cfg.Truncation, note)
	if !stats.Truncated {
		return nil
	}
	var names []string
	for _, out := range cuts {
		if err := out.save(ctx, save); err != nil {
			if errors.Is(err, ErrNoArtifactService) {
				names = nil
				kept, stats = steps.TruncateToolResult(result, e.cfg.Truncation, nil)
				break
			}
			kind, msg := errkind.Of(err)
			e.log.Warn("full tool output not saved", zap.String("session_id", c.SessionID()), zap.String("tool", tool),
				zap.String("artifact", out.name), zap.String("error_kind", string(kind)), zap.String("error", msg))
			// No marker may name an artifact that is not there.
			names = nil
			kept, stats = steps.TruncateToolResult(result, e.cfg.Truncation, nil)
			break
		}
		names = append(names, out.name)
	}
	e.log.Info("tool output truncated",
		zap.String("session_id", c.SessionID()),
		zap.String("invocation_id", c.InvocationID()),
		zap.String("tool", tool),
		zap.String("function_call_id", callID),
		zap.Int("original_bytes", stats.OriginalBytes),
		zap.Int("kept_bytes", stats.KeptBytes),
		zap.Int("original_lines", stats.OriginalLines),
		zap.Int("omitted_lines", stats.OmittedLines),
		zap.Int("strings_cut", stats.StringsCut),
		zap.Int("items_omitted", stats.ItemsOmitted),
		zap.Int("numbers_replaced", stats.NumbersReplaced),
		zap.Strings("artifacts", names),
	)
	e.tel.truncation(ctx, tool, stats.OriginalBytes, stats.KeptBytes)
	return kept
}

// fullOutput is one cut of a tool result and the artifact that holds it whole.
type fullOutput struct {
	cut  truncate.Cut
	text bool // valid UTF-8
	name string
}

// save stores the cut's original bytes (one copy for a string, none for a []byte): text/plain
// when they are valid UTF-8, application/octet-stream otherwise.
func (o fullOutput) save(ctx context.Context, save SaveFunc) error {
	data := o.cut.Bytes
	if data == nil {
		data = []byte(o.cut.Text)
	}
	mime := "application/octet-stream"
	if o.text {
		mime = "text/plain; charset=utf-8"
	}
	return save(ctx, o.name, &genai.Part{InlineData: &genai.Blob{MIMEType: mime, Data: data}})
}

func isText(c truncate.Cut) bool {
	if c.Bytes != nil {
		return utf8.Valid(c.Bytes)
	}
	return utf8.ValidString(c.Text)
}
