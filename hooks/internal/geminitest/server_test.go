package geminitest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/hooks/internal/geminitest"
)

const modelName = "gemini-2.5-flash"

func weatherDecl() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        "get_weather",
		Description: "Returns the forecast for a city.",
		Parameters: &genai.Schema{Type: genai.TypeObject, Required: []string{"city"},
			Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}},
	}
}

// The genai client's generateContent call, as the fake decodes it: the model in the path, the
// API key header, the body split into contents, systemInstruction, tools and generationConfig.
func TestGenerateContentRequestAndResponse(t *testing.T) {
	srv := geminitest.NewServer(t, geminitest.Options{})
	usage := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 120, CandidatesTokenCount: 4,
		CachedContentTokenCount: 100, ThoughtsTokenCount: 7, TotalTokenCount: 131}
	srv.Enqueue(&geminitest.Reply{Parts: []*genai.Part{{Text: "Hello there."}}, Usage: usage,
		ModelVersion: "gemini-2.5-flash-001", ResponseID: "resp-1"})

	contents := []*genai.Content{genai.NewContentFromText("Say hello.", genai.RoleUser)}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser),
		Tools:             []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{weatherDecl()}}},
		MaxOutputTokens:   256,
		Temperature:       genai.Ptr[float32](0.5),
	}
	resp, err := srv.Client(t).Models.GenerateContent(t.Context(), modelName, contents, cfg)
	if err != nil {
		t.Fatalf("GenerateContent: %v", err)
	}

	got := struct {
		Text, Version, ID string
		Finish            genai.FinishReason
		Usage             *genai.GenerateContentResponseUsageMetadata
	}{resp.Text(), resp.ModelVersion, resp.ResponseID, resp.Candidates[0].FinishReason, resp.UsageMetadata}
	want := got
	want.Text, want.Version, want.ID, want.Finish, want.Usage = "Hello there.", "gemini-2.5-flash-001", "resp-1", genai.FinishReasonStop, usage
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != modelName || r.Stream || r.APIKey != geminitest.DefaultAPIKey || r.Rejected != "" {
		t.Errorf("request model %q stream %v key %q rejected %q", r.Model, r.Stream, r.APIKey, r.Rejected)
	}
	if ua := r.Header.Get("x-goog-api-client"); !strings.Contains(ua, "google-genai-sdk/") {
		t.Errorf("x-goog-api-client = %q, want the genai SDK's label", ua)
	}
	if diff := cmp.Diff(contents, r.Contents); diff != "" {
		t.Errorf("contents (-sent +received):\n%s", diff)
	}
	if diff := cmp.Diff(cfg.SystemInstruction, r.SystemInstruction); diff != "" {
		t.Errorf("system instruction (-sent +received):\n%s", diff)
	}
	if diff := cmp.Diff(cfg.Tools, r.Tools); diff != "" {
		t.Errorf("tools (-sent +received):\n%s", diff)
	}
	wantGen := &genai.GenerationConfig{MaxOutputTokens: 256, Temperature: genai.Ptr[float32](0.5)}
	if diff := cmp.Diff(wantGen, r.GenerationConfig); diff != "" {
		t.Errorf("generationConfig (-want +received):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"contents", "generationConfig", "systemInstruction", "tools"}, topLevelKeys(t, r.Body)); diff != "" {
		t.Errorf("body keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(usage, r.Reported); diff != "" {
		t.Errorf("recorded usage (-want +got):\n%s", diff)
	}
}

func topLevelKeys(t *testing.T, body []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v", err)
	}
	return slices.Sorted(maps.Keys(m))
}

// Default usage: the prompt count comes from Options.PromptTokens, the output from the reply.
func TestDerivedUsage(t *testing.T) {
	srv := geminitest.NewServer(t, geminitest.Options{
		PromptTokens: func(r *geminitest.Request) int { return 3 * geminitest.DefaultPromptTokens(r) },
	})
	srv.Enqueue(&geminitest.Reply{Parts: []*genai.Part{{Text: "thinking hard", Thought: true}, {Text: "12345678"}}})
	contents := []*genai.Content{genai.NewContentFromText(strings.Repeat("count me ", 100), genai.RoleUser)}
	resp, err := srv.Client(t).Models.GenerateContent(t.Context(), modelName, contents, nil)
	if err != nil {
		t.Fatal(err)
	}
	prompt := int32(3 * geminitest.DefaultPromptTokens(srv.Requests()[0]))
	want := &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount: prompt, CandidatesTokenCount: 2, ThoughtsTokenCount: 4, TotalTokenCount: prompt + 6,
		PromptTokensDetails: []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: prompt}},
	}
	if diff := cmp.Diff(want, resp.UsageMetadata); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if prompt < 3*900/4 {
		t.Errorf("prompt tokens %d do not follow the request size", prompt)
	}
}

