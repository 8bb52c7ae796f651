package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	. "github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/record"
)

// lrCallEv is a long-running call: the event lists the call id in LongRunningToolIDs.
func lrCallEv(id, inv, callID, name string) Event {
	e := callEv(id, inv, callID, name, map[string]any{"ticket": "T-1"})
	e.LongRunningToolIDs = []string{callID}
	return e
}

// noContent is an event without content (state changes, workflow bookkeeping).
func noContent(id, inv string) Event { return Event{ID: id, InvocationID: inv, Author: "agent"} }

// bigText is a model text event of about n tokens.
func bigText(id, inv string, n int) Event {
	e := modelEv(id, inv, strings.Repeat("word ", n*4/5))
	e.Final = false
	return e
}

// tokensOf is the estimated weight of events.
func tokensOf(events ...Event) int {
	n := 0
	for i := range events {
		n += budget.EstimateContent(events[i].Content)
	}
	return n
}

// idsOf returns the ids of events whose id starts with one of prefixes, in stream order.
func idsOf(events []Event, prefixes ...string) []string {
	var out []string
	for _, e := range events {
		for _, p := range prefixes {
			if strings.HasPrefix(e.ID, p) && e.ID != "" {
				out = append(out, e.ID)
				break
			}
		}
	}
	return out
}

type windowCase struct {
	name   string
	cfg    Config
	events []Event
	req    Selection
	// wantIDs are the ids the new marker lists (nil: nothing to do, for wantReason).
	wantIDs    []string
	wantReason string
	wantView   []string
	wantKeep   int // the marker's KeepInvocations, when compacted
}

func runWindowCases(t *testing.T, cases []windowCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, m, a, err := compactOnce(t, tc.cfg, tc.events, tc.req)
			if err != nil {
				t.Fatalf("Compact: %v", err)
			}
			if tc.wantIDs == nil {
				if m != nil || a.Outcome != OutcomeNothing || a.Reason != tc.wantReason {
					t.Fatalf("Compact = %+v, outcome %s (%s); want nothing to do (%s)", m, a.Outcome, a.Reason, tc.wantReason)
				}
				return
			}
			if m == nil {
				t.Fatalf("nothing compacted: outcome %s (%s)", a.Outcome, a.Reason)
			}
			if diff := cmp.Diff(tc.wantIDs, m.EventIDs); diff != "" {
				t.Errorf("covered ids (-want +got):\n%s", diff)
			}
			if tc.wantView != nil {
				if diff := cmp.Diff(tc.wantView, store.view(t)); diff != "" {
					t.Errorf("view after compaction (-want +got):\n%s", diff)
				}
			}
			if tc.wantKeep != 0 && m.KeepInvocations != tc.wantKeep {
				t.Errorf("KeepInvocations = %d, want %d", m.KeepInvocations, tc.wantKeep)
			}
			if a.EventsCovered != len(m.EventIDs) {
				t.Errorf("attempt reports %d events covered, the marker lists %d", a.EventsCovered, len(m.EventIDs))
			}
		})
	}
}

