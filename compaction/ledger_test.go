package compaction

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/textcut"
)

// Past UserTextTokens the ledger frees room in the documented order: plain messages but the
// newest 4 are shortened, then dropped, oldest first; then messages with a rule word; then the
// newest; the goal last.
func TestUserTextPastTheBudget(t *testing.T) {
	long := func(k int, rule bool) string {
		s := fmt.Sprintf("request %d %s", k, strings.Repeat("lorem ipsum dolor ", 30))
		if rule {
			s = fmt.Sprintf("always keep rule %d %s", k, strings.Repeat("lorem ipsum dolor ", 30))
		}
		return strings.TrimSpace(s)
	}
	l := &Ledger{}
	l.addUserText("the goal")
	var all []UserMessage
	for k := 1; k <= 40; k++ {
		rule := k%8 == 0
		l.addUserText(long(k, rule))
		all = append(all, UserMessage{Text: long(k, rule), Rule: rule})
	}
	u := l.userText()
	if l.Goal != "the goal" || u.tokens > UserTextTokens {
		t.Fatalf("goal %q, %d tokens kept; want the goal, at most %d", l.Goal, u.tokens, UserTextTokens)
	}
	// The newest 4 and every rule are kept verbatim; of the plain messages before them, only the
	// newest are left, shortened.
	var want []string
	plainLeft := 0
	for i, m := range all {
		if i >= len(all)-recentMessages || m.Rule {
			want = append(want, m.Text)
			continue
		}
		prefix := fmt.Sprintf("request %d ", i+1)
		if slices.ContainsFunc(l.Messages, func(k UserMessage) bool { return strings.HasPrefix(k.Text, prefix) }) {
			want = append(want, textcut.Runes(m.Text, shortMessageRunes))
			plainLeft++
		} else if plainLeft > 0 {
			t.Errorf("plain message %d was dropped after an older one was kept", i+1)
		}
	}
	got := make([]string, len(l.Messages))
	for i, m := range l.Messages {
		got[i] = m.Text
	}
	if diff := cmp.Diff(want, got); diff != "" || plainLeft == 0 {
		t.Errorf("messages kept (-want +got), %d plain left:\n%s", plainLeft, diff)
	}
	if dropped := 40 - len(l.Messages); l.MessagesDropped != dropped || dropped == 0 {
		t.Errorf("%d messages dropped, the ledger counts %d", dropped, l.MessagesDropped)
	}
	out := l.render(renderLimits{}, false)
	if !strings.Contains(out, fmt.Sprintf("- (%d older messages omitted)", l.MessagesDropped)) {
		t.Errorf("the render does not say what was omitted:\n%s", out)
	}
	// A smaller budget goes on in the same order: the older plain messages go, then the older
	// rules (shortened, then dropped), then the newest are shortened, oldest first.
	small := l.userText()
	small.fit(300)
	short := func(i int) UserMessage {
		return UserMessage{Text: textcut.Runes(all[i].Text, shortMessageRunes), Rule: all[i].Rule, Shortened: true}
	}
	if diff := cmp.Diff([]UserMessage{short(36), short(37), all[38], all[39]}, small.kept()); diff != "" || small.tokens > 300 {
		t.Errorf("fitted to 300 tokens (%d): messages kept (-want +got):\n%s", small.tokens, diff)
	}
	// With no room at all, the goal is cut last, and nothing panics.
	for _, budget := range []int{40, 5, 1, 0, -3} {
		u := l.userText()
		u.fit(budget)
		if u.tokens > max(budget, 0) {
			t.Errorf("fitted to %d: %d tokens (goal %q, %d messages)", budget, u.tokens, u.goal, len(u.kept()))
		}
	}
}

