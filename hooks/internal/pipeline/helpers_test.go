package pipeline_test

import "google.golang.org/genai"

func call(id, name string) *genai.Part {
	return &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: map[string]any{"q": name + id}}}
}

func resp(id, name string, v string) *genai.Part {
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: map[string]any{"result": v}}}
}

func text(s string) *genai.Part { return &genai.Part{Text: s} }

func modelContent(parts ...*genai.Part) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: parts}
}

func userContent(parts ...*genai.Part) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// instrTexts lists the texts of a system instruction's parts.
func instrTexts(c *genai.Content) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, p := range c.Parts {
		out = append(out, p.Text)
	}
	return out
}
