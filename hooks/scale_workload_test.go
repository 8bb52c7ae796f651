package hooks_test

// The workload of the scale benchmark (scale_bench_test.go): a coding agent's session — a user
// message, a tool call, a 2–8 KB tool result, an answer per invocation — played through adk-go's
// runner with adkctx compacting it, and loaded into SQLite or PostgreSQL through adk-go's own
// database service.

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/platform"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
)

const (
	scaleApp   = "assistant" // the agent's name: adk-go's REST handler serves it under it
	scaleUser  = "dev"
	scaleModel = "gemini-2.5-flash"
	// scaleStep is how far the benchmark's clock moves each time adk-go or adkctx reads it.
	scaleStep = 2 * time.Second
)

// scaleText is the material messages, tool results and answers are cut from: code-like lines
// (tool results) and prose (messages and answers), deterministic, free of the words the ledger
// takes for standing instructions.
type scaleText struct {
	code, prose string
	paths       []string
}

func newScaleText() *scaleText {
	rng := rand.New(rand.NewPCG(1, 2))
	idents := []string{"ctx", "req", "resp", "cfg", "buf", "err", "n", "key", "value", "items", "store", "cache", "conn", "row", "token"}
	calls := []string{"Load", "Parse", "Encode", "Flush", "Lookup", "Apply", "Validate", "Render", "Close", "Append", "Resolve"}
	var code strings.Builder
	for code.Len() < 1<<17 {
		a, b, c := idents[rng.IntN(len(idents))], calls[rng.IntN(len(calls))], idents[rng.IntN(len(idents))]
		switch rng.IntN(4) {
		case 0:
			fmt.Fprintf(&code, "\tif %s, err := %s.%s(%s); err != nil {\n", a, c, b, idents[rng.IntN(len(idents))])
		case 1:
			fmt.Fprintf(&code, "\t\treturn fmt.Errorf(\"%s %s: %%w\", err)\n", strings.ToLower(b), a)
		case 2:
			fmt.Fprintf(&code, "func (s *%s) %s(%s int) (%s, error) {\n", strings.ToUpper(a[:1])+a[1:], b, c, a)
		default:
			fmt.Fprintf(&code, "ok  \tgithub.com/acme/app/internal/%s\t0.%03ds\n", c, rng.IntN(1000))
		}
	}
	words := []string{"the", "handler", "reads", "config", "file", "and", "passes", "it", "to", "store", "which", "caches",
		"each", "key", "for", "a", "minute", "tests", "cover", "parser", "edge", "cases", "with", "empty", "input", "so",
		"change", "is", "small", "I", "looked", "at", "function", "returns", "error", "when", "connection", "closes"}
	var prose strings.Builder
	for prose.Len() < 1<<15 {
		prose.WriteString(words[rng.IntN(len(words))])
		prose.WriteByte(' ')
	}
	t := &scaleText{code: code.String(), prose: prose.String()}
	for i := range 240 {
		t.paths = append(t.paths, fmt.Sprintf("internal/mod%02d/file%02d.go", i/12, i%12))
	}
	return t
}

// cut returns n bytes of s from a place rng picks.
func cut(s string, n int, rng *rand.Rand) string {
	off := rng.IntN(len(s) - n)
	return s[off : off+n]
}

// rngFor is a generator seeded with key.
func rngFor(key string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	return rand.New(rand.NewPCG(h.Sum64(), 7))
}

// scaleTools are the agent's tools: each returns 2–8 KB about the path it is given.
var scaleTools = []string{"read_file", "run_tests", "grep", "edit_file"}

// message is the user message of step n: which tool the model calls on which path follows from
// it (a path the agent worked on recently, as a developer does), and now and then a standing
// instruction.
func (t *scaleText) message(n int) string {
	rng := rngFor(fmt.Sprint("message-", n))
	path := t.paths[(n/20*7+rng.IntN(30))%len(t.paths)]
	text := fmt.Sprintf("[step %d] %s %s: %s", n, scaleTools[rng.IntN(len(scaleTools))], path, cut(t.prose, 80+rng.IntN(240), rng))
	if n%500 == 499 {
		text += " From now on keep every change under internal/ and run the tests after each edit."
	}
	return text
}

func (t *scaleText) newTools() ([]tool.Tool, error) {
	type args struct {
		Path string `json:"path"`
	}
	var out []tool.Tool
	for _, name := range scaleTools {
		ft, err := functiontool.New(functiontool.Config{Name: name, Description: name + " on a path of the repository"},
			func(ctx agent.ToolContext, a args) (map[string]any, error) {
				rng := rngFor(ctx.InvocationID() + a.Path)
				return map[string]any{"path": a.Path, "output": cut(t.code, 2048+rng.IntN(6*1024), rng)}, nil
			})
		if err != nil {
			return nil, err
		}
		out = append(out, ft)
	}
	return out, nil
}

// scaleLLM is the agent's model: it calls the tool the newest user message names, then answers.
// Like a model's client it encodes every request as JSON; it reports the bytes sent, and a prompt
// usage of a token per 4 of them.
type scaleLLM struct {
	text *scaleText
	sent func(bytes int)
}

func (m *scaleLLM) Name() string { return scaleModel }

