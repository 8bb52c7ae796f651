package compaction_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
)

// cannedModel stands for the model an LLMSummarizer calls (hooks.SummarizerModel adapts an
// adk-go model.LLM): it answers every request with reply.
type cannedModel struct{ reply string }

func (m cannedModel) Name() string { return "canned" }

func (m cannedModel) GenerateContent(_ context.Context, req *request.LLMRequest) iter.Seq2[*response.LLMResponse, error] {
	return func(yield func(*response.LLMResponse, error) bool) {
		yield(&response.LLMResponse{Content: genai.NewContentFromText(m.reply, genai.RoleModel), FinishReason: genai.FinishReasonStop}, nil)
	}
}

// An LLMSummarizer asks a model for the summary and appends the ledger's exact facts to it. A
// reply it cannot use (empty, only thoughts, a tool call, cut off, too large) is a
// *SummaryRejectedError wrapped in a *SummarizerError: the compaction then uses
// Config.Fallback (the ExtractiveSummarizer by default).
func ExampleLLMSummarizer() {
	in := compaction.SummaryInput{
		Events: []compaction.Event{
			{ID: "e1", Author: "user", Content: genai.NewContentFromText("Rename the config package to settings.", genai.RoleUser)},
			{ID: "e2", Author: "agent", Content: genai.NewContentFromText("Renamed; 12 files changed.", genai.RoleModel)},
		},
		Ledger: &compaction.Ledger{Goal: "Rename the config package to settings."},
	}
	var model compaction.Model = cannedModel{reply: "Goal: rename config to settings. Done: renamed, 12 files."}
	s := &compaction.LLMSummarizer{Model: model}
	sum, err := s.Summarize(context.Background(), in)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name(), sum.Summarizer, strings.HasPrefix(sum.Content.Parts[0].Text, "Goal: rename config to settings."))

	_, err = (&compaction.LLMSummarizer{Model: cannedModel{reply: ""}}).Summarize(context.Background(), in)
	var failed *compaction.SummarizerError
	var rejected *compaction.SummaryRejectedError
	if errors.As(err, &failed) && errors.As(err, &rejected) {
		fmt.Println(failed.Summarizer, "rejected:", rejected.Reason, rejected.ErrorKind())
	}
	// Output:
	// llm:canned llm:canned true
	// llm:canned rejected: empty invalid_reply
}

// A Summarizer of one's own: here the extractive summary with a line of the application's in
// front. Set it as Config.Summarizer; Config.Fallback runs when it fails.
type withTicket struct {
	ticket string
	next   compaction.ExtractiveSummarizer
}

func (w *withTicket) Summarize(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	sum, err := w.next.Summarize(ctx, in)
	if err != nil {
		return nil, err
	}
	text := "Ticket: " + w.ticket + "\n" + sum.Content.Parts[0].Text
	return &compaction.Summary{Content: genai.NewContentFromText(text, genai.RoleUser), Summarizer: "ticket+" + w.next.Name()}, nil
}

func ExampleSummarizer() {
	var s compaction.Summarizer = &withTicket{ticket: "OPS-1234"}
	cfg := compaction.Config{Summarizer: s}
	fmt.Println("valid:", cfg.Validate() == nil)

	sum, err := s.Summarize(context.Background(), compaction.SummaryInput{
		Events: []compaction.Event{{ID: "e1"}},
		Ledger: &compaction.Ledger{Goal: "Restart the billing service."},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(sum.Summarizer)
	fmt.Println(sum.Content.Parts[0].Text)
	// Output:
	// valid: true
	// ticket+extractive
	// Ticket: OPS-1234
	// Goal: Restart the billing service.
}
