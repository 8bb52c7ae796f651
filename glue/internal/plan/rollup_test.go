package plan

// The ledger and the summaries through a session's compactions, end to end.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	. "github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/processors/response"
)

// Tool calls are counted exactly, per tool and per path, however many roll-ups (with overlap)
// the ledger went through: each covered event once.
func TestLedgerExactAcrossRollUps(t *testing.T) {
	store := newStore()
	c, _ := newCompactor(t, Config{Interval: 2, RetainRecentInvocations: 2, Overlap: 2}, store)
	ctx := context.Background()
	compactions := 0
	for k := 1; k <= 60; k++ {
		store.add(codingInvocation(k)...)
		m, err := c.Compact(ctx, Selection{Trigger: TriggerInvocations, Invocation: fmt.Sprintf("i%d", k)})
		if err != nil {
			t.Fatalf("invocation %d: %v", k, err)
		}
		if m == nil {
			continue
		}
		compactions++
		events := store.snapshot()
		covered := coveredEvents(events)
		// Counted once per covered event: the calls themselves, and the paths the ledger of the
		// covered events finds at once.
		tools, paths := toolCounts(covered), (*Ledger)(nil).Apply(NewLedgerDelta(covered, 0)).Paths
		if diff := cmp.Diff(tools, m.Ledger.Tools); diff != "" {
			t.Fatalf("after invocation %d: tool counts (-truth +ledger):\n%s", k, diff)
		}
		if diff := cmp.Diff(paths, m.Ledger.Paths); diff != "" {
			t.Fatalf("after invocation %d: path counts (-truth +ledger):\n%s", k, diff)
		}
		if m.Ledger.Events != len(covered) || m.EventCount != len(covered) {
			t.Fatalf("after invocation %d: ledger counts %d events, marker %d, truth %d", k, m.Ledger.Events, m.EventCount, len(covered))
		}
		if m.Ledger.Invocations != m.Invocations || m.Invocations != k-2 {
			t.Fatalf("after invocation %d: ledger %d invocations, marker %d, want %d", k, m.Ledger.Invocations, m.Invocations, k-2)
		}
		// The summary the model reads says the same.
		text := textOf(m.CompactedContent)
		total := 0
		for _, n := range tools {
			total += n
		}
		if !strings.Contains(text, fmt.Sprintf("read_file ×%d", tools["read_file"])) ||
			!strings.Contains(text, fmt.Sprintf("(%d calls over %d invocations)", total, k-2)) {
			t.Fatalf("after invocation %d: summary does not state the exact counts:\n%s", k, text)
		}
	}
	if compactions < 20 {
		t.Errorf("%d compactions over 60 invocations, want one every other invocation", compactions)
	}
}

// The first user message is the goal; every later message the summary covers is in it,
// verbatim, while the user's text fits the budget.
func TestLedgerUserMessages(t *testing.T) {
	store := newStore()
	c, _ := newCompactor(t, Config{Interval: 1, RetainRecentInvocations: 1, Overlap: 2}, store)
	ctx := context.Background()
	messages := map[int]string{
		1:  "Build a CLI that converts CSV files to JSON.",
		2:  "Never touch the vendor/ directory.",
		5:  "Use port 8443 for the test server.",
		9:  "From now on, write tests first.",
		12: "Don't add dependencies.",
	}
	var sent []string
	compactions := 0
	for k := 1; k <= 40; k++ {
		inv := fmt.Sprintf("i%d", k)
		text, ok := messages[k]
		if !ok {
			text = fmt.Sprintf("Continue with part %d of the converter.", k)
		}
		sent = append(sent, text)
		store.add(userEv(inv+"u", inv, text), modelEv(inv+"m", inv, "Done with "+inv+"."))
		m, err := c.Compact(ctx, Selection{Trigger: TriggerInvocations, Invocation: inv})
		if err != nil {
			t.Fatal(err)
		}
		if m == nil {
			continue
		}
		compactions++
		summary := textOf(m.CompactedContent)
		if m.Ledger.Goal != messages[1] || !strings.Contains(summary, "Goal: "+messages[1]) {
			t.Fatalf("after %s: goal %q; summary:\n%s", inv, m.Ledger.Goal, summary)
		}
		// Every message the summary covers (all but the one in the raw tail) is in it, verbatim,
		// in order.
		want := "The user's messages, oldest first (verbatim; rules in them hold unless the user changed them):"
		for _, msg := range sent[1 : len(sent)-1] {
			want += "\n- " + msg
		}
		if len(sent) > 2 && !strings.Contains(summary, want+"\n") {
			t.Fatalf("after %s: the summary does not list the user's messages in order:\n%s", inv, summary)
		}
	}
	if compactions < 20 {
		t.Errorf("%d compactions over 40 invocations", compactions)
	}
}

