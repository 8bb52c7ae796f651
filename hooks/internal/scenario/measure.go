package scenario

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// The figures' cache model: a request's prompt tokens are billed at CacheReadPrice for its longest
// prefix (system instruction and tools, then content by content) that one of the CacheDepth
// requests the model was sent before it in the session holds (the agent's and the summarizer's),
// in full for the rest. Providers cache the prefixes of recent requests for minutes after their
// last use (OpenAI, Gemini's implicit caching; Anthropic at the request's cache breakpoints);
// the scripted session has no clock, so it counts every one of those requests as recent. adkctx
// keeps as many of the agent's requests for its summarizer (glue/internal/engine).
const (
	// CacheReadPrice is the price of a prompt token served from a provider's cache, relative to
	// a fresh one (Gemini, Claude and OpenAI bill cache reads at 10–25%; the figures use 10%).
	CacheReadPrice = 0.10
	// CacheDepth is how many of the requests before one a cached prefix may come from.
	CacheDepth = 8
)

// Figures is what a run of the session measured, request by request.
type Figures struct {
	Requests int
	// Prompt is the sum of the prompt tokens the model reported; Largest the largest one.
	Prompt, Largest int
	// PrefixReused is the sum of the tokens each request shares, from its start, with one of the
	// CacheDepth requests before it (what a prompt cache can serve); Effective the prompt tokens
	// billed with those at CacheReadPrice.
	PrefixReused int
	Effective    float64
	// Fresh is the sum of the tokens of each request's contents that none of the requests before
	// it held at all (the tool result, call or message just produced, a new summary): no prompt
	// cache can serve them, so PrefixReused ≤ Prompt − Fresh.
	Fresh int
	// PreviousTurnRaw counts the requests (of turns after the first) that carry the previous
	// user message itself, out of PreviousTurnChecked.
	PreviousTurnRaw, PreviousTurnChecked int
	// PreviousResultsWhole counts the requests (of turns after the first) that show the previous
	// turn's tool results whole (as stored, at most Recorder.ResultBytes each) rather than cut to
	// an excerpt, out of PreviousTurnChecked.
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
	// (summaries: Recorder.Aside), their prompt tokens, and those billed with the prefix a cache
	// serves at CacheReadPrice.
	AsideRequests, AsidePrompt int
	AsideEffective             float64
	// AsideTranscripts counts the aside requests that are transcripts (no system instruction:
	// not the agent's conversation).
	AsideTranscripts int
	// Last50 are the minimum, mean and maximum reported size of the last 50 requests.
	Last50Min, Last50Mean, Last50Max int

	prompts     []int
	sent        []printed // the CacheDepth newest requests, oldest first
	seed        maphash.Seed
	summarySeen bool
	// estimates holds the estimated tokens of each content seen, by its JSON text (exact): a
	// session's requests repeat their history, estimated once.
	estimates map[string]int
}

// printed is a request as a cache sees it: the print of its system instruction and tools, and
// one of each content (their JSON).
type printed struct {
	fixed    uint64
	contents []uint64
}

// Recorder measures requests as they reach the model.
type Recorder struct {
	// Soft, when > 0, is the soft limit OverSoft counts against.
	Soft int
	// Session is what the user says; the zero value is Default().
	Session Session
	// ResultBytes is the size tool results are stored with at most (Config.Truncation.MaxBytes);
	// 0: 10 KiB, the default.
	ResultBytes int
	f           Figures
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
		if previousResultsWhole(contents, step-1, s, cmp.Or(r.ResultBytes, 10<<10)) {
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

// previousResultsWhole reports whether every tool result of turn i of session s that contents
// show is at least half the size it was stored with (tool outputs are stored cut to stored
// bytes).
func previousResultsWhole(contents []*genai.Content, i int, s Session, stored int) bool {
	in := false
	var args map[string]any // of the call before
	for _, c := range contents {
		if t := firstText(c); c.Role == genai.RoleUser && stepRE.MatchString(t) {
			in = t == s.Message(i)
			continue
		}
		if !in {
			continue
		}
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				args = p.FunctionCall.Args
			}
			fr := p.FunctionResponse
			if fr == nil {
				continue
			}
			whole := NewWorkspace(s).Run(fr.Name, args) // as long as the turn's: every checklist and test run is
			if 2*len(jsonOf(fr.Response)) < min(len(jsonOf(whole)), stored) {
				return false
			}
		}
	}
	return true
}

// cache measures what of a request (reported tokens) a prompt cache serves (the cache model
// above): the prefix it serves (PrefixReused, Effective) and what no cache can serve (Fresh).
func (f *Figures) cache(system *genai.Content, tools []*genai.Tool, contents []*genai.Content, reported int) {
	p := f.prefix(system, tools, contents)
	reused := scale(reported, p.shared, p.total)
	f.PrefixReused += reused
	f.Fresh += scale(reported, p.fresh, p.total)
	f.Effective += float64(reported-reused) + CacheReadPrice*float64(reused)
}

// sharedPrefix is how a request compares with the requests a cache may hold: its estimated
// tokens (total), those of the longest prefix one of them shares (shared) and those of its
// contents none of them held at all (fresh).
type sharedPrefix struct {
	total, shared, fresh int
}

