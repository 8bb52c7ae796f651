package plan

import (
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/record"
	"github.com/adkctx/adkctx/processors/request"
)

// promptPrefix returns, of the requests sent (newest first), the newest that shows every event
// of covered (positions in events), those on model first, cut right after the content that
// shows the last one (cutAfter): the conversation up to the end of what a summary covers,
// exactly as the model was sent it, which a provider's cache may still hold. It is nil when none
// does.
func promptPrefix(sent []*request.LLMRequest, model string, events []compaction.Event, covered []int) *request.LLMRequest {
	for _, onModel := range []bool{true, false} {
		for _, req := range sent {
			if req == nil || (req.Model == model) != onModel {
				continue
			}
			if p := cutAfter(req, events, covered); p != nil {
				return p
			}
		}
	}
	return nil
}

// summarizerModel is the name of the model s calls, or "".
func summarizerModel(s compaction.Summarizer) string {
	if l, ok := s.(*compaction.LLMSummarizer); ok && l.Model != nil {
		return l.Model.Name()
	}
	return ""
}

// cutAfter returns req cut right after the content that shows the last event of covered. It is
// nil unless req shows every covered event the model sees, in stream order: each one's content
// is found (a call by its function's name and arguments, since adk-go sends calls without their
// ids; a text by its role and text; a tool response right after the content matched before it,
// by its function's name, since a view may show it cut), and none holds only parts it cannot
// recognize (media, code). Contents and config are shared with req, never modified.
func cutAfter(req *request.LLMRequest, events []compaction.Event, covered []int) *request.LLMRequest {
	if req == nil {
		return nil
	}
	j, matched := 0, 0
	for _, i := range slices.Sorted(slices.Values(covered)) {
		key, shown := contentKey(events[i].Content)
		switch {
		case !shown:
			continue // nothing the model sees (no content, thoughts only, empty parts)
		case key == "":
			return nil // the model saw it, and it cannot be found: the summary might miss it
		case strings.HasPrefix(key, responseKey):
			if j == len(req.Contents) || contentKeyOf(req.Contents[j]) != key {
				return nil // not where its call's response belongs: dropped, merged or reordered
			}
		default:
			for j < len(req.Contents) && contentKeyOf(req.Contents[j]) != key {
				j++
			}
			if j == len(req.Contents) {
				return nil // not shown (trimmed, or rewritten for another agent)
			}
		}
		j++
		matched++
	}
	if matched == 0 {
		return nil
	}
	out := *req // the summarizer reads its model, system instruction and tools
	out.Contents = slices.Clip(req.Contents[:j])
	return &out
}

const responseKey = "response\x00"

// contentKey names what a content shows, so that a stored event and the request content built
// from it match although adk-go sends calls and responses without their ids and a view may show a
// result cut: its first function call's name and arguments, its first function response's name,
// or its role and first text, skipping thoughts and empty parts. shown reports whether the model
// sees anything of c; key is "" when what it sees is none of the above (media, code).
func contentKey(c *genai.Content) (key string, shown bool) {
	if c == nil {
		return "", false
	}
	for _, p := range c.Parts {
		switch {
		case p == nil || p.Thought:
		case p.FunctionCall != nil:
			return "call\x00" + p.FunctionCall.Name + "\x00" + record.JSONText(p.FunctionCall.Args), true
		case p.FunctionResponse != nil:
			return responseKey + p.FunctionResponse.Name, true
		case p.Text != "":
			return c.Role + "\x00" + p.Text, true
		case p.InlineData != nil || p.FileData != nil || p.ExecutableCode != nil || p.CodeExecutionResult != nil:
			shown = true
		}
	}
	return "", shown
}

func contentKeyOf(c *genai.Content) string {
	key, _ := contentKey(c)
	return key
}
