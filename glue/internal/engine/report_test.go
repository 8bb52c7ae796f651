package engine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/plan"
	"github.com/adkctx/adkctx/internal/errkind"
)

// quotaErr is a provider's quota exhaustion (HTTP 429), as an SDK other than genai reports it.
type quotaErr struct{ StatusCode int }

func (quotaErr) Error() string { return "Error 429: Resource has been exhausted" }

// An operator filtering on Warn sees every failure of the primary summarizer, also when the
// fallback wrote the summary; attempts that did nothing stay at Debug.
func TestCompactionLogLevels(t *testing.T) {
	primary := &compaction.SummarizerError{Summarizer: "llm:gemini-2.5-flash", Err: fmt.Errorf("call: %w", quotaErr{429})}
	tests := []struct {
		name    string
		attempt compactor.Attempt
		want    zapcore.Level
		kind    errkind.Kind // primary_error_kind, or error_kind
	}{
		{"compacted", compactor.Attempt{Outcome: compactor.OutcomeCompacted}, zapcore.InfoLevel, errkind.None},
		{"compacted by the fallback after a 429", compactor.Attempt{Outcome: compactor.OutcomeCompacted,
			Result: plan.Result{FallbackUsed: true, PrimaryErr: primary}}, zapcore.WarnLevel, errkind.Quota},
		{"failed", compactor.Attempt{Outcome: compactor.OutcomeFailed, Result: plan.Result{Err: primary}}, zapcore.WarnLevel, errkind.Quota},
		{"nothing to do", compactor.Attempt{Outcome: compactor.OutcomeNothing}, zapcore.DebugLevel, errkind.None},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			e, err := New(adkctx.Config{Logger: zap.New(core)})
			if err != nil {
				t.Fatal(err)
			}
			tt.attempt.Trigger = compaction.TriggerInvocations
			e.reportCompaction(tt.attempt)
			entries := logs.FilterMessage("compaction").All()
			if len(entries) != 1 {
				t.Fatalf("%d compaction entries, want 1", len(entries))
			}
			fields := entries[0].ContextMap()
			kind := fields["primary_error_kind"]
			if kind == nil {
				kind = fields["error_kind"]
			}
			if kind == nil {
				kind = ""
			}
			got := []any{entries[0].Level, kind}
			if diff := cmp.Diff([]any{tt.want, string(tt.kind)}, got); diff != "" {
				t.Errorf("level and error kind (-want +got):\n%s", diff)
			}
		})
	}
}
