package compaction

import (
	"slices"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/processors/request"
)

// promptPrefix returns req cut right after the last content that shows an event of covered
// (positions in events): the conversation up to the end of what a summary covers, exactly as the
// model was sent it. It is nil when req is nil or does not show, in stream order, every covered
// event it can recognize (by function call or response id, or by role and first text), or shows
// none of them. Contents and config are shared with req, never modified.
func promptPrefix(req *request.LLMRequest, events []Event, covered []int) *request.LLMRequest {
	if req == nil {
		return nil
	}
	positions := slices.Sorted(slices.Values(covered))
	j, matched := 0, 0
	for _, i := range positions {
		key := contentKey(events[i].Content)
		if key == "" {
			continue
		}
		for j < len(req.Contents) && contentKey(req.Contents[j]) != key {
			j++
		}
		if j == len(req.Contents) {
			return nil // not shown (trimmed, or rewritten for another agent): no prefix to share
		}
		j++
		matched++
	}
	if matched == 0 {
		return nil
	}
	out := &request.LLMRequest{Model: req.Model, Contents: slices.Clip(req.Contents[:j])}
	if req.Config != nil {
		out.Config = &genai.GenerateContentConfig{SystemInstruction: req.Config.SystemInstruction, Tools: req.Config.Tools}
	}
	return out
}

// contentKey names what a content shows, so that a stored event and the request content built
// from it match although adk-go sends calls and responses without their ids and a view may show a
// result cut: its first function call's name and arguments, its first function response's name,
// or its role and first text ("" when it has none of these).
func contentKey(c *genai.Content) string {
	if c == nil {
		return ""
	}
	for _, p := range c.Parts {
		switch {
		case p == nil || p.Thought:
			continue
		case p.FunctionCall != nil:
			return "call\x00" + p.FunctionCall.Name + "\x00" + jsonText(p.FunctionCall.Args)
		case p.FunctionResponse != nil:
			return "response\x00" + p.FunctionResponse.Name
		case p.Text != "":
			return c.Role + "\x00" + p.Text
		}
		return ""
	}
	return ""
}
