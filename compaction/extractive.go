package compaction

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"
)

// Defaults of [ExtractiveSummarizer].
const (
	DefaultExtractiveMaxBytes     = 4096
	DefaultExtractiveMaxItemChars = 400
	DefaultExtractiveMaxAnswers   = 3
)

// ExtractiveSummarizer builds a summary without a model: the user's goal
// (the first user text seen, carried over from the previous summary), the
// latest user request, the tools called with counts (accumulated across
// roll-ups) and the last model answers. Every item is capped and the whole
// summary is capped at MaxBytes, so repeated roll-ups never grow. It is the
// offline summarizer and the default fallback of an [LLMSummarizer]. The
// zero value is ready to use and safe for concurrent use.
type ExtractiveSummarizer struct {
	// MaxBytes caps the summary text. Default 4096.
	MaxBytes int
	// MaxItemChars caps each item (goal, request, answer). Default 400.
	MaxItemChars int
	// MaxAnswers is how many recent model answers are kept. Default 3.
	MaxAnswers int
}

// Name returns "extractive".
func (s *ExtractiveSummarizer) Name() string { return "extractive" }

const (
	exGoal    = "Goal: "
	exLatest  = "Latest request: "
	exTools   = "Tools used: "
	exAnswers = "Recent answers:"
	exEarlier = "Earlier: "
	exItem    = "- "
)

// Summarize implements [Summarizer].
func (s *ExtractiveSummarizer) Summarize(_ context.Context, in SummaryInput) (*Summary, error) {
	maxBytes := s.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultExtractiveMaxBytes
	}
	itemChars := s.MaxItemChars
	if itemChars <= 0 {
		itemChars = DefaultExtractiveMaxItemChars
	}
	maxAnswers := s.MaxAnswers
	if maxAnswers <= 0 {
		maxAnswers = DefaultExtractiveMaxAnswers
	}

	st := parseExtractive(in.Previous)
	newContent := false
	for _, e := range in.Events {
		if e == nil || IsCompactionEvent(e) || e.Content == nil {
			continue
		}
		user := e.Author == "user" || (e.Author == "" && e.Content.Role == genai.RoleUser)
		var text []string
		for _, p := range e.Content.Parts {
			if p == nil || p.Thought {
				continue
			}
			if p.FunctionCall != nil {
				st.addTool(p.FunctionCall.Name, 1)
				newContent = true
			}
			if p.Text != "" {
				text = append(text, p.Text)
			}
		}
		t := oneLine(strings.Join(text, " "))
		if t == "" {
			continue
		}
		newContent = true
		if user {
			if st.goal == "" {
				st.goal = capRunes(t, itemChars)
			}
			st.latest = capRunes(t, itemChars)
		} else {
			st.answers = append(st.answers, capRunes(t, itemChars))
		}
	}
	if !newContent && in.Previous == nil {
		return nil, nil
	}
	if len(st.answers) > maxAnswers {
		st.answers = st.answers[len(st.answers)-maxAnswers:]
	}
	text := st.render(maxBytes, itemChars)
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	return &Summary{
		Content:    &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: text}}},
		Summarizer: s.Name(),
	}, nil
}

type extractiveState struct {
	goal, latest, earlier string
	tools                 map[string]int
	answers               []string
}

func (st *extractiveState) addTool(name string, n int) {
	name = oneLine(name)
	if name == "" {
		return
	}
	if st.tools == nil {
		st.tools = map[string]int{}
	}
	st.tools[name] += n
}

// parseExtractive recovers the state from a previous extractive summary. A
// summary written by another summarizer is kept (capped) as "Earlier".
func parseExtractive(prev *genai.Content) extractiveState {
	var st extractiveState
	if prev == nil {
		return st
	}
	var texts []string
	for _, p := range prev.Parts {
		if p != nil && !p.Thought && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.Join(texts, "\n")), SummaryHeader))
	recognized := false
	inAnswers := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, exGoal):
			st.goal, recognized, inAnswers = strings.TrimPrefix(line, exGoal), true, false
		case strings.HasPrefix(line, exLatest):
			st.latest, recognized, inAnswers = strings.TrimPrefix(line, exLatest), true, false
		case strings.HasPrefix(line, exEarlier):
			st.earlier, recognized, inAnswers = strings.TrimPrefix(line, exEarlier), true, false
		case strings.HasPrefix(line, exTools):
			recognized, inAnswers = true, false
			for _, item := range strings.Split(strings.TrimPrefix(line, exTools), ", ") {
				name, count := parseToolItem(item)
				st.addTool(name, count)
			}
		case strings.HasPrefix(line, exAnswers):
			recognized, inAnswers = true, true
		case inAnswers && strings.HasPrefix(line, exItem):
			st.answers = append(st.answers, strings.TrimPrefix(line, exItem))
		}
	}
	if !recognized && text != "" {
		st.earlier = oneLine(text)
	}
	return st
}

// parseToolItem parses "name ×3" (count 1 when absent or malformed).
func parseToolItem(item string) (string, int) {
	item = strings.TrimSpace(item)
	if i := strings.LastIndex(item, " ×"); i > 0 {
		if n, err := strconv.Atoi(item[i+len(" ×"):]); err == nil && n > 0 {
			return item[:i], n
		}
	}
	return item, 1
}

func (st *extractiveState) render(maxBytes, itemChars int) string {
	var head []string
	if st.earlier != "" {
		head = append(head, exEarlier+capRunes(st.earlier, 2*itemChars))
	}
	if st.goal != "" {
		head = append(head, exGoal+st.goal)
	}
	if st.latest != "" && st.latest != st.goal {
		head = append(head, exLatest+st.latest)
	}
	if len(st.tools) > 0 {
		names := make([]string, 0, len(st.tools))
		for n := range st.tools {
			names = append(names, n)
		}
		// Most used first, then by name: deterministic.
		sort.Slice(names, func(i, j int) bool {
			if st.tools[names[i]] != st.tools[names[j]] {
				return st.tools[names[i]] > st.tools[names[j]]
			}
			return names[i] < names[j]
		})
		items := make([]string, 0, len(names))
		for _, n := range names {
			items = append(items, fmt.Sprintf("%s ×%d", capRunes(n, 80), st.tools[n]))
		}
		line := exTools + strings.Join(items, ", ")
		head = append(head, truncateBytes(line, maxBytes/4))
	}
	answers := st.answers
	for {
		lines := append([]string(nil), head...)
		if len(answers) > 0 {
			lines = append(lines, exAnswers)
			for _, a := range answers {
				lines = append(lines, exItem+a)
			}
		}
		out := strings.Join(lines, "\n")
		if len(out) <= maxBytes || len(answers) == 0 {
			return truncateBytes(out, maxBytes)
		}
		answers = answers[1:] // drop the oldest answer first
	}
}

// oneLine collapses all whitespace (line breaks included) to single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncateBytes cuts s to at most n bytes on a UTF-8 boundary.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
