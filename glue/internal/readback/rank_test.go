package readback

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
)

// markedTurn is one invocation of a newcomer's session: a user message, a tool call, its result
// (a log and a note) and an answer.
func markedTurn(inv int, user, log, note, answer string) []compaction.Event {
	id := fmt.Sprintf("inv-%03d", inv)
	ts := t0.Add(time.Duration(inv) * time.Minute)
	ev := func(n int, author string, c *genai.Content) compaction.Event {
		return compaction.Event{ID: fmt.Sprintf("%s-e%d", id, n), InvocationID: id, Author: author, Timestamp: ts.Add(time.Duration(n) * time.Second), Content: c}
	}
	return []compaction.Event{
		ev(0, "user", genai.NewContentFromText(user, genai.RoleUser)),
		ev(1, "agent", &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{genai.NewPartFromFunctionCall("check", map[string]any{"step": inv})}}),
		ev(2, "user", &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("check", map[string]any{"log": log, "note": note})}}),
		ev(3, "agent", genai.NewContentFromText(answer, genai.RoleModel)),
	}
}

// The newcomer's case as a class: a session of 25 to 45 turns in which every turn mentions
// tokens like the query's ("marker-turn-K" for its own K, so "marker-turn-3" begins
// "marker-turn-30"; the words "marker" and "turn" over and over; entries shorter than the one
// that matches), one entry holds the query exactly, another in
// another case, another as its words in order; the session is cut into segments at random,
// sometimes inside a turn. The exact entry ranks first, then the one in another case, then the
// words in order; its label is the turn the user counts (turn 1 is the first user message) and
// its entry as read_turn numbers it, and read_turn given that label shows it.
func TestHistoryExactMatchRanksFirst(t *testing.T) {
	for seed := int64(1); seed <= 24; seed++ {
		rng := rand.New(rand.NewSource(seed))
		turns := 25 + rng.Intn(21)
		target := 1 + rng.Intn(9) // the turn (counted from 1) holding the query exactly
		query := fmt.Sprintf("marker-turn-%d", target)
		targetEntry := rng.Intn(4) // its entry, 0 to 3
		anyCase, inOrder := pick2(rng, turns, target)
		var events []compaction.Event
		texts := func(k int) [4]string {
			// Every turn names its own marker (turns 10 and up hold the query as a prefix),
			// and the query's words, often, in every order.
			filler := strings.Repeat("turn marker ", 1+rng.Intn(4))
			x := [4]string{
				fmt.Sprintf("step %d: look at marker-turn-%d please", k, k),
				fmt.Sprintf("%s log of marker-turn-%d: %s", filler, k, strings.Repeat("ok ", rng.Intn(40))),
				fmt.Sprintf("checked marker-turn-%d; the marker of this turn is fine", k),
				fmt.Sprintf("turn %d marker", k),
			}
			switch k {
			case target:
				x = [4]string{fmt.Sprintf("step %d: look at the build", k), fmt.Sprintf("%s log: %s", filler, strings.Repeat("ok ", 60)),
					"checked the build; the marker of this turn is fine", fmt.Sprintf("turn %d marker", k)}
				x[targetEntry] += " — " + query + " failed here."
			case anyCase:
				x[1] += " " + strings.ToUpper(query)
			case inOrder:
				x[2] += fmt.Sprintf(" (marker turn %d)", target)
			}
			return x
		}
		for k := 1; k <= turns; k++ {
			x := texts(k)
			events = append(events, markedTurn(k, x[0], x[1], x[2], x[3])...)
		}
		st := newMemStore(2048)
		// Segments cut at random event boundaries; turns counts the invocations begun.
		for from := 0; from < len(events); {
			to := min(len(events), from+2+rng.Intn(24))
			begun := map[string]bool{}
			for _, e := range events[:to] {
				begun[e.InvocationID] = true
			}
			if _, err := WriteHistory(context.Background(), st, events[from:to], len(begun)); err != nil {
				t.Fatal(err)
			}
			from = to
		}
		res, err := SearchHistory(context.Background(), st, Viewer{}, HistoryRequest{Query: query}, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		items := itemRE.FindAllStringSubmatch(res.Text, -1)
		if len(items) < 3 {
			t.Fatalf("seed %d: %d results:\n%s", seed, len(items), res.Text)
		}
		// The target's entry as read_turn numbers them: user 1, call 2, result 3, answer 4;
		// the result holds the note too (its log is x[1], the note x[2]).
		wantEntry := map[int]int{0: 1, 1: 3, 2: 3, 3: 4}[targetEntry]
		want := []string{fmt.Sprintf("turn %d, entry %d", target, wantEntry), fmt.Sprintf("turn %d, entry 3", anyCase), fmt.Sprintf("turn %d, entry 3", inOrder)}
		got := []string{items[0][1], items[1][1], items[2][1]}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("seed %d, %q (entry %d of turn %d): ranked %v, want %v:\n%s", seed, query, targetEntry, target, got, want, res.Text)
			continue
		}
		if !strings.Contains(items[0][0], "exact match") || !strings.Contains(items[2][0], "words in order") {
			t.Errorf("seed %d: the exact entries are not marked:\n%s", seed, res.Text)
		}
		// read_turn takes the label as search_history shows it and starts at that entry.
		turn, err := ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: want[0]}, Limits{})
		if err != nil {
			t.Fatalf("seed %d: read_turn(%q): %v", seed, want[0], err)
		}
		first := strings.SplitN(turn.Text, "\n", 3)
		if len(first) < 3 || !strings.HasPrefix(first[0], fmt.Sprintf("turn %d · ", target)) || !strings.HasPrefix(first[1], fmt.Sprintf("[%d] ", wantEntry)) ||
			!strings.Contains(first[2], query+" failed here") {
			t.Errorf("seed %d: read_turn(%q):\n%s", seed, want[0], turn.Text)
		}
		whole, err := ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: fmt.Sprintf("turn %d", target)}, Limits{})
		if err != nil || !strings.Contains(whole.Text, fmt.Sprintf("step %d:", target)) || !strings.Contains(whole.Text, "entries 1-4 of 4") {
			t.Errorf("seed %d: read_turn(turn %d) does not show the user's message and its 4 entries: %v\n%v", seed, target, err, whole)
		}
	}
}

