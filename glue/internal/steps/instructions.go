package steps

import (
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/processors/request"
)

// InjectInstructions appends text (the merged AGENTS.md instructions, see
// package instructions) as a new Part at the end of
// req.Config.SystemInstruction, after the agent's own instruction parts.
//
// It is a no-op when text is empty or req is nil. It never replaces
// existing parts and never goes through the agent's templated Instruction
// (so `{braces}` in the text are harmless). Nothing reachable from req is
// mutated: req.Config and the SystemInstruction Content are copied (with a
// new Parts slice) before the part is appended, so a config or content
// shared with other requests is left intact. A new SystemInstruction gets
// the role "user", as adk-go uses.
func InjectInstructions(req *request.LLMRequest, text string) {
	if req == nil || text == "" {
		return
	}
	// One allocation for the copied config, the copied content, the new
	// part and (usually) the new parts array.
	type block struct {
		cfg   genai.GenerateContentConfig
		si    genai.Content
		part  genai.Part
		parts [4]*genai.Part
	}
	blk := &block{}
	if req.Config != nil {
		blk.cfg = *req.Config
	}
	if old := blk.cfg.SystemInstruction; old != nil {
		blk.si = *old
	} else {
		blk.si.Role = genai.RoleUser
	}
	n := len(blk.si.Parts)
	var parts []*genai.Part
	if n < len(blk.parts) {
		parts = blk.parts[: n : n+1]
	} else {
		parts = make([]*genai.Part, n, n+1)
	}
	copy(parts, blk.si.Parts)
	blk.part.Text = text
	blk.si.Parts = append(parts, &blk.part)
	blk.cfg.SystemInstruction = &blk.si
	req.Config = &blk.cfg
}