func TestWindowSliding(t *testing.T) {
	sliding := func(last string) Selection { return Selection{Trigger: TriggerInvocations, Invocation: last} }
	cfg := Config{Interval: 3, RetainRecentInvocations: 2, Overlap: -1}
	runWindowCases(t, []windowCase{
		{
			name: "below θ + R", cfg: cfg, events: turns(1, 4), req: sliding("i4"),
			wantReason: reasonBelowInterval,
		},
		{
			name: "at θ + R: covers all but the R newest", cfg: cfg, events: turns(1, 5), req: sliding("i5"),
			wantIDs:  idsOf(turns(1, 3), "i"),
			wantView: []string{"S(m1:S)", "i4u", "i4m", "i5u", "i5m"},
			wantKeep: 2,
		},
		{
			name: "beyond θ + R: still all but the tail", cfg: cfg, events: turns(1, 8), req: sliding("i8"),
			wantIDs: idsOf(turns(1, 6), "i"),
		},
		{
			name: "the default has no sliding window: a session that fits is not compacted", events: turns(1, 30), req: sliding("i30"),
			wantReason: reasonBelowInterval,
		},
		{
			name: "θ=5, R=2", cfg: Config{Interval: 5}, events: turns(1, 7), req: sliding("i7"),
			wantIDs: idsOf(turns(1, 5), "i"),
		},
		{
			name: "the live marker's KeepInvocations widens the tail",
			cfg:  cfg,
			events: concat(turns(1, 1), []Event{mustMarkerEvent(t, "t1", func() *Marker {
				m := v2(1, "", "token summary", "i1u", "i1m")
				m.KeepInvocations = 4
				return m
			}())}, turns(2, 7)),
			req:        sliding("i7"),
			wantReason: reasonBelowInterval, // 6 raw < θ 3 + keep 4
		},
		{
			name: "a token compaction's KeepInvocations holds for the next sliding window, which keeps R again",
			cfg:  cfg,
			events: concat(turns(1, 1), []Event{mustMarkerEvent(t, "t1", func() *Marker {
				m := v2(1, "", "token summary", "i1u", "i1m")
				m.KeepInvocations, m.Trigger = 4, TriggerTokens
				return m
			}())}, turns(2, 8)),
			req:      sliding("i8"),
			wantIDs:  idsOf(turns(2, 4), "i"),
			wantView: concat([]string{"S(m1:S)"}, idsOf(turns(5, 8), "i")),
			wantKeep: cfg.RetainRecentInvocations,
		},
		{
			name: "a sliding-window marker's KeepInvocations does not raise the floor",
			cfg:  cfg,
			events: concat(turns(1, 1), []Event{mustMarkerEvent(t, "t1", func() *Marker {
				m := v2(1, "", "sliding summary", "i1u", "i1m")
				m.KeepInvocations, m.Trigger = 4, TriggerInvocations
				return m
			}())}, turns(2, 8)),
			req:      sliding("i8"),
			wantIDs:  idsOf(turns(2, 6), "i"),
			wantView: concat([]string{"S(m1:S)"}, idsOf(turns(7, 8), "i")),
			wantKeep: cfg.RetainRecentInvocations,
		},
		{
			name: "an event without invocation id joins the invocation before it",
			cfg:  Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1},
			events: concat(turns(1, 1), []Event{{ID: "orphan", Author: "agent",
				Content: genai.NewContentFromText("a note", genai.RoleModel)}}),
			req:        sliding("i1"),
			wantReason: reasonBelowInterval, // one invocation, not two
		},
		{
			name: "an event without invocation id is covered with its invocation",
			cfg:  Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1},
			events: concat(turns(1, 1), []Event{{ID: "orphan", Author: "agent",
				Content: genai.NewContentFromText("a note", genai.RoleModel)}}, turns(2, 2)),
			req:     sliding("i2"),
			wantIDs: []string{"i1u", "i1m", "orphan"},
		},
		{
			name: "id-less events before the first invocation join it",
			cfg:  Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1},
			events: concat([]Event{{ID: "pre", Author: "user", Content: genai.NewContentFromText("hello", genai.RoleUser)}},
				turns(1, 2)),
			req:     sliding("i2"),
			wantIDs: []string{"pre", "i1u", "i1m"},
		},
		{
			name:       "a content-less group is not an invocation",
			cfg:        Config{Interval: 2, RetainRecentInvocations: 1, Overlap: -1},
			events:     concat(turns(1, 1), []Event{noContent("state", "i2")}, turns(3, 3)),
			req:        sliding("i3"),
			wantReason: reasonBelowInterval, // i1 and i3: 2 < 2 + 1
		},
		{
			name:    "a content-less group is covered with the invocation before it",
			cfg:     Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1},
			events:  concat(turns(1, 1), []Event{noContent("state", "i2")}, turns(3, 3)),
			req:     sliding("i3"),
			wantIDs: []string{"i1u", "i1m", "state"},
		},
		{
			name:    "a leading content-less group joins the first invocation",
			cfg:     Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1},
			events:  concat([]Event{noContent("boot", "i0")}, turns(1, 2)),
			req:     sliding("i2"),
			wantIDs: []string{"boot", "i1u", "i1m"},
		},
		{
			name: "the finished invocation failed with an error: no sliding window",
			cfg:  Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1},
			events: concat(turns(1, 2), []Event{userEv("i3u", "i3", "go on"),
				{ID: "i3e", InvocationID: "i3", Author: "agent", ErrorCode: "500", Final: true}}),
			req:        sliding("i3"),
			wantReason: reasonFailed,
		},
		{
			name:       "the finished invocation has no final response: no sliding window",
			cfg:        Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1},
			events:     concat(turns(1, 2), []Event{userEv("i3u", "i3", "go on"), callEv("i3c", "i3", "c", "read_file", nil)}),
			req:        sliding("i3"),
			wantReason: reasonFailed,
		},
		{
			name:       "the finished invocation is only the user's message: failed",
			cfg:        Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1},
			events:     concat(turns(1, 2), []Event{userEv("i3u", "i3", "go on")}),
			req:        sliding("i3"),
			wantReason: reasonFailed,
		},
		{
			name:       "empty session",
			events:     nil,
			req:        sliding("i1"),
			wantReason: reasonEmpty,
		},
		{
			name: "nothing new: every raw event outside the tail is pending",
			cfg:  Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1},
			events: concat([]Event{lrCallEv("lr", "i1", "lr1", "approve"), respEv("lri", "i1", "lr1", "approve", map[string]any{"status": "pending"}),
				modelEv("i1m", "i1", "Waiting for approval.")}, turns(2, 2)),
			req:     sliding("i2"),
			wantIDs: []string{"i1m"},
		},
	})
}

