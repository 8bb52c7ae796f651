package compaction_test

import (
	"context"
	"fmt"
	"log"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
)

// A marker chain, written and read back as adkctx does: the first marker stores its ledger
// whole, the next one only what its newly covered events add (a LedgerDelta, with the timestamp
// of the marker holding the ledger it continues). A program reading markers resolves a chain's
// ledger with Apply, then the summary the newest marker stands for.
func ExampleNewLedgerDelta() {
	user := func(id, text string) compaction.Event {
		return compaction.Event{ID: id, Author: "user", InvocationID: id, Content: genai.NewContentFromText(text, genai.RoleUser)}
	}
	first := []compaction.Event{user("i1", "Rename the config package to settings.")}
	second := []compaction.Event{user("i2", "Now update the README: never mention the old name.")}
	extractive := &compaction.ExtractiveSummarizer{}

	// The writer's side: each marker's ledger and summary, stored as an event's CustomMetadata.
	write := func(m *compaction.Marker, covered []compaction.Event, ledger *compaction.Ledger) map[string]any {
		sum, err := extractive.Summarize(context.Background(), compaction.SummaryInput{Events: covered, Ledger: ledger})
		if err != nil {
			log.Fatal(err)
		}
		m.SetSummary(sum, ledger)
		md, err := m.Metadata()
		if err != nil {
			log.Fatal(err)
		}
		return md
	}
	ledger1 := (&compaction.Ledger{}).Apply(compaction.NewLedgerDelta(first, 1))
	m1 := &compaction.Marker{Version: 2, Seq: 1, EventIDs: []string{"i1"}, EventCount: 1,
		StartTimestamp: 1772366400, EndTimestamp: 1772366400, Ledger: ledger1, Summarizer: extractive.Name()}
	delta := compaction.NewLedgerDelta(second, 1)
	ledger2 := ledger1.Apply(delta)
	m2 := &compaction.Marker{Version: 2, Seq: 2, Previous: "m1", EventIDs: []string{"i2"}, EventCount: 1,
		StartTimestamp: 1772366460, EndTimestamp: 1772366460, LedgerDelta: delta, LedgerFrom: 1772366401, Summarizer: extractive.Name()}
	stored := []compaction.Event{
		{ID: "m1", Author: "user", Metadata: write(m1, first, ledger1)},
		{ID: "m2", Author: "user", Metadata: write(m2, second, ledger2)},
	}

	// The reader's side.
	var ledger *compaction.Ledger
	for i := range stored {
		m, err := compaction.ReadMarker(&stored[i])
		if err != nil {
			log.Fatal(err)
		}
		if m.Ledger != nil {
			ledger = m.Ledger
		} else {
			ledger = ledger.Apply(m.LedgerDelta)
		}
		fmt.Printf("%s: seq %d, ledger stored whole: %t\n", stored[i].ID, m.Seq, m.Ledger != nil)
		if i == len(stored)-1 {
			fmt.Println(m.Summary(ledger).Parts[0].Text)
		}
	}
	// Output:
	// m1: seq 1, ledger stored whole: true
	// m2: seq 2, ledger stored whole: false
	// Goal: Rename the config package to settings.
	// The user's messages, oldest first (verbatim; rules in them hold unless the user changed them):
	// - Now update the README: never mention the old name.
}
