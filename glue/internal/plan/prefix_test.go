package plan

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"

	. "github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
)

// requestOf is the request a model was sent for events: a summary first, then one content per
// event (copied, as adk-go copies them), with a system instruction and a tool.
func requestOf(events []Event) *request.LLMRequest {
	req := &request.LLMRequest{Model: "gemini-2.5-flash", Config: &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("You are a careful coding assistant.", genai.RoleUser),
		Tools:             []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "read_file"}}}},
	}}
	req.Contents = append(req.Contents, genai.NewContentFromText(SummaryHeader+"\nGoal: review.", genai.RoleUser))
	for _, e := range events {
		req.Contents = append(req.Contents, sentContent(e.Content))
	}
	return req
}

// sentContent is c as adk-go sends it: a copy, without the ids adk-go gave function calls and
// responses.
func sentContent(c *genai.Content) *genai.Content {
	out := &genai.Content{Role: c.Role}
	for _, p := range c.Parts {
		q := *p
		if q.FunctionCall != nil {
			fc := *q.FunctionCall
			fc.ID, q.FunctionCall = "", &fc
		}
		if q.FunctionResponse != nil {
			fr := *q.FunctionResponse
			fr.ID, q.FunctionResponse = "", &fr
		}
		out.Parts = append(out.Parts, &q)
	}
	return out
}

func TestPromptPrefix(t *testing.T) {
	events := concat(toolTurn("i1", "read_file", "a.go"), turn("i2"), toolTurn("i3", "read_file", "b.go"))
	positions := func(from, to int) []int {
		var out []int
		for i := from; i < to; i++ {
			out = append(out, i)
		}
		return out
	}
	parallel := []Event{
		userEv("u", "i1", "Read a.go and b.go."),
		callsEv("c", "i1", &genai.FunctionCall{ID: "adk-1", Name: "read_file", Args: map[string]any{"path": "a.go"}},
			&genai.FunctionCall{ID: "adk-2", Name: "read_file", Args: map[string]any{"path": "b.go"}}),
		{ID: "r", InvocationID: "i1", Author: "agent", Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
			{FunctionResponse: &genai.FunctionResponse{ID: "adk-1", Name: "read_file", Response: map[string]any{"content": "a"}}},
			{FunctionResponse: &genai.FunctionResponse{ID: "adk-2", Name: "read_file", Response: map[string]any{"content": "b"}}}}}},
		modelEv("m", "i1", "Both are fine."),
		userEv("u2", "i2", "Thanks."),
	}
	image := &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2, 3}}}
	captioned := concat(turn("i1"), []Event{userEv("u2", "i2", "what is this?")})
	captioned[1].Content = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{image, {Text: "A diagram of the flow."}}}
	withImage := concat(turn("i1"), []Event{{ID: "img", InvocationID: "i1", Author: "user", Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{image}}}})
	withThought := concat(turn("i1"), []Event{{ID: "t", InvocationID: "i1", Author: "agent", Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "hmm", Thought: true}}}}})
	repeated := concat(turn("i1"), turn("i2"))
	repeated[2].Content = repeated[0].Content // the user says the same thing again in i2
	tests := []struct {
		name    string
		events  []Event
		req     *request.LLMRequest
		covered []int
		want    int // contents kept; -1: no prefix
	}{
		{"covers the first two invocations", events, requestOf(events), positions(0, 6), 7},
		{"covered positions in any order", events, requestOf(events), []int{5, 0, 3, 1, 2, 4}, 7},
		{"covers everything", events, requestOf(events), positions(0, len(events)), 1 + len(events)},
		{"a covered event the request does not show", events, func() *request.LLMRequest {
			r := requestOf(events)
			r.Contents = slices.Delete(r.Contents, 3, 4) // i1's tool result was trimmed
			return r
		}(), positions(0, 6), -1},
		{"the same text later: the first one counts", repeated, requestOf(repeated), positions(0, 2), 3},
		{"a result shown as an excerpt", events, func() *request.LLMRequest {
			r := requestOf(events)
			r.Contents[3].Parts[0].FunctionResponse.Response = map[string]any{"content": "package main […]"}
			return r
		}(), positions(0, 6), 7},
		{"parallel calls and their merged responses", parallel, requestOf(parallel), positions(0, 4), 5},
		{"a response missing: a later one of the same tool does not stand in", events, func() *request.LLMRequest {
			r := requestOf(events)
			r.Contents = slices.Delete(r.Contents, 3, 4)
			return r
		}(), positions(0, 3), -1},
		{"an image with a caption", captioned, requestOf(captioned), positions(0, 2), 3},
		{"an image alone, covered last", withImage, requestOf(withImage), positions(0, 3), -1},
		{"only thoughts: nothing the model sees", withThought, requestOf(withThought[:2]), positions(0, 3), 3},
		{"nothing recognizable covered", events, requestOf(events), nil, -1},
		{"no request", events, nil, positions(0, 6), -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := cutAfter(tc.req, tc.events, tc.covered)
			if tc.want < 0 {
				if got != nil {
					t.Fatalf("prefix of %d contents, want none", len(got.Contents))
				}
				return
			}
			if got == nil {
				t.Fatal("no prefix")
			}
			if len(got.Contents) != tc.want || !slices.Equal(got.Contents, tc.req.Contents[:tc.want]) {
				t.Errorf("prefix holds %d contents, want the request's first %d (shared, not copied)", len(got.Contents), tc.want)
			}
			if got.Model != tc.req.Model || got.Config.SystemInstruction != tc.req.Config.SystemInstruction || !slices.Equal(got.Config.Tools, tc.req.Config.Tools) {
				t.Errorf("prefix model, system instruction or tools are not the request's")
			}
		})
	}
}