func TestWindowPairs(t *testing.T) {
	sliding := Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1}
	slide := func(last string) Selection { return Selection{Trigger: TriggerInvocations, Invocation: last} }
	confirmation := func(id, inv, confID, origID string) Event {
		return callEv(id, inv, confID, confirmationCallName, map[string]any{
			"originalFunctionCall": map[string]any{"id": origID, "name": "delete_file"},
		})
	}
	runWindowCases(t, []windowCase{
		{
			name: "a pending long-running call stays raw with the tool's interim answer",
			cfg:  sliding,
			events: concat([]Event{userEv("i1u", "i1", "Open a ticket."), lrCallEv("i1c", "i1", "lr1", "open_ticket"),
				respEv("i1r", "i1", "lr1", "open_ticket", map[string]any{"status": "pending"}),
				modelEv("i1m", "i1", "The ticket waits for approval.")}, turns(2, 2)),
			req:      slide("i2"),
			wantIDs:  []string{"i1u", "i1m"},
			wantView: []string{"S(m1:S)", "i1c", "i1r", "i2u", "i2m"},
		},
		{
			name: "a long-running call answered by the client is covered with both answers",
			cfg:  sliding,
			events: concat([]Event{userEv("i1u", "i1", "Open a ticket."), lrCallEv("i1c", "i1", "lr1", "open_ticket"),
				respEv("i1r", "i1", "lr1", "open_ticket", map[string]any{"status": "pending"}),
				modelEv("i1m", "i1", "The ticket waits for approval."),
				clientRespEv("i2r", "i2", "lr1", "open_ticket", map[string]any{"status": "approved"}),
				modelEv("i2m", "i2", "Approved.")}, turns(3, 3)),
			req:     slide("i3"),
			wantIDs: []string{"i1u", "i1c", "i1r", "i1m", "i2r", "i2m"},
		},
		{
			name: "a call answered inside the tail stays raw with its answer",
			cfg:  sliding,
			events: []Event{userEv("i1u", "i1", "Start the build."), callEv("i1c", "i1", "b1", "build", nil),
				modelEv("i1m", "i1", "Started."),
				userEv("i2u", "i2", "And?"), respEv("i2r", "i2", "b1", "build", nil), modelEv("i2m", "i2", "Done.")},
			req:     slide("i2"),
			wantIDs: []string{"i1u", "i1m"},
		},
		{
			name: "an unanswered call of a finished invocation is plain history",
			cfg:  sliding,
			events: concat([]Event{userEv("i1u", "i1", "Start the build."), callEv("i1c", "i1", "b1", "build", nil),
				modelEv("i1m", "i1", "The build tool did not answer.")}, turns(2, 2)),
			req:     slide("i2"),
			wantIDs: []string{"i1u", "i1c", "i1m"},
		},
		{
			name: "parallel calls: all covered with all their responses",
			cfg:  sliding,
			events: concat([]Event{userEv("i1u", "i1", "Read both."),
				callsEv("i1c", "i1", &genai.FunctionCall{ID: "a", Name: "read_file"}, &genai.FunctionCall{ID: "b", Name: "read_file"}),
				respEv("i1ra", "i1", "a", "read_file", nil), respEv("i1rb", "i1", "b", "read_file", nil),
				modelEv("i1m", "i1", "Read both.")}, turns(2, 2)),
			req:     slide("i2"),
			wantIDs: []string{"i1u", "i1c", "i1ra", "i1rb", "i1m"},
		},
		{
			name: "parallel calls with one response in the tail: the call event and both responses stay raw",
			cfg:  sliding,
			events: []Event{userEv("i1u", "i1", "Read both."),
				callsEv("i1c", "i1", &genai.FunctionCall{ID: "a", Name: "read_file"}, &genai.FunctionCall{ID: "b", Name: "read_file"}),
				respEv("i1ra", "i1", "a", "read_file", nil), modelEv("i1m", "i1", "One came back."),
				userEv("i2u", "i2", "And the other?"), respEv("i2rb", "i2", "b", "read_file", nil), modelEv("i2m", "i2", "Here.")},
			req:     slide("i2"),
			wantIDs: []string{"i1u", "i1m"},
		},
		{
			name: "a requested confirmation stays raw with the call and the confirmation call",
			cfg:  sliding,
			events: concat([]Event{userEv("i1u", "i1", "Delete the old logs."),
				callEv("i1c", "i1", "d1", "delete_file", map[string]any{"path": "logs/old.log"}),
				func() Event {
					e := respEv("i1r", "i1", "d1", "delete_file", map[string]any{"error": "requires confirmation"})
					e.ConfirmationIDs = []string{"d1"}
					return e
				}(),
				confirmation("i1q", "i1", "conf1", "d1"),
				modelEv("i1m", "i1", "Please confirm.")}, turns(2, 2)),
			req:      slide("i2"),
			wantIDs:  []string{"i1u", "i1m"},
			wantView: []string{"S(m1:S)", "i1c", "i1r", "i1q", "i2u", "i2m"},
		},
		{
			name: "an answered confirmation is covered with everything paired to it",
			cfg:  sliding,
			events: concat([]Event{userEv("i1u", "i1", "Delete the old logs."),
				callEv("i1c", "i1", "d1", "delete_file", map[string]any{"path": "logs/old.log"}),
				func() Event {
					e := respEv("i1r", "i1", "d1", "delete_file", map[string]any{"error": "requires confirmation"})
					e.ConfirmationIDs = []string{"d1"}
					return e
				}(),
				confirmation("i1q", "i1", "conf1", "d1"),
				modelEv("i1m", "i1", "Please confirm."),
				clientRespEv("i2a", "i2", "conf1", confirmationCallName, map[string]any{"confirmed": true}),
				respEv("i2r", "i2", "d1", "delete_file", map[string]any{"deleted": true}),
				modelEv("i2m", "i2", "Deleted.")}, turns(3, 3)),
			req:     slide("i3"),
			wantIDs: []string{"i1u", "i1c", "i1r", "i1q", "i1m", "i2a", "i2r", "i2m"},
		},
		{
			name: "id-less parallel calls are paired by name and order",
			cfg:  sliding,
			events: []Event{userEv("i1u", "i1", "Read twice."),
				callsEv("i1c", "i1", &genai.FunctionCall{Name: "read_file"}, &genai.FunctionCall{Name: "read_file"}),
				respEv("i1r1", "i1", "", "read_file", nil), modelEv("i1m", "i1", "One is back."),
				userEv("i2u", "i2", "The other?"), respEv("i2r2", "i2", "", "read_file", nil), modelEv("i2m", "i2", "Back.")},
			req: slide("i2"),
			// The second response pairs with the second call, in the tail: the call event stays,
			// and with it the first response.
			wantIDs: []string{"i1u", "i1m"},
		},
	})
}

