package hooks_test

// People's view of a session (adk-go's REST API and web UI, an application) against the model's
// (a run). The adk-go v2 glue runs the same tests (adk2/hooks/people_test.go is generated from
// this file).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/adkctx/adkctx/hooks/internal/sqlitetest"
	"github.com/google/go-cmp/cmp"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/server/adkrest"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
)

const peopleApp = "assistant" // adk-go's single loader serves the agent under its own name

func peopleStore(t *testing.T) session.Service {
	t.Helper()
	return sqlitetest.Open(t, sqlitetest.TempDSN(t)).Sessions
}

// restEvent is what adk-go's REST API serves of an event.
type restEvent struct {
	ID      string         `json:"id"`
	Author  string         `json:"author"`
	Content *genai.Content `json:"content"`
}

func (e restEvent) text() string {
	if e.Content == nil || len(e.Content.Parts) == 0 {
		return ""
	}
	return e.Content.Parts[0].Text
}

// eventsCall is one call of a view's events, as hooks.TraceEvents reports it.
type eventsCall struct {
	method string
	run    bool
}

// Through adk-go's REST handler over SQLite, after several compactions: GET session serves every
// stored event in order, each compaction as an event authored by adkctx that says what it is,
// never a summary presented as the user's; the model's requests keep the compacted view. And
// the guard: the runner reads a session with Len and At before its run claims it, with All
// after; the sessions API only with All. A path that used the other method would read the other
// view.
func TestPeopleSeeTheWholeConversation(t *testing.T) {
	base := peopleStore(t)
	m := peopleModel()
	h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant."})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: peopleApp, Agent: a, SessionService: base})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var calls []eventsCall
	hooks.TraceEvents(h, func(method string, run bool) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, eventsCall{method, run})
	})
	take := func() []eventsCall {
		mu.Lock()
		defer mu.Unlock()
		out := calls
		calls = nil
		return out
	}
	srv, err := adkrest.NewServer(adkrest.ServerConfig{SessionService: rc.SessionService, AgentLoader: agent.NewSingleLoader(rc.Agent),
		PluginConfig: rc.PluginConfig})
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(srv)
	defer web.Close()
	sessionURL := web.URL + "/apps/" + peopleApp + "/users/u1/sessions/s1"
	do := func(method, url string, body any, out any) {
		t.Helper()
		var in bytes.Buffer
		if body != nil {
			if err := json.NewEncoder(&in).Encode(body); err != nil {
				t.Fatal(err)
			}
		}
		req, err := http.NewRequest(method, url, &in)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			t.Fatalf("%s %s: %s: %s", method, url, resp.Status, b.String())
		}
		if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatal(err)
			}
		}
	}
	do(http.MethodPost, sessionURL, map[string]any{}, nil)
	take()
	var served struct {
		Events []restEvent `json:"events"`
	}
	getSession := func() {
		t.Helper()
		do(http.MethodGet, sessionURL, nil, &served)
		got := take()
		if len(got) == 0 {
			t.Fatal("GET session never read the session's events")
		}
		for _, c := range got {
			if c.method != "All" || c.run {
				t.Errorf("GET session read the session with %s (run %v): people would see the model's view", c.method, c.run)
			}
		}
	}
	for i := range peopleTurns {
		do(http.MethodPost, web.URL+"/run", map[string]any{"appName": peopleApp, "userId": "u1", "sessionId": "s1",
			"newMessage": map[string]any{"role": "user", "parts": []map[string]any{{"text": peopleTurn(i)}}}}, nil)
		var sawEarly, sawAll bool
		for _, c := range take() {
			if !c.run && c.method == "All" {
				t.Fatalf("turn %d: the runner iterated the session before its run claimed it (it would read people's view)", i)
			}
			sawEarly = sawEarly || !c.run && (c.method == "Len" || c.method == "At")
			sawAll = sawAll || c.run && c.method == "All"
		}
		if !sawEarly {
			t.Fatalf("turn %d: the runner never looked for the agent to run with Len and At before its run (the guard checks nothing)", i)
		}
		if !sawAll {
			t.Fatalf("turn %d: the run never read the model's view with All", i)
		}
		getSession() // a person reads the whole conversation between turns
	}

	resp, err := base.Get(context.Background(), &session.GetRequest{AppName: peopleApp, UserID: "u1", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	var storedIDs, servedIDs []string
	markers := map[string]bool{}
	for e := range resp.Session.Events().All() {
		storedIDs = append(storedIDs, e.ID)
		if e.Content == nil && e.CustomMetadata[compaction.MetadataKey] != nil {
			markers[e.ID] = true
		}
	}
	for _, e := range served.Events {
		servedIDs = append(servedIDs, e.ID)
		switch {
		case markers[e.ID]:
			if e.Author != "adkctx" || !strings.HasPrefix(e.text(), "[adkctx] Compaction") {
				t.Errorf("compaction %s is served as %q by %q", e.ID, e.text(), e.Author)
			}
		case strings.HasPrefix(e.text(), compaction.SummaryHeader):
			t.Errorf("event %s (%s) is a summary: people see the stored events", e.ID, e.Author)
		}
	}
	if len(markers) < 2 {
		t.Fatalf("%d compactions: the session should have several", len(markers))
	}
	if !slices.Equal(storedIDs, servedIDs) {
		t.Errorf("served %v, stored %v", servedIDs, storedIDs)
	}
	// The model's requests: the compacted view, no notice.
	reqs := m.Requests()
	last := reqs[len(reqs)-1]
	if text := llmtest.AllText(last); !strings.Contains(text, compaction.SummaryHeader) || strings.Contains(text, "[adkctx] Compaction") {
		t.Errorf("the last request is not the compacted view: %.300q", text)
	}
	for _, c := range last.Contents {
		if len(c.Parts) > 0 && strings.HasPrefix(c.Parts[0].Text, "turn-0:") {
			t.Error("the last request holds the first turn raw: it is not compacted")
		}
	}
	// People's reads change nothing the model is sent: the same turns with nobody reading send
	// the same requests, byte for byte.
	if diff := cmp.Diff(requestBytes(t, unreadRequests(t)), requestBytes(t, reqs)); diff != "" {
		t.Errorf("the model's requests differ when people read the session between turns (-unread +read):\n%s", diff)
	}
}

// peopleTurns is how many turns TestPeopleSeeTheWholeConversation plays (several compactions).
const peopleTurns = 8

// peopleTurn is the user's message of turn i.
func peopleTurn(i int) string { return fmt.Sprintf("turn-%d: %s", i, strings.Repeat("context ", 30)) }

// peopleModel is the scripted model of the people tests.
func peopleModel() *llmtest.Model {
	return &llmtest.Model{UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
		return genai.NewContentFromText("noted: "+strings.Repeat("detail ", 40), genai.RoleModel), nil
	}}
}

