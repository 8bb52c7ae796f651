package pgtest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

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
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/pgtest"
)

const (
	appName = "pg-app"
	userID  = "user"
)

// adkctxAPI is everything this test uses of adkctx's own API, in one place, to adapt when hooks
// or compaction change.
type adkctxAPI struct {
	// runner wires adkctx into adk-go's runner over base, as example/wiring.go does, with
	// compaction on; it returns the runner and the wrapped (view) session service.
	runner    func(t *testing.T, llm model.LLM, base session.Service, logger *zap.Logger) (*runner.Runner, session.Service)
	raw       func(session.Session) []*session.Event // every stored event, markers included
	marker    func(*session.Event) bool              // a stored compaction marker
	header    string                                 // how a summary starts in a model request
	compacted zap.Field                              // the log field of a compaction that stored a marker
}

func newAdkctxAPI() adkctxAPI {
	return adkctxAPI{
		runner: func(t *testing.T, llm model.LLM, base session.Service, logger *zap.Logger) (*runner.Runner, session.Service) {
			t.Helper()
			h, err := hooks.New(adkctx.Config{Logger: logger,
				Compaction: &compaction.Config{Interval: 5, Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}}})
			if err != nil {
				t.Fatal(err)
			}
			a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Instruction: "You are a careful assistant."})
			if err != nil {
				t.Fatal(err)
			}
			rc, err := h.Wire(runner.Config{AppName: appName, Agent: a, SessionService: base, AutoCreateSession: true})
			if err != nil {
				t.Fatal(err)
			}
			r, err := runner.New(rc)
			if err != nil {
				t.Fatal(err)
			}
			return r, rc.SessionService
		},
		raw: func(s session.Session) []*session.Event { return slices.Collect(s.Events().All()) },
		marker: func(e *session.Event) bool {
			return e.Content == nil && e.CustomMetadata[compaction.MetadataKey] != nil
		},
		header:    compaction.SummaryHeader,
		compacted: zap.String("outcome", "compacted"),
	}
}

// adk-go's runner and llmagent with adkctx, storing sessions in PostgreSQL through adk-go's
// database service, for 32 turns: markers are stored, every original event is still in the
// database (read back through a new connection pool), and the history the model sees is the
// smaller compacted view.
func TestRunnerCompactionOnPostgres(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	api := newAdkctxAPI()
	core, logs := observer.New(zapcore.InfoLevel)
	llm := &llmtest.Model{UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
		last := req.Contents[len(req.Contents)-1]
		return genai.NewContentFromText("ack "+strings.Fields(last.Parts[0].Text)[0], genai.RoleModel), nil
	}}
	r, view := api.runner(t, llm, pgtest.SessionService(t, pgtest.OpenSQL(t, dsn)), zap.New(core))

	const turns = 32
	yielded := map[string]bool{}
	for i := range turns {
		msg := genai.NewContentFromText(fmt.Sprintf("turn-%02d: remember item %d", i, i), genai.RoleUser)
		for ev, err := range r.Run(ctx, userID, "s1", msg, agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("turn %d: %v", i, err)
			}
			yielded[ev.ID] = true
		}
	}

	// A second pool and service: what follows is read from the database, not from memory.
	db := pgtest.OpenSQL(t, dsn)
	stored, err := pgtest.SessionService(t, db).Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	raw := api.raw(stored.Session)
	var rows int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM events WHERE app_name = $1 AND session_id = 's1'", appName).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != len(raw) {
		t.Errorf("events table has %d rows, the service returned %d events", rows, len(raw))
	}

	var markers int
	var user, replies []string
	for _, e := range raw {
		switch {
		case api.marker(e):
			markers++
		case e.Author == "user":
			user = append(user, e.Content.Parts[0].Text)
		default:
			replies = append(replies, e.Content.Parts[0].Text)
			delete(yielded, e.ID)
		}
	}
	if markers == 0 {
		t.Fatal("no compaction marker stored")
	}
	if n := len(logs.FilterField(api.compacted).All()); n != markers {
		t.Errorf("%d markers stored, %d compactions logged", markers, n)
	}
	for i := range turns {
		if i >= len(user) || user[i] != fmt.Sprintf("turn-%02d: remember item %d", i, i) {
			t.Fatalf("stored user messages are not every turn in order:\n%q", user)
		}
		if i >= len(replies) || replies[i] != fmt.Sprintf("ack turn-%02d:", i) {
			t.Fatalf("stored replies are not every reply in order:\n%q", replies)
		}
	}
	if len(user) != turns || len(replies) != turns {
		t.Errorf("stored %d user messages and %d replies, want %d each", len(user), len(replies), turns)
	}
	if len(yielded) != 0 {
		t.Errorf("%d events the runner yielded are not in the database", len(yielded))
	}

	// The view (what adk-go builds the request from) is the summary plus recent events.
	got, err := view.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Session.Events().Len(); n >= 2*turns {
		t.Errorf("the view has %d events, no fewer than the %d stored originals", n, 2*turns)
	}
	reqs := llm.Requests()
	last := reqs[len(reqs)-1]
	if n := len(last.Contents); n >= 2*turns-1 {
		t.Errorf("the last request carries %d contents: history was not compacted", n)
	}
	t.Logf("%d turns: %d events stored (%d markers); view %d events; last request %d contents",
		turns, len(raw), markers, got.Session.Events().Len(), len(last.Contents))
	text := llmtest.AllText(last)
	if !strings.Contains(text, api.header) || !strings.Contains(text, fmt.Sprintf("turn-%02d", turns-1)) {
		t.Errorf("the last request lacks the summary or the newest turn:\n%s", text)
	}
}
