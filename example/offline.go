package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/processors/truncate"
)

// The offline model: what `make run` and the tests use when no API key is set.
const (
	offlineModelName = "offline-coder"
	// offlineWindow is the offline model's context window: deliberately modest, so budgets and
	// compaction matter within a 40-turn demo.
	offlineWindow    = 32_768
	offlineMaxOutput = 2_048
	// offlineTokenScale makes the offline model's reported prompt tokens differ from adkctx's
	// estimate, as a real tokenizer does, so calibration has something to correct.
	offlineTokenScale = 1.15
	// maxCallsPerTurn bounds the tool calls the offline model makes for one user message.
	maxCallsPerTurn = 4
)

// offlineModel is a deterministic model.LLM that plays a coding assistant: it reads the newest user
// message, calls list_files / read_file / search_text as the message asks (one call per step),
// then answers from the tool results it sees in the request — quoting sizes, counts, first and
// last lines — and reports usage metadata like a real model. It never looks at anything but the
// request, so what adkctx cuts, compacts or injects is exactly what it works with. It accepts
// requests of any size (a real model would reject those above its window; the demo reports them).
type offlineModel struct{}

func (offlineModel) Name() string { return offlineModelName }

func (m offlineModel) GenerateContent(ctx context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		content := respond(req)
		prompt := int32(math.Round(offlineTokenScale * float64(budget.EstimateRequest(req.Contents, req.Config))))
		out := int32(budget.EstimateContent(content))
		yield(&model.LLMResponse{
			Content:      content,
			FinishReason: genai.FinishReasonStop,
			TurnComplete: true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount: prompt, CandidatesTokenCount: out, TotalTokenCount: prompt + out,
			},
		}, nil)
	}
}

// plannedCall is one tool call the offline model decided to make.
type plannedCall struct {
	name string
	args map[string]any
}

var (
	backtickRe = regexp.MustCompile("`([^`]+)`")
	pathRe     = regexp.MustCompile(`(?:^|\s)([\w.-]*[\w-]/[\w./-]*|[\w-]+\.[A-Za-z]{1,5})(?:$|[\s,;:!?])`)
	searchRe   = regexp.MustCompile(`(?i)\b(?:search|grep|look)\s+(?:for\s+)?["']?([^\s"']+)`)
)

// plan decides the tool calls for a user message. Names in backticks are taken literally: a
// name ending in "/" is a directory, a name with a "/" or an extension is a file, anything else
// is a search pattern. Without backticks, path-looking words and "search for X" are used.
func plan(text string) []plannedCall {
	lower := strings.ToLower(text)
	wantList := strings.Contains(lower, "list") || strings.Contains(lower, "layout") || strings.Contains(lower, "files here")
	wantSearch := strings.Contains(lower, "search") || strings.Contains(lower, "grep") || strings.Contains(lower, "where is")
	var calls []plannedCall
	var patterns, files, dirs []string
	tokens := backtickRe.FindAllStringSubmatch(text, -1)
	for _, t := range tokens {
		tok := strings.TrimSpace(t[1])
		switch {
		case tok == "":
		case strings.HasSuffix(tok, "/") || tok == ".":
			dirs = append(dirs, tok)
		case looksLikePath(tok) && !(wantSearch && len(patterns) == 0 && len(files) == 0 && !strings.Contains(tok, "/")):
			files = append(files, tok)
		default:
			patterns = append(patterns, tok)
		}
	}
	if len(tokens) == 0 {
		for _, m := range pathRe.FindAllStringSubmatch(text, -1) {
			p := strings.TrimRight(m[1], ".")
			if strings.HasSuffix(p, "/") {
				dirs = append(dirs, p)
			} else if looksLikePath(p) {
				files = append(files, p)
			}
		}
		if m := searchRe.FindStringSubmatch(text); m != nil {
			patterns = append(patterns, m[1])
			files = slices.DeleteFunc(files, func(f string) bool { return f == m[1] })
		}
	}
	switch {
	case len(patterns) > 0:
		scope := ""
		if len(dirs) > 0 {
			scope = dirs[0]
		} else if len(files) > 0 {
			scope = files[0]
		}
		for _, p := range patterns {
			args := map[string]any{"pattern": regexp.QuoteMeta(p)}
			if scope != "" {
				args["path"] = scope
			}
			calls = append(calls, plannedCall{toolSearch, args})
		}
	case len(dirs) > 0 && wantList:
		for _, d := range dirs {
			calls = append(calls, plannedCall{toolList, map[string]any{"path": d}})
		}
	case len(files) > 0:
		for _, f := range files {
			calls = append(calls, plannedCall{toolRead, map[string]any{"path": f}})
		}
	case wantList:
		calls = append(calls, plannedCall{toolList, map[string]any{"path": "."}})
	}
	if len(calls) > maxCallsPerTurn {
		calls = calls[:maxCallsPerTurn]
	}
	return calls
}

