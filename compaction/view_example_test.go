package compaction_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/adkctx/adkctx/compaction"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

func textEvent(id, author, text string, at time.Time) *session.Event {
	role := genai.RoleModel
	if author == "user" {
		role = genai.RoleUser
	}
	return &session.Event{ID: id, Author: author, InvocationID: "inv-" + id, Timestamp: at,
		LLMResponse: model.LLMResponse{Content: genai.NewContentFromText(text, genai.Role(role))}}
}

// A marker covering the first two events: the view shows its summary in
// their place, then the events that were not covered.
func ExampleView() {
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	stored := []*session.Event{
		textEvent("e1", "user", "Plan a trip to Rome.", t0),
		textEvent("e2", "planner", "Flights booked for May 3.", t0.Add(time.Second)),
		textEvent("e3", "user", "Add a hotel.", t0.Add(time.Second)), // same timestamp as e2, not covered
	}
	m := &compaction.Marker{
		CompactedContent: genai.NewContentFromText("The user plans a Rome trip; flights are booked for May 3.", genai.RoleUser),
		Trigger:          compaction.TriggerManual,
	}
	m.SetRange(stored, 0, 1, nil)
	stored = append(stored, compaction.NewMarkerEvent(m, "inv-compact", t0.Add(2*time.Second)))

	for _, e := range compaction.View(stored, nil) {
		fmt.Printf("[%s] %s\n", e.Author, e.Content.Parts[0].Text)
	}
	// Output:
	// [user] [Summary of earlier conversation]
	// The user plans a Rome trip; flights are booked for May 3.
	// [user] Add a hotel.
}

// ReadMarker parses the record the way a database hands it back (numbers as
// float64, lists as []any), and converts to the EventCompaction shape.
func ExampleReadMarker() {
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	m := &compaction.Marker{
		StartTimestamp:   compaction.Seconds(t0),
		EndTimestamp:     compaction.Seconds(t0.Add(90 * time.Second)),
		CompactedContent: genai.NewContentFromText("summary", genai.RoleUser),
		FirstEventID:     "e1",
		LastEventID:      "e7",
		EventCount:       7,
		OriginalTokens:   4200,
		CompactedTokens:  300,
		CompressionRatio: 14,
		Trigger:          compaction.TriggerTokens,
	}
	ev := compaction.NewMarkerEvent(m, "inv", t0.Add(2*time.Minute))

	// Simulate a database round-trip of CustomMetadata.
	raw, _ := json.Marshal(ev.CustomMetadata)
	ev.CustomMetadata = nil
	_ = json.Unmarshal(raw, &ev.CustomMetadata)

	got, err := compaction.ReadMarker(ev)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(got.FirstEventID, got.LastEventID, got.EventCount, got.Trigger, got.CompressionRatio)
	fmt.Println(got.Start().Format(time.RFC3339), got.End().Format(time.RFC3339))
	ec := got.EventCompaction()
	fmt.Println(ec["endTimestamp"].(float64)-ec["startTimestamp"].(float64), ec["compactedContent"])

	// A corrupt record is reported, never a panic.
	ev.CustomMetadata[compaction.MetadataKey] = map[string]any{"startTimestamp": "yesterday"}
	_, err = compaction.ReadMarker(ev)
	fmt.Println(err != nil)
	// Output:
	// e1 e7 7 tokens 14
	// 2026-01-01T09:00:00Z 2026-01-01T09:01:30Z
	// 90 map[parts:[map[text:summary]] role:user]
	// true
}