// Of the requests sent, the summary prompt extends the newest that shows every covered event,
// on the summarizer's model when one does: a provider's cache holds the prefix of each.
func TestPromptPrefixAmongSentRequests(t *testing.T) {
	events := concat(toolTurn("i1", "read_file", "a.go"), turn("i2"), toolTurn("i3", "read_file", "b.go"))
	covered := []int{0, 1, 2, 3, 4, 5} // i1 and i2
	full := requestOf(events)
	trimmed := requestOf(events)
	trimmed.Contents = slices.Delete(trimmed.Contents, 1, 5) // i1 left out to fit the window
	earlier := requestOf(events[:7])
	other := requestOf(events)
	other.Model = "another-model"
	tests := []struct {
		name string
		sent []*request.LLMRequest // newest first
		want *request.LLMRequest   // the request extended; nil: none
	}{
		{"the newest shows every covered event", []*request.LLMRequest{full, earlier}, full},
		{"the newest is trimmed: an earlier one", []*request.LLMRequest{trimmed, earlier}, earlier},
		{"on another model: one on the summarizer's first", []*request.LLMRequest{other, trimmed, earlier}, earlier},
		{"only another model's: that one", []*request.LLMRequest{trimmed, other}, other},
		{"none shows them all", []*request.LLMRequest{trimmed, nil}, nil},
		{"none sent", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := promptPrefix(tc.sent, full.Model, events, covered)
			switch {
			case tc.want == nil && got != nil:
				t.Fatalf("prefix of %d contents (model %s), want none", len(got.Contents), got.Model)
			case tc.want == nil:
			case got == nil:
				t.Fatal("no prefix")
			case got.Model != tc.want.Model || len(got.Contents) != 7 || &got.Contents[0] != &tc.want.Contents[0]:
				t.Errorf("prefix of %d contents on %s, not the first 7 of the request wanted", len(got.Contents), got.Model)
			}
		})
	}
}