// itemRE matches a search_history item's heading and its label.
var itemRE = regexp.MustCompile(`(?m)^\[\d+\] (turn [\d.]+, entry \d+) · .*$`)

// pick2 returns two distinct turns in [1, n], neither target.
func pick2(rng *rand.Rand, n, target int) (int, int) {
	a := target
	for a == target {
		a = 1 + rng.Intn(n)
	}
	b := target
	for b == target || b == a {
		b = 1 + rng.Intn(n)
	}
	return a, b
}

// A session whose first segments the previous release wrote and whose later ones this release
// writes: both are searched; the old turns keep their labels ("turn 2.1"), the new ones are
// numbered; read_turn takes both; an old-style label of a numbered segment is refused with the
// label to use.
func TestHistoryOfThePreviousRelease(t *testing.T) {
	st := newMemStore(defaultChunkBytes)
	writePreviousRelease(t, st, 1, append(turnEvents(1, "", "first", "the codeword is HERON"), turnEvents(2, "", "second", "nothing")...))
	writePreviousRelease(t, st, 2, turnEvents(3, "", "third", "the HERON again"))
	if _, err := WriteHistory(context.Background(), st, append(turnEvents(4, "", "fourth", "no bird"), turnEvents(5, "", "fifth", "a HERON at last")...), 5); err != nil {
		t.Fatal(err)
	}
	res, err := SearchHistory(context.Background(), st, Viewer{}, HistoryRequest{Query: "HERON"}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, m := range itemRE.FindAllStringSubmatch(res.Text, -1) {
		labels = append(labels, m[1])
	}
	if want := []string{"turn 5, entry 3", "turn 2.1, entry 3", "turn 1.1, entry 3"}; fmt.Sprint(labels) != fmt.Sprint(want) {
		t.Errorf("labels %v, want %v:\n%s", labels, want, res.Text)
	}
	for label, want := range map[string]string{"turn 1.1": "the codeword is HERON", "turn 2.1, entry 3": "the HERON again", "turn 5": "fifth", "5": "fifth"} {
		res, err := ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: label, Whole: true}, Limits{})
		if err != nil || !strings.Contains(res.Text, want) {
			t.Errorf("read_turn(%q): %v\n%v", label, err, res)
		}
	}
	_, err = ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "3.2"}, Limits{})
	if !IsInputError(err) || !strings.Contains(err.Error(), `"turn 3, entry 2"`) {
		t.Errorf("an old-style label of a numbered segment: %v", err)
	}
}

