package compaction

import (
	"context"
	"time"

	"google.golang.org/genai"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/internal/record"
)

// t0 is the time of the first event of every test stream.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// at returns t0 plus sec seconds.
func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// fromFixture is a fixture's event as this package's.
func fromFixture(f fixtures.Event) Event {
	return Event{ID: f.ID, InvocationID: f.InvocationID, Author: f.Author, Final: f.Final, Content: f.Content}
}

// fromFixtures converts fixture events.
func fromFixtures(fs []fixtures.Event) []Event {
	out := make([]Event, len(fs))
	for i, f := range fs {
		out[i] = fromFixture(f)
	}
	return out
}

// The events of the test streams, built by internal/fixtures (for this package's tests and for
// the other package that reads compaction's events the same way).
func userEv(id, inv, text string) Event  { return fromFixture(fixtures.User(id, inv, text)) }
func modelEv(id, inv, text string) Event { return fromFixture(fixtures.Model(id, inv, text)) }
func callEv(id, inv, callID, name string, args map[string]any) Event {
	return fromFixture(fixtures.Call(id, inv, callID, name, args))
}
func respEv(id, inv, callID, name string, resp map[string]any) Event {
	return fromFixture(fixtures.Response(id, inv, callID, name, resp))
}
func codingInvocation(k int) []Event { return fromFixtures(fixtures.CodingInvocation(k)) }
func shellEvents(inv string, task string, steps []fixtures.ShellStep) []Event {
	return fromFixtures(fixtures.ShellEvents(inv, task, steps))
}
func serviceEvents(user []string, calls []fixtures.ServiceCall) []Event {
	return fromFixtures(fixtures.ServiceEvents(user, calls))
}
func turn(inv string) []Event { return fromFixtures(fixtures.Turn(inv)) }
func toolTurn(inv, tool, path string) []Event {
	return fromFixtures(fixtures.ToolTurn(inv, tool, path))
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
