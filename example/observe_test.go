package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/mux"
	"google.golang.org/adk/cmd/launcher/web/api"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
)

// get fetches url and returns its body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

var scrapeURL = regexp.MustCompile(`adkctx metrics for Prometheus: (http://127\.0\.0\.1:\d+/metrics)`)

// -metrics-addr serves adkctx's metrics through the OpenTelemetry Prometheus exporter: after a
// few turns of the REPL, a scrape over HTTP finds adkctx's series with their labels.
func TestPrometheusScrape(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	s := startREPL(t, noEnv, "-db", filepath.Join(dir, "s.db"), "-log", filepath.Join(dir, "l.jsonl"), "-metrics-addr", "127.0.0.1:0")
	for _, q := range demoScript[:4] {
		s.say(q)
	}
	s.settle()
	m := scrapeURL.FindStringSubmatch(s.out.String())
	if m == nil {
		t.Fatalf("no scrape URL printed:\n%s", s.out.String())
	}
	code, body := get(t, m[1])
	if code != http.StatusOK {
		t.Fatalf("scrape: HTTP %d\n%s", code, body)
	}
	for _, want := range []string{
		`adkctx_budget_decisions_total{adkctx_budget_action="none",gen_ai_request_model="offline-coder",otel_scope_name="github.com/adkctx/adkctx"`,
		`adkctx_request_tokens_bucket{adkctx_token_kind="estimated",gen_ai_request_model="offline-coder"`,
		`adkctx_request_tokens_count{adkctx_token_kind="reported",gen_ai_request_model="offline-coder"`,
		`gen_ai_client_token_usage_sum{gen_ai_operation_name="generate_content",gen_ai_provider_name="_OTHER",gen_ai_request_model="offline-coder",gen_ai_token_type="input"`,
		`adkctx_tool_truncations_total{gen_ai_tool_name="read_file"`,
		`adkctx_tool_omitted_bytes_total{gen_ai_tool_name="read_file"`,
		`adkctx_instructions_injected_bytes_count{`,
		"# HELP adkctx_budget_decisions_total Budget decisions, one per model call",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	// One decision per model call: the counter agrees with the log.
	calls := 0
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "adkctx_budget_decisions_total{") {
			n, err := strconv.Atoi(l[strings.LastIndexByte(l, ' ')+1:])
			if err != nil {
				t.Fatalf("sample %q: %v", l, err)
			}
			calls += n
		}
	}
	if decisions := len(filterLog(t, filepath.Join(dir, "l.jsonl"), "budget decision", "")); calls != decisions || calls < 4 {
		t.Errorf("adkctx_budget_decisions_total = %d, log has %d budget decisions", calls, decisions)
	}
	if strings.Contains(body, "session") {
		t.Errorf("a series carries a session label")
	}
	s.say("/quit")
	if code := s.exit(); code != 0 {
		t.Fatalf("exit code %d, stderr %s", code, s.errb.String())
	}
}

// filterLog returns the log entries with message msg (of session sessionID when not empty).
func filterLog(t *testing.T, path, msg, sessionID string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range logEntries(t, path) {
		if e["msg"] == msg && (sessionID == "" || e["session_id"] == sessionID) {
			out = append(out, e)
		}
	}
	return out
}

// restEvent is an event as adk-go's REST API serves it.
type restEvent struct {
	ID            string         `json:"id"`
	Author        string         `json:"author"`
	Content       *genai.Content `json:"content"`
	UsageMetadata *struct {
		PromptTokenCount int `json:"promptTokenCount"`
	} `json:"usageMetadata"`
}

func (e restEvent) text() string {
	if e.Content == nil || len(e.Content.Parts) == 0 {
		return ""
	}
	return e.Content.Parts[0].Text
}

// call sends a JSON request to the REST API and decodes the answer into out.
func call(t *testing.T, method, url string, in, out any) {
	t.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: HTTP %d: %s", method, url, resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s %s: %v\n%s", method, url, err, data)
	}
}

