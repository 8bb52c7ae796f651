package truncate

import "google.golang.org/genai"

// Responses applies Value with cfg to every FunctionResponse.Response of c. It is
// copy-on-write: when nothing is cut it returns c itself; otherwise a copy of c whose changed
// parts are copies, so c (which may be shared with session events) is never modified. cut counts
// the responses cut and st adds up their Stats.
func Responses(c *genai.Content, cfg Config, note func(Cut) string) (out *genai.Content, cut int, st Stats) {
	if c == nil {
		return nil, 0, st
	}
	var parts []*genai.Part // copy of c.Parts, made on the first change
	for j, p := range c.Parts {
		if p == nil || p.FunctionResponse == nil || p.FunctionResponse.Response == nil {
			continue
		}
		v, s := Value(p.FunctionResponse.Response, cfg, note)
		m, ok := v.(map[string]any)
		if !s.Truncated || !ok {
			continue
		}
		st.add(s)
		cut++
		fr := *p.FunctionResponse
		fr.Response = m
		np := *p
		np.FunctionResponse = &fr
		if parts == nil {
			parts = append([]*genai.Part(nil), c.Parts...)
		}
		parts[j] = &np
	}
	if parts == nil {
		return c, 0, st
	}
	nc := *c
	nc.Parts = parts
	return &nc, cut, st
}
