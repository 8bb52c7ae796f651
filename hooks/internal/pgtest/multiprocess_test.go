package pgtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/pgtest"
)

// A worker is one OS process serving turns: this test binary run again with
// ADKCTX_PG_WORKER_DSN set, reading one JSON command per line on stdin and answering one JSON
// line on stdout.
type command struct {
	Op      string `json:"op"` // "turn", "view", "quit"
	Session string `json:"session"`
	Text    string `json:"text"`
}

type answer struct {
	OK       bool           `json:"ok"`
	Error    string         `json:"error,omitempty"`
	Decision map[string]any `json:"decision,omitempty"` // the turn's last budget decision
	View     []string       `json:"view,omitempty"`     // event ids the model sees (summaries as compaction-summary-<marker>)
}

// workerConfig is the adkctx configuration every worker runs with (sync: compaction on the
// turn, so turn-by-turn decisions are comparable).
func workerConfig(logger *zap.Logger, sync bool) adkctx.Config {
	return adkctx.Config{
		Logger: logger,
		Models: []budget.ModelInfo{{Name: "pg-model", ContextWindow: 16_000, MaxOutputTokens: 1_000}},
		Compaction: &compaction.Config{Interval: 3, Synchronous: sync, Summarizer: &compaction.ExtractiveSummarizer{},
			Backoff: 10 * time.Millisecond},
	}
}

func workerModel() *llmtest.Model {
	return &llmtest.Model{ModelName: "pg-model", UsageScale: 1.25, Default: func(*model.LLMRequest) (*genai.Content, error) {
		return genai.NewContentFromText("noted: "+strings.Repeat("a detail worth keeping ", 12), genai.RoleModel), nil
	}}
}

// TestWorker is the worker process; it does nothing in a normal test run.
func TestWorker(t *testing.T) {
	dsn := os.Getenv("ADKCTX_PG_WORKER_DSN")
	if dsn == "" {
		t.Skip("the worker process of TestMultiProcess")
	}
	core, logs := observer.New(zapcore.InfoLevel)
	h, err := hooks.New(workerConfig(zap.New(core), os.Getenv("ADKCTX_PG_WORKER_SYNC") == "1"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: workerModel(), Instruction: "Be careful."})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: pgtest.SessionService(t, pgtest.OpenSQL(t, dsn)), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	in, out := bufio.NewScanner(os.Stdin), json.NewEncoder(os.Stdout)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var c command
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		var a answer
		switch c.Op {
		case "turn":
			a.OK = true
			for _, err := range r.Run(context.Background(), userID, c.Session, genai.NewContentFromText(c.Text, genai.RoleUser), agent.RunConfig{}) {
				if err != nil {
					a.OK, a.Error = false, err.Error()
				}
			}
			if d := logs.FilterMessage("budget decision").All(); len(d) > 0 {
				a.Decision = d[len(d)-1].ContextMap()
			}
		case "view":
			resp, err := rc.SessionService.Get(context.Background(), &session.GetRequest{AppName: appName, UserID: userID, SessionID: c.Session})
			if err != nil {
				a.Error = err.Error()
				break
			}
			a.OK = true
			for _, e := range hooks.ModelView(resp.Session) {
				a.View = append(a.View, e.ID)
			}
		case "quit":
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := h.Close(ctx)
			cancel()
			a.OK = err == nil
		}
		if err := out.Encode(a); err != nil {
			t.Fatal(err)
		}
		if c.Op == "quit" {
			return
		}
	}
}

// worker is the parent's handle on a worker process.
type worker struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	mu  sync.Mutex
}

func startWorker(t *testing.T, dsn string, sync bool) *worker {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorker$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ADKCTX_PG_WORKER_DSN="+dsn)
	if sync {
		cmd.Env = append(cmd.Env, "ADKCTX_PG_WORKER_SYNC=1")
	}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &worker{cmd: cmd, in: in, out: bufio.NewScanner(outPipe)}
	w.out.Buffer(make([]byte, 1<<20), 8<<20)
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
	})
	return w
}