// One long message is kept as its head and tail; the rest of the ledger does not change.
func TestLedgerLongMessage(t *testing.T) {
	l := &Ledger{}
	l.addUserText("goal")
	l.addUserText("head " + strings.Repeat("x", 5000) + " tail")
	if len(l.Messages) != 1 || !strings.HasPrefix(l.Messages[0].Text, "head") || !strings.HasSuffix(l.Messages[0].Text, "tail") ||
		len([]rune(l.Messages[0].Text)) > maxMessageRunes+40 {
		t.Errorf("messages: %+v", l.Messages)
	}
}

func TestInstructionCue(t *testing.T) {
	for text, want := range map[string]bool{
		"Never touch vendor/":              true,
		"always run gofmt":                 true,
		"Don't add dependencies":           true,
		"dont add dependencies":            true,
		"use port 8443":                    true,
		"Use the staging database":         true,
		"Make sure the tests pass":         true,
		"please read main.go":              false,
		"what does this function do?":      false,
		"the alwaysOn flag is broken":      false,
		"this is a must-have feature":      true, // a cue word on its own counts
		"Prefer small commits":             true,
		"remember: the API key is in .env": true,
	} {
		if got := instructionCue.MatchString(text); got != want {
			t.Errorf("instructionCue(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestLedgerErrors(t *testing.T) {
	resp := func(name string, r map[string]any) Event { return respEv("r", "i", "c", name, r) }
	cases := []struct {
		name  string
		event Event
		want  []string
	}{
		{"error field", resp("read_file", map[string]any{"error": "open x: no such file\nstack..."}), []string{"tool read_file: open x: no such file"}},
		{"error false", resp("read_file", map[string]any{"error": false}), nil},
		{"error empty", resp("read_file", map[string]any{"error": ""}), nil},
		{"error nil", resp("read_file", map[string]any{"error": nil}), nil},
		{"error map", resp("read_file", map[string]any{"error": map[string]any{"code": 5}}), []string{"tool read_file: map[code:5]"}},
		{"exit code with stderr", resp("run", map[string]any{"exit_code": 2.0, "stderr": "compiling\nfatal: bad flag\n\n"}), []string{"tool run: exit 2 fatal: bad flag"}},
		{"exit code, stdout only", resp("run", map[string]any{"returncode": 1.0, "stdout": "1 test failed"}), []string{"tool run: exit 1 1 test failed"}},
		{"exitCode string", resp("run", map[string]any{"exitCode": "127"}), []string{"tool run: exit 127"}},
		{"exit 0", resp("run", map[string]any{"exit_code": 0.0, "stderr": "warning"}), nil},
		{"exit \"0\"", resp("run", map[string]any{"exit_status": "0"}), nil},
		{"exit 0 as int", resp("run", map[string]any{"exit_code": 0}), nil},
		{"exit 0 as int32", resp("run", map[string]any{"exit_code": int32(0)}), nil},
		{"exit 0 as uint8", resp("run", map[string]any{"exit_code": uint8(0)}), nil},
		{"exit 3 as int64", resp("run", map[string]any{"exit_code": int64(3)}), []string{"tool run: exit 3"}},
		{"exit 0 as float32", resp("run", map[string]any{"exit_code": float32(0)}), nil},
		{"exit 0 as json.Number", resp("run", map[string]any{"exit_code": json.Number("0")}), nil},
		{"exit 1 as json.Number", resp("run", map[string]any{"exit_code": json.Number("1")}), []string{"tool run: exit 1"}},
		{"model error", Event{ID: "e", Author: "agent", ErrorCode: "RESOURCE_EXHAUSTED"}, []string{"model error RESOURCE_EXHAUSTED"}},
		{"no response", resp("run", nil), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &Ledger{}
			l.add([]Event{tc.event}, 0)
			if diff := cmp.Diff(tc.want, l.Errors, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLedgerErrorsDedupedAndBounded(t *testing.T) {
	l := &Ledger{}
	var events []Event
	for k := 0; k < 30; k++ {
		events = append(events, respEv("r", "i", "c", "run", map[string]any{"error": fmt.Sprintf("failure %d", k%20)}))
	}
	events = append(events, respEv("r", "i", "c", "run", map[string]any{"error": strings.Repeat("é", 1000)}))
	l.add(events, 1)
	if len(l.Errors) != maxErrors {
		t.Fatalf("%d errors kept, want %d", len(l.Errors), maxErrors)
	}
	seen := map[string]bool{}
	for _, e := range l.Errors {
		if seen[e] {
			t.Errorf("error %q kept twice", e)
		}
		seen[e] = true
		if n := len([]rune(e)); n > maxErrorLen+40 {
			t.Errorf("error of %d runes kept", n)
		}
	}
	if !strings.HasPrefix(l.Errors[len(l.Errors)-1], "tool run: éé") {
		t.Errorf("the newest error is not last: %q", l.Errors[len(l.Errors)-1])
	}
}

func TestLedgerAnswersAndEvents(t *testing.T) {
	l := &Ledger{}
	events := []Event{
		userEv("u", "i1", "goal"),
		modelEv("a1", "i1", "first answer"),
		{ID: "th", Author: "agent", Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "thinking", Thought: true}}}},
		modelEv("a2", "i1", "second\n\nanswer"),
		modelEv("a3", "i1", "third answer"),
		modelEv("a4", "i1", "fourth answer"),
		{ID: "mk", Author: "user", Metadata: map[string]any{MetadataKey: map[string]any{}}}, // marker-only: not counted
		noContent("state", "i1"),
	}
	l.add(events, 1)
	want := []string{"second answer", "third answer", "fourth answer"}
	if diff := cmp.Diff(want, l.Answers); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if l.Events != 7 || l.Invocations != 1 {
		t.Errorf("ledger counts %d events, %d invocations; want 7, 1", l.Events, l.Invocations)
	}
}

func TestArgPaths(t *testing.T) {
	cases := []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"path": "README"}, []string{"README"}},                                  // a path key
		{map[string]any{"query": "main.go"}, []string{"main.go"}},                               // looks like a path
		{map[string]any{"query": "hello world.go"}, nil},                                        // spaces
		{map[string]any{"n": 3.0, "flag": true}, nil},                                           // not strings
		{map[string]any{"paths": []any{"b.go", "a.go", 3.0, "a.go"}}, []string{"a.go", "b.go"}}, // a list under a path key
		{map[string]any{"items": []any{"b.go"}}, nil},                                           // a list under another key
		{map[string]any{"path": strings.Repeat("a", 201)}, nil},                                 // too long
		{map[string]any{"src": "x.go", "dst": "y/z"}, []string{"x.go", "y/z"}},
		{map[string]any{"origin": "JFK", "destination": "SEA"}, nil},          // a code, not a path
		{map[string]any{"source": "credit_card_4421486", "target": "a"}, nil}, // the same
		{map[string]any{"dir": "src", "cwd": "."}, []string{".", "src"}},      // a path key takes any value
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, argPaths(tc.args), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("argPaths(%v) (-want +got):\n%s", tc.args, diff)
		}
	}
}

