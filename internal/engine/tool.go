package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/processors/response"
)

// SaveFunc saves an artifact of the current session (the glue wraps adk-go's agent.Artifacts).
type SaveFunc func(ctx context.Context, name string, part *genai.Part) error

// AfterTool cuts a tool result (head and tail kept, with a marker) before it is stored, saving
// the full result as an artifact when save is not nil. It returns nil when the result is kept
// as is.
func (e *Engine) AfterTool(ctx context.Context, c Call, tool, callID string, result map[string]any, save SaveFunc) map[string]any {
	if result == nil {
		return nil
	}
	name, note := "", ""
	if save != nil && !e.cfg.NoFullOutputArtifacts {
		name = ArtifactName(tool, callID)
		note = fmt.Sprintf("full output saved as artifact %q", name)
	}
	cut, stats := response.TruncateToolResult(result, e.cfg.Truncation, note)
	if !stats.Truncated {
		return nil
	}
	if name != "" {
		if err := saveFull(ctx, save, name, result); err != nil {
			kind, msg := errkind.Of(err)
			e.log.Warn("full tool output not saved", zap.String("session_id", c.SessionID()), zap.String("tool", tool),
				zap.String("artifact", name), zap.String("error_kind", string(kind)), zap.String("error", msg))
			name = ""
			cut, stats = response.TruncateToolResult(result, e.cfg.Truncation, "")
		}
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
		zap.String("artifact", name),
	)
	e.tel.truncation(ctx, tool, stats.OriginalBytes-stats.KeptBytes)
	return cut
}

func saveFull(ctx context.Context, save SaveFunc, name string, result map[string]any) error {
	data, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("encode tool result: %w", err)
	}
	return save(ctx, name, &genai.Part{InlineData: &genai.Blob{MIMEType: "application/json", Data: data}})
}

// ArtifactName names the artifact holding a tool's untruncated result.
func ArtifactName(tool, callID string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
				return r
			}
			return '_'
		}, s)
	}
	if callID == "" {
		callID = "call"
	}
	return fmt.Sprintf("adkctx-tool-output-%s-%s.json", clean(tool), clean(callID))
}
