package hooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/hooks/internal/llmtest"
)

// rawTool returns its result map as it is: functiontool would JSON-encode and decode it, turning
// invalid UTF-8 into U+FFFD before any callback sees it.
type rawTool struct {
	name   string
	result map[string]any
}

func (r *rawTool) Name() string        { return r.name }
func (r *rawTool) Description() string { return "returns raw output" }
func (r *rawTool) IsLongRunning() bool { return false }
func (r *rawTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: r.name, Description: r.Description()}
}
func (r *rawTool) Run(agent.ToolContext, any) (map[string]any, error) { return r.result, nil }

// ProcessRequest registers the tool for the request, as adk-go's own tools do.
func (r *rawTool) ProcessRequest(_ agent.ToolContext, req *model.LLMRequest) error {
	if req.Tools == nil {
		req.Tools = map[string]any{}
	}
	req.Tools[r.name] = r
	return nil
}

// Each cut leaf of a tool result is saved as its own artifact holding its original bytes exactly
// (binary included), named in that leaf's marker.
func TestFullOutputArtifactsAreByteExact(t *testing.T) {
	binary := make([]byte, 40_960)
	for i := range binary {
		binary[i] = byte(i*131 + i/256) // not valid UTF-8
	}
	buildLog := hugeBuildLog()
	for _, tc := range []struct {
		name   string
		result map[string]any
		// want maps each artifact name suffix (after the call ID) to the result key whose marker
		// names it, its original bytes and MIME type.
		want map[string]wantArtifact
	}{
		{
			name:   "one binary leaf",
			result: map[string]any{"data": string(binary), "exit_code": 0.0},
			want:   map[string]wantArtifact{".bin": {"data", binary, "application/octet-stream"}},
		},
		{
			name:   "a []byte and a text leaf",
			result: map[string]any{"raw": binary, "stdout": buildLog},
			want: map[string]wantArtifact{
				"-1.bin": {"raw", binary, "application/octet-stream"},
				"-2.txt": {"stdout", []byte(buildLog), "text/plain; charset=utf-8"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &llmtest.Model{Script: []llmtest.Step{
				llmtest.Call(&genai.FunctionCall{Name: "dump", Args: map[string]any{}}),
				llmtest.Text("done"),
			}}
			s := newStack(t, m, stackOptions{tools: []tool.Tool{&rawTool{name: "dump", result: tc.result}}})
			if err := s.send(t, "s1", "dump it"); err != nil {
				t.Fatal(err)
			}
			var stored map[string]any
			var callID string
			for _, e := range s.events(t, "s1") {
				for _, p := range e.Content.Parts {
					if p.FunctionResponse != nil {
						stored, callID = p.FunctionResponse.Response, p.FunctionResponse.ID
					}
				}
			}
			list, err := s.artifacts.List(t.Context(), &artifact.ListRequest{AppName: appName, UserID: "user", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for suffix := range tc.want {
				names = append(names, "adkctx-tool-output-dump-"+callID+suffix)
			}
			if diff := cmp.Diff(names, list.FileNames, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Fatalf("artifacts (-want +got):\n%s", diff)
			}
			for suffix, w := range tc.want {
				name := "adkctx-tool-output-dump-" + callID + suffix
				got, err := s.artifacts.Load(t.Context(), &artifact.LoadRequest{AppName: appName, UserID: "user", SessionID: "s1", FileName: name})
				if err != nil {
					t.Fatal(err)
				}
				if b := got.Part.InlineData; b == nil || !bytes.Equal(b.Data, w.data) || b.MIMEType != w.mime {
					t.Errorf("%s: not the original bytes (%d bytes, MIME %q; want %d bytes, %q)", name, len(b.Data), b.MIMEType, len(w.data), w.mime)
				}
				if marker, _ := stored[w.key].(string); !strings.Contains(marker, fmt.Sprintf("full output saved as artifact %q", name)) {
					t.Errorf("stored %q does not name %s: %.300q", w.key, name, stored[w.key])
				}
			}
		})
	}
}

type wantArtifact struct {
	key  string // result key whose marker names the artifact
	data []byte
	mime string
}

// Elements left out of a long list are saved too, as JSON, and named in their marker: kept and
// saved elements together rebuild the list.
func TestOmittedElementsAreSaved(t *testing.T) {
	files := make([]any, 500)
	for i := range files {
		files[i] = fmt.Sprintf("pkg/%03d/file.go: %s", i, strings.Repeat("x", 80))
	}
	m := &llmtest.Model{Script: []llmtest.Step{
		llmtest.Call(&genai.FunctionCall{Name: "list", Args: map[string]any{}}),
		llmtest.Text("done"),
	}}
	s := newStack(t, m, stackOptions{tools: []tool.Tool{&rawTool{name: "list", result: map[string]any{"files": files}}}})
	if err := s.send(t, "s1", "list the files"); err != nil {
		t.Fatal(err)
	}
	var kept []any
	var callID string
	for _, e := range s.events(t, "s1") {
		for _, p := range e.Content.Parts {
			if p.FunctionResponse != nil {
				kept, _ = p.FunctionResponse.Response["files"].([]any)
				callID = p.FunctionResponse.ID
			}
		}
	}
	name := "adkctx-tool-output-list-" + callID + ".txt"
	at := -1
	for i, e := range kept {
		if str, _ := e.(string); strings.Contains(str, fmt.Sprintf("full output saved as artifact %q", name)) {
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no marker naming %s in the stored list of %d elements", name, len(kept))
	}
	got, err := s.artifacts.Load(t.Context(), &artifact.LoadRequest{AppName: appName, UserID: "user", SessionID: "s1", FileName: name})
	if err != nil {
		t.Fatal(err)
	}
	var omitted []any
	if err := json.Unmarshal(got.Part.InlineData.Data, &omitted); err != nil {
		t.Fatal(err)
	}
	rebuilt := append(append(append([]any{}, kept[:at]...), omitted...), kept[at+1:]...)
	if diff := cmp.Diff(files, rebuilt); diff != "" {
		t.Errorf("kept and saved elements do not rebuild the list (-want +got):\n%.2000s", diff)
	}
}
