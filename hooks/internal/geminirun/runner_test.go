package geminirun_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/hooks/internal/geminitest"
)

const (
	appName     = "geminitest"
	userID      = "user"
	instruction = "You answer weather questions with the get_weather tool."
)

const agentModeNone = agent.StreamingModeNone

var modes = []agent.StreamingMode{agent.StreamingModeNone, agent.StreamingModeSSE}

type weatherArgs struct {
	City string `json:"city"`
}

type weatherResult struct {
	Forecast string `json:"forecast"`
	Celsius  int    `json:"celsius"`
}

func weatherTool(t *testing.T) tool.Tool {
	t.Helper()
	tl, err := functiontool.New(functiontool.Config{Name: "get_weather", Description: "Returns the forecast for a city."},
		func(_ agent.ToolContext, a weatherArgs) (weatherResult, error) {
			return weatherResult{Forecast: "sunny in " + a.City, Celsius: 21}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// plainRunner is adk-go's runner and llmagent over llm, with no adkctx.
func plainRunner(t *testing.T, llm model.LLM, sessions session.Service, tools ...tool.Tool) *runner.Runner {
	t.Helper()
	a, err := llmagent.New(llmagent.Config{Name: "forecaster", Model: llm, Instruction: instruction, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: sessions, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs one invocation and returns its events, or the first error.
func run(t *testing.T, r *runner.Runner, sessionID, text string, mode agent.StreamingMode) ([]*session.Event, error) {
	t.Helper()
	var events []*session.Event
	for ev, err := range r.Run(t.Context(), userID, sessionID, genai.NewContentFromText(text, genai.RoleUser),
		agent.RunConfig{StreamingMode: mode}) {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}

func stored(t *testing.T, svc session.Service, sessionID string) []*session.Event {
	t.Helper()
	resp, err := svc.Get(t.Context(), &session.GetRequest{AppName: appName, UserID: userID, SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	var out []*session.Event
	for e := range resp.Session.Events().All() {
		out = append(out, e)
	}
	return out
}

// describe renders a content as one line per part, for diffs: text, call, response. adk-go's
// client-side call ids ("adk-<uuid>") show as "adk-…".
func describe(c *genai.Content) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, p := range c.Parts {
		switch {
		case p.FunctionCall != nil:
			out = append(out, c.Role+" call "+p.FunctionCall.Name+" "+jsonOf(p.FunctionCall.Args)+" id="+callID(p.FunctionCall.ID))
		case p.FunctionResponse != nil:
			out = append(out, c.Role+" response "+p.FunctionResponse.Name+" "+jsonOf(p.FunctionResponse.Response)+" id="+callID(p.FunctionResponse.ID))
		default:
			out = append(out, c.Role+" text "+p.Text)
		}
	}
	return out
}

func callID(id string) string {
	if strings.HasPrefix(id, "adk-") {
		return "adk-…"
	}
	return id
}

func describeAll(cs []*genai.Content) [][]string {
	var out [][]string
	for _, c := range cs {
		out = append(out, describe(c))
	}
	return out
}

// A tool-calling turn through adk-go's runner, llmagent and Gemini model over the genai client:
// the call, the tool's response sent back, the final text; streamed and not.
func TestRunnerToolTurn(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			srv := geminitest.NewServer(t, geminitest.Options{Models: []string{modelName}})
			const answer = "It is sunny in Paris, 21 °C. Enjoy the walk along the river."
			srv.Enqueue(
				geminitest.Calls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}),
				&geminitest.Reply{Parts: []*genai.Part{{Text: answer}}, Chunks: 3},
			)
			sessions := session.InMemoryService()
			r := plainRunner(t, geminiModel(t, srv, modelName), sessions, weatherTool(t))
			events, err := run(t, r, "s1", "What is the weather in Paris?", mode)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			stream := mode == agent.StreamingModeSSE

			// What the fake received.
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("model calls = %d, want 2", len(reqs))
			}
			for i, req := range reqs {
				if req.Stream != stream || req.Model != modelName || req.Rejected != "" {
					t.Errorf("request %d: stream %v model %q rejected %q", i, req.Stream, req.Model, req.Rejected)
				}
				if ua := req.Header.Get("x-goog-api-client"); !strings.Contains(ua, "google-adk/") || !strings.Contains(ua, "google-genai-sdk/") {
					t.Errorf("request %d: x-goog-api-client %q lacks the adk and genai labels", i, ua)
				}
				if req.SystemInstruction == nil || !strings.Contains(req.SystemInstruction.Parts[0].Text, instruction) {
					t.Errorf("request %d: system instruction %v lacks the agent's instruction", i, describe(req.SystemInstruction))
				}
				if len(req.Tools) != 1 || len(req.Tools[0].FunctionDeclarations) != 1 || req.Tools[0].FunctionDeclarations[0].Name != "get_weather" {
					t.Errorf("request %d: tools do not declare get_weather", i)
				}
			}
			// adk-go gives calls client-side ids ("adk-…") and strips them before sending.
			want := [][]string{
				{"user text What is the weather in Paris?"},
				{`model call get_weather {"city":"Paris"} id=`},
				{`user response get_weather {"celsius":21,"forecast":"sunny in Paris"} id=`},
			}
			if diff := cmp.Diff(want, describeAll(reqs[1].Contents)); diff != "" {
				t.Errorf("second request contents (-want +got):\n%s", diff)
			}

			// What the runner yielded: partial chunks only when streaming, then the final text with
			// the usage the fake reported.
			var partial [][]string
			var final []*session.Event
			for _, e := range events {
				if e.Partial {
					partial = append(partial, describe(e.Content))
				} else {
					final = append(final, e)
				}
			}
			var wantPartial [][]string
			if stream {
				// Each SSE chunk as it arrived: the call, then the answer in 3 pieces of 20 characters.
				wantPartial = [][]string{
					{`model call get_weather {"city":"Paris"} id=adk-…`},
					{"model text It is sunny in Paris"},
					{"model text , 21 °C. Enjoy the w"},
					{"model text alk along the river."},
				}
			}
			if diff := cmp.Diff(wantPartial, partial); diff != "" {
				t.Errorf("partial events (-want +got):\n%s", diff)
			}
			if len(final) != 3 {
				t.Fatalf("final events = %d, want 3 (call, response, answer)", len(final))
			}
			last := final[2]
			if diff := cmp.Diff(reqs[1].Reported, last.UsageMetadata); diff != "" {
				t.Errorf("answer usage (-reported by the fake +event):\n%s", diff)
			}
			if diff := cmp.Diff(reqs[0].Reported, final[0].UsageMetadata); diff != "" {
				t.Errorf("call usage (-reported by the fake +event):\n%s", diff)
			}
			wantEvents := [][]string{
				{`model call get_weather {"city":"Paris"} id=adk-…`},
				{`user response get_weather {"celsius":21,"forecast":"sunny in Paris"} id=adk-…`},
				{"model text " + answer},
			}
			var gotEvents [][]string
			for _, e := range final {
				gotEvents = append(gotEvents, describe(e.Content))
			}
			if diff := cmp.Diff(wantEvents, gotEvents); diff != "" {
				t.Errorf("final events (-want +got):\n%s", diff)
			}

			// What the session stored: no partial event; the answer's usage kept.
			saved := stored(t, sessions, "s1")
			if len(saved) != 4 {
				t.Fatalf("stored events = %d, want 4 (question, call, response, answer)", len(saved))
			}
			for _, e := range saved {
				if e.Partial {
					t.Errorf("a partial event was stored: %v", describe(e.Content))
				}
			}
			if diff := cmp.Diff(reqs[1].Reported, saved[3].UsageMetadata); diff != "" {
				t.Errorf("stored answer usage (-reported +stored):\n%s", diff)
			}
		})
	}
}

// A model error ends the run with the genai error, classified by its status.
func TestRunnerModelError(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			srv := geminitest.NewServer(t, geminitest.Options{})
			srv.Enqueue(geminitest.Fail(429))
			sessions := session.InMemoryService()
			_, err := run(t, plainRunner(t, geminiModel(t, srv, modelName), sessions), "s1", "hello", mode)
			kind, msg := glue.ErrorKind(err)
			if kind != "quota" || msg != "model API 429 RESOURCE_EXHAUSTED" {
				t.Errorf("glue.ErrorKind(%v) = %q, %q; want quota", err, kind, msg)
			}
			if n := len(stored(t, sessions, "s1")); n != 1 {
				t.Errorf("stored events = %d, want 1 (the question)", n)
			}
		})
	}
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
