package trajectory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/server/adkrest"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"
)

// replies is a model.LLM answering each call with the next of its contents; sent holds the
// requests it was sent.
type replies struct {
	contents []*genai.Content
	sent     []*model.LLMRequest
}

func (m *replies) Name() string { return "scripted" }

func (m *replies) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	m.sent = append(m.sent, req)
	return func(yield func(*model.LLMResponse, error) bool) {
		if len(m.contents) == 0 {
			yield(nil, errors.New("no reply left"))
			return
		}
		c := m.contents[0]
		m.contents = m.contents[1:]
		yield(&model.LLMResponse{Content: c, TurnComplete: true}, nil)
	}
}

// recordedSession runs two turns of an agent through adk-go's runner, on an in-memory session
// service, and returns the service and the session's id. The tool's arguments and result hold
// snake_case keys (among them the name of a genai field) that must reach the replay unchanged.
// The model returned holds the requests the agent sent.
func recordedSession(t *testing.T) (session.Service, string, *replies) {
	t.Helper()
	type args struct {
		FilePath     string `json:"file_path"`
		FunctionCall string `json:"function_call"`
	}
	read, err := functiontool.New(functiontool.Config{Name: "read_file", Description: "Reads a file."},
		func(_ agent.ToolContext, a args) (map[string]any, error) {
			return map[string]any{"file_text": "package main // " + a.FilePath, "line_count": 1}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	llm := &replies{contents: []*genai.Content{
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: "Reading it."},
			{FunctionCall: &genai.FunctionCall{ID: "call-1", Name: "read_file", Args: map[string]any{"file_path": "cmd/main.go", "function_call": "x"}}},
		}},
		{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "It is package main."}}},
		{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "Nothing else."}}},
	}}
	ag, err := llmagent.New(llmagent.Config{Name: "coder", Model: llm, Instruction: "Answer.", Tools: []tool.Tool{read}})
	if err != nil {
		t.Fatal(err)
	}
	svc := session.InMemoryService()
	rn, err := runner.New(runner.Config{AppName: "app", Agent: ag, SessionService: svc})
	if err != nil {
		t.Fatal(err)
	}
	created, err := svc.Create(t.Context(), &session.CreateRequest{AppName: "app", UserID: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Session.ID()
	for _, msg := range []string{"What is cmd/main.go?", "Anything else?"} {
		for _, err := range rn.Run(t.Context(), "u1", id, genai.NewContentFromText(msg, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return svc, id, llm
}

// restBody returns the body adk-go's REST API serves for a GET of path.
func restBody(t *testing.T, svc session.Service, path string) []byte {
	t.Helper()
	root, err := agent.New(agent.Config{Name: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := adkrest.NewServer(adkrest.ServerConfig{SessionService: svc, AgentLoader: agent.NewSingleLoader(root)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	resp, err := http.Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v: %s", path, resp.StatusCode, err, body)
	}
	return body
}

// stored converts the service's own events, as the database source does.
func stored(t *testing.T, svc session.Service, id string) *Session {
	t.Helper()
	resp, err := svc.Get(t.Context(), &session.GetRequest{AppName: "app", UserID: "u1", SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	var evs []*session.Event
	for ev := range resp.Session.Events().All() {
		evs = append(evs, ev)
	}
	s, err := FromEvents("db", "app/u1/"+id, evs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readBody(t *testing.T, name string, body []byte) []*Session {
	t.Helper()
	var out []*Session
	for s, err := range Read(name, bytes.NewReader(body)) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, s)
	}
	return out
}

// snakeCase rewrites a session's JSON the way adk-python's default dump spells it: snake_case
// keys for the session, its events and their parts; tool arguments and results as they are.
func snakeCase(t *testing.T, body []byte) []byte {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatal(err)
	}
	snake := func(m map[string]any, keys map[string]string) {
		for camel, sn := range keys {
			if v, ok := m[camel]; ok {
				delete(m, camel)
				m[sn] = v
			}
		}
	}
	invert := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[v] = k
		}
		return out
	}
	snake(s, map[string]string{"appName": "app_name", "userId": "user_id", "lastUpdateTime": "last_update_time"})
	for _, e := range s["events"].([]any) {
		ev := e.(map[string]any)
		snake(ev, invert(snakeEventKeys))
		if c, ok := ev["content"].(map[string]any); ok {
			for _, p := range c["parts"].([]any) {
				snake(p.(map[string]any), invert(snakePartKeys))
			}
		}
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadStoredSessionJSON: a session fetched from adk-go's REST API (one, or several in an
// array), and the same session in adk-python's snake_case dump, read as the database source
// reads the stored events: same turns, steps, calls (their arguments' keys kept) and outputs.
func TestReadStoredSessionJSON(t *testing.T) {
	svc, id, _ := recordedSession(t)
	want := stored(t, svc, id)
	if len(want.Turns) != 2 || len(want.Turns[0].Steps) != 2 {
		t.Fatalf("the recorded session has %d turns (want 2 with 2 steps in the first): %+v", len(want.Turns), want.Turns)
	}
	one := restBody(t, svc, "/apps/app/users/u1/sessions/"+id)
	arr := []byte("[" + string(one) + ",\n" + string(one) + "]")
	ignore := cmp.FilterPath(func(p cmp.Path) bool {
		f := p.Last().String()
		return f == ".Format" || f == ".ID"
	}, cmp.Ignore())
	opts := []cmp.Option{ignore, cmp.AllowUnexported(Call{}, Turn{})}
	for _, tc := range []struct {
		name     string
		body     []byte
		sessions int
	}{
		{"rest.json", one, 1},
		{"rest-array.json", arr, 2},
		{"python-dump.json", snakeCase(t, one), 1},
	} {
		got := readBody(t, tc.name, tc.body)
		if len(got) != tc.sessions {
			t.Fatalf("%s: %d sessions, want %d", tc.name, len(got), tc.sessions)
		}
		for i, s := range got {
			if diff := cmp.Diff(want, s, opts...); diff != "" {
				t.Errorf("%s: session %d differs from the stored events' (-stored +read):\n%s", tc.name, i, diff)
			}
			if s.Format != ADKSessionJSON || s.ID != "app/u1/"+id {
				t.Errorf("%s: session %d is %q, format %q; want app/u1/%s, %q", tc.name, i, s.ID, s.Format, id, ADKSessionJSON)
			}
		}
	}
	call := want.Turns[0].Steps[0].Calls[0]
	if diff := cmp.Diff(map[string]any{"file_path": "cmd/main.go", "function_call": "x"}, call.Args); diff != "" {
		t.Errorf("the call's arguments (-want +got):\n%s", diff)
	}
}

// TestMalformedSessionJSON: a stored session that cannot be read names the record and what was
// expected there.
func TestMalformedSessionJSON(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"id": "s", "events": {}}`, "events"},
		{`{"id": "s", "events": [1]}`, "events[0]"},
		{`{"id": 7, "events": []}`, "id"},
		{`{"id": "s", "events": [{"content": {"parts": 3}}]}`, "events[0]"},
		{`[{"id": "s", "events": []}, {"id": "t", "events": "x"}]`, "[1].events"},
	} {
		wantFormatError(t, "bad.json", tc.body, tc.want)
	}
}

// wantFormatError reads body as file name and fails t unless reading it ends in a *FormatError
// whose message holds want (the record it names).
func wantFormatError(t *testing.T, name, body, want string) {
	t.Helper()
	var err error
	for _, e := range Read(name, strings.NewReader(body)) {
		if e != nil {
			err = e
		}
	}
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
		t.Errorf("%q: error %v, want a *FormatError naming %q", body, err, want)
	}
}

// TestReadSessionJSONURLBase64: adk-python writes a part's bytes (a thought signature, inline
// data) in base64's URL alphabet, unpadded, as pydantic does; genai's JSON reads the standard
// one. Such a session reads, its call and text intact.
func TestReadSessionJSONURLBase64(t *testing.T) {
	body := `{"id": "s", "app_name": "a", "user_id": "u", "events": [
 {"id": "e1", "invocation_id": "i1", "author": "user", "content": {"role": "user", "parts": [{"text": "Any news?"}, {"inline_data": {"mime_type": "image/png", "data": "iVBORw0KGgo-_w"}}]}},
 {"id": "e2", "invocation_id": "i1", "author": "agent", "content": {"role": "model", "parts": [{"function_call": {"id": "c1", "name": "search", "args": {"q": "news"}}, "thought_signature": "CvACAXLI2nz_Rpq-4Nq6"}]}},
 {"id": "e3", "invocation_id": "i1", "author": "agent", "content": {"role": "user", "parts": [{"function_response": {"id": "c1", "name": "search", "response": {"result": "AI news"}}}]}},
 {"id": "e4", "invocation_id": "i1", "author": "agent", "content": {"role": "model", "parts": [{"text": "AI news."}]}}
]}`
	got := readBody(t, "python.json", []byte(body))
	if len(got) != 1 || len(got[0].Turns) != 1 {
		t.Fatalf("sessions %+v", got)
	}
	turn := got[0].Turns[0]
	if !strings.Contains(turn.User, "Any news?") || len(turn.Steps) != 2 || len(turn.Steps[0].Calls) != 1 ||
		turn.Steps[0].Calls[0].Output == "" || turn.Steps[1].Text != "AI news." {
		t.Errorf("turn %+v", turn)
	}
}

// TestFromEventsCodeAndMedia: a stored session's code execution parts (the code the model
// wrote for the provider to run, and its output) are kept as the model's text and counted, and
// an image the person sent is "[image]", as the genai reader reads them: none is dropped unsaid.
func TestFromEventsCodeAndMedia(t *testing.T) {
	events := []*session.Event{
		{ID: "e1", InvocationID: "i1", Author: "user", LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
			{Text: "Plot it."}, {InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2}}}}}}},
		{ID: "e2", InvocationID: "i1", Author: "agent", LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{ExecutableCode: &genai.ExecutableCode{Code: "print(6*7)", Language: genai.LanguagePython}},
			{CodeExecutionResult: &genai.CodeExecutionResult{Outcome: genai.OutcomeOK, Output: "42"}},
			{Text: "It is 42."}}}}},
	}
	s, err := FromEvents("db", "a/u/s", events)
	if err != nil {
		t.Fatal(err)
	}
	want := []Turn{{User: "Plot it.\n[image]", Origin: Person, Steps: []Step{{Text: "print(6*7)\n42\nIt is 42."}}}}
	if d := cmp.Diff(want, s.Turns, cmpSession); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "2 parts of code the provider executed") {
		t.Errorf("notes %q", s.Notes)
	}
}