func looksLikePath(s string) bool {
	if strings.ContainsAny(s, " \t()*+?[]{}|^$\\") {
		return false
	}
	if strings.Contains(s, "/") {
		return true
	}
	i := strings.LastIndexByte(s, '.')
	return i > 0 && i < len(s)-1 && len(s)-i <= 6
}

// isUserMessage reports whether c is a message typed by the user (not a tool response, not an
// adkctx summary or trim note).
func isUserMessage(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleUser {
		return false
	}
	text := ""
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		if p.FunctionResponse != nil {
			return false
		}
		text += p.Text
	}
	text = strings.TrimSpace(text)
	return text != "" && !strings.HasPrefix(text, compaction.SummaryHeader) && !strings.HasPrefix(text, "[adkctx")
}

func contentText(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		if p != nil && !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return strings.TrimSpace(b.String())
}

// respond is the offline model's whole policy.
func respond(req *model.LLMRequest) *genai.Content {
	last := -1
	for i := len(req.Contents) - 1; i >= 0; i-- {
		if isUserMessage(req.Contents[i]) {
			last = i
			break
		}
	}
	var userText string
	var responses []*genai.FunctionResponse
	made := 0
	if last >= 0 {
		userText = contentText(req.Contents[last])
	}
	for _, c := range req.Contents[last+1:] {
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if p.FunctionCall != nil {
				made++
			}
			if p.FunctionResponse != nil {
				responses = append(responses, p.FunctionResponse)
			}
		}
	}
	if last >= 0 {
		planned := plan(userText)
		if made < len(planned) {
			next := planned[made]
			return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{
				FunctionCall: &genai.FunctionCall{ID: callID(req.Contents, made), Name: next.name, Args: next.args},
			}}}
		}
	}
	return genai.NewContentFromText(answer(req, userText, responses), genai.RoleModel)
}

// callID names the made-th call planned for this request after the request itself. A real model
// leaves IDs to adk-go, which draws random ones; their bytes would reach the requests (calls,
// responses, artifact names) and make the demo's token figures differ from run to run. Derived
// from the whole request, an ID repeats only for an identical request, never within a session.
func callID(contents []*genai.Content, made int) string {
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(contents); err != nil {
		return ""
	}
	fmt.Fprintf(h, "#%d", made)
	return "call-" + hex.EncodeToString(h.Sum(nil)[:8])
}

// answer writes the final reply from what the request shows.
func answer(req *model.LLMRequest, userText string, responses []*genai.FunctionResponse) string {
	var b strings.Builder
	lower := strings.ToLower(userText)
	if len(responses) == 0 {
		switch {
		case strings.Contains(lower, "rule") || strings.Contains(lower, "convention") || strings.Contains(lower, "agents.md"):
			rules := instructionRules(req)
			if len(rules) == 0 {
				b.WriteString("I have no AGENTS.md instructions in my context, so I only know the general rules.")
				break
			}
			fmt.Fprintf(&b, "The AGENTS.md files in my instructions say (%d rules; the most specific file wins):\n", len(rules))
			for _, r := range rules {
				fmt.Fprintf(&b, "%s\n", r)
			}
		default:
			b.WriteString(recap(req))
		}
		return strings.TrimSpace(b.String())
	}
	b.WriteString("Here is what the tools returned:\n")
	for _, fr := range responses {
		b.WriteString(describe(fr))
		b.WriteByte('\n')
	}
	if strings.Contains(lower, "why") || strings.Contains(lower, "fail") || strings.Contains(lower, "broken") {
		if f := firstMatching(responses, "FAIL", "Error", "error:"); f != "" {
			fmt.Fprintf(&b, "The first failure I can see: %s\n", quote(f, 160))
		}
	}
	return strings.TrimSpace(b.String())
}

// instructionRules returns the bullet lines of the system instruction (where adkctx puts the
// merged AGENTS.md files).
func instructionRules(req *model.LLMRequest) []string {
	if req.Config == nil || req.Config.SystemInstruction == nil {
		return nil
	}
	var rules []string
	for line := range strings.SplitSeq(contentText(req.Config.SystemInstruction), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "- ") && !slices.Contains(rules, line) {
			rules = append(rules, line)
		}
	}
	return rules
}