// The summarizer sends the shared prefix with its instruction when it can, and a transcript
// otherwise.
func TestLLMSummarizerSharesThePrefix(t *testing.T) {
	events := concat(toolTurn("i1", "read_file", "a.go"), turn("i2"))
	in := summaryInput()
	in.Events = events
	in.Prefix = cutAfter(requestOf(events), events, []int{0, 1, 2, 3, 4, 5})
	if in.Prefix == nil || len(in.Prefix.Contents) != 7 {
		t.Fatalf("prefix %v, want the summary and six contents", in.Prefix)
	}
	ok := reply("Goal: review the tool.", genai.FinishReasonStop)
	toolCall := &response.LLMResponse{Content: genai.NewContentFromFunctionCall("read_file", map[string]any{"path": "c.go"}, genai.RoleModel), FinishReason: genai.FinishReasonStop}

	t.Run("same model: the prefix and the instruction", func(t *testing.T) {
		m := &fakeModel{replies: []*response.LLMResponse{ok}}
		sum, err := (&LLMSummarizer{Model: m}).Summarize(context.Background(), in)
		if err != nil || sum == nil {
			t.Fatalf("Summarize = %v, %v", sum, err)
		}
		if len(m.reqs) != 1 {
			t.Fatalf("%d model calls, want 1", len(m.reqs))
		}
		req := m.reqs[0]
		n := len(in.Prefix.Contents)
		if len(req.Contents) != n+1 || !slices.Equal(req.Contents[:n], in.Prefix.Contents) {
			t.Fatalf("request contents %d, want the prefix's %d and the instruction", len(req.Contents), n)
		}
		if last := textOf(req.Contents[n]); req.Contents[n].Role != genai.RoleUser || !strings.Contains(last, "Write a summary of the whole conversation above") {
			t.Errorf("last content %q, want the instruction", last)
		}
		if req.Config.SystemInstruction != in.Prefix.Config.SystemInstruction || !slices.Equal(req.Config.Tools, in.Prefix.Config.Tools) {
			t.Error("the system instruction or tools are not the agent's")
		}
		if !strings.HasPrefix(textOf(sum.Content), "Goal: review the tool.") {
			t.Errorf("summary %q", textOf(sum.Content))
		}
	})
	transcript := func(t *testing.T, req *request.LLMRequest) {
		t.Helper()
		if len(req.Contents) != 1 || req.Config.SystemInstruction != nil || len(req.Config.Tools) != 0 ||
			!strings.Contains(textOf(req.Contents[0]), "]: ") { // a transcript line
			t.Errorf("request is not a transcript: %d contents, system %v, tools %d", len(req.Contents), req.Config.SystemInstruction, len(req.Config.Tools))
		}
	}
	for name, s := range map[string]*LLMSummarizer{
		"another model":    {Model: &fakeModel{name: "gemini-2.5-flash-lite", replies: []*response.LLMResponse{ok}}},
		"custom template":  {Model: &fakeModel{replies: []*response.LLMResponse{ok}}, Template: "Summarize: " + "{conversation_history}"},
		"prefix too large": {Model: &fakeModel{replies: []*response.LLMResponse{ok}}, MaxInputTokens: 100},
	} {
		t.Run(name+": a transcript", func(t *testing.T) {
			if _, err := s.Summarize(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			m := s.Model.(*fakeModel)
			if len(m.reqs) != 1 {
				t.Fatalf("%d model calls, want 1", len(m.reqs))
			}
			transcript(t, m.reqs[0])
		})
	}
	withText := &response.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{Text: "Let me read c.go first."}, {FunctionCall: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": "c.go"}}}}},
		FinishReason: genai.FinishReasonStop}
	malformed := reply("", genai.FinishReasonMalformedFunctionCall)
	thoughts := &response.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "The user wants…", Thought: true}}},
		FinishReason: genai.FinishReasonStop}
	for name, first := range map[string]*response.LLMResponse{
		"a tool call instead of a summary": toolCall,
		"a tool call after some text":      withText,
		"a malformed tool call":            malformed,
		"thoughts only":                    thoughts,
	} {
		t.Run(name+": then a transcript", func(t *testing.T) {
			first := *first
			first.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 1000, CandidatesTokenCount: 10}
			second := *ok
			second.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 300, CandidatesTokenCount: 20}
			m := &toolCallThenText{calls: &first, text: &second}
			sum, err := (&LLMSummarizer{Model: m}).Summarize(context.Background(), in)
			if err != nil || sum == nil {
				t.Fatalf("Summarize = %v, %v", sum, err)
			}
			if len(m.reqs) != 2 {
				t.Fatalf("%d model calls, want 2", len(m.reqs))
			}
			transcript(t, m.reqs[1])
			if sum.SharedPrefix || sum.Usage.Prompt != 1300 || sum.Usage.Output != 30 || !strings.HasPrefix(textOf(sum.Content), "Goal: review the tool.") {
				t.Errorf("summary %q, shared prefix %v, usage %+v; want the transcript's, both calls' usage", textOf(sum.Content), sum.SharedPrefix, sum.Usage)
			}
		})
	}
	t.Run("NoSharedPrefix: a transcript", func(t *testing.T) {
		m := &fakeModel{replies: []*response.LLMResponse{ok}}
		if _, err := (&LLMSummarizer{Model: m, NoSharedPrefix: true}).Summarize(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		if len(m.reqs) != 1 {
			t.Fatalf("%d model calls, want 1", len(m.reqs))
		}
		transcript(t, m.reqs[0])
	})
	t.Run("a reply cut off: no second call", func(t *testing.T) {
		m := &fakeModel{replies: []*response.LLMResponse{reply("Goal:", genai.FinishReasonMaxTokens)}}
		_, err := (&LLMSummarizer{Model: m}).Summarize(context.Background(), in)
		var rej *SummaryRejectedError
		if !errors.As(err, &rej) || rej.Reason != "finish_reason" || len(m.reqs) != 1 {
			t.Errorf("error %v after %d calls, want finish_reason after 1", err, len(m.reqs))
		}
	})
	t.Run("a failed call: no second call", func(t *testing.T) {
		m := &fakeModel{err: errors.New("quota")}
		if _, err := (&LLMSummarizer{Model: m}).Summarize(context.Background(), in); err == nil || len(m.reqs) != 1 {
			t.Errorf("error %v after %d calls, want an error after 1", err, len(m.reqs))
		}
	})
}

// toolCallThenText answers its first request with calls and every later one with text.
type toolCallThenText struct {
	calls, text *response.LLMResponse
	reqs        []*request.LLMRequest
}

func (m *toolCallThenText) Name() string { return "gemini-2.5-flash" }

func (m *toolCallThenText) GenerateContent(_ context.Context, req *request.LLMRequest) iter.Seq2[*response.LLMResponse, error] {
	m.reqs = append(m.reqs, req)
	r := m.text
	if len(m.reqs) == 1 {
		r = m.calls
	}
	return func(yield func(*response.LLMResponse, error) bool) { yield(r, nil) }
}
