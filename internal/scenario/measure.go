package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// CacheReadPrice is the price of a prompt token served from a provider's cache, relative to a
// fresh one (Gemini, Claude and OpenAI bill cache reads at 10–25%; the figures use 10%).
const CacheReadPrice = 0.10

// Figures is what a run of the session measured, request by request.
type Figures struct {
	Requests int
	// Prompt is the sum of the prompt tokens the model reported; Largest the largest one.
	Prompt, Largest int
	// PrefixReused is the sum of the tokens each request shares, from its start, with the
	// request before it (what a prompt cache can serve); Effective the prompt tokens billed with
	// those at CacheReadPrice.
	PrefixReused int
	Effective    float64
	// Fresh is the sum of the tokens of each request's contents that the request before it did
	// not hold at all (the tool result, call or message just produced, a new summary): no prompt
	// cache can serve them, so PrefixReused ≤ Prompt − Fresh.
	Fresh int
	// PreviousTurnRaw counts the requests (of turns after the first) that carry the previous
	// user message itself, out of PreviousTurnChecked.
	PreviousTurnRaw, PreviousTurnChecked int
	// PreviousResultsWhole counts the requests (of turns after the first) that show the previous
	// turn's tool results whole (as stored, at most 10 KiB each) rather than cut to an excerpt,
	// out of PreviousTurnChecked.
	PreviousResultsWhole int
	// InstructionsKept counts (request, instruction given before it) pairs where the instruction
	// is in the request (raw or in the summary), out of InstructionsChecked; InstructionsInSummary
	// those where the summary holds it.
	InstructionsKept, InstructionsChecked int
	InstructionsInSummary                 int
	// SummaryPresent counts the requests after the first one with a summary that carry one, out
	// of SummaryChecked.
	SummaryPresent, SummaryChecked int
	// OverSoft counts the requests whose reported size passed soft (when set).
	OverSoft int
	// AsideRequests, AsidePrompt and AsideEffective are the requests sent beside the session's
	// (summaries: Recorder.Aside), their prompt tokens, and those billed with what they share
	// with the session's previous request at CacheReadPrice.
	AsideRequests, AsidePrompt int
	AsideEffective             float64
	// Last50 are the minimum, mean and maximum reported size of the last 50 requests.
	Last50Min, Last50Mean, Last50Max int

	prompts     []int
	prevFixed   string
	prevContent []string
	summarySeen bool
}

// Recorder measures requests as they reach the model.
type Recorder struct {
	// Soft, when > 0, is the soft limit OverSoft counts against.
	Soft int
	// Session is what the user says; the zero value is Default().
	Session Session
	f       Figures
}

func (r *Recorder) session() Session {
	if r.Session.Message == nil {
		return Default()
	}
	return r.Session
}

const summaryHeader = "[Summary of earlier conversation]"

// Add records one request: its system instruction, tool declarations and contents, and the
// prompt tokens the model counted.
func (r *Recorder) Add(system *genai.Content, tools []*genai.Tool, contents []*genai.Content, reported int) {
	f := &r.f
	f.Requests++
	f.Prompt += reported
	f.Largest = max(f.Largest, reported)
	f.prompts = append(f.prompts, reported)
	if r.Soft > 0 && reported > r.Soft {
		f.OverSoft++
	}

	f.cache(system, tools, contents, reported)

	// What the model still sees.
	s := r.session()
	step, all, summary := -1, allText(contents), ""
	hasSummary := false
	for _, c := range contents {
		t := firstText(c)
		if c.Role == genai.RoleUser {
			if m := stepRE.FindStringSubmatch(t); m != nil {
				fmt.Sscan(m[1], &step)
			}
			if strings.HasPrefix(t, summaryHeader) {
				hasSummary, summary = true, summary+allText([]*genai.Content{c})
			}
		}
	}
	if f.summarySeen {
		f.SummaryChecked++
		if hasSummary {
			f.SummaryPresent++
		}
	}
	f.summarySeen = f.summarySeen || hasSummary
	if step > 0 {
		f.PreviousTurnChecked++
		if slices.ContainsFunc(contents, func(c *genai.Content) bool { return firstText(c) == s.Message(step-1) }) {
			f.PreviousTurnRaw++
		}
		if previousResultsWhole(contents, step-1, s.Message) {
			f.PreviousResultsWhole++
		}
	}
	for turn, rule := range s.Instructions {
		if turn < step {
			f.InstructionsChecked++
			if strings.Contains(all, rule) {
				f.InstructionsKept++
			}
			if strings.Contains(summary, rule) {
				f.InstructionsInSummary++
			}
		}
	}
}