// adk-go's REST API (the launcher's api sublauncher, on loopback), over the example's wiring: a
// long session run through POST /run is compacted for the model, while GET session serves people
// every stored event in order with each compaction shown as what it is, and the decision log has
// one budget decision per model call.
func TestLauncherREST(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	o := options{db: filepath.Join(dir, "s.db"), logPath: filepath.Join(dir, "l.jsonl"), model: "gemini-2.5-flash"}
	var cl cleanups
	defer func() {
		if err := cl.run(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	a, err := prepare(context.Background(), o, noEnv, &cl)
	if err != nil {
		t.Fatal(err)
	}
	// Compactions run on the turn that triggers them. In the background, back-to-back turns of
	// the offline model write to SQLite every few milliseconds, and the marker's append can lose
	// the race with them several times in a row (adk-go's database service refuses an append
	// through a session read before its last update); the attempt then fails and backs off.
	setup := a.setup
	setup.Synchronous = true
	h, rc, err := a.wire(setup, &cl)
	if err != nil {
		t.Fatal(err)
	}
	sub := api.NewLauncher()
	if _, err := sub.Parse(nil); err != nil {
		t.Fatal(err)
	}
	router := mux.NewRouter()
	if err := sub.SetupSubrouters(router, launcherConfig(rc)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(router) // 127.0.0.1
	defer srv.Close()
	const user, sessionID = "rest-user", "rest-1"
	base := srv.URL + "/api/apps/" + appName + "/users/" + user + "/sessions/" + sessionID

	var created struct {
		ID string `json:"id"`
	}
	call(t, http.MethodPost, base, map[string]any{}, &created)
	var ran []restEvent
	const turns = 24
	for _, q := range script(turns) {
		var evs []restEvent
		call(t, http.MethodPost, srv.URL+"/api/run", map[string]any{
			"appName": appName, "userId": user, "sessionId": sessionID,
			"newMessage": map[string]any{"role": "user", "parts": []map[string]any{{"text": q}}},
		}, &evs)
		if len(evs) == 0 {
			t.Fatalf("no events for %q", q)
		}
		ran = append(ran, evs...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}

	var served struct {
		Events []restEvent `json:"events"`
	}
	call(t, http.MethodGet, base, nil, &served)
	resp, err := a.store.Get(context.Background(), &session.GetRequest{AppName: appName, UserID: user, SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	stored := slices.Collect(resp.Session.Events().All())

	// Storage: every event the runs returned, the user's messages and the markers; nothing lost.
	storedIDs := map[string]bool{}
	markers, userMessages := 0, 0
	for _, ev := range stored {
		storedIDs[ev.ID] = true
		switch {
		case readMarker(ev) != nil:
			markers++
		case ev.Author == "user" && ev.Content != nil && isUserMessage(ev.Content):
			userMessages++
		}
	}
	for _, ev := range ran {
		if !storedIDs[ev.ID] {
			t.Errorf("event %s returned by /run is not in storage", ev.ID)
		}
	}
	if userMessages != turns || markers == 0 || len(stored) != len(ran)+turns+markers {
		t.Errorf("storage: %d events = %d from /run + %d user messages + %d markers?", len(stored), len(ran), userMessages, markers)
	}

	// People see the whole conversation: every stored event, in order, each compaction shown as
	// what it is (authored by adkctx, not the user); no summary stands in for their messages.
	var servedIDs, storedIDsInOrder []string
	notices := 0
	for i, ev := range served.Events {
		servedIDs = append(servedIDs, ev.ID)
		if strings.HasPrefix(ev.text(), compaction.SummaryHeader) {
			t.Errorf("served event %s is a summary: people see the stored events", ev.ID)
		}
		if i < len(stored) && readMarker(stored[i]) != nil {
			notices++
			if ev.Author != "adkctx" || !strings.HasPrefix(ev.text(), "[adkctx] Compaction") {
				t.Errorf("compaction %s served as %q by %q", ev.ID, ev.text(), ev.Author)
			}
		}
	}
	for _, ev := range stored {
		storedIDsInOrder = append(storedIDsInOrder, ev.ID)
	}
	if diff := cmp.Diff(storedIDsInOrder, servedIDs); diff != "" || notices != markers {
		t.Errorf("served events (-stored +served):\n%s\n%d compaction notices for %d markers", diff, notices, markers)
	}
	last := served.Events[len(served.Events)-1]
	if last.ID != ran[len(ran)-1].ID {
		t.Errorf("the newest event served is %s, want the last one run, %s", last.ID, ran[len(ran)-1].ID)
	}

	// The decision log: one budget decision per model call, numbered.
	var modelCalls []int
	for _, ev := range ran {
		if ev.UsageMetadata != nil && ev.Author == agentName {
			modelCalls = append(modelCalls, len(modelCalls)+1)
		}
	}
	var seqs []int
	for _, e := range filterLog(t, a.logPath, "budget decision", sessionID) {
		seqs = append(seqs, int(e["call_seq"].(float64)))
	}
	if diff := cmp.Diff(modelCalls, seqs); diff != "" {
		t.Errorf("budget decisions' call_seq (-one per model call +logged):\n%s", diff)
	}
	for _, e := range filterLog(t, a.logPath, "compaction", sessionID) {
		if e["outcome"] == "failed" {
			t.Errorf("compaction failed: %v", e)
		}
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// `example web` runs adk-go's launcher with the example's wiring: the REST API lists the agent,
// the web UI is served, and Ctrl-C stops it with the database closed.
func TestWebMode(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	port := freePort(t)
	api := fmt.Sprintf("http://127.0.0.1:%d/api", port)
	s := startREPL(t, noEnv, "-db", db, "-log", filepath.Join(dir, "l.jsonl"), "web", "-port", strconv.Itoa(port), "api", "webui", "-api_server_address", api)
	var body string
	for range 600 { // the server starts in the background: wait for it, at most 60 s (make test runs five steps at once)
		resp, err := http.Get(api + "/list-apps")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.TrimSpace(body) != `["coder"]` {
		t.Fatalf("list-apps = %q, want [\"coder\"]", body)
	}
	if code, page := get(t, fmt.Sprintf("http://127.0.0.1:%d/ui/", port)); code != http.StatusOK || !strings.Contains(page, "<app-root") {
		t.Errorf("web UI: HTTP %d, %.200q", code, page)
	}
	s.cancel()
	if code := s.exit(); code != 0 && code != 130 {
		t.Fatalf("exit code %d, stderr %s", code, s.errb.String())
	}
	assertClosed(t, db)
}