// bigLedger is a ledger with every section full.
func bigLedger() *Ledger {
	l := &Ledger{}
	var events []Event
	events = append(events, userEv("g", "i0", "Port the billing service to Go."))
	for k := 0; k < 200; k++ {
		inv := fmt.Sprintf("i%d", k)
		if k%10 == 0 {
			events = append(events, userEv("u", inv, fmt.Sprintf("Always keep rule %d in mind.", k)))
		} else if k%3 == 0 {
			events = append(events, userEv("u", inv, fmt.Sprintf("Now do part %d.", k)))
		}
		for j := 0; j <= k%4; j++ {
			events = append(events, callEv("c", inv, "", []string{"read_file", "edit_file", "grep"}[j%3],
				map[string]any{"path": fmt.Sprintf("svc/pkg%d/file%d.go", k%9, k)}))
		}
		if k%17 == 0 {
			events = append(events, respEv("r", inv, "", "run_tests", map[string]any{"exit_code": 1.0, "stderr": fmt.Sprintf("FAIL pkg%d", k)}))
		}
		events = append(events, modelEv("m", inv, fmt.Sprintf("Finished part %d.", k)))
	}
	l.add(events, 200)
	return l
}

// pathTotal sums the calls a rendered files section accounts for: listed paths plus "and N more
// paths (M calls)".
var (
	listedPath = regexp.MustCompile(`(?m)^- \S+ \(((?:[\w]+ ×\d+(?:, )?)+)\)$`)
	usesRe     = regexp.MustCompile(`×(\d+)`)
	morePaths  = regexp.MustCompile(`(?m)^- and (\d+) calls on other paths$`)
)

