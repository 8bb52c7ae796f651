package replay

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tiktoken-go/tokenizer"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
)

// Tokens names a way to count a request's tokens.
type Tokens string

const (
	// Estimator counts with adkctx's own estimator (budget.EstimateContent for each content,
	// budget.EstimateRequest for the system instruction and tools).
	Estimator Tokens = "estimator"
	// O200k counts with the o200k_base tokenizer (github.com/tiktoken-go/tokenizer): each
	// content's text, and each call's and response's name and compact JSON, plus 3 tokens per
	// content for the message framing; the system instruction's text and the tool declarations'
	// JSON likewise.
	O200k Tokens = "o200k"
)

// counter counts requests: a fixed part (system instruction and tools) plus each content. Counts
// of equal contents are remembered (by their bytes as counted), so a session's requests cost
// what is new in each. Not safe for concurrent use: one per replay.
type counter struct {
	kind  Tokens
	codec tokenizer.Codec
	cache map[string]int
}

func newCounter(kind Tokens) (*counter, error) {
	c := &counter{kind: kind, cache: map[string]int{}}
	switch kind {
	case Estimator:
	case O200k:
		codec, err := tokenizer.Get(tokenizer.O200kBase)
		if err != nil {
			return nil, fmt.Errorf("o200k tokenizer: %w", err)
		}
		c.codec = codec
	default:
		return nil, fmt.Errorf("unknown token counter %q (want %q or %q)", kind, Estimator, O200k)
	}
	return c, nil
}

// o200kFraming is what a chat message costs besides its text (OpenAI's documented framing).
const o200kFraming = 3

func (c *counter) text(s string) int {
	if n, ok := c.cache[s]; ok {
		return n
	}
	n, err := c.codec.Count(s)
	if err != nil {
		n = budget.EstimateText(s) // the tokenizer refuses nothing valid; never count as 0
	}
	c.cache[s] = n
	return n
}

// fixed counts the system instruction and the tool declarations.
func (c *counter) fixed(cfg *genai.GenerateContentConfig) int {
	if cfg == nil {
		return 0
	}
	if c.kind == Estimator {
		return budget.EstimateRequest(nil, cfg)
	}
	n := 0
	if si := cfg.SystemInstruction; si != nil {
		n += c.content(si)
	}
	if len(cfg.Tools) > 0 {
		b, _ := json.Marshal(cfg.Tools)
		n += c.text(string(b))
	}
	return n
}

// content counts one content.
func (c *counter) content(ct *genai.Content) int {
	if ct == nil {
		return 0
	}
	if c.kind == Estimator {
		return budget.EstimateContent(ct)
	}
	return c.text(render(ct)) + o200kFraming
}

// request counts a whole request.
func (c *counter) request(cfg *genai.GenerateContentConfig, contents []*genai.Content) int {
	n := c.fixed(cfg)
	for _, ct := range contents {
		n += c.content(ct)
	}
	return n
}

// render is what a content shows a tokenizer: its texts, and each call and response as its name
// and compact JSON.
func render(ct *genai.Content) string {
	var b strings.Builder
	for _, p := range ct.Parts {
		if p == nil {
			continue
		}
		b.WriteString(p.Text)
		if fc := p.FunctionCall; fc != nil {
			b.WriteString(fc.Name)
			writeJSON(&b, fc.Args)
		}
		if fr := p.FunctionResponse; fr != nil {
			b.WriteString(fr.Name)
			writeJSON(&b, fr.Response)
		}
	}
	return b.String()
}

func writeJSON(b *strings.Builder, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // values from JSON or adk-go's tools always encode
}
