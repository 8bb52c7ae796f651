package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
	"github.com/adkctx/adkctx/recall"
)

// RecallOutcome is how the question about Fact was answered: from the request, or after Calls
// recall calls (Reached: the last one showed the value).
type RecallOutcome struct {
	Fact      Fact
	InRequest bool
	Calls     int
	Reached   bool
}

// RecallCall is what one recall call cost: its result in bytes and estimated tokens (what it
// adds to every later request until it is summarized), and the bytes it read from storage when
// its result says (searches).
type RecallCall struct {
	Tool                      string
	ResultBytes, ResultTokens int
	BytesRead                 int64
}

// RecallFigures is what the recall session measured.
type RecallFigures struct {
	Outcomes []RecallOutcome
	Calls    []RecallCall
	// The session's requests before the questions: how many, their prompt tokens (adkctx's
	// estimate, which the model reports) summed, the largest.
	SessionRequests, SessionPrompt, SessionLargest int
	// The questions' requests and their prompt tokens summed.
	QuestionRequests, QuestionPrompt int
	// DeclarationTokens is what the declarations of every recall tool add to one request
	// (estimated). The hooks declare the tools only once the conversation gives them a use (a
	// saved output named, a summary): DeclaringRequests of the session's requests declare some,
	// adding DeclaredTokens in all.
	DeclarationTokens                 int
	DeclaringRequests, DeclaredTokens int
}

// RecallModel plays the recall session's model for either adk-go glue (see the session's
// description above): it answers with its scripted steps and measures. It is safe for
// concurrent use.
type RecallModel struct {
	mu sync.Mutex
	f  RecallFigures
}

// NewRecallModel returns the recall session's model.
func NewRecallModel() *RecallModel { return &RecallModel{} }

// Respond records req and answers it, reporting PromptTokenCount = adkctx's estimate.
func (m *RecallModel) Respond(req *request.LLMRequest) *response.LLMResponse {
	prompt := budget.EstimateRequest(req.Contents, req.Config)
	s := recallStepOf(req.Contents)
	m.mu.Lock()
	var declared int
	if req.Config != nil {
		declared = declarationTokens(req.Config.Tools)
	}
	if s.question < 0 {
		m.f.SessionRequests++
		m.f.SessionPrompt += prompt
		m.f.SessionLargest = max(m.f.SessionLargest, prompt)
		if declared > 0 {
			m.f.DeclaringRequests++
			m.f.DeclaredTokens += declared
		}
	} else {
		m.f.QuestionRequests++
		m.f.QuestionPrompt += prompt
	}
	if m.f.DeclarationTokens == 0 && declaresRecall(req.Config) {
		m.f.DeclarationTokens = declared
	}
	var content *genai.Content
	if s.question < 0 {
		content = recallSessionReply(s.step, s.calls)
	} else {
		content = m.answer(s, req)
	}
	m.mu.Unlock()
	return &response.LLMResponse{Content: content, FinishReason: genai.FinishReasonStop,
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(prompt), CandidatesTokenCount: int32(budget.EstimateContent(content))}}
}

// answer is a question's next step (m.mu held): the answer when the request or the last recall
// result shows the value, else a recall call (at most two), else "not found".
func (m *RecallModel) answer(s recallStep, req *request.LLMRequest) *genai.Content {
	facts := RecallFacts()
	if s.question >= len(facts) {
		return genai.NewContentFromText("ok", genai.RoleModel)
	}
	f := facts[s.question]
	say := func(o RecallOutcome, text string) *genai.Content {
		m.f.Outcomes = append(m.f.Outcomes, o)
		return genai.NewContentFromText(fmt.Sprintf("Answer %d: %s", s.question, text), genai.RoleModel)
	}
	call := func(fc *genai.FunctionCall) *genai.Content {
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: fc}}}
	}
	if s.calls == 0 {
		switch {
		case strings.Contains(jsonOf(req.Contents), f.Value):
			return say(RecallOutcome{Fact: f, InRequest: true, Reached: true}, f.Value)
		case !declaresRecall(req.Config):
			return say(RecallOutcome{Fact: f}, "I no longer have it.")
		case f.Kind == FactTruncated:
			return call(&genai.FunctionCall{Name: recall.ToolSearchOutputs, Args: map[string]any{"query": f.Key}})
		}
		return call(&genai.FunctionCall{Name: recall.ToolSearchHistory, Args: map[string]any{"query": f.Key}})
	}
	text := ""
	if s.last != nil {
		text = responseText(s.last.Response)
		m.f.Calls = append(m.f.Calls, recallCost(s.last, text))
	}
	switch {
	case strings.Contains(text, f.Value):
		return say(RecallOutcome{Fact: f, Calls: s.calls, Reached: true}, f.Value)
	case s.calls == 1:
		if next := nextRecall(f, text); next != nil {
			return call(next)
		}
	}
	return say(RecallOutcome{Fact: f, Calls: s.calls}, "I could not find it.")
}

var bytesReadRE = regexp.MustCompile(`[ (](\d+) bytes read\)`)