// streamGenerateContent?alt=sse: "data: {json}" events separated by a blank line; the text split
// across events, each with the usage so far, the last with the finish reason and full usage.
func TestStreamFraming(t *testing.T) {
	srv := geminitest.NewServer(t, geminitest.Options{})
	srv.Enqueue(&geminitest.Reply{Parts: []*genai.Part{{Text: "one two three four five six"}}, Chunks: 3})
	var texts []string
	var finishes []genai.FinishReason
	var outTokens []int32
	for resp, err := range srv.Client(t).Models.GenerateContentStream(t.Context(), modelName,
		[]*genai.Content{genai.NewContentFromText("Count to six.", genai.RoleUser)}, nil) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		texts = append(texts, resp.Text())
		finishes = append(finishes, resp.Candidates[0].FinishReason)
		outTokens = append(outTokens, resp.UsageMetadata.CandidatesTokenCount)
		if resp.UsageMetadata.PromptTokenCount == 0 || resp.ResponseID != "fake-1" || resp.ModelVersion != modelName {
			t.Errorf("event usage %+v id %q version %q", resp.UsageMetadata, resp.ResponseID, resp.ModelVersion)
		}
	}
	got := struct {
		Texts    []string
		Finishes []genai.FinishReason
		Out      []int32
	}{texts, finishes, outTokens}
	want := got
	want.Texts = []string{"one two t", "hree four", " five six"} // 27 characters in 3 pieces
	want.Finishes = []genai.FinishReason{"", "", genai.FinishReasonStop}
	want.Out = []int32{3, 5, 7} // ⌈bytes so far ÷ 4⌉
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
	r := srv.Requests()[0]
	if !r.Stream || r.Reported.CandidatesTokenCount != 7 {
		t.Errorf("recorded stream %v usage %+v", r.Stream, r.Reported)
	}

	// The bytes on the wire, read with a plain HTTP client.
	srv.Enqueue(&geminitest.Reply{Parts: []*genai.Part{{Text: "abcdef"}}, Chunks: 2})
	hr, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
		srv.URL()+"/v1beta/models/"+modelName+":streamGenerateContent?alt=sse", bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("x-goog-api-key", "k")
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(res.Body)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.Index(data, []byte("\r\n\r\n")); i >= 0 {
			return i + 4, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		events = append(events, sc.Text())
	}
	if len(events) != 2 {
		t.Fatalf("events = %q, want 2", events)
	}
	for i, e := range events {
		data, ok := strings.CutPrefix(e, "data: ")
		if !ok || strings.ContainsAny(data, "\r\n") || !json.Valid([]byte(data)) {
			t.Errorf("event %d = %q, want one line `data: {json}`", i, e)
		}
	}
}

// A reply cut by an error chunk: the client yields the chunks, then the error.
func TestStreamErrorChunk(t *testing.T) {
	srv := geminitest.NewServer(t, geminitest.Options{})
	srv.Enqueue(&geminitest.Reply{Parts: []*genai.Part{{Text: "partial answer"}}, Chunks: 2, StreamErr: geminitest.APIError(503)})
	var texts []string
	var gotErr error
	for resp, err := range srv.Client(t).Models.GenerateContentStream(t.Context(), modelName,
		[]*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}, nil) {
		if err != nil {
			gotErr = err
			break
		}
		texts = append(texts, resp.Text())
	}
	if diff := cmp.Diff([]string{"partial", " answer"}, texts); diff != "" {
		t.Errorf("chunks before the error (-want +got):\n%s", diff)
	}
	var apiErr genai.APIError
	if !errors.As(gotErr, &apiErr) {
		t.Fatalf("error = %v (%T), want genai.APIError", gotErr, gotErr)
	}
	if diff := cmp.Diff(*geminitest.APIError(503), apiErr); diff != "" {
		t.Errorf("stream error (-want +got):\n%s", diff)
	}
}