func TestWindowLive(t *testing.T) {
	// A token trigger in the middle of invocation i3: its unanswered call is pending.
	events := concat(turns(1, 2), []Event{
		userEv("i3u", "i3", "Run the long job and then read the report."),
		callEv("i3c1", "i3", "job", "run_job", nil), // no response yet
		bigText("i3t", "i3", 400),
		callEv("i3c2", "i3", "rep", "read_file", map[string]any{"path": "report.txt"}),
		respEv("i3r2", "i3", "rep", "read_file", map[string]any{"content": "all good"}),
	})
	runWindowCases(t, []windowCase{
		{
			name:   "an unanswered call of the live invocation stays raw; the user message and newest steps too",
			cfg:    Config{RetainRecentInvocations: 1, RetainRecentTokens: 100, Overlap: -1},
			events: events,
			req:    Selection{Trigger: TriggerTokens, Invocation: "i3", Live: true, TokenLimit: 400},
			// i3 alone is above ¾ of the limit: it is split. i1, i2 whole; of i3 only the big
			// text goes.
			wantIDs:  concat(idsOf(turns(1, 2), "i"), []string{"i3t"}),
			wantView: []string{"S(m1:S)", "i3u", "i3c1", "i3c2", "i3r2"},
		},
		{
			name:   "the same call of a finished invocation is plain history",
			cfg:    Config{RetainRecentInvocations: 1, RetainRecentTokens: 100, Overlap: -1},
			events: events,
			req:    Selection{Trigger: TriggerManual, Invocation: "i3", Live: false, TokenLimit: 400},
			// Manual compactions treat the request's invocation as running too (its calls may
			// still be answered): the call stays.
			wantIDs: concat(idsOf(turns(1, 2), "i"), []string{"i3t"}),
		},
	})
}