func (w *worker) do(t *testing.T, c command) answer {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	b, _ := json.Marshal(c)
	if _, err := w.in.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	// The test binary prints its own lines around the worker's answers: keep them for a failure.
	var other []string
	for w.out.Scan() {
		line := w.out.Bytes()
		if len(line) == 0 || line[0] != '{' {
			other = append(other, string(line))
			continue
		}
		var a answer
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatalf("worker answered %q: %v", line, err)
		}
		return a
	}
	t.Fatalf("worker ended (%v):\n%s", w.out.Err(), strings.Join(other, "\n"))
	return answer{}
}

func turnText(i int) string {
	return fmt.Sprintf("turn-%d: %s", i, strings.Repeat("a question with enough words to grow the history ", 20+i%7))
}

// Replicas behind a load balancer that is not sticky: two worker processes serve one session's
// turns alternately over PostgreSQL, and each decision equals the one a single process makes
// serving the whole session (a third worker over another database).
func TestMultiProcessAlternating(t *testing.T) {
	shared, alone := pgtest.DSN(t), pgtest.DSN(t)
	pgtest.SessionService(t, pgtest.OpenSQL(t, shared)) // creates the tables once, before the workers
	a, b := startWorker(t, shared, true), startWorker(t, shared, true)
	single := startWorker(t, alone, true)
	keys := []string{"call_seq", "estimated_tokens", "predicted_tokens", "safety_margin", "action", "turns_dropped", "summary_present", "contents"}
	for i := range 18 {
		served := a
		if i%2 == 1 {
			served = b
		}
		got := served.do(t, command{Op: "turn", Session: "s1", Text: turnText(i)})
		want := single.do(t, command{Op: "turn", Session: "s1", Text: turnText(i)})
		if !got.OK || !want.OK {
			t.Fatalf("turn %d failed: %q / %q", i, got.Error, want.Error)
		}
		for _, k := range keys {
			if fmt.Sprint(got.Decision[k]) != fmt.Sprint(want.Decision[k]) {
				t.Errorf("turn %d: %s = %v from alternating processes, %v from one process", i, k, got.Decision[k], want.Decision[k])
			}
		}
	}
	for _, w := range []*worker{a, b, single} {
		w.do(t, command{Op: "quit"})
	}
}

