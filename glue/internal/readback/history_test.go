package readback

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"

	"github.com/adkctx/adkctx/recall"
)

var t0 = time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)

// turnEvents returns one invocation: a user message, a tool call, its result and an answer.
func turnEvents(inv int, branch, userText, result string) []compaction.Event {
	id := fmt.Sprintf("inv-%03d", inv)
	ts := t0.Add(time.Duration(inv) * time.Minute)
	ev := func(n int, author string, c *genai.Content) compaction.Event {
		return compaction.Event{ID: fmt.Sprintf("%s-e%d", id, n), InvocationID: id, Author: author, Branch: branch, Timestamp: ts.Add(time.Duration(n) * time.Second), Content: c}
	}
	return []compaction.Event{
		ev(0, "user", genai.NewContentFromText(userText, genai.RoleUser)),
		ev(1, "coder", &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: "thinking about it", Thought: true},
			genai.NewPartFromFunctionCall("read_file", map[string]any{"path": fmt.Sprintf("internal/mod%02d/service.go", inv)}),
		}}),
		ev(2, "user", &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
			genai.NewPartFromFunctionResponse("read_file", map[string]any{"content": result, "exit_code": 0}),
		}}),
		ev(3, "coder", genai.NewContentFromText(fmt.Sprintf("Done with step %d.", inv), genai.RoleModel)),
	}
}

func fileBody(inv int, fact string) string {
	var b strings.Builder
	for i := 0; i < 300; i++ {
		if i == 150 && fact != "" {
			b.WriteString(fact + "\n")
		}
		fmt.Fprintf(&b, "func handler%d_%d(w http.ResponseWriter) { return }\n", inv, i)
	}
	return b.String()
}

func writeSegments(t *testing.T, st recall.Store, perSegment, segments int, facts map[int]string) {
	t.Helper()
	inv := 0
	for s := 0; s < segments; s++ {
		var events []compaction.Event
		for k := 0; k < perSegment; k++ {
			events = append(events, turnEvents(inv, "", fmt.Sprintf("step %d: look at module %d", inv, inv), fileBody(inv, facts[inv]))...)
			inv++
		}
		seg, err := WriteHistory(context.Background(), st, events, inv)
		if err != nil {
			t.Fatal(err)
		}
		if seg.Seq != s+1 || seg.Turns != perSegment {
			t.Fatalf("segment %+v, want seq %d with %d turns", seg, s+1, perSegment)
		}
	}
}

func TestHistorySearchFindsPlantedFacts(t *testing.T) {
	st := newMemStore(defaultChunkBytes)
	facts := map[int]string{
		3:  "const magicPort = 8443 // chosen because 8080 collides with the proxy",
		17: "// DEPRECATED: use ZephyrClient instead of LegacyClient",
		28: "timeout_ms: 7125",
	}
	writeSegments(t, st, 5, 6, facts)
	for inv, fact := range facts {
		word := map[int]string{3: "magicPort", 17: "ZephyrClient", 28: "7125"}[inv]
		res, err := SearchHistory(context.Background(), st, Viewer{}, HistoryRequest{Query: "what was " + word + "?"}, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		label := fmt.Sprintf("turn %d,", inv+1)
		first := strings.SplitN(res.Text, "\n", 4)
		if len(first) < 3 || !strings.Contains(first[1], label) || !strings.Contains(first[2], word) {
			t.Errorf("query %q: best excerpt is not %s holding it:\n%s", word, label, res.Text)
		}
		if len(res.Text) > DefaultMaxResultBytes {
			t.Errorf("result %d bytes", len(res.Text))
		}
		// The turn reads back with the fact in the result when asked whole, as an excerpt if not.
		whole, err := ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: strings.TrimSuffix(label, ","), Whole: true}, Limits{MaxResultBytes: 64 << 10, MaxResultLines: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(whole.Text, fact) || !strings.Contains(whole.Text, "read_file result") || strings.Contains(whole.Text, "thinking about it") {
			t.Errorf("read_turn whole:\n%.600s", whole.Text)
		}
		ex, err := ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: strings.TrimSuffix(label, ",")}, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(ex.Text, fact) || !strings.Contains(ex.Text, "excerpt") || !strings.Contains(ex.Text, "whole=true") {
			t.Errorf("read_turn excerpt shows the middle of the result or no way to the rest:\n%s", ex.Text)
		}
	}
}