// previousResultsWhole reports whether every tool result of turn i (whose message is message(i))
// that contents show is at least half the size it was stored with (tool outputs are stored cut
// to 10 KiB).
func previousResultsWhole(contents []*genai.Content, i int, message func(int) string) bool {
	in := false
	for _, c := range contents {
		if t := firstText(c); c.Role == genai.RoleUser && stepRE.MatchString(t) {
			in = t == message(i)
			continue
		}
		if !in {
			continue
		}
		for _, p := range c.Parts {
			fr := p.FunctionResponse
			if fr == nil {
				continue
			}
			var whole map[string]any
			switch fr.Name {
			case ReadFile:
				whole = Run(ReadFile, map[string]any{"path": Path(i)})
			case ListFiles:
				whole = Run(ListFiles, map[string]any{"path": Dir(i)})
			default:
				whole = TestOutput(i)
			}
			if 2*len(jsonOf(fr.Response)) < min(len(jsonOf(whole)), 10<<10) {
				return false
			}
		}
	}
	return true
}

// cache measures what of a request (reported tokens) a prompt cache holding the previous one
// serves: the prefix shared content by content (PrefixReused, Effective) and what no cache can
// serve (Fresh).
func (f *Figures) cache(system *genai.Content, tools []*genai.Tool, contents []*genai.Content, reported int) {
	p := f.prefix(system, tools, contents)
	f.prevFixed, f.prevContent = p.fixedJSON, p.texts
	reused := scale(reported, p.shared, p.total)
	f.PrefixReused += reused
	f.Fresh += scale(reported, p.fresh, p.total)
	f.Effective += float64(reported-reused) + CacheReadPrice*float64(reused)
}

// sharedPrefix is how a request compares with the previous one: its estimated tokens (total),
// those of the prefix it shares with it (shared) and those of its contents the previous one did
// not hold at all (fresh), with its prints (the JSON of the system instruction and tools, and of
// each content).
type sharedPrefix struct {
	total, shared, fresh int
	fixedJSON            string
	texts                []string
}

func (f *Figures) prefix(system *genai.Content, tools []*genai.Tool, contents []*genai.Content) sharedPrefix {
	p := sharedPrefix{fixedJSON: jsonOf(system) + jsonOf(tools), texts: make([]string, len(contents))}
	fixed := budget.EstimateRequest(nil, &genai.GenerateContentConfig{SystemInstruction: system, Tools: tools})
	p.total = fixed
	same := p.fixedJSON == f.prevFixed
	if same {
		p.shared = fixed
	}
	held := make(map[string]int, len(f.prevContent)) // occurrences, so a repeated result is fresh
	for _, t := range f.prevContent {
		held[t]++
	}
	for i, c := range contents {
		p.texts[i] = jsonOf(c)
		n := budget.EstimateContent(c)
		p.total += n
		if held[p.texts[i]] > 0 {
			held[p.texts[i]]--
		} else {
			p.fresh += n
		}
		if same && i < len(f.prevContent) && f.prevContent[i] == p.texts[i] {
			p.shared += n
		} else {
			same = false
		}
	}
	return p
}

// scale is part of total estimated tokens in reported tokens.
func scale(reported, part, total int) int {
	return int(math.Round(float64(reported) * float64(part) / float64(max(total, 1))))
}

// Aside records a request sent beside the session's own (a summarizer's, on the same model): its
// prompt tokens and what they cost with the prefix it shares with the session's last request
// served from the cache. It leaves the figures of the session's requests as they are.
func (r *Recorder) Aside(system *genai.Content, tools []*genai.Tool, contents []*genai.Content, reported int) {
	p := r.f.prefix(system, tools, contents)
	reused := scale(reported, p.shared, p.total)
	r.f.AsidePrompt += reported
	r.f.AsideEffective += float64(reported-reused) + CacheReadPrice*float64(reused)
	r.f.AsideRequests++
}

// Figures returns what was measured so far.
func (r *Recorder) Figures() Figures {
	f := r.f
	last := f.prompts[max(len(f.prompts)-50, 0):]
	if len(last) > 0 {
		f.Last50Min, f.Last50Max = slices.Min(last), slices.Max(last)
		sum := 0
		for _, p := range last {
			sum += p
		}
		f.Last50Mean = sum / len(last)
	}
	return f
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func firstText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			return p.Text
		}
	}
	return ""
}

func allText(contents []*genai.Content) string {
	var b strings.Builder
	for _, c := range contents {
		for _, p := range c.Parts {
			if p != nil {
				b.WriteString(p.Text)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}
