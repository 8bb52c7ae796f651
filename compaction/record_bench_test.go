package compaction

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/fixtures"
)

// BenchmarkLedgerDelta measures what building the ledger's delta costs per event (deltaOf: the
// shell scripts parsed, the outputs and results read) and applying it, on the shell agent's and
// the service agent's sessions, and what the record renders to: the extractive summary's
// rendering of the ledger in estimated tokens, whole and within the default bounds.
func BenchmarkLedgerDelta(b *testing.B) {
	task, steps := fixtures.ShellSession()
	user, calls := fixtures.ServiceSession()
	sessions := []struct {
		name   string
		events []Event
	}{
		{"shell-35-steps", shellEvents("i1", task, steps)},
		{"service-12-calls", serviceEvents(user, calls)},
	}
	for _, s := range sessions {
		b.Run(s.name+"/delta", func(b *testing.B) {
			var d *LedgerDelta
			for b.Loop() {
				d = NewLedgerDelta(s.events, 1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(s.events)), "ns/event")
			// What a marker stores of it, per event.
			j, _ := json.Marshal(d)
			b.ReportMetric(float64(len(j))/float64(len(s.events)), "stored-bytes/event")
		})
		b.Run(s.name+"/apply", func(b *testing.B) {
			d := NewLedgerDelta(s.events, 1)
			for b.Loop() {
				(&Ledger{}).apply(d)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(s.events)), "ns/event")
		})
		b.Run(s.name+"/render", func(b *testing.B) {
			l := &Ledger{}
			l.apply(NewLedgerDelta(s.events, 1))
			bytes := max(defaultExtractiveMaxBytes, len(l.userSection(UserTextTokens))+extractiveOtherBytes) + l.recordRoom()
			var text string
			for b.Loop() {
				text = extractiveText(l, "", 1024, bytes)
			}
			b.ReportMetric(float64(budget.EstimateText(l.render(renderLimits{}, false))), "whole-tokens")
			b.ReportMetric(float64(budget.EstimateText(l.recordText())), "record-tokens")
			b.ReportMetric(float64(budget.EstimateText(text)), "summary-tokens")
		})
	}
	// A long session: the record full, its bounds reached.
	var long []Event
	for _, inv := range shellAndServiceEvents(120) {
		long = append(long, inv...)
	}
	b.Run(fmt.Sprintf("mixed-%d-events/delta", len(long)), func(b *testing.B) {
		for b.Loop() {
			_ = NewLedgerDelta(long, 120)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(long)), "ns/event")
	})
	b.Run(fmt.Sprintf("mixed-%d-events/render", len(long)), func(b *testing.B) {
		l := &Ledger{}
		l.apply(NewLedgerDelta(long, 120))
		bytes := max(defaultExtractiveMaxBytes, len(l.userSection(UserTextTokens))+extractiveOtherBytes) + l.recordRoom()
		var text string
		for b.Loop() {
			text = extractiveText(l, "", 8192, bytes)
		}
		b.ReportMetric(float64(budget.EstimateText(text)), "summary-tokens")
	})
}