// Scripted and built-in error replies reach the genai client as the service's would, for both
// methods.
func TestErrorReplies(t *testing.T) {
	longPage := "<html>\n<body>\n" + strings.Repeat("Bad gateway. ", 40) + "\n</body>\n</html>"
	tests := []struct {
		name   string
		opts   geminitest.Options
		reply  *geminitest.Reply
		key    string
		model  string
		extra  map[string]any
		want   genai.APIError
		reject string
	}{
		{name: "400", reply: geminitest.Fail(400), want: *geminitest.APIError(400)},
		{name: "401", reply: geminitest.Fail(401), want: *geminitest.APIError(401)},
		{name: "403", reply: geminitest.Fail(403), want: *geminitest.APIError(403)},
		{name: "404", reply: geminitest.Fail(404), want: *geminitest.APIError(404)},
		{name: "429", reply: geminitest.Fail(429), want: *geminitest.APIError(429)},
		{name: "500", reply: geminitest.Fail(500), want: *geminitest.APIError(500)},
		{name: "503", reply: geminitest.Fail(503), want: *geminitest.APIError(503)},
		{name: "504", reply: geminitest.Fail(504), want: *geminitest.APIError(504)},
		{
			name: "non-JSON page", reply: &geminitest.Reply{Raw: &geminitest.RawReply{Status: 502, ContentType: "text/html", Body: longPage}},
			want: genai.APIError{Code: 502, Status: "502 Bad Gateway", Message: longPage},
		},
		{
			name: "wrong API key", opts: geminitest.Options{APIKey: "right"}, key: "wrong", reject: "api key",
			want: genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "API key not valid. Please pass a valid API key.",
				Details: []map[string]any{
					{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
						"metadata": map[string]any{"service": "generativelanguage.googleapis.com"}},
					{"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": "API key not valid. Please pass a valid API key."},
				}},
		},
		{
			name: "unknown model", opts: geminitest.Options{Models: []string{modelName}}, model: "gemini-0-nano", reject: "model",
			want: genai.APIError{Code: 404, Status: "NOT_FOUND", Message: "models/gemini-0-nano is not found for API version v1beta, " +
				"or is not supported for METHOD. Call ListModels to see the list of available models and their supported methods."},
		},
		{
			// ExtraBody makes the real client send a field the service does not know.
			name: "unknown field", extra: map[string]any{"temperatureX": 1}, reject: "json",
			want: genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: `Invalid JSON payload received. json: unknown field "temperatureX"`},
		},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "/unary", true: "/stream"}[stream], func(t *testing.T) {
				srv := geminitest.NewServer(t, tt.opts)
				if tt.reply != nil {
					srv.Enqueue(tt.reply)
				}
				cc := srv.ClientConfig()
				if tt.key != "" {
					cc.APIKey = tt.key
				}
				cc.HTTPOptions.ExtraBody = tt.extra
				client, err := genai.NewClient(t.Context(), cc)
				if err != nil {
					t.Fatal(err)
				}
				model := modelName
				if tt.model != "" {
					model = tt.model
				}
				contents := []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}
				if stream {
					for _, e := range client.Models.GenerateContentStream(t.Context(), model, contents, nil) {
						if err = e; err != nil {
							break
						}
					}
				} else {
					_, err = client.Models.GenerateContent(t.Context(), model, contents, nil)
				}
				var got genai.APIError
				if !errors.As(err, &got) {
					t.Fatalf("error = %v (%T), want genai.APIError", err, err)
				}
				want := tt.want
				want.Message = strings.ReplaceAll(want.Message, "METHOD", map[bool]string{false: "generateContent", true: "streamGenerateContent"}[stream])
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				reqs := srv.Requests()
				if len(reqs) != 1 || reqs[0].Rejected != tt.reject || reqs[0].Reported != nil {
					t.Errorf("recorded %d requests, rejected %q (want %q)", len(reqs), reqs[0].Rejected, tt.reject)
				}
			})
		}
	}
}

// A blocked prompt: promptFeedback and no candidate.
func TestBlockedPrompt(t *testing.T) {
	srv := geminitest.NewServer(t, geminitest.Options{})
	srv.Enqueue(&geminitest.Reply{BlockReason: genai.BlockedReasonSafety})
	resp, err := srv.Client(t).Models.GenerateContent(t.Context(), modelName,
		[]*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Candidates) != 0 || resp.PromptFeedback == nil || resp.PromptFeedback.BlockReason != genai.BlockedReasonSafety {
		t.Errorf("response = %+v, want a SAFETY block and no candidate", resp)
	}
}

// Only model calls are served; anything else is a Google-style 404.
func TestUnknownPaths(t *testing.T) {
	srv := geminitest.NewServer(t, geminitest.Options{})
	for _, tt := range []struct{ method, path string }{
		{http.MethodPost, "/v1beta/models/" + modelName + ":countTokens"},
		{http.MethodGet, "/v1beta/models/" + modelName + ":generateContent"},
		{http.MethodPost, "/v1/models/" + modelName + ":generateContent"},
		{http.MethodPost, "/v1beta/models/a/b:generateContent"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), tt.method, srv.URL()+tt.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error genai.APIError }
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if err != nil || res.StatusCode != 404 || body.Error.Status != "NOT_FOUND" {
			t.Errorf("%s %s: status %d, body %+v, decode error %v", tt.method, tt.path, res.StatusCode, body, err)
		}
	}
	for i, r := range srv.Requests() {
		if r.Rejected != "path" {
			t.Errorf("request %d rejected %q, want path", i, r.Rejected)
		}
	}
}