// Each call is bounded: with a small scan bound the search stops and names the Before that
// continues; following it reaches the oldest segment.
func TestHistorySearchBound(t *testing.T) {
	st := newMemStore(4096)
	writeSegments(t, st, 2, 12, map[int]string{1: "the launch code is OBSIDIAN"})
	res, err := SearchHistory(context.Background(), st, Viewer{}, HistoryRequest{Query: "OBSIDIAN"}, Limits{MaxScanBytes: 30000})
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(res.Text, "before=")
	if i < 0 || strings.Contains(res.Text, "turn 2,") {
		t.Fatalf("bounded search did not stop with a continuation:\n%s", res.Text)
	}
	var before int
	fmt.Sscanf(res.Text[i:], "before=%d", &before)
	for calls := 0; before > 0; calls++ {
		if calls > 20 {
			t.Fatal("continuation does not advance")
		}
		res, err = SearchHistory(context.Background(), st, Viewer{}, HistoryRequest{Query: "OBSIDIAN", Before: before}, Limits{MaxScanBytes: 30000})
		if err != nil {
			t.Fatal(err)
		}
		if res.BytesRead > 30000+2*4096+defaultChunkBytes {
			t.Errorf("read %d bytes", res.BytesRead)
		}
		before = 0
		if i := strings.Index(res.Text, "before="); i >= 0 {
			fmt.Sscanf(res.Text[i:], "before=%d", &before)
		}
	}
	if !strings.Contains(res.Text, "turn 2,") {
		t.Errorf("the oldest segment was never searched:\n%s", res.Text)
	}
}

func TestHistoryBranches(t *testing.T) {
	st := newMemStore(defaultChunkBytes)
	var events []compaction.Event
	events = append(events, turnEvents(1, "root.left", "left secret", "the left agent read QUOKKA")...)
	events = append(events, turnEvents(2, "root.right", "right work", "the right agent read WOMBAT")...)
	events = append(events, turnEvents(3, "", "shared", "everyone sees PLATYPUS")...)
	if _, err := WriteHistory(context.Background(), st, events, 3); err != nil {
		t.Fatal(err)
	}
	right := Viewer{Branch: "root.right"}
	for _, tc := range []struct {
		query string
		found bool
	}{{"QUOKKA", false}, {"WOMBAT", true}, {"PLATYPUS", true}} {
		res, err := SearchHistory(context.Background(), st, right, HistoryRequest{Query: tc.query}, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(res.Text, "] turn "); got != tc.found {
			t.Errorf("viewer on root.right, query %s: found %v, want %v:\n%s", tc.query, got, tc.found, res.Text)
		}
	}
	if _, err := ReadTurn(context.Background(), st, right, TurnRequest{Turn: "turn 1"}, Limits{}); !IsInputError(err) {
		t.Errorf("read_turn of another branch's turn: %v, want an *inputError", err)
	}
	if _, err := ReadTurn(context.Background(), st, Viewer{Scope: "other"}, TurnRequest{Turn: "turn 3"}, Limits{}); !IsInputError(err) {
		t.Errorf("read_turn from another isolation scope: %v, want an *inputError", err)
	}
	res, err := ReadTurn(context.Background(), st, Viewer{Branch: "root.left.sub"}, TurnRequest{Turn: "turn 1", Whole: true}, Limits{})
	if err != nil || !strings.Contains(res.Text, "QUOKKA") {
		t.Errorf("a sub-branch does not see its ancestor's turn: %v\n%v", err, res)
	}
}

func TestReadTurnPaging(t *testing.T) {
	st := newMemStore(defaultChunkBytes)
	big := testLog(2000)
	events := turnEvents(1, "", "run it", big)
	if _, err := WriteHistory(context.Background(), st, events, 1); err != nil {
		t.Fatal(err)
	}
	res, err := ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "turn 1", Whole: true, From: 3}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, `entry=3, range="bytes=`) || len(res.Text) > DefaultMaxResultBytes {
		t.Fatalf("a whole result over the bound does not page:\n%.500s", res.Text)
	}
	page, err := ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: "turn 1", Entry: 3, Range: "1500-1502"}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(renderResponse(map[string]any{"content": big, "exit_code": 0}), "\n")
	want := strings.Join(numbered(lines[1499:1502], 1500), "\n")
	if !strings.Contains(page.Text, want) {
		t.Errorf("entry page:\n%s\nwant lines:\n%s", page.Text, want)
	}
	for _, bad := range []string{"", "x", "0", "turn 2", "turn 1, entry 0", "turn 1, entry 9", "1.1", "0.1", "1.0", "9.1", "1.9", "-1.1", "1.1.1"} {
		if _, err := ReadTurn(context.Background(), st, Viewer{}, TurnRequest{Turn: bad}, Limits{}); !IsInputError(err) {
			t.Errorf("ReadTurn(%q) = %v, want an *inputError", bad, err)
		}
	}
}