func (m *scaleLLM) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		body, err := json.Marshal(struct {
			Contents []*genai.Content
			Config   *genai.GenerateContentConfig
		}{req.Contents, req.Config})
		if err != nil {
			yield(nil, err)
			return
		}
		if m.sent != nil {
			m.sent(len(body))
		}
		content, err := m.reply(req.Contents)
		if err != nil {
			yield(nil, err)
			return
		}
		out := int32(len(fmt.Sprint(content.Parts[0])) / 4)
		yield(&model.LLMResponse{Content: content, FinishReason: genai.FinishReasonStop, TurnComplete: true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount: int32(len(body) / 4), CandidatesTokenCount: out, TotalTokenCount: int32(len(body)/4) + out,
			}}, nil)
	}
}

// reply calls the tool of the newest user message, or answers after its result.
func (m *scaleLLM) reply(contents []*genai.Content) (*genai.Content, error) {
	if len(contents) == 0 {
		return nil, fmt.Errorf("scaleLLM: empty request")
	}
	for _, p := range contents[len(contents)-1].Parts {
		if r := p.FunctionResponse; r != nil {
			rng := rngFor(fmt.Sprint("answer-", r.ID))
			return genai.NewContentFromText(fmt.Sprintf("Done with %v: %s", r.Response["path"], cut(m.text.prose, 200+rng.IntN(600), rng)), genai.RoleModel), nil
		}
	}
	for i := len(contents) - 1; i >= 0; i-- {
		c := contents[i]
		if c.Role != genai.RoleUser || len(c.Parts) == 0 || !strings.HasPrefix(c.Parts[0].Text, "[step ") {
			continue
		}
		var n int
		var name, path string
		if _, err := fmt.Sscanf(c.Parts[0].Text, "[step %d] %s %s", &n, &name, &path); err != nil {
			return nil, fmt.Errorf("scaleLLM: message %.40q: %w", c.Parts[0].Text, err)
		}
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
			Name: name, Args: map[string]any{"path": strings.TrimSuffix(path, ":")}}}}}, nil
	}
	return nil, fmt.Errorf("scaleLLM: no user message in %d contents", len(contents))
}

// newScaleAgent returns the coding agent on its model.
func newScaleAgent(text *scaleText, sent func(int)) (agent.Agent, error) {
	tools, err := text.newTools()
	if err != nil {
		return nil, err
	}
	return llmagent.New(llmagent.Config{Name: scaleApp, Model: &scaleLLM{text: text, sent: sent},
		Instruction: "You are a coding agent working in the repository of the user.", Tools: tools})
}

// scaleClock is the benchmark's clock: scaleStep per reading, from start.
func scaleClock(start time.Time) *fakeClock { return &fakeClock{now: start, step: scaleStep} }

// sessionBuilder plays the workload through adk-go's runner on an in-memory service with adkctx
// compacting (defaults, synchronously, the extractive summarizer), as far as asked.
type sessionBuilder struct {
	h      *hooks.Hooks
	r      *runner.Runner
	base   session.Service
	ctx    context.Context // carries the session's clock
	next   int             // the next step
	events []*session.Event
}

func newSessionBuilder(ctx context.Context, text *scaleText) (*sessionBuilder, error) {
	h, err := hooks.New(adkctx.Config{Compaction: &compaction.Config{Interval: 5, Synchronous: true, Summarizer: &compaction.ExtractiveSummarizer{}}}) // the cost policy the scale figures measure
	if err != nil {
		return nil, err
	}
	a, err := newScaleAgent(text, nil)
	if err != nil {
		return nil, err
	}
	sb := &sessionBuilder{h: h, base: session.InMemoryService()}
	rc, err := h.Wire(runner.Config{AppName: scaleApp, Agent: a, SessionService: sb.base, AutoCreateSession: true})
	if err != nil {
		return nil, err
	}
	if sb.r, err = runner.New(rc); err != nil {
		return nil, err
	}
	sb.ctx = platform.WithTimeProvider(ctx, scaleClock(time.Now().UTC().Truncate(time.Second)).Now)
	return sb, nil
}

// session returns the first n events of the session (to the end of an invocation; see prefix),
// playing more invocations when it holds fewer.
func (sb *sessionBuilder) session(n int, text *scaleText) ([]*session.Event, error) {
	for len(sb.events) <= n {
		// Four events an invocation, and a marker every few.
		for range (n-len(sb.events))/4 + 2 {
			for _, err := range sb.r.Run(sb.ctx, scaleUser, "template", genai.NewContentFromText(text.message(sb.next), genai.RoleUser), agent.RunConfig{}) {
				if err != nil {
					return nil, fmt.Errorf("invocation %d: %w", sb.next, err)
				}
			}
			sb.next++
		}
		resp, err := sb.base.Get(sb.ctx, &session.GetRequest{AppName: scaleApp, UserID: scaleUser, SessionID: "template"})
		if err != nil {
			return nil, err
		}
		sb.events = slices.Collect(resp.Session.Events().All())
	}
	return prefix(sb.events, n), nil
}

func (sb *sessionBuilder) Close(ctx context.Context) error { return sb.h.Close(ctx) }

// loadSession stores events as session id through svc, one AppendEvent each: adk-go's own
// write path.
func loadSession(ctx context.Context, svc session.Service, id string, events []*session.Event) error {
	resp, err := svc.Create(ctx, &session.CreateRequest{AppName: scaleApp, UserID: scaleUser, SessionID: id})
	if err != nil {
		return err
	}
	for _, e := range events {
		cp := *e
		if err := svc.AppendEvent(ctx, resp.Session, &cp); err != nil {
			return fmt.Errorf("event %s: %w", e.ID, err)
		}
	}
	return nil
}