// unreadRequests plays TestPeopleSeeTheWholeConversation's turns through the runner alone,
// nobody reading the session, and returns the model's requests.
func unreadRequests(t *testing.T) []*model.LLMRequest {
	t.Helper()
	m := peopleModel()
	h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "You are a careful assistant."})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: peopleApp, Agent: a, SessionService: peopleStore(t), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range peopleTurns {
		for _, err := range r.Run(context.Background(), "u1", "s1", genai.NewContentFromText(peopleTurn(i), genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return m.Requests()
}

// requestBytes is what the model was sent in each request: system instruction and contents, as
// JSON.
func requestBytes(t *testing.T, reqs []*model.LLMRequest) []string {
	t.Helper()
	out := make([]string, len(reqs))
	for i, r := range reqs {
		b, err := json.Marshal(struct {
			System   *genai.Content
			Contents []*genai.Content
		}{r.Config.SystemInstruction, r.Contents})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// A late whole read that fails (the Get's context is done) shows a notice saying so before the
// events at hand, never a silently short list.
func TestPeoplesReadThatFailsSaysSo(t *testing.T) {
	base := peopleStore(t)
	h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{Interval: 2, Synchronous: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	m := &llmtest.Model{UsageScale: 1, Default: func(req *model.LLMRequest) (*genai.Content, error) {
		return genai.NewContentFromText("noted: "+strings.Repeat("detail ", 40), genai.RoleModel), nil
	}}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := h.Wire(runner.Config{AppName: peopleApp, Agent: a, SessionService: base, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		for _, err := range r.Run(context.Background(), "u1", "s1", genai.NewContentFromText(fmt.Sprintf("turn-%d: %s", i, strings.Repeat("context ", 30)), genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	got, err := rc.SessionService.Get(ctx, &session.GetRequest{AppName: peopleApp, UserID: "u1", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	events := slices.Collect(got.Session.Events().All())
	if len(events) == 0 {
		t.Fatal("a failed whole read shows no event at all")
	}
	if events[0].Author != "adkctx" || !strings.Contains(events[0].Content.Parts[0].Text, "could not be read") {
		t.Fatalf("a failed whole read shows %d events, the first %+v", len(events), events[0])
	}
	if len(events) < 2 {
		t.Error("the notice is not followed by the events at hand")
	}
}