// recallCost is what the recall result fr (its text) cost.
func recallCost(fr *genai.FunctionResponse, text string) RecallCall {
	c := RecallCall{Tool: fr.Name, ResultBytes: len(text),
		ResultTokens: budget.EstimateContent(&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: fr}}})}
	if m := bytesReadRE.FindStringSubmatch(text); m != nil {
		c.BytesRead, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return c
}

// declarationTokens is the estimated weight of the recall tools' declarations among tools.
func declarationTokens(tools []*genai.Tool) int {
	var decls []*genai.FunctionDeclaration
	for _, t := range tools {
		if t == nil {
			continue
		}
		for _, d := range t.FunctionDeclarations {
			if d != nil && slices.Contains(recallTools, d.Name) {
				decls = append(decls, d)
			}
		}
	}
	if len(decls) == 0 {
		return 0
	}
	with := budget.EstimateRequest(nil, &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls}}})
	return with - budget.EstimateRequest(nil, &genai.GenerateContentConfig{Tools: []*genai.Tool{{}}})
}

// Figures returns what was measured so far.
func (m *RecallModel) Figures() RecallFigures {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.f
	f.Outcomes, f.Calls = slices.Clone(f.Outcomes), slices.Clone(f.Calls)
	return f
}

// RecallSummary is RecallFigures counted: per fact kind and in all, and per recall tool.
type RecallSummary struct {
	Facts, InRequest, OneCall, TwoCalls, NotReached int
	ByKind                                          map[string][4]int // kind → in request, 1 call, 2 calls, not reached
	ByTool                                          map[string]RecallToolCost
}

// RecallToolCost is what the calls of one recall tool cost: how many, their mean result in bytes
// and estimated tokens, the largest result, and the mean and largest bytes read from storage
// (searches; 0 for reads, whose results do not say).
type RecallToolCost struct {
	Calls                                             int
	MeanResultBytes, MeanResultTokens, MaxResultBytes int
	MeanBytesRead, MaxBytesRead                       int64
}

// Summary counts f.
func (f RecallFigures) Summary() RecallSummary {
	s := RecallSummary{Facts: len(f.Outcomes), ByKind: map[string][4]int{}, ByTool: map[string]RecallToolCost{}}
	for _, o := range f.Outcomes {
		k := s.ByKind[o.Fact.Kind]
		i := 3 // not reached
		switch {
		case o.InRequest:
			s.InRequest, i = s.InRequest+1, 0
		case o.Reached && o.Calls == 1:
			s.OneCall, i = s.OneCall+1, 1
		case o.Reached && o.Calls == 2:
			s.TwoCalls, i = s.TwoCalls+1, 2
		default:
			s.NotReached++
		}
		k[i]++
		s.ByKind[o.Fact.Kind] = k
	}
	for _, c := range f.Calls {
		t := s.ByTool[c.Tool]
		t.Calls++
		t.MeanResultBytes += c.ResultBytes
		t.MeanResultTokens += c.ResultTokens
		t.MaxResultBytes = max(t.MaxResultBytes, c.ResultBytes)
		t.MeanBytesRead += c.BytesRead
		t.MaxBytesRead = max(t.MaxBytesRead, c.BytesRead)
		s.ByTool[c.Tool] = t
	}
	for name, t := range s.ByTool {
		t.MeanResultBytes /= t.Calls
		t.MeanResultTokens /= t.Calls
		t.MeanBytesRead /= int64(t.Calls)
		s.ByTool[name] = t
	}
	return s
}

func (s RecallSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d facts: %d in the request, %d reached with 1 recall call, %d with 2, %d not reached",
		s.Facts, s.InRequest, s.OneCall, s.TwoCalls, s.NotReached)
	for _, k := range FactKinds() {
		c := s.ByKind[k]
		fmt.Fprintf(&b, "\n  %-16s in request %2d · 1 call %2d · 2 calls %2d · not reached %2d", k, c[0], c[1], c[2], c[3])
	}
	for _, name := range recallTools {
		if t, ok := s.ByTool[name]; ok {
			fmt.Fprintf(&b, "\n  %-20s %2d calls · result %5d bytes, %4d tokens on average (largest %5d bytes) · read from storage %8d bytes on average, %8d at most",
				name, t.Calls, t.MeanResultBytes, t.MeanResultTokens, t.MaxResultBytes, t.MeanBytesRead, t.MaxBytesRead)
		}
	}
	return b.String()
}

// recallTools are the recall tools' names, in the order the tools are declared.
var recallTools = []string{recall.ToolReadOutput, recall.ToolSearchOutputs, recall.ToolSearchHistory, recall.ToolReadTurn}

// declaresRecall reports whether a request's config declares every recall tool.
func declaresRecall(cfg *genai.GenerateContentConfig) bool {
	declared := map[string]bool{}
	if cfg != nil {
		for _, t := range cfg.Tools {
			if t == nil {
				continue
			}
			for _, d := range t.FunctionDeclarations {
				if d != nil {
					declared[d.Name] = true
				}
			}
		}
	}
	for _, name := range recallTools {
		if !declared[name] {
			return false
		}
	}
	return true
}