// racingStore holds each of the first writers' Recent, once it has read, until all of them have
// read: they all see the same newest segment and race for the same next number, the interleaving
// TestWriteHistoryConcurrent is about. It counts the versions deleted by writers that lost.
type racingStore struct {
	*memStore
	racers  int32
	writers sync.WaitGroup
	arrived atomic.Int32
	deleted atomic.Int32
}

func (s *racingStore) Recent(ctx context.Context, prefix string, skip, limit int) ([]recall.OutputInfo, error) {
	infos, err := s.memStore.Recent(ctx, prefix, skip, limit)
	if s.arrived.Add(1) <= s.racers {
		s.writers.Done()
		s.writers.Wait()
	}
	return infos, err
}

func (s *racingStore) Delete(ctx context.Context, name string, version int64) error {
	s.deleted.Add(1)
	return s.memStore.Delete(ctx, name, version)
}

// Writers racing for the same segment number each end with a segment of their own. The race is
// injected: the four writers read the newest segment before any saves, so all four try number
// 1, and three of them find it taken (their versions deleted, counted) and take the next.
func TestWriteHistoryConcurrent(t *testing.T) {
	const writers = 4
	st := &racingStore{memStore: newMemStore(defaultChunkBytes), racers: writers}
	st.writers.Add(writers)
	var wg sync.WaitGroup
	seqs := make([]int, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seg, err := WriteHistory(context.Background(), st, turnEvents(w, "", "hello", fmt.Sprintf("writer %d", w)), 1)
			if err != nil {
				t.Error(err)
				return
			}
			seqs[w] = seg.Seq
		}()
	}
	wg.Wait()
	if n := st.deleted.Load(); n < writers-1 {
		t.Errorf("%d versions deleted by writers that lost a number, want at least %d: the race did not happen", n, writers-1)
	}
	seen := map[int]bool{}
	for _, s := range seqs {
		if seen[s] {
			t.Errorf("two writers share segment %d: %v", s, seqs)
		}
		seen[s] = true
	}
	for s := range seen {
		if _, err := openSegment(context.Background(), st, s); err != nil {
			t.Errorf("segment %d: %v", s, err)
		}
	}
}

// A corrupt segment fails the call with a *corruptError; nothing panics.
func TestHistoryCorruptSegment(t *testing.T) {
	st := newMemStore(defaultChunkBytes)
	for _, data := range []string{"garbage", historyMagic + " seq=1 header=5\n{}\n", historyMagic + " seq=1 header=999999\n"} {
		st.outputs = map[string][]*memVersion{}
		if _, err := st.Save(context.Background(), HistoryName(1), []byte(data), historyMIME); err != nil {
			t.Fatal(err)
		}
		_, err := SearchHistory(context.Background(), st, Viewer{}, HistoryRequest{Query: "anything"}, Limits{})
		if _, ok := err.(*corruptError); !ok {
			t.Errorf("search over %.30q: %v, want a *corruptError", data, err)
		}
	}
}
