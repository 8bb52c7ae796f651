package compaction

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/genai"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/record"
)

// t0 is the time of the first event of every test stream.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// at returns t0 plus sec seconds.
func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// userEv is a message the user typed.
func userEv(id, inv, text string) Event {
	return Event{ID: id, InvocationID: inv, Author: "user", Content: genai.NewContentFromText(text, genai.RoleUser)}
}

// modelEv is a final model answer.
func modelEv(id, inv, text string) Event {
	return Event{ID: id, InvocationID: inv, Author: "agent", Final: true, Content: genai.NewContentFromText(text, genai.RoleModel)}
}

// callEv is a model event calling tool name (call id callID, "" for an id-less call).
func callEv(id, inv, callID, name string, args map[string]any) Event {
	return callsEv(id, inv, &genai.FunctionCall{ID: callID, Name: name, Args: args})
}

// callsEv is a model event with several (parallel) calls.
func callsEv(id, inv string, calls ...*genai.FunctionCall) Event {
	c := &genai.Content{Role: genai.RoleModel}
	for _, fc := range calls {
		c.Parts = append(c.Parts, &genai.Part{FunctionCall: fc})
	}
	return Event{ID: id, InvocationID: inv, Author: "agent", Content: c}
}

// respEv is the tool's response (stored with the agent as author, role user, as adk-go does).
func respEv(id, inv, callID, name string, resp map[string]any) Event {
	if resp == nil {
		resp = map[string]any{"result": "ok"}
	}
	return Event{ID: id, InvocationID: inv, Author: "agent", Content: &genai.Content{Role: genai.RoleUser,
		Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: callID, Name: name, Response: resp}}}}}
}

// turn is one plain invocation: a user message and a final model answer, ids "<inv>u" and
// "<inv>m". The texts are long enough that a one-line summary is smaller than a turn.
func turn(inv string) []Event {
	return []Event{
		userEv(inv+"u", inv, "Please look at the next part of the project, request "+inv+", and tell me what you find there."),
		modelEv(inv+"m", inv, "I looked at it, for request "+inv+": the code is fine and the tests pass; nothing else to report."),
	}
}

// toolTurn is an invocation with one tool call on path: user message, call, response, answer.
func toolTurn(inv, tool, path string) []Event {
	return []Event{
		userEv(inv+"u", inv, "Read "+path+" and tell me what it does, request "+inv+"."),
		callEv(inv+"c", inv, inv+"-call", tool, map[string]any{"path": path}),
		respEv(inv+"r", inv, inv+"-call", tool, map[string]any{"content": "package main // the content of " + path}),
		modelEv(inv+"m", inv, "It is the main package of the tool, for request "+inv+"."),
	}
}

// concat joins lists.
func concat[T any](lists ...[]T) []T {
	var out []T
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// v2 returns a valid version 2 marker covering ids, rolling up previous (seq 1 when "").
func v2(seq int, previous string, summary string, ids ...string) *Marker {
	return &Marker{
		Version: record.Version, Seq: seq, Previous: previous, EventIDs: ids,
		StartTimestamp: record.Seconds(t0), EndTimestamp: record.Seconds(at(1000)),
		CompactedContent: genai.NewContentFromText(summary, genai.RoleUser),
		EventCount:       max(len(ids), 1) + seq - 1,
		FirstEventID:     first(ids), LastEventID: last(ids),
		Trigger: TriggerManual, Summarizer: "test",
	}
}

func first(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

func last(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// funcSummarizer adapts a function to Summarizer.
type funcSummarizer struct {
	name string
	f    func(ctx context.Context, in SummaryInput) (*Summary, error)
}

func (s *funcSummarizer) Name() string { return s.name }
func (s *funcSummarizer) Summarize(ctx context.Context, in SummaryInput) (*Summary, error) {
	return s.f(ctx, in)
}

// noContent is an event without content (state changes, workflow bookkeeping).
func noContent(id, inv string) Event { return Event{ID: id, InvocationID: inv, Author: "agent"} }

// codingInvocation is invocation k of a scripted coding session: a user message, one to three
// tool calls (one of them a parallel pair), a final answer.
func codingInvocation(k int) []Event {
	inv := fmt.Sprintf("i%d", k)
	id := func(s string) string { return inv + s }
	out := []Event{userEv(id("u"), inv, fmt.Sprintf("Step %d: look at the next file.", k))}
	path := fmt.Sprintf("src/f%d.go", k%7)
	out = append(out, callEv(id("c1"), inv, id("-1"), "read_file", map[string]any{"path": path}),
		respEv(id("r1"), inv, id("-1"), "read_file", map[string]any{"content": "package f"}))
	if k%3 == 0 {
		out = append(out, callsEv(id("c2"), inv,
			&genai.FunctionCall{ID: id("-2"), Name: "list_dir", Args: map[string]any{"dir": "src"}},
			&genai.FunctionCall{ID: id("-3"), Name: "grep", Args: map[string]any{"pattern": "TODO", "paths": []any{"src/a.go", path}}}),
			respEv(id("r2"), inv, id("-2"), "list_dir", map[string]any{"entries": []any{"a.go"}}),
			respEv(id("r3"), inv, id("-3"), "grep", map[string]any{"matches": 0.0}))
	}
	if k%5 == 0 {
		out = append(out, callEv(id("c4"), inv, id("-4"), "run_tests", map[string]any{"cwd": "."}),
			respEv(id("r4"), inv, id("-4"), "run_tests", map[string]any{"exit_code": 1.0, "stderr": "ok a\nFAIL f" + strconv.Itoa(k%2)}))
	}
	return append(out, modelEv(id("m"), inv, fmt.Sprintf("Step %d done.", k)))
}

// summarizeWithin runs s on in with a bound of maxTokens, as a compaction does, and rejects a
// summary over the bound ("too_large"), as a compaction does before it stores one.
func summarizeWithin(s Summarizer, in SummaryInput, maxTokens int) (*Summary, error) {
	in.MaxTokens = maxTokens
	sum, err := s.Summarize(context.Background(), in)
	if err != nil || sum == nil {
		return sum, err
	}
	if n := budget.EstimateContent(sum.Content); maxTokens > 0 && n > maxTokens {
		return nil, &SummaryRejectedError{Summarizer: summarizerNameOf(s), Reason: "too_large", Tokens: n, Limit: maxTokens}
	}
	return sum, nil
}

// summarizerNameOf is the name s reports.
func summarizerNameOf(s Summarizer) string { return s.(interface{ Name() string }).Name() }

// withRecords lets cmp compare ledgers and deltas whole: their record of the tools' work is
// unexported.
var withRecords = cmp.AllowUnexported(Ledger{}, LedgerDelta{})
