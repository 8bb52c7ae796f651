package steps

import (
	"encoding/json"
	"testing"

	"google.golang.org/genai"
)

func nzCall(id, name string) *genai.Part {
	return &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: map[string]any{"q": name + id}}}
}

func nzResp(id, name string, v string) *genai.Part {
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: map[string]any{"result": v}}}
}

func nzText(s string) *genai.Part { return &genai.Part{Text: s} }

func nzModel(parts ...*genai.Part) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: parts}
}

func nzUser(parts ...*genai.Part) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// snapshot deep-copies contents through JSON, to detect mutation of the originals.
func nzSnapshot(t testing.TB, cs []*genai.Content) string {
	t.Helper()
	b, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
