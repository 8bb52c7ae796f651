package hooks_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/adk2/hooks"
	"github.com/adkctx/adkctx/adk2/internal/llmtest"
	"github.com/adkctx/adkctx/compaction"
)

// shown is one event of a view (the v1 writer, hooks/internal/v1writer, prints adk-go v1's view
// in this form).
type shown struct {
	ID      string `json:"id"`
	Summary bool   `json:"summary"`
	Text    string `json:"text"`
}

// A user upgrading from adk-go v1 to v2 keeps their history: a session written by adkctx under
// adk-go v1 (hooks/internal/v1writer in the v1 glue's module: hooks, a v1 runner, the v1
// database service) to a SQLite file is read by adkctx under adk-go v2 from the same file with the same summary and raw tail, and the
// next compaction, under v2, rolls up the marker written under v1. adk-go v1 and v2 cannot be
// linked into one binary (their go.opentelemetry.io/otel/log requirements are incompatible), so
// v1 writes in its own process.
func TestUpgradeFromV1KeepsTheHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the adk-go v1 writer")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the adk-go v1 writer: %v", err)
	}
	path := filepath.Join(t.TempDir(), "sessions.db")
	cmd := exec.CommandContext(t.Context(), goBin, "run", "./internal/v1writer", "-db", path, "-app", appName, "-turns", "9")
	cmd.Dir = filepath.Join("..", "..", "hooks") // the v1 glue's module
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("v1 writer: %v\n%s", err, stderr.String())
	}
	var v1view []shown
	if err := json.Unmarshal(stdout.Bytes(), &v1view); err != nil {
		t.Fatalf("v1 writer output: %v\n%s", err, stdout.String())
	}
	if !slices.ContainsFunc(v1view, func(s shown) bool { return s.Summary }) {
		t.Fatalf("the v1 session has no summary: %+v", v1view)
	}

	// adk-go v2 over the same file.
	m := &llmtest.Model{UsageScale: 1, Default: chatty}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant."})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := newHooks(t, adkctx.Config{Compaction: &compaction.Config{Interval: 2, RetainRecentInvocations: 2, Synchronous: true,
		Summarizer: &compaction.ExtractiveSummarizer{}}})
	base := sqliteService(t, path)
	rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: base})
	if err != nil {
		t.Fatal(err)
	}
	var v2view []shown
	resp, err := rc.SessionService.Get(t.Context(), &session.GetRequest{AppName: appName, UserID: "user", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hooks.ModelView(resp.Session) {
		s := shown{ID: e.ID, Summary: isSummary(e)}
		if ps := partsOf(e); len(ps) > 0 {
			s.Text = ps[0].Text
		}
		v2view = append(v2view, s)
	}
	if diff := cmp.Diff(v1view, v2view); diff != "" {
		t.Fatalf("the v2 view of the v1 session differs (-v1 +v2):\n%s", diff)
	}

	// The conversation goes on under v2: the request holds the v1 summary and the raw tail, and
	// the next compaction rolls up the v1 marker.
	var v1marker *compaction.Marker
	var v1markerID string
	for _, e := range stored(t, base, "s1") {
		if isMarker(e) {
			if v1marker, err = compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata}); err != nil {
				t.Fatal(err)
			}
			v1markerID = e.ID
		}
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"turn-9: look at module 9", "turn-10: look at module 10"} {
		if err := run(t, r, "s1", genai.NewContentFromText(msg, genai.RoleUser)); err != nil {
			t.Fatal(err)
		}
	}
	first := m.Requests()[0]
	if !hasSummary(first) || !slices.Contains(userTexts(first), "turn-8: look at module 8") {
		t.Errorf("the first v2 request lacks the v1 summary or the previous turn raw: %q", userTexts(first))
	}
	var latest *compaction.Marker
	for _, e := range stored(t, base, "s1") {
		if isMarker(e) && e.ID != v1markerID {
			if latest, err = compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if latest == nil || latest.Previous != v1markerID || latest.Seq <= v1marker.Seq {
		t.Errorf("the v2 compaction does not roll up the v1 marker %s (seq %d): %+v", v1markerID, v1marker.Seq, latest)
	}
}