// recap answers a question that needs no tool: what the visible context holds.
func recap(req *model.LLMRequest) string {
	var summary string
	calls, answers := 0, 0
	names := map[string]int{}
	for _, c := range req.Contents {
		if c == nil {
			continue
		}
		if c.Role == genai.RoleUser && strings.HasPrefix(contentText(c), compaction.SummaryHeader) {
			summary = contentText(c)
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if p.FunctionCall != nil {
				calls++
				names[p.FunctionCall.Name]++
			}
		}
		if c.Role == genai.RoleModel && contentText(c) != "" {
			answers++
		}
	}
	var b strings.Builder
	if summary != "" {
		fmt.Fprintf(&b, "I am working from a summary of our earlier conversation (%d characters) plus the %d most recent messages. ", len(summary), len(req.Contents))
		if i := strings.Index(summary, "\n"); i > 0 {
			fmt.Fprintf(&b, "It says: %s ", quote(summary[i+1:], 200))
		}
	} else {
		fmt.Fprintf(&b, "I can see our whole conversation: %d messages. ", len(req.Contents))
	}
	parts := make([]string, 0, len(names))
	for _, k := range slices.Sorted(maps.Keys(names)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, names[k]))
	}
	fmt.Fprintf(&b, "In what I can see, I made %d tool calls (%s) and gave %d answers. ", calls, strings.Join(parts, ", "), answers)
	b.WriteString("The nightly CI failure is TestTotalRoundsHalfEvenOnce (683 vs 684): fix the rounding in invoice.go first.")
	return b.String()
}

// describe turns one tool result into a sentence quoting what the model actually received.
func describe(fr *genai.FunctionResponse) string {
	r := fr.Response
	if e, ok := r["error"]; ok {
		return fmt.Sprintf("- %s failed: %v", fr.Name, e)
	}
	switch fr.Name {
	case toolList:
		listing := str(r["listing"])
		lines := nonEmptyLines(listing)
		total := num(r["entries"])
		s := fmt.Sprintf("- `%s` holds %d files, %d bytes in all; ", str(r["path"]), total, num(r["total_bytes"]))
		if visible := countEntries(lines); visible < total {
			s += fmt.Sprintf("the listing I received shows %d of them (the middle was left out to save context). ", visible)
		} else {
			s += "I received the full listing. "
		}
		if len(lines) > 0 {
			s += fmt.Sprintf("First: %s; last: %s.", quote(lines[0], 80), quote(lines[len(lines)-1], 80))
		}
		return s + cutNote(listing)
	case toolRead:
		content := str(r["content"])
		lines := nonEmptyLines(content)
		s := fmt.Sprintf("- `%s`: %d lines, %d bytes", str(r["path"]), num(r["lines"]), num(r["bytes"]))
		if len(content) < num(r["bytes"]) {
			s += fmt.Sprintf(" (I received %d bytes: head and tail)", len(content))
		}
		if len(lines) > 0 {
			s += fmt.Sprintf(". It starts with %s and ends with %s.", quote(lines[0], 100), quote(lines[len(lines)-1], 100))
		}
		return s + cutNote(content)
	case toolSearch:
		lines := nonEmptyLines(str(r["results"]))
		matches := num(r["matches"])
		s := fmt.Sprintf("- %s: %d matches in %d files", quote(str(r["pattern"]), 40), matches, num(r["files"]))
		if visible := countEntries(lines); visible < matches {
			s += fmt.Sprintf(" (I can see %d of them)", visible)
		}
		if len(lines) > 0 {
			s += fmt.Sprintf(". First: %s", quote(lines[0], 120))
			if len(lines) > 1 {
				s += fmt.Sprintf("; last: %s", quote(lines[len(lines)-1], 120))
			}
		}
		return s + "." + cutNote(str(r["results"]))
	}
	return fmt.Sprintf("- %s returned %d fields.", fr.Name, len(r))
}

// cutNote quotes adkctx's truncation marker when the text carries one.
func cutNote(s string) string {
	i := strings.Index(s, truncate.MarkerPrefix)
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(s[i:], "\n")
	return " The cut is marked " + quote(line, 160) + "."
}

// countEntries counts the lines that are real entries (not a truncation marker).
func countEntries(lines []string) int {
	n := 0
	for _, l := range lines {
		if !strings.Contains(l, truncate.MarkerPrefix) {
			n++
		}
	}
	return n
}

func firstMatching(responses []*genai.FunctionResponse, words ...string) string {
	for _, w := range words {
		for _, fr := range responses {
			keys := make([]string, 0, len(fr.Response))
			for k := range fr.Response {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				s, ok := fr.Response[k].(string)
				if !ok {
					continue
				}
				for _, l := range nonEmptyLines(s) {
					if strings.Contains(l, w) {
						return l
					}
				}
			}
		}
	}
	return ""
}

func nonEmptyLines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func quote(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// num reads a number from a tool result, whether it is an int (in memory) or a float64 (after a
// JSON round trip through the database).
func num(v any) int {
	f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
	return int(f)
}