// Turns are numbered within the reader's isolation scope (adk-go v2): segments of two scopes
// interleave, and each reader finds its own turn 2.
func TestTurnNumbersPerScope(t *testing.T) {
	st := newMemStore(defaultChunkBytes)
	inScope := func(scope string, events []compaction.Event) []compaction.Event {
		for i := range events {
			events[i].Scope = scope
		}
		return events
	}
	for k := 1; k <= 4; k++ {
		for _, scope := range []string{"", "task"} {
			events := inScope(scope, turnEvents(10*k+len(scope), "", fmt.Sprintf("%s message %d", scope, k), "result"))
			if _, err := WriteHistory(context.Background(), st, events, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, scope := range []string{"", "task"} {
		for k := 1; k <= 4; k++ {
			res, err := ReadTurn(context.Background(), st, Viewer{Scope: scope}, TurnRequest{Turn: fmt.Sprintf("turn %d", k)}, Limits{})
			if err != nil || !strings.Contains(res.Text, fmt.Sprintf("%s message %d\n", scope, k)) {
				t.Errorf("scope %q, turn %d: %v\n%v", scope, k, err, res)
			}
		}
	}
	if _, err := ReadTurn(context.Background(), st, Viewer{Scope: "task"}, TurnRequest{Turn: "turn 5"}, Limits{}); !IsInputError(err) || !strings.Contains(err.Error(), "up to turn 4") {
		t.Errorf("a turn past the history: %v", err)
	}
}

// A history segment the previous release wrote (testdata: its WriteHistory, a turn with a
// codeword and a turn whose test log truncation cut) is read as it was, beside the segments this
// release writes after it: its turns keep their labels, its excerpts show the cut mark naming
// the saved output (found in the text: that release recorded no marks).
func TestReadsThePreviousReleasesSegment(t *testing.T) {
	data, err := os.ReadFile("testdata/history-previous-release.txt")
	if err != nil {
		t.Fatal(err)
	}
	st := newMemStore(defaultChunkBytes)
	if _, err := st.Save(context.Background(), HistoryName(1), data, historyMIME); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteHistory(context.Background(), st, turnEvents(3, "", "third: HERON again", "ok"), 3); err != nil {
		t.Fatal(err)
	}
	res, err := SearchHistory(context.Background(), st, Viewer{}, HistoryRequest{Query: "codeword HERON"}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if items := itemRE.FindAllStringSubmatch(res.Text, -1); len(items) != 2 || items[0][1] != "turn 1.1, entry 1" || items[1][1] != "turn 3, entry 1" {
		t.Errorf("search over both releases' segments:\n%s", res.Text)
	}
	turn, err := ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "turn 1.2"}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(turn.Text, "excerpt") || !strings.Contains(turn.Text, OutputNote(OutputName("run_tests", "call-7", 0, 1, true))) {
		t.Errorf("read_turn of the previous release's turn:\n%s", turn.Text)
	}
}
