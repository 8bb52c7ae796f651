package compaction_test

import (
	"context"
	"fmt"

	"github.com/adkctx/adkctx/compaction"
)

// A marker's summary: what a view shows in place of the events it covers. This record stores
// the summary composed with its ledger ("summaryLedger": "whole": the extractive summary is the
// ledger rendered within summaryTokens and summaryBytes), so the text is not stored twice; Summary
// composes it again from the ledger.
func ExampleMarker_Summary() {
	record := `{"version": 2, "seq": 1, "eventIds": ["e1", "e2", "e3", "e4"],
		"startTimestamp": 1772366400, "endTimestamp": 1772366403, "eventCount": 4,
		"summaryLedger": "whole", "summaryTokens": 1024, "summaryBytes": 6144,
		"ledger": {"goal": "Rename the config package to settings.", "messages": [{"text": "Run the tests."}],
			"tools": {"bash": 2}, "paths": {"config/": {"bash": 1}}, "events": 4, "invocations": 2}}`
	m, err := compaction.ReadMarker(&compaction.Event{ID: "m1", Metadata: map[string]any{compaction.MetadataKey: record}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Summary(m.Ledger).Parts[0].Text)
	// Output:
	// Goal: Rename the config package to settings.
	// The user's messages, oldest first (verbatim; rules in them hold unless the user changed them):
	// - Run the tests.
	// Files and paths the tools used (exact calls):
	// - config/ (bash ×1)
	// Tool calls: bash ×2 (2 calls over 2 invocations)
}

// The extractive summarizer renders the ledger of what the covered events did: deterministic,
// bounded, with exact counts.
func ExampleExtractiveSummarizer() {
	ledger := &compaction.Ledger{
		Goal: "Port the billing service to Go.",
		Messages: []compaction.UserMessage{
			{Text: "Never touch vendor/.", Rule: true},
			{Text: "Add the invoice endpoint."},
			{Text: "Der Testserver läuft auf Port 8443."},
			{Text: "Now write its tests."},
		},
		Paths: map[string]map[string]int{
			"billing/invoice.go":      {"read_file": 2, "edit_file": 3},
			"billing/invoice_test.go": {"edit_file": 1},
		},
		Tools:       map[string]int{"read_file": 2, "edit_file": 4, "run_tests": 2},
		Errors:      []string{"tool run_tests: exit 1 FAIL TestInvoice"},
		Answers:     []string{"The tests pass now."},
		Invocations: 3,
	}
	in := compaction.SummaryInput{
		Events: []compaction.Event{{ID: "e1"}}, // the events newly covered (the ledger already counts them)
		Ledger: ledger,
	}
	sum, err := (&compaction.ExtractiveSummarizer{}).Summarize(context.Background(), in)
	if err != nil {
		panic(err)
	}
	fmt.Println(sum.Content.Parts[0].Text)
	// Output:
	// Goal: Port the billing service to Go.
	// The user's messages, oldest first (verbatim; rules in them hold unless the user changed them):
	// - Never touch vendor/.
	// - Add the invoice endpoint.
	// - Der Testserver läuft auf Port 8443.
	// - Now write its tests.
	// Files and paths the tools used (exact calls):
	// - billing/invoice.go (edit_file ×3, read_file ×2)
	// - billing/invoice_test.go (edit_file ×1)
	// Tool calls: edit_file ×4, read_file ×2, run_tests ×2 (8 calls over 3 invocations)
	// Errors seen:
	// - tool run_tests: exit 1 FAIL TestInvoice
	// Recent answers:
	// - The tests pass now.
}