// Three worker processes serve four sessions at the same time over PostgreSQL, compacting in the
// background: each turn succeeds or fails with a clear error; no event is lost, none is hidden
// without being summarized by the marker whose summary the view shows, and every process shows
// the same view. (Two racing compactions may both store a marker; the test counts them.)
func TestMultiProcessConcurrent(t *testing.T) {
	dsn := pgtest.DSN(t)
	svc := pgtest.SessionService(t, pgtest.OpenSQL(t, dsn)) // creates the tables once, before the workers
	workers := []*worker{startWorker(t, dsn, false), startWorker(t, dsn, false), startWorker(t, dsn, false)}
	sessions := []string{"s1", "s2", "s3", "s4"}
	type sent struct {
		session, text, err string
		ok                 bool
	}
	var mu sync.Mutex
	var all []sent
	var wg sync.WaitGroup
	for k, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				s := sessions[(k+i)%len(sessions)]
				text := fmt.Sprintf("worker %d %s", k, turnText(i))
				a := w.do(t, command{Op: "turn", Session: s, Text: text})
				if !a.OK && strings.TrimSpace(a.Error) == "" {
					t.Errorf("worker %d: a turn failed without an error", k)
				}
				mu.Lock()
				all = append(all, sent{s, text, a.Error, a.OK})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, w := range workers {
		if a := w.do(t, command{Op: "quit"}); !a.OK {
			t.Errorf("a worker could not drain its compactions")
		}
	}
	// Read everything back from the database.
	failed, duplicates, compactions := 0, 0, 0
	for _, s := range sessions {
		resp, err := svc.Get(context.Background(), &session.GetRequest{AppName: appName, UserID: userID, SessionID: s})
		if err != nil {
			t.Fatal(err)
		}
		raw := slices.Collect(resp.Session.Events().All())
		texts := map[string]bool{}
		markers := map[string]*compaction.Marker{}
		for _, e := range raw {
			if e.Content != nil && e.Author == "user" && len(e.Content.Parts) > 0 {
				texts[e.Content.Parts[0].Text] = true
			}
			if e.Content == nil && e.CustomMetadata[compaction.MetadataKey] != nil {
				m, err := compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata})
				if err != nil {
					t.Fatalf("%s: marker %s: %v", s, e.ID, err)
				}
				markers[e.ID] = m
			}
		}
		for _, m := range all {
			if m.session == s && m.ok && !texts[m.text] {
				t.Errorf("%s: a successful turn's message is not stored", s)
			}
			if !m.ok {
				failed++
			}
		}
		// Two compactions of one session in two processes can both store a marker: adk-go's
		// database service checks for a stale session with a plain SELECT in a READ COMMITTED
		// transaction, so two appends that race both commit. The view then picks one of them in
		// every process; the other is wasted work, counted here, not lost or hidden work.
		prev := map[string]int{}
		for _, m := range markers {
			prev[m.Previous]++
		}
		for p, n := range prev {
			if n > 1 {
				duplicates += n - 1
				t.Logf("%s: %d markers roll up marker %q (racing appends)", s, n, p)
			}
		}
		// Every process shows the same view, and hides only what the winning chain covers.
		var views [][]string
		for range 2 { // the workers have quit: the views come from two fresh processes
			v := startWorker(t, dsn, false)
			views = append(views, v.do(t, command{Op: "view", Session: s}).View)
			v.do(t, command{Op: "quit"})
		}
		if !slices.Equal(views[0], views[1]) {
			t.Errorf("%s: two processes show different views", s)
		}
		shown := map[string]bool{}
		for _, id := range views[0] {
			shown[id] = true
		}
		// The winning marker, as documented: the highest seq, then the most events, then the
		// later one. The view shows its summary, and only it.
		var newest *compaction.Marker
		newestID, newestAt := "", -1
		for at, e := range raw {
			m, ok := markers[e.ID]
			if !ok {
				continue
			}
			if newest == nil || m.Seq > newest.Seq || m.Seq == newest.Seq && (m.EventCount > newest.EventCount ||
				m.EventCount == newest.EventCount && at > newestAt) {
				newest, newestID, newestAt = m, e.ID, at
			}
		}
		var summaries []string
		for _, id := range views[0] {
			if strings.HasPrefix(id, "compaction-summary-") {
				summaries = append(summaries, strings.TrimPrefix(id, "compaction-summary-"))
			}
		}
		if newest != nil && !slices.Equal(summaries, []string{newestID}) {
			t.Errorf("%s: the view shows the summaries of %v, want only the winning marker %s", s, summaries, newestID)
		}
		// Within the winning chain no event is summarized twice (only a marker that lost a race
		// may overlap another).
		chain := map[string]bool{}
		for m := newest; m != nil; m = markers[m.Previous] {
			for _, id := range m.EventIDs {
				if chain[id] {
					t.Errorf("%s: event %s summarized twice in the winning chain", s, id)
				}
				chain[id] = true
			}
		}
		for _, e := range raw {
			isMarker := e.Content == nil && e.CustomMetadata[compaction.MetadataKey] != nil
			if !isMarker && !shown[e.ID] && !chain[e.ID] {
				t.Errorf("%s: event %s is hidden without being summarized", s, e.ID)
			}
		}
		// A session compacts once θ + R (5) invocations completed; turns that failed (another
		// process wrote the session first) do not count, and an attempt can lose to other
		// writers too: with two more completed turns, one attempt at least must have stored.
		completed := 0
		for _, m := range all {
			if m.session == s && m.ok {
				completed++
			}
		}
		if len(markers) == 0 && completed >= 3+2+2 {
			t.Errorf("%s: no compaction after %d completed turns", s, completed)
		}
		compactions += len(markers)
	}
	if compactions == 0 {
		t.Error("no session was compacted")
	}
	kinds := map[string]int{}
	for _, m := range all {
		if !m.ok {
			kinds[strings.SplitN(m.err, ":", 2)[0]]++
		}
	}
	t.Logf("%d turns, %d failed with an error: %v; %d markers lost a race to another process's", len(all), failed/len(sessions), kinds, duplicates)
}
