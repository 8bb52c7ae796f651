package compaction_test

import (
	"context"
	"fmt"
	"time"

	"github.com/adkctx/adkctx/compaction"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

// appendTurn stores one invocation (user message + final answer).
func appendTurn(ctx context.Context, svc session.Service, s session.Session, inv string, at time.Time, q, a string) {
	for i, e := range []*session.Event{
		{Author: "user", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText(q, genai.RoleUser)}},
		{Author: "assistant", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText(a, genai.RoleModel)}},
	} {
		e.ID, e.InvocationID, e.Timestamp = fmt.Sprintf("%s-%d", inv, i), inv, at.Add(time.Duration(i)*time.Second)
		if err := svc.AppendEvent(ctx, s, e); err != nil {
			panic(err)
		}
	}
}

// A sliding-window compaction after θ = 2 invocations: storage keeps every
// event, the view (what adk-go builds the next request from) holds the
// summary plus what came after.
func ExampleCompactor_Compact() {
	ctx := context.Background()
	svc := compaction.NewService(session.InMemoryService(), nil)
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		panic(err)
	}
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	appendTurn(ctx, svc, created.Session, "inv1", t0, "Plan a trip to Rome.", "Flights booked for May 3.")
	appendTurn(ctx, svc, created.Session, "inv2", t0.Add(time.Minute), "Add a hotel.", "Hotel Roma booked.")

	c, err := compaction.NewCompactor(compaction.Config{Interval: 2}) // extractive summarizer by default
	if err != nil {
		panic(err)
	}
	m, err := c.Compact(ctx, compaction.Request{Service: svc, AppName: "app", UserID: "u", SessionID: "s", Trigger: compaction.TriggerInvocations})
	if err != nil {
		panic(err)
	}
	fmt.Println("covered:", m.EventCount, "trigger:", m.Trigger, "summarizer:", m.Summarizer)

	got, _ := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	fmt.Println("stored events:", len(compaction.RawEvents(got.Session)))
	for e := range got.Session.Events().All() {
		fmt.Printf("view [%s]:\n%s\n", e.Author, e.Content.Parts[0].Text)
	}
	// Output:
	// covered: 4 trigger: invocations summarizer: extractive
	// stored events: 5
	// view [user]:
	// [Summary of earlier conversation]
	// Goal: Plan a trip to Rome.
	// Latest request: Add a hotel.
	// Recent answers:
	// - Flights booked for May 3.
	// - Hotel Roma booked.
}

// The extractive summarizer needs no model; its roll-ups stay bounded.
func ExampleExtractiveSummarizer() {
	s := &compaction.ExtractiveSummarizer{MaxAnswers: 1}
	call := &session.Event{Author: "assistant", LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{FunctionCall: &genai.FunctionCall{Name: "search_flights", Args: map[string]any{"to": "FCO"}}},
	}}}}
	sum, err := s.Summarize(context.Background(), compaction.SummaryInput{
		Previous: genai.NewContentFromText("Goal: Plan a trip to Rome.\nTools used: search_hotels ×2", genai.RoleUser),
		Events: []*session.Event{
			call,
			{Author: "assistant", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("Flight AZ 203 is cheapest.", genai.RoleModel)}},
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(sum.Content.Parts[0].Text)
	// Output:
	// Goal: Plan a trip to Rome.
	// Tools used: search_hotels ×2, search_flights ×1
	// Recent answers:
	// - Flight AZ 203 is cheapest.
}
