package replay

import (
	"context"
	"errors"
	"iter"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
)

// errNoReply: the runner asked for a reply the recording does not have in this turn.
var errNoReply = errors.New("replay: the runner asked for a model reply past the recorded ones of this turn")

// scripted is the model.LLM of a replay: call k of the session answers with recorded step k.
// The driver sets the steps of the turn being run; onRequest sees each request before the reply
// is made, with its token count, which is also what the reply reports as its prompt usage (the
// way a provider reports its own count, so adkctx calibrates to the counter in use).
type scripted struct {
	name      string
	steps     []*trajectory.Step
	next, end int
	count     *counter
	onRequest func(k, tokens int, req *model.LLMRequest)
}

func (m *scripted) Name() string { return m.name }

// turn makes steps [start, end) the ones the next calls answer.
func (m *scripted) turn(start, end int) { m.next, m.end = start, end }

func (m *scripted) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if m.next >= m.end {
			yield(nil, errNoReply)
			return
		}
		k := m.next
		m.next++
		tokens := m.count.request(req.Config, req.Contents)
		m.onRequest(k, tokens, req)
		content := replyContent(m.steps[k])
		out := budget.EstimateContent(content)
		yield(&model.LLMResponse{
			Content:      content,
			FinishReason: genai.FinishReasonStop,
			TurnComplete: true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount: int32(tokens), CandidatesTokenCount: int32(out), TotalTokenCount: int32(tokens + out),
			},
		}, nil)
	}
}

// replyContent is a recorded step as the model's reply: its text, then its calls with their
// recorded (unique) ids.
func replyContent(st *trajectory.Step) *genai.Content {
	c := &genai.Content{Role: genai.RoleModel}
	if st.Text != "" || len(st.Calls) == 0 {
		c.Parts = append(c.Parts, &genai.Part{Text: st.Text})
	}
	for _, call := range st.Calls {
		c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: call.ID, Name: call.Name, Args: deepCopy(call.Args).(map[string]any)}})
	}
	return c
}

// deepCopy copies a JSON-like value, so nothing a run stores shares memory with the recording.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	default:
		return v
	}
}

// SummaryText is what the offline LLM summarizer (-summarizer llm) answers every summary
// request with. adkctx appends its ledger's facts to a model-written summary, so with it the
// report shows what adkctx keeps around a summary it cannot judge.
const SummaryText = "Summary of the conversation so far (written offline by the replay's scripted summarizer, which reads nothing): the facts below are adkctx's."

// summarizer is the scripted model behind -summarizer llm: it answers SummaryText, reporting
// the request's estimate as its prompt usage. Safe for concurrent use (it holds no state).
type summarizer struct{}

func (summarizer) Name() string { return "replay-summarizer" }

func (summarizer) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		content := genai.NewContentFromText(SummaryText, genai.RoleModel)
		in := budget.EstimateRequest(req.Contents, req.Config)
		out := budget.EstimateContent(content)
		yield(&model.LLMResponse{
			Content: content, FinishReason: genai.FinishReasonStop, TurnComplete: true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(in), CandidatesTokenCount: int32(out), TotalTokenCount: int32(in + out)},
		}, nil)
	}
}