func TestWindowTokens(t *testing.T) {
	turn62 := tokensOf(turn("i1")...) // every plain turn weighs the same
	tok := func(limit int) Selection {
		return Selection{Trigger: TriggerTokens, Invocation: "i10", TokenLimit: limit}
	}
	big := func(inv string, steps int) []Event {
		out := []Event{userEv(inv+"u", inv, "Refactor the whole package, step by step.")}
		for s := 1; s <= steps; s++ {
			id := fmt.Sprintf("%s-%d", inv, s)
			out = append(out, callEv(id+"c", inv, id, "edit_file", map[string]any{"path": fmt.Sprintf("pkg/f%d.go", s)}),
				respEv(id+"r", inv, id, "edit_file", map[string]any{"diff": strings.Repeat("+ line\n", 30)}))
		}
		return append(out, modelEv(inv+"m", inv, "Done."))
	}
	b := big("i3", 6)
	user, final, call, resp := tokensOf(b[0]), tokensOf(b[len(b)-1]), tokensOf(b[1]), tokensOf(b[2])
	if call >= resp {
		t.Fatalf("a call (%d tokens) should weigh less than its response (%d)", call, resp)
	}
	twoSteps := user + final + 2*(call+resp) + call/2
	oneResponse := user + final + resp + call/2
	runWindowCases(t, []windowCase{
		{
			name:     "keeps the newest invocations up to RetainRecentTokens",
			cfg:      Config{RetainRecentInvocations: 1, RetainRecentTokens: 3*turn62 + turn62/2, Overlap: -1},
			events:   turns(1, 10),
			req:      tok(100_000),
			wantIDs:  idsOf(turns(1, 7), "i"),
			wantKeep: 3,
		},
		{
			name:     "the default tail is 70% of the soft limit",
			cfg:      Config{RetainRecentInvocations: 1, Overlap: -1},
			events:   turns(1, 10),
			req:      tok(10*turn62 + 5), // 70%: 7 turns
			wantIDs:  idsOf(turns(1, 3), "i"),
			wantKeep: 7,
		},
		{
			name:     "R whole invocations stay even beyond RetainRecentTokens, while under ¾ of the limit",
			cfg:      Config{RetainRecentInvocations: 3, RetainRecentTokens: 1, Overlap: -1},
			events:   turns(1, 10),
			req:      tok(100_000),
			wantIDs:  idsOf(turns(1, 7), "i"),
			wantKeep: 3,
		},
		{
			name:     "R whole invocations stop at ¾ of the limit",
			cfg:      Config{RetainRecentInvocations: 3, RetainRecentTokens: 1, Overlap: -1},
			events:   turns(1, 10),
			req:      tok((2*turn62)*4/3 + 1), // two turns fit under ¾
			wantIDs:  idsOf(turns(1, 8), "i"),
			wantKeep: 3, // KeepInvocations is at least R
		},
		{
			name:     "a manual compaction without a limit keeps R whole invocations",
			cfg:      Config{RetainRecentInvocations: 2, Overlap: -1},
			events:   turns(1, 5),
			req:      Selection{Trigger: TriggerManual},
			wantIDs:  idsOf(turns(1, 3), "i"),
			wantKeep: 2,
		},
		{
			name:       "everything fits the tail: nothing to do",
			cfg:        Config{RetainRecentInvocations: 1, RetainRecentTokens: 100_000, Overlap: -1},
			events:     turns(1, 5),
			req:        tok(200_000),
			wantReason: reasonEverythingTail,
		},
		{
			name:   "an oversized newest invocation keeps its user message and newest steps",
			cfg:    Config{RetainRecentInvocations: 1, RetainRecentTokens: twoSteps, Overlap: -1},
			events: concat(turns(1, 2), big("i3", 6)),
			req:    Selection{Trigger: TriggerTokens, Invocation: "i3", Live: true, TokenLimit: 1000},
			wantIDs: concat(idsOf(turns(1, 2), "i"),
				[]string{"i3-1c", "i3-1r", "i3-2c", "i3-2r", "i3-3c", "i3-3r", "i3-4c", "i3-4r"}),
			wantView: []string{"S(m1:S)", "i3u", "i3-5c", "i3-5r", "i3-6c", "i3-6r", "i3m"},
			wantKeep: 1,
		},
		{
			name:    "an oversized only invocation is split too",
			cfg:     Config{RetainRecentInvocations: 1, RetainRecentTokens: twoSteps, Overlap: -1},
			events:  big("i3", 6),
			req:     Selection{Trigger: TriggerTokens, Invocation: "i3", Live: true, TokenLimit: 1000},
			wantIDs: []string{"i3-1c", "i3-1r", "i3-2c", "i3-2r", "i3-3c", "i3-3r", "i3-4c", "i3-4r"},
		},
		{
			// A turn's final answer is on its way (Reserve): its large tool result, which the model
			// has read, is not the next request's newest step and goes where the limit leaves no room.
			name:    "with an event on its way the newest stored result may go",
			cfg:     Config{RetainRecentInvocations: 1, Overlap: -1},
			events:  concat(turns(1, 2), big("i3", 3)[:7]),
			req:     Selection{Trigger: TriggerTokens, Invocation: "i3", Live: true, TokenLimit: 400, Reserve: 350},
			wantIDs: concat(idsOf(turns(1, 2), "i"), []string{"i3-1c", "i3-1r", "i3-2c", "i3-2r", "i3-3c", "i3-3r"}),
		},
		{
			// The tail beside what is on its way leaves the summary a quarter of the limit, not the
			// summary's bound (1,024 tokens here, more than the limit): the newest steps the agent
			// works from stay raw.
			name:     "with an event on its way the tail leaves the summary its room, not its bound",
			cfg:      Config{RetainRecentInvocations: 1, Overlap: -1},
			events:   concat(turns(1, 2), big("i3", 3)[:7]),
			req:      Selection{Trigger: TriggerTokens, Invocation: "i3", Live: true, TokenLimit: 440, Reserve: 50},
			wantIDs:  concat(idsOf(turns(1, 2), "i"), []string{"i3-1c", "i3-1r"}),
			wantView: []string{"S(m1:S)", "i3u", "i3-2c", "i3-2r", "i3-3c", "i3-3r"},
		},
		{
			name:   "a split never separates a call from its response",
			cfg:    Config{RetainRecentInvocations: 1, RetainRecentTokens: oneResponse, Overlap: -1},
			events: big("i3", 3),
			req:    Selection{Trigger: TriggerTokens, Invocation: "i3", Live: true, TokenLimit: 400},
			// The budget keeps i3m and the response of step 3, not its call: the call stays
			// raw with its response.
			wantIDs: []string{"i3-1c", "i3-1r", "i3-2c", "i3-2r"},
		},
	})
}

