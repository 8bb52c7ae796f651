package compaction_test

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
)

// A session of five events, then a marker (stored by the compactor as a record in the event's
// CustomMetadata) that covers the first four: the view shows the summary in their place and the
// newest event raw.
func ExampleViewer_View() {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	text := func(id, author, role, s string, sec int) compaction.Event {
		return compaction.Event{ID: id, InvocationID: "inv-" + id[1:2], Author: author,
			Timestamp: t0.Add(time.Duration(sec) * time.Second), Content: genai.NewContentFromText(s, genai.Role(role))}
	}
	// The record as a database hands it back (JSON numbers as float64); JSON text works too.
	record := `{"version": 2, "seq": 1, "eventIds": ["e1", "e2", "e3", "e4"],
		"startTimestamp": 1772366400, "endTimestamp": 1772366403, "eventCount": 4,
		"compactedContent": {"role": "user", "parts": [{"text": "Goal: rename the config package.\nDone: renamed it, tests pass."}]}}`
	events := []compaction.Event{
		text("e1", "user", "user", "Rename the config package to settings.", 0),
		text("e2", "agent", "model", "Renamed; 12 files changed.", 1),
		text("e3", "user", "user", "Run the tests.", 2),
		text("e4", "agent", "model", "All tests pass.", 3),
		text("e5", "user", "user", "Now update the README.", 4),
		{ID: "m1", Author: "user", Timestamp: t0.Add(5 * time.Second), Metadata: map[string]any{compaction.MetadataKey: record}},
	}
	for _, item := range compaction.NewViewer(nil).View(events) {
		if item.Summary != nil {
			fmt.Printf("summary of %s: %q\n", item.MarkerID, item.Summary.Parts[0].Text)
			continue
		}
		fmt.Printf("%s: %s\n", events[item.Index].ID, events[item.Index].Content.Parts[0].Text)
	}
	// Output:
	// summary of m1: "[Summary of earlier conversation]\nGoal: rename the config package.\nDone: renamed it, tests pass."
	// e5: Now update the README.
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
