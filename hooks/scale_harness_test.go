package hooks_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
	"google.golang.org/adk/session"

	"github.com/adkctx/adkctx/compaction"
)

// The scale benchmark's workload is what it claims to be: invocations of a user message, a tool
// call, a 2–8 KB tool result and an answer, compacted by adkctx; a session loaded into SQLite
// through adk-go reads back as it was played, and its copies hold it with and without markers.
func TestScaleWorkload(t *testing.T) {
	text := newScaleText()
	builder, err := newSessionBuilder(t.Context(), text)
	if err != nil {
		t.Fatal(err)
	}
	defer builder.Close(t.Context())
	events, err := builder.session(56, text)
	if err != nil {
		t.Fatal(err)
	}
	var markers int
	var shapes []string
	for _, e := range events {
		switch {
		case isMarker(e):
			markers++
			if _, err := compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata}); err != nil {
				t.Errorf("marker %s: %v", e.ID, err)
			}
		case e.Content == nil || len(e.Content.Parts) != 1:
			t.Fatalf("event %s: content %+v", e.ID, e.Content)
		case e.Content.Parts[0].FunctionCall != nil:
			shapes = append(shapes, "call")
		case e.Content.Parts[0].FunctionResponse != nil:
			shapes = append(shapes, "result")
			out, _ := e.Content.Parts[0].FunctionResponse.Response["output"].(string)
			if len(out) < 2048 || len(out) > 8*1024 {
				t.Errorf("tool output of %d bytes", len(out))
			}
		case strings.HasPrefix(e.Content.Parts[0].Text, "[step "):
			shapes = append(shapes, "message")
		default:
			shapes = append(shapes, "answer")
		}
	}
	if want := slices.Repeat([]string{"message", "call", "result", "answer"}, len(shapes)/4); len(shapes) < 48 || !slices.Equal(shapes, want) {
		t.Errorf("events %v, want at least 12 × message, call, result, answer", shapes)
	}
	if markers < 2 {
		t.Fatalf("%d markers in %d events: adkctx did not compact", markers, len(events))
	}

	db := openScaleDB(t, "sqlite")
	cut := prefix(events, 30)
	if len(cut) < 30 || len(cut) < len(events) && events[len(cut)].InvocationID == cut[len(cut)-1].InvocationID {
		t.Fatalf("the prefix of 30 events (%d) ends inside an invocation", len(cut))
	}
	if err := loadSession(t.Context(), db.loader, "adkctx", cut); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][]*session.Event{"adkctx": cut, "copy": cut, "plain": withoutMarkers(cut)} {
		if id != "adkctx" {
			if err := db.copySession("adkctx", id, id == "plain"); err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff(ids(want), ids(readBack(t, db, id))); diff != "" {
			t.Errorf("session %s (-want +got):\n%s", id, diff)
		}
	}
}

func ids(events []*session.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.ID)
	}
	return out
}

// readBack reads session id whole through adk-go's service, as the arms do.
func readBack(t *testing.T, db *scaleDB, id string) []*session.Event {
	t.Helper()
	svc, err := db.serve()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Get(context.Background(), &session.GetRequest{AppName: scaleApp, UserID: scaleUser, SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Collect(resp.Session.Events().All())
}

// A CPU sample is adkctx's when the innermost function on its stack that belongs to adkctx,
// storage or the benchmark is adkctx's.
func TestScaleProfileOwner(t *testing.T) {
	stack := func(names ...string) *profile.Sample { // leaf first
		s := &profile.Sample{}
		for _, n := range names {
			s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: n}}}})
		}
		return s
	}
	for _, tc := range []struct {
		sample *profile.Sample
		want   string
	}{
		{stack("encoding/json.Unmarshal", "github.com/adkctx/adkctx/compaction.parseRecord", "google.golang.org/adk/runner.(*Runner).Run"), "adkctx"},
		{stack("modernc.org/sqlite/lib.sqlite3VdbeExec", "database/sql.(*DB).QueryContext", "github.com/adkctx/adkctx/hooks.(*service).read"), "storage"},
		{stack("runtime.mallocgc", "github.com/adkctx/adkctx/hooks_test.(*scaleLLM).GenerateContent.func1", "github.com/adkctx/adkctx/hooks.(*Hooks).beforeModel"), "benchmark"},
		{stack("google.golang.org/adk/session/database.(*databaseService).Get", "github.com/adkctx/adkctx/hooks_test.(*scaleStore).Get"), "storage"},
		{stack("runtime.gcBgMarkWorker"), "other"},
		{stack("encoding/json.Unmarshal", "github.com/adkctx/adkctx/compaction.parseRecord", "github.com/adkctx/adkctx/hooks.ModelView",
			"github.com/adkctx/adkctx/hooks_test.(*scaleArm).viewEvents"), "benchmark"},
		{stack("encoding/json.Marshal", "google.golang.org/adk/internal/llminternal.(*Flow).callLLM"), "other"},
	} {
		if got := owner(tc.sample); got != tc.want {
			t.Errorf("owner(%s) = %s, want %s", tc.sample.Location[0].Line[0].Function.Name, got, tc.want)
		}
	}
}