func pathTotal(out string) (listed, calls, more int) {
	for _, m := range listedPath.FindAllStringSubmatch(out, -1) {
		listed++
		for _, u := range usesRe.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(u[1])
			calls += n
		}
	}
	if m := morePaths.FindStringSubmatch(out); m != nil {
		more, _ = strconv.Atoi(m[1])
		calls += more
	}
	return listed, calls, more
}

// Render is bounded by maxBytes, drops the least important items first, and keeps the path
// totals exact.
func TestLedgerRenderBounded(t *testing.T) {
	l := bigLedger()
	truthCalls := l.OtherPathCalls
	for _, tools := range l.Paths {
		for _, n := range tools {
			truthCalls += n
		}
	}
	full := l.render(renderLimits{}, false)
	if _, calls, _ := pathTotal(full); calls != truthCalls {
		t.Fatalf("full render accounts for %d path calls, the ledger for %d:\n%s", calls, truthCalls, full)
	}
	prevLen := len(full)
	for _, maxBytes := range []int{8000, 6 << 10, 4000, 3000, 2000, 1500, 1000, 500, 200, 50, 10, 1} {
		for _, facts := range []bool{false, true} {
			out := l.render(renderLimits{bytes: maxBytes}, facts)
			if len(out) > maxBytes {
				t.Errorf("render(%d, %v) = %d bytes", maxBytes, facts, len(out))
			}
			if listed, calls, _ := pathTotal(out); listed > 0 && calls != truthCalls {
				t.Errorf("render(%d, %v): %d paths listed account for %d calls, want %d:\n%s", maxBytes, facts, listed, calls, truthCalls, out)
			}
			if !facts && maxBytes >= 2000 && !strings.Contains(out, secGoal+"Port the billing service to Go.") {
				t.Errorf("render(%d): the goal was dropped before everything else:\n%s", maxBytes, out)
			}
			if facts && maxBytes >= 200 && !strings.HasPrefix(out, secRecord) {
				t.Errorf("render(%d, facts) does not start with %q", maxBytes, secRecord)
			}
		}
		out := l.render(renderLimits{bytes: maxBytes}, false)
		if len(out) > prevLen {
			t.Errorf("render(%d) is longer than a render with more room", maxBytes)
		}
		prevLen = len(out)
	}
	// At a size where answers no longer fit, the user's messages still do.
	out := l.render(renderLimits{bytes: 3000}, false)
	if strings.Contains(out, secAnswers) || !strings.Contains(out, "Always keep rule 190 in mind.") || !strings.Contains(out, "Now do part 198.") {
		t.Errorf("render(3000): answers should go before the user's messages:\n%s", out)
	}
}