// prefix compares a request with the requests a cache may hold, and then holds it.
func (f *Figures) prefix(system *genai.Content, tools []*genai.Tool, contents []*genai.Content) sharedPrefix {
	if f.seed == (maphash.Seed{}) {
		f.seed = maphash.MakeSeed()
	}
	req := printed{fixed: maphash.String(f.seed, jsonOf(system)+jsonOf(tools)), contents: make([]uint64, len(contents))}
	sizes := make([]int, len(contents))
	fixed := budget.EstimateRequest(nil, &genai.GenerateContentConfig{SystemInstruction: system, Tools: tools})
	p := sharedPrefix{total: fixed}
	if f.estimates == nil {
		f.estimates = map[string]int{}
	}
	for i, c := range contents {
		text := contentKey(c)
		n, ok := f.estimates[text]
		if !ok {
			n = budget.EstimateContent(c)
			f.estimates[text] = n
		}
		req.contents[i], sizes[i] = maphash.String(f.seed, text), n
	}
	held := map[uint64]int{} // most occurrences in one request, so a repeated result is fresh
	for _, prev := range f.sent {
		in := map[uint64]int{}
		for _, h := range prev.contents {
			in[h]++
			held[h] = max(held[h], in[h])
		}
		if prev.fixed != req.fixed {
			continue
		}
		shared := fixed
		for i := 0; i < min(len(prev.contents), len(contents)) && prev.contents[i] == req.contents[i]; i++ {
			shared += sizes[i]
		}
		p.shared = max(p.shared, shared)
	}
	for i, h := range req.contents {
		if held[h] > 0 {
			held[h]--
		} else {
			p.fresh += sizes[i]
		}
	}
	for _, n := range sizes {
		p.total += n
	}
	f.sent = append(f.sent, req)
	if len(f.sent) > CacheDepth {
		f.sent = slices.Delete(f.sent, 0, len(f.sent)-CacheDepth)
	}
	return p
}

// scale is part of total estimated tokens in reported tokens.
func scale(reported, part, total int) int {
	return int(math.Round(float64(reported) * float64(part) / float64(max(total, 1))))
}

// Aside records a request sent beside the session's own (a summarizer's, on the same model): its
// prompt tokens and what they cost with the prefix a cache serves (the cache model above). It
// leaves the figures of the session's requests as they are; the cache holds it from then on.
func (r *Recorder) Aside(system *genai.Content, tools []*genai.Tool, contents []*genai.Content, reported int) {
	p := r.f.prefix(system, tools, contents)
	reused := scale(reported, p.shared, p.total)
	r.f.AsidePrompt += reported
	r.f.AsideEffective += float64(reported-reused) + CacheReadPrice*float64(reused)
	r.f.AsideRequests++
	if system == nil {
		r.f.AsideTranscripts++
	}
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

// contentKey is c written out whole, for telling contents apart by their bytes: two contents
// have the same key exactly when they hold the same values (a value other than a string, map or
// list as its JSON). Strings are written raw with their length, not escaped as JSON writes them:
// the figures key every content of every request, and JSON's escaping of the tool results was a
// third of a long session's time (the figures are the same digit for digit). It is the figures'
// own walk, not the core's internal/exact (adkctx's exact prints): a key must be the whole value
// for the estimates kept under it, and the hooks module cannot import the core's internal
// packages.
func contentKey(c *genai.Content) string {
	if c == nil {
		return "null"
	}
	b := appendString(make([]byte, 0, 256), c.Role)
	for _, p := range c.Parts {
		if p == nil {
			b = append(b, 'n')
			continue
		}
		rest := *p // what the key writes raw, left out of the part's JSON
		rest.Text, rest.FunctionCall, rest.FunctionResponse = "", nil, nil
		b = append(b, 'p')
		b = appendString(b, p.Text)
		b = appendString(b, jsonOf(&rest))
		if fc := p.FunctionCall; fc != nil {
			call := *fc
			call.Args = nil
			b = appendString(append(b, 'c'), jsonOf(&call))
			b = appendValue(b, fc.Args)
		}
		if fr := p.FunctionResponse; fr != nil {
			resp := *fr
			resp.Response = nil
			b = appendString(append(b, 'r'), jsonOf(&resp))
			b = appendValue(b, fr.Response)
		}
	}
	return string(b)
}

// appendValue appends v to a content key: strings raw, maps and lists element by element (a map
// in key order), any other value as its JSON.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return appendString(append(b, 's'), v)
	case map[string]any:
		b = strconv.AppendInt(append(b, 'm'), int64(len(v)), 10)
		for _, k := range slices.Sorted(maps.Keys(v)) {
			b = appendValue(appendString(b, k), v[k])
		}
		return b
	case []any:
		b = strconv.AppendInt(append(b, 'a'), int64(len(v)), 10)
		for _, e := range v {
			b = appendValue(b, e)
		}
		return b
	default:
		return appendString(append(b, 'j'), jsonOf(v))
	}
}

// appendString appends s with its length, so that no two sequences of strings run together alike.
func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	return append(append(b, ':'), s...)
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