// phrasedRules are standing rules in several languages and phrasings, none with the English cue
// words instructionCue looks for: the ledger must keep them because the user wrote them.
var phrasedRules = []string{
	"Bitte keine neuen Abhängigkeiten hinzufügen, auch nicht für Tests.",
	"テストはテーブル駆動で書いてください。",
	"Las respuestas, en español y con ejemplos cortos.",
	"Tabs, not spaces; lines under 100 columns.",
	"Could you put every new helper in internal/util from here on?",
	"Пожалуйста, пиши сообщения коммитов в повелительном наклонении.",
	"Commit messages: imperative mood, 50 characters at most.",
	"I'd rather the changelog gets a line whenever a public API changes.",
}

// phrasedSession is invocation k of a session whose user states phrasedRules between plain
// requests: a message, a tool call with a sizeable result, an answer.
func phrasedSession(k int) (events []Event, message string) {
	inv := fmt.Sprintf("i%d", k)
	message = fmt.Sprintf("Step %d: look at src/f%d.go.", k, k)
	switch {
	case k == 0:
		message = "Help me clean up the parser package before the release."
	case k%2 == 1 && k/2 < len(phrasedRules):
		message = phrasedRules[k/2]
	}
	path := fmt.Sprintf("src/f%d.go", k)
	return []Event{
		userEv(inv+"u", inv, message),
		callEv(inv+"c", inv, inv+"-1", "read_file", map[string]any{"path": path}),
		respEv(inv+"r", inv, inv+"-1", "read_file", map[string]any{"content": strings.Repeat("func f() { return nil }\n", 60)}),
		modelEv(inv+"m", inv, fmt.Sprintf("Step %d done: the file holds sixty small functions.", k)),
	}, message
}

