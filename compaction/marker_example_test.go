package compaction_test

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
)

// Inspect a stored session: the marker events adkctx appended (no content, author "user") hold
// their record under compaction.MetadataKey; ReadMarker decodes it, as a database hands it back
// (JSON numbers as float64) or as JSON text. A record that cannot be used is an
// *InvalidMarkerError (a view ignores it and hides nothing because of it); an event that is not
// a marker gives nil.
func ExampleReadMarker() {
	record := `{"version": 2, "seq": 1, "eventIds": ["e1", "e2", "e3", "e4"],
		"startTimestamp": 1772366400, "endTimestamp": 1772366403, "eventCount": 4, "trigger": "tokens",
		"originalTokens": 1800, "compactedTokens": 120, "summarizer": "extractive",
		"compactedContent": {"role": "user", "parts": [{"text": "Goal: rename the config package."}]}}`
	stored := []compaction.Event{
		{ID: "e5", Author: "user", Content: genai.NewContentFromText("Now update the README.", genai.RoleUser)},
		{ID: "m1", Author: "user", Metadata: map[string]any{compaction.MetadataKey: record}},
		{ID: "m2", Author: "user", Metadata: map[string]any{compaction.MetadataKey: `{"version": 2, "seq": 0}`}},
	}
	for i := range stored {
		m, err := compaction.ReadMarker(&stored[i])
		var invalid *compaction.InvalidMarkerError
		switch {
		case errors.As(err, &invalid):
			fmt.Printf("%s: unusable record\n", invalid.EventID)
		case m == nil:
			fmt.Printf("%s: not a marker\n", stored[i].ID)
		default:
			fmt.Printf("%s: %d events, %d → %d tokens, trigger %s, by %s\n", stored[i].ID,
				m.EventCount, m.OriginalTokens, m.CompactedTokens, m.Trigger, m.Summarizer)
			switch m.Trigger {
			case compaction.TriggerTokens:
				fmt.Println("why: a request neared the model's soft limit")
			case compaction.TriggerInvocations:
				fmt.Println("why: the sliding window (Config.Interval)")
			case compaction.TriggerManual:
				fmt.Println("why: the application asked (Hooks.Compact)")
			}
			fmt.Println("masks only:", m.MasksOnly())
		}
	}
	// Output:
	// e5: not a marker
	// m1: 4 events, 1800 → 120 tokens, trigger tokens, by extractive
	// why: a request neared the model's soft limit
	// masks only: false
	// m2: unusable record
}

// Recognise the summary in what the model is sent: the view shows each marker's summary as one
// content that starts with SummaryHeader.
func ExampleIsSummary() {
	summary := genai.NewContentFromText(compaction.SummaryHeader+"\nGoal: rename the config package.", genai.RoleUser)
	message := genai.NewContentFromText("Now update the README.", genai.RoleUser)
	fmt.Println(compaction.IsSummary(summary), compaction.IsSummary(message))
	fmt.Println(strings.HasPrefix(summary.Parts[0].Text, compaction.SummaryHeader))
	// Output:
	// true false
	// true
}