// Equal ledgers render to equal bytes, however their maps were filled.
func TestLedgerRenderDeterministic(t *testing.T) {
	want := bigLedger().render(renderLimits{bytes: defaultExtractiveMaxBytes}, false)
	for i := 0; i < 20; i++ {
		l := bigLedger()
		// Rebuild the maps in a random insertion order.
		paths := map[string]map[string]int{}
		keys := make([]string, 0, len(l.Paths))
		for k := range l.Paths {
			keys = append(keys, k)
		}
		rand.Shuffle(len(keys), func(a, b int) { keys[a], keys[b] = keys[b], keys[a] })
		for _, k := range keys {
			paths[k] = l.Paths[k]
		}
		l.Paths = paths
		if got := l.render(renderLimits{bytes: defaultExtractiveMaxBytes}, false); got != want {
			t.Fatalf("render %d differs:\n%s", i, cmp.Diff(want, got))
		}
		if got := l.clone().render(renderLimits{bytes: defaultExtractiveMaxBytes}, false); got != want {
			t.Fatalf("a clone renders differently:\n%s", cmp.Diff(want, got))
		}
	}
}

// More paths than the ledger lists: the rest are counted, and the render says how many.
func TestLedgerOtherPaths(t *testing.T) {
	l := &Ledger{}
	var events []Event
	for k := 0; k < maxPaths+10; k++ {
		events = append(events, callEv("c", "i", "", "read_file", map[string]any{"path": fmt.Sprintf("f%03d.go", k)}))
	}
	// The paths beyond the bound are called again.
	for k := maxPaths; k < maxPaths+10; k++ {
		events = append(events, callEv("c", "i", "", "read_file", map[string]any{"path": fmt.Sprintf("f%03d.go", k)}))
	}
	l.add(events, 1)
	if len(l.Paths) != maxPaths || l.OtherPathCalls != 20 {
		t.Fatalf("%d paths listed, %d other calls; want %d, 20", len(l.Paths), l.OtherPathCalls, maxPaths)
	}
	// The calls are exact (unlisted paths are counted by calls: a ledger keeps no record of them).
	if _, calls, _ := pathTotal(l.render(renderLimits{}, false)); calls != maxPaths+20 {
		t.Errorf("render accounts for %d calls, want %d:\n%s", calls, maxPaths+20, l.render(renderLimits{}, false))
	}
}

func TestLedgerToolsBound(t *testing.T) {
	l := &Ledger{}
	var events []Event
	for k := 0; k < maxTools+5; k++ {
		events = append(events, callEv("c", "i", "", fmt.Sprintf("tool%02d", k), nil))
	}
	events = append(events, callEv("c", "i", "", "tool00", nil), callEv("c", "i", "", "tool64", nil), callEv("c", "i", "", "  ", nil))
	l.add(events, 1)
	if len(l.Tools) != maxTools || l.Tools["tool00"] != 2 || l.OtherTools != 6 {
		t.Errorf("%d tools, tool00 ×%d, %d others; want %d, 2, 6", len(l.Tools), l.Tools["tool00"], l.OtherTools, maxTools)
	}
	out := l.render(renderLimits{}, false)
	if !strings.Contains(out, "others ×6 (67 calls over 1 invocations)") {
		t.Errorf("render:\n%s", out)
	}
}

func TestLedgerCloneIsDeep(t *testing.T) {
	l := bigLedger()
	c := l.clone()
	c.Paths["svc/pkg0/file0.go"]["read_file"] = 99
	c.Tools["grep"] = 99
	c.Messages[0].Text = "changed"
	if l.Paths["svc/pkg0/file0.go"]["read_file"] == 99 || l.Tools["grep"] == 99 || l.Messages[0].Text == "changed" {
		t.Error("clone shares state with the original")
	}
	var nilLedger *Ledger
	if got := nilLedger.clone(); got == nil || got.Events != 0 {
		t.Errorf("nil clone = %+v", got)
	}
	if !slices.Equal(bigLedger().Errors, l.Errors) {
		t.Error("bigLedger is not deterministic")
	}
}

// add counts events (newly covered, in stream order) into the ledger, as a marker's delta does.
func (l *Ledger) add(events []Event, invocations int) { l.apply(NewLedgerDelta(events, invocations)) }