// ω overlap: the last ω invocations already summarized are given again as Context, raw, and are
// not counted in the ledger again.
func TestWindowOverlap(t *testing.T) {
	store := newStore(concat(toolTurn("i1", "read_file", "a.go"), toolTurn("i2", "read_file", "b.go"),
		toolTurn("i3", "read_file", "c.go"), toolTurn("i4", "read_file", "d.go"))...)
	sum := &recorder{}
	c, _ := newCompactor(t, Config{Interval: 2, RetainRecentInvocations: 2, Overlap: 1, Summarizer: sum}, store)
	ctx := context.Background()
	if _, err := c.Compact(ctx, Selection{Trigger: TriggerInvocations, Invocation: "i4"}); err != nil {
		t.Fatal(err)
	}
	first := sum.last(t)
	if len(first.Context) != 0 || first.Previous != nil {
		t.Errorf("first compaction: context %v, previous %v; want none", ids(first.Context), first.Previous)
	}
	store.add(concat(toolTurn("i5", "read_file", "e.go"), toolTurn("i6", "read_file", "f.go"))...)
	m, err := c.Compact(ctx, Selection{Trigger: TriggerInvocations, Invocation: "i6"})
	if err != nil || m == nil {
		t.Fatalf("second compaction: %v, %v", m, err)
	}
	second := sum.last(t)
	if diff := cmp.Diff(idsOf(toolTurn("i2", "", ""), "i2"), ids(second.Context)); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(idsOf(concat(toolTurn("i3", "", ""), toolTurn("i4", "", "")), "i"), ids(second.Events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if textOf(second.Previous) != "summary 1" {
		t.Errorf("previous = %q, want the first summary", textOf(second.Previous))
	}
	wantPaths := map[string]map[string]int{"a.go": {"read_file": 1}, "b.go": {"read_file": 1}, "c.go": {"read_file": 1}, "d.go": {"read_file": 1}}
	if diff := cmp.Diff(wantPaths, second.Ledger.Paths); diff != "" {
		t.Errorf("ledger paths (-want +got):\n%s", diff)
	}
	if m.Seq != 2 || m.Previous != "m1" || m.Invocations != 4 || m.EventCount != 16 || m.FirstEventID != "i1u" || m.LastEventID != "i4m" {
		t.Errorf("marker = seq %d previous %q invocations %d events %d first %q last %q; want 2 m1 4 16 i1u i4m",
			m.Seq, m.Previous, m.Invocations, m.EventCount, m.FirstEventID, m.LastEventID)
	}
	if m.Ledger.Invocations != 4 || m.Ledger.Events != 16 {
		t.Errorf("ledger counts %d invocations, %d events; want 4, 16", m.Ledger.Invocations, m.Ledger.Events)
	}
}

// The marker's range fields follow the covered events (the chain included) in stream order,
// whatever their timestamps.
func TestWindowMarkerRange(t *testing.T) {
	events := turns(1, 3)
	events[1].Timestamp = at(50) // i1m stored with a late clock
	events[2].Timestamp = at(2)
	store := newStore(events...)
	c, _ := newCompactor(t, Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1, Summarizer: &recorder{}}, store)
	m, err := c.Compact(context.Background(), Selection{Trigger: TriggerInvocations, Invocation: "i3"})
	if err != nil || m == nil {
		t.Fatalf("Compact: %v, %v", m, err)
	}
	got := []any{m.FirstEventID, m.LastEventID, m.FirstInvocationID, m.LastInvocationID, m.StartTimestamp, m.EndTimestamp, m.EventCount, m.Invocations, m.Scope}
	want := []any{"i1u", "i2m", "i1", "i2", record.Seconds(t0), record.Seconds(at(50)), 4, 2, ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("range (-want +got):\n%s", diff)
	}
}

// Each isolation scope is compacted on its own; a scope's marker covers only its events.
func TestWindowScopes(t *testing.T) {
	var events []Event
	for _, e := range turns(1, 3) {
		events = append(events, e, inScope("sub", Event{ID: "sub-" + e.ID, InvocationID: "sub-" + e.InvocationID,
			Author: e.Author, Final: e.Final, Content: e.Content}))
	}
	store := newStore(events...)
	c, _ := newCompactor(t, Config{Interval: 1, RetainRecentInvocations: 1, Overlap: -1, Summarizer: &recorder{}}, store)
	ctx := context.Background()
	m1, err := c.Compact(ctx, Selection{Trigger: TriggerManual})
	if err != nil || m1 == nil {
		t.Fatalf("first: %v %v", m1, err)
	}
	m2, err := c.Compact(ctx, Selection{Trigger: TriggerManual})
	if err != nil || m2 == nil {
		t.Fatalf("second: %v %v", m2, err)
	}
	if m1.Scope != "" || m2.Scope != "sub" {
		t.Errorf("scopes %q, %q; want \"\" then \"sub\"", m1.Scope, m2.Scope)
	}
	if diff := cmp.Diff([]string{"sub-i1u", "sub-i1m", "sub-i2u", "sub-i2m"}, m2.EventIDs); diff != "" {
		t.Errorf("sub marker ids (-want +got):\n%s", diff)
	}
	want := []string{"S(m1:summary 1)", "S(m2:summary 2)", "i3u", "sub-i3u", "i3m", "sub-i3m"}
	if diff := cmp.Diff(want, store.view(t)); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	if m, err := c.Compact(ctx, Selection{Trigger: TriggerManual}); m != nil || err != nil {
		t.Errorf("third compaction = %v, %v; want nothing", m, err)
	}
}

func TestPairCallsIDless(t *testing.T) {
	events := []Event{
		callsEv("c", "i", &genai.FunctionCall{Name: "f"}, &genai.FunctionCall{Name: "g"}, &genai.FunctionCall{Name: "f"}),
		respEv("r1", "i", "", "f", nil), respEv("r2", "i", "", "g", nil), respEv("r3", "i", "", "f", nil),
		respEv("r4", "i", "", "f", nil), // no call left: unpaired
	}
	pr := pairCalls(events, "", false, "")
	got := map[int][]int{}
	for k, v := range pr.links {
		got[k] = slices.Sorted(slices.Values(v))
	}
	want := map[int][]int{0: {1, 2, 3}, 1: {0}, 2: {0}, 3: {0}}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if len(pr.pending) != 0 {
		t.Errorf("pending = %v, want none", pr.pending)
	}
}

// The original call id of a confirmation is read from every shape the args take.
func TestOriginalCallID(t *testing.T) {
	for name, v := range map[string]any{
		"pointer":   &genai.FunctionCall{ID: "x"},
		"value":     genai.FunctionCall{ID: "x"},
		"map":       map[string]any{"id": "x"},
		"nil ptr":   (*genai.FunctionCall)(nil),
		"number":    3,
		"map no id": map[string]any{"name": "f"},
	} {
		want := "x"
		if strings.HasPrefix(name, "nil") || name == "number" || name == "map no id" {
			want = ""
		}
		if got := originalCallID(&genai.FunctionCall{Args: map[string]any{"originalFunctionCall": v}}); got != want {
			t.Errorf("%s: originalCallID = %q, want %q", name, got, want)
		}
	}
}

// An invocation is counted once, when its first event is covered, however many compactions
// cover the rest of it (a pending call answered later).
func TestWindowInvocationCount(t *testing.T) {
	store := newStore(concat([]Event{userEv("i1u", "i1", "Open a ticket."), lrCallEv("i1c", "i1", "lr1", "open_ticket"),
		respEv("i1r", "i1", "lr1", "open_ticket", map[string]any{"status": "pending"}),
		modelEv("i1m", "i1", "The ticket waits for approval.")}, turns(2, 2))...)
	c, rep := newCompactor(t, Config{Interval: 1, RetainRecentInvocations: 1, Summarizer: &recorder{}}, store)
	ctx := context.Background()
	m, err := c.Compact(ctx, Selection{Trigger: TriggerInvocations, Invocation: "i2"})
	if err != nil || m == nil || m.Invocations != 1 {
		t.Fatalf("first compaction: %+v, %v", m, err)
	}
	store.add(clientRespEv("i3r", "i3", "lr1", "open_ticket", map[string]any{"status": "approved"}), modelEv("i3m", "i3", "Approved."))
	store.add(turns(4, 4)...)
	m, err = c.Compact(ctx, Selection{Trigger: TriggerInvocations, Invocation: "i4"})
	if err != nil || m == nil {
		t.Fatalf("second compaction: %v, %v", m, err)
	}
	if diff := cmp.Diff([]string{"i1c", "i1r", "i2u", "i2m", "i3r", "i3m"}, m.EventIDs); diff != "" {
		t.Errorf("second compaction covers (-want +got):\n%s", diff)
	}
	if m.Invocations != 3 || m.Ledger.Invocations != 3 || rep.lastAttempt(t).InvocationsCovered != 2 {
		t.Errorf("marker counts %d invocations, ledger %d, attempt %d new; want 3, 3, 2",
			m.Invocations, m.Ledger.Invocations, rep.lastAttempt(t).InvocationsCovered)
	}
}

// The covered part of a split newest invocation counts it; covering its rest later does not
// count it again.
func TestWindowInvocationCountSplit(t *testing.T) {
	big := []Event{userEv("i2u", "i2", "Refactor everything.")}
	for s := 1; s <= 4; s++ {
		id := fmt.Sprintf("i2-%d", s)
		big = append(big, callEv(id+"c", "i2", id, "edit_file", map[string]any{"path": id + ".go"}),
			respEv(id+"r", "i2", id, "edit_file", map[string]any{"diff": strings.Repeat("+ line\n", 60)}))
	}
	store := newStore(concat(turns(1, 1), big)...)
	c, _ := newCompactor(t, Config{RetainRecentInvocations: 1, RetainRecentTokens: 300, Summarizer: &recorder{}}, store)
	ctx := context.Background()
	m, err := c.Compact(ctx, Selection{Trigger: TriggerTokens, Invocation: "i2", Live: true, TokenLimit: 400})
	if err != nil || m == nil {
		t.Fatalf("token compaction: %v, %v", m, err)
	}
	if !slices.Contains(m.EventIDs, "i2-1c") || slices.Contains(m.EventIDs, "i2u") || m.Invocations != 2 {
		t.Fatalf("token compaction covers %v, counts %d invocations; want part of i2, 2", m.EventIDs, m.Invocations)
	}
	store.add(modelEv("i2m", "i2", "Done."))
	store.add(turns(3, 4)...)
	m, err = c.Compact(ctx, Selection{Trigger: TriggerManual})
	if err != nil || m == nil {
		t.Fatalf("manual compaction: %v, %v", m, err)
	}
	if !slices.Contains(m.EventIDs, "i2u") || m.Invocations != 3 || m.Ledger.Invocations != 3 {
		t.Errorf("manual compaction covers %v, counts %d (ledger %d); want the rest of i2 and i3, 3", m.EventIDs, m.Invocations, m.Ledger.Invocations)
	}
}