// While the user's text fits the budget, every message the user wrote is in every later summary,
// verbatim, whatever its language or phrasing: in the extractive summary and in an LLM summary
// (the ledger's record appended to the model's text, which here quotes none of them).
func TestUserMessagesKeptInAnyPhrasing(t *testing.T) {
	for _, rule := range phrasedRules {
		l := (*Ledger)(nil).Apply(NewLedgerDelta([]Event{userEv("g", "i0", "Start."), userEv("r", "i0", rule)}, 1))
		if len(l.Messages) != 1 || l.Messages[0].Rule {
			t.Fatalf("%q holds a cue word: it would not test phrasing", rule)
		}
	}
	for _, tc := range []struct {
		name       string
		summarizer Summarizer
	}{
		{"extractive", &ExtractiveSummarizer{}},
		{"llm", &LLMSummarizer{Model: &fakeModel{replies: []*response.LLMResponse{reply("Goal: clean up the parser.\nDecisions: none yet.", genai.FinishReasonStop)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newStore()
			c, _ := newCompactor(t, Config{Interval: 1, RetainRecentInvocations: 1, Summarizer: tc.summarizer, NoFallback: true}, store)
			var messages []string
			userTokens, compactions := 0, 0
			for k := 0; k < 2*len(phrasedRules)+4; k++ {
				events, msg := phrasedSession(k)
				store.add(events...)
				messages = append(messages, msg)
				userTokens += budget.EstimateText(msg)
				m, err := c.Compact(context.Background(), Selection{Trigger: TriggerInvocations, Invocation: fmt.Sprintf("i%d", k)})
				if err != nil {
					t.Fatalf("invocation %d: %v", k, err)
				}
				if m == nil {
					continue
				}
				compactions++
				summary := textOf(m.CompactedContent)
				// Every message the summary covers (all but the raw tail's) is in it.
				for _, msg := range messages[:len(messages)-1] {
					if !strings.Contains(summary, msg) {
						t.Fatalf("after invocation %d (user text %d tokens): %q missing from the summary:\n%s", k, userTokens, msg, summary)
					}
				}
			}
			if compactions < len(phrasedRules) {
				t.Errorf("%d compactions", compactions)
			}
			// The test compactor's summary bound is the smallest default, 1,024 tokens, which keeps
			// the user's text within half of it.
			if userTokens > 1024/2 {
				t.Errorf("the session's user text is %d tokens: over the budget the test means to stay within", userTokens)
			}
		})
	}
}

// A shell agent's session of 35 bash calls in one invocation, compacted as its requests reach
// the soft limit: the summary that replaces the steps names the files they read with their line
// ranges, the files written and removed, the paths its searches found (even one seen only in an
// early grep's output), the commands run with their exit status and the failing tests — not
// only "bash ×35".
func TestShellSessionSummary(t *testing.T) {
	task, steps := fixtures.ShellSession()
	events := shellEvents("i1", task, steps)
	store := newStore()
	c, _ := newCompactor(t, Config{RetainRecentTokens: 300}, store)
	var m *Marker
	compactions := 0
	store.add(events[0])
	for k := range steps {
		store.add(events[1+2*k], events[2+2*k])
		if k%5 != 4 {
			continue
		}
		got, err := c.Compact(context.Background(), Selection{Trigger: TriggerTokens, Invocation: "i1", Live: true, TokenLimit: 2000})
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		if got != nil {
			m, compactions = got, compactions+1
		}
	}
	if m == nil || compactions < 4 {
		t.Fatalf("%d compactions", compactions)
	}
	summary := textOf(m.CompactedContent)
	covered := m.Ledger.Tools["bash"]
	if covered != 32 {
		t.Fatalf("the last summary covers %d of 35 steps, want 32 (the raw tail keeps 3):\n%s", covered, summary)
	}
	// The task stays raw (a token compaction inside an invocation keeps its user message); the
	// newest steps too.
	for _, want := range []string{
		"tinyorm/query.py: read ×2 (lines 200-300), searched, named ×4 at line 244, 231, 222, 215, 219, 212", // two views merged; grep -n lines
		"tinyorm/lookups.py: read (lines 1-80), wrote, named ×5 at line 55, 30",                              // nl | sed range, a patch
		"tinyorm/where.py: read ×3 (lines 60-120, last 30), searched, wrote ×2, named ×7 at line 92, 2, 1, 91, 12, 88",
		"tinyorm/constants.py: read (whole file)",
		"tinyorm/manager.py: named ×2 at line 48", // only in the third step's grep output and the find listing
		"reproduce.py: wrote, used ×4, named ×2 at line 6",
		"tests/test_query.py: read (lines 130-160), used ×2, named at line 142",
		"scratch/notes.txt: created",
		"python reproduce.py (exit 0; ×3; failed ×2)",
		"cd /testbed && python -m pytest tests/test_query.py -x -q 2>&1 | tail -20 (exit 1)",
		"cd /testbed && python - <<'PY' … (exit 0)",
		"- tests/test_lookups.py::test_isnull_lookup",
		"- tests/test_query.py::test_exclude_none",
		fmt.Sprintf("Tool calls: bash ×%d", covered),
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	tokens := budget.EstimateText(summary)
	t.Logf("summary after %d compactions, %d steps: %d bytes, %d tokens", compactions, covered, len(summary), tokens)
}

// A service agent's conversation: the summary that replaces the turn that read the user's
// record holds its payment ids, reservations and dates exactly, with the call that returned
// them; the one that replaces the booking holds the booking call with the ids it passed and the
// reservation id it got. With an LLM summarizer whose text quotes none of them, they are in the
// exact record appended to it.
func TestServiceSessionSummary(t *testing.T) {
	user, calls := fixtures.ServiceSession()
	events := serviceEvents(user, calls)
	split := 0
	for i, e := range events {
		if e.InvocationID == "s2" {
			split = i
			break
		}
	}
	third := []Event{userEv("s3-u", "s3", "Thanks. Is my baggage allowance unchanged?"), modelEv("s3-m", "s3", "Yes: gold members keep 3 free bags.")}
	fourth := []Event{userEv("s4-u", "s4", "Great, that's all."), modelEv("s4-m", "s4", "Have a good flight!")}
	for _, tc := range []struct {
		name string
		s    Summarizer
	}{
		{"extractive", &ExtractiveSummarizer{}},
		{"llm", &LLMSummarizer{Model: &fakeModel{replies: []*response.LLMResponse{reply("Goal: book JFK to Seattle and cancel a reservation. Done so far: looked the user up.", genai.FinishReasonStop)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newStore(events[:split]...)
			c, _ := newCompactor(t, Config{Interval: 1, RetainRecentInvocations: 1, Summarizer: tc.s, NoFallback: true}, store)
			compact := func(inv string) string {
				m, err := c.Compact(context.Background(), Selection{Trigger: TriggerInvocations, Invocation: inv})
				if err != nil || m == nil {
					t.Fatalf("after %s: %v, %v", inv, m, err)
				}
				return textOf(m.CompactedContent)
			}
			store.add(events[split:]...)
			first := compact("s2") // covers s1: the user record, two reservations, the airports, the flights
			// Each value is listed once, with the newest call that returned it: the card ids the
			// reservations returned again are theirs.
			for _, want := range []string{
				"get_user_details(user_id=mia_li_3668) → ", "payment_methods=certificate_7504069",
				"payment_methods.credit_card_4421486.last_four=7447", "reservations[1]=AIXC49", "reservations[2]=HKEG34", "email=mia.li3818@example.com",
				"get_reservation_details(reservation_id=AIXC49) → ", "flights[0].flight_number=HAT136", "flights[1].date=2024-05-29",
				"payment_history[0].payment_id=credit_card_1955700",
				"get_reservation_details(reservation_id=NO6JO3) → ", "payment_history[0].payment_id=credit_card_4421486",
				"search_direct_flight(date=2024-05-20, destination=SEA, origin=JFK) → [0].flight_number=HAT069, ",
				"[1].flight_number=HAT083, ", "[2].flight_number=HAT251, ",
			} {
				if !strings.Contains(first, want) {
					t.Errorf("the summary of the first turn lacks %q:\n%s", want, first)
				}
			}
			store.add(third...)
			second := compact("s3") // covers s2: the booking and the cancellation
			for _, want := range []string{
				"book_reservation(destination=SEA, flights[0].date=2024-05-20, flights[0].flight_number=HAT069, origin=JFK, passengers[0].dob=1990-04-05, payment_methods[0].payment_id=certificate_7504069, user_id=mia_li_3668) → ",
				"reservation_id=Q69X3R",
				"cancel_reservation(reservation_id=NO6JO3) → payment_history[0].payment_id=credit_card_4421486",
				"payment_history[0].payment_id=credit_card_1955700", // still there, from the first turn
				"get_user_details(user_id=mia_li_3668) → ",
			} {
				if !strings.Contains(second, want) {
					t.Errorf("the summary of the second turn lacks %q:\n%s", want, second)
				}
			}
			store.add(fourth...)
			_ = compact("s4")
			if m, ok := tc.s.(*LLMSummarizer); ok {
				// The model is asked for the exact values too; its text is checked by the record
				// appended to it.
				reqs := m.Model.(*fakeModel).reqs
				if len(reqs) == 0 || !strings.Contains(textOf(reqs[0].Contents[len(reqs[0].Contents)-1]), "- Exact values: ") {
					t.Errorf("the summarizer's prompt does not ask for exact values")
				}
			}
		})
	}
}

// A marker written before the record existed (its ledger and delta without the new fields)
// still reads, resolves, and is continued: the new record holds only what follows it.
func TestOldMarkerWithoutRecord(t *testing.T) {
	old := map[string]any{
		"version": 2.0, "seq": 1.0, "eventIds": []any{"i1u", "i1m"}, "startTimestamp": 1772366400.0, "endTimestamp": 1772366401.0,
		"summaryLedger": "whole", "summaryTokens": 1024.0, "summaryBytes": 6144.0,
		"ledger":       map[string]any{"goal": "Fix the parser.", "tools": map[string]any{"bash": 3.0}, "events": 2.0, "invocations": 1.0},
		"firstEventId": "i1u", "lastEventId": "i1m", "eventCount": 2.0, "invocations": 1.0, "originalTokens": 100.0, "compactedTokens": 20.0,
		"compressionRatio": 5.0, "trigger": "invocations", "summarizer": "extractive",
	}
	events := stamp(userEv("i1u", "i1", "Fix the parser."), modelEv("i1m", "i1", "Looking."))
	events = append(events, Event{ID: "mk1", Author: "user", Timestamp: at(3), Metadata: map[string]any{MetadataKey: old}})
	m, err := ReadMarker(&events[2])
	if err != nil {
		t.Fatalf("ReadMarker: %v", err)
	}
	if b, err := json.Marshal(m.Ledger); err != nil || bytes.Contains(b, []byte(`"step"`)) || bytes.Contains(b, []byte(`"files"`)) {
		t.Fatalf("the old ledger reads with a record of the tools' work: %s, %v", b, err)
	}
	store := &memStore{events: events}
	_, steps := fixtures.ShellSession()
	for k, inv := range []string{"i2", "i3", "i4"} {
		store.add(shellEvents(inv, fmt.Sprintf("Now step %d.", k), steps[k*3:k*3+3])...)
		store.add(modelEv(inv+"-m", inv, "Done."))
	}
	c, _ := newCompactor(t, Config{Interval: 1, RetainRecentInvocations: 1}, store)
	got, err := c.Compact(context.Background(), Selection{Trigger: TriggerInvocations, Invocation: "i4"})
	if err != nil || got == nil {
		t.Fatalf("compaction after an old marker: %v, %v", got, err)
	}
	if got.Ledger.Tools["bash"] != 3+6 || storedSteps(t, got.Ledger) != 6 || got.Ledger.Goal != "Fix the parser." {
		t.Errorf("continued ledger: bash ×%d, %d steps recorded, goal %q; want 9, 6, the old goal", got.Ledger.Tools["bash"], storedSteps(t, got.Ledger), got.Ledger.Goal)
	}
	if s := textOf(got.CompactedContent); !strings.Contains(s, "tinyorm/query.py: read ×2 (lines 200-300)") {
		t.Errorf("the summary lacks what the new steps read:\n%s", s)
	}
}

// storedSteps is the number of tool steps a ledger's stored record counts.
func storedSteps(t *testing.T, l *Ledger) int {
	t.Helper()
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Step int `json:"step"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.Step
}

// A marker stores a delta of its ledger only while the delta is the smaller record: a
// compaction covering a turn of hundreds of tool steps (each a delta entry, while the ledger
// keeps bounded entries) stores the whole ledger, so the record stays within the ledger's bounds.
func TestMarkerStoresTheSmallerLedgerRecord(t *testing.T) {
	task, steps := fixtures.ShellSession()
	many := make([]fixtures.ShellStep, 600)
	for k := range many {
		many[k] = fixtures.ShellStep{Command: fmt.Sprintf("cat -n /testbed/pkg/mod%03d/file_%03d.py | head -40", k, k), Output: fmt.Sprintf("     1\tdef f%03d(): pass\n", k)}
	}
	for _, tc := range []struct {
		name      string
		second    []fixtures.ShellStep
		wantWhole bool
	}{
		{"a turn of a few steps stores its delta", steps[:4], false},
		{"a turn of 600 steps stores the whole ledger", many, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newStore()
			c, _ := newCompactor(t, Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1}, store)
			ctx := context.Background()
			var markers []*Marker
			for k, turn := range [][]fixtures.ShellStep{steps, tc.second, steps[:2]} {
				inv := fmt.Sprintf("i%d", k)
				store.add(shellEvents(inv, task, turn)...)
				store.add(modelEv(inv+"-a", inv, "Done."))
				if _, err := c.Compact(ctx, Selection{Trigger: TriggerInvocations, Invocation: inv}); err != nil {
					t.Fatal(err)
				}
			}
			var sizes []int
			for _, e := range store.load() {
				m, err := ReadMarker(&e)
				if err != nil || m == nil {
					continue
				}
				markers = append(markers, m)
				sizes = append(sizes, len(mustJSON(t, e.Metadata)))
			}
			if len(markers) != 2 {
				t.Fatalf("%d markers, want 2 (the first turn, then the second)", len(markers))
			}
			second := markers[1]
			if whole := second.Ledger != nil; whole != tc.wantWhole || (second.LedgerDelta != nil) == whole {
				t.Fatalf("second marker: whole ledger %v, delta %v; want whole %v", second.Ledger != nil, second.LedgerDelta != nil, tc.wantWhole)
			}
			if tc.wantWhole {
				covered := shellEvents("i1", task, tc.second)
				delta := len(mustJSON(t, NewLedgerDelta(covered, 1)))
				if sizes[1] >= delta {
					t.Fatalf("the second marker's record is %d bytes, not below its delta's %d", sizes[1], delta)
				}
				t.Logf("record %d bytes instead of a %d-byte delta", sizes[1], delta)
			}
		})
	}
}

// TestSummarizerNotStartedOnceDone: once the context is done, no summarizer is started, so
// one that ignores its context (the extractive fallback does) cannot win a race against the
// context and write a summary its caller gave up on: the outcome is the context's error, every
// time.
func TestSummarizerNotStartedOnceDone(t *testing.T) {
	var calls atomic.Int32
	instant := &funcSummarizer{name: "instant", f: func(context.Context, SummaryInput) (*Summary, error) {
		calls.Add(1)
		return &Summary{Content: genai.NewContentFromText("S", genai.RoleUser)}, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 200 {
		sum, err := runSummarizer(ctx, instant, SummaryInput{}, 100)
		if sum != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("runSummarizer after cancel = %v, %v; want no summary and context.Canceled", sum, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the summarizer ran %d times after its context was done", n)
	}
}
