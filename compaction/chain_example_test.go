package compaction_test

import (
	"context"
	"fmt"
	"log"
	"strings"

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

// The user's messages a ledger keeps: verbatim while they fit UserTextTokens; past it the
// oldest go first, shortened then dropped, and the ledger counts them. A message stating a
// standing rule ("never", "always", …) goes after the others, and the goal (the first message)
// last.
func ExampleUserMessage() {
	events := []compaction.Event{{ID: "u0", Author: "user", InvocationID: "i0",
		Content: genai.NewContentFromText("Port the billing service to Go.", genai.RoleUser)}}
	for k := 1; k <= 60; k++ {
		text := fmt.Sprintf("Step %d: %s", k, strings.Repeat("look at the next handler and tell me what it does. ", 4))
		if k == 3 {
			text = "Never touch the vendor directory."
		}
		id := fmt.Sprintf("u%d", k)
		events = append(events, compaction.Event{ID: id, Author: "user", InvocationID: id, Content: genai.NewContentFromText(text, genai.RoleUser)})
	}
	ledger := (&compaction.Ledger{}).Apply(compaction.NewLedgerDelta(events, len(events)))

	fmt.Println("goal:", ledger.Goal)
	fmt.Println("over the budget of", compaction.UserTextTokens, "tokens, dropped:", ledger.MessagesDropped > 0)
	for _, m := range ledger.Messages {
		if m.Rule {
			fmt.Println("the rule is kept:", m.Text, "shortened:", m.Shortened)
		}
	}
	newest := ledger.Messages[len(ledger.Messages)-1]
	fmt.Println("the newest is kept:", strings.HasPrefix(newest.Text, "Step 60:"))
	// Output:
	// goal: Port the billing service to Go.
	// over the budget of 1024 tokens, dropped: true
	// the rule is kept: Never touch the vendor directory. shortened: false
	// the newest is kept: true
}
