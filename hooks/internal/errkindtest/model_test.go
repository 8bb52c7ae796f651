package errkindtest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/hooks/internal/geminitest"
)

const modelName = "gemini-2.5-flash"

func hello() []*genai.Content {
	return []*genai.Content{genai.NewContentFromText("hello", genai.RoleUser)}
}

// Model errors produced for real: the genai client against the fake returning each status.
func TestModelErrors(t *testing.T) {
	page := "<html>\n<body>\n" + strings.Repeat("Bad gateway. ", 40) + "\n</body>\n</html>"
	tests := []struct {
		name   string
		opts   geminitest.Options
		reply  *geminitest.Reply
		key    string // client API key ("" = the fake's)
		model  string // "" = modelName
		stream bool
		want   classified
	}{
		{name: "400", reply: geminitest.Fail(400), want: classified{"invalid_request", "model API 400 INVALID_ARGUMENT"}},
		{name: "401", reply: geminitest.Fail(401), want: classified{"auth", "model API 401 UNAUTHENTICATED"}},
		{name: "403", reply: geminitest.Fail(403), want: classified{"auth", "model API 403 PERMISSION_DENIED"}},
		{name: "404", reply: geminitest.Fail(404), want: classified{"not_found", "model API 404 NOT_FOUND"}},
		{name: "429", reply: geminitest.Fail(429), want: classified{"quota", "model API 429 RESOURCE_EXHAUSTED"}},
		{name: "499", reply: geminitest.Fail(499), want: classified{"canceled", "model API 499 CANCELLED"}},
		{name: "500", reply: geminitest.Fail(500), want: classified{"server", "model API 500 INTERNAL"}},
		{name: "503", reply: geminitest.Fail(503), want: classified{"server", "model API 503 UNAVAILABLE"}},
		{name: "504", reply: geminitest.Fail(504), want: classified{"timeout", "model API 504 DEADLINE_EXCEEDED"}},
		{name: "503 streamed", reply: geminitest.Fail(503), stream: true, want: classified{"server", "model API 503 UNAVAILABLE"}},
		{name: "500 mid-stream", stream: true,
			reply: &geminitest.Reply{Parts: []*genai.Part{{Text: "half an answer"}}, StreamErr: geminitest.APIError(500)},
			want:  classified{"server", "model API 500 INTERNAL"}},
		{name: "invalid API key is a 400 with reason API_KEY_INVALID", opts: geminitest.Options{APIKey: "right"}, key: "wrong",
			want: classified{"auth", "model API 400 INVALID_ARGUMENT (reason API_KEY_INVALID)"}},
		// The provider's message names the model: not echoed either.
		{name: "unknown model", opts: geminitest.Options{Models: []string{modelName}}, model: "gemini-0-nano",
			want: classified{"not_found", "model API 404 NOT_FOUND"}},
		// A proxy's page: genai leaves the HTTP status line in Status, which is no google.rpc status.
		{name: "proxy page", reply: &geminitest.Reply{Raw: &geminitest.RawReply{Status: 502, ContentType: "text/html", Body: page}},
			want: classified{"server", "model API 502"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := geminitest.NewServer(t, tt.opts)
			if tt.reply != nil {
				srv.Enqueue(tt.reply)
			}
			cc := srv.ClientConfig()
			if tt.key != "" {
				cc.APIKey = tt.key
			}
			client, err := genai.NewClient(t.Context(), cc)
			if err != nil {
				t.Fatal(err)
			}
			model := modelName
			if tt.model != "" {
				model = tt.model
			}
			if tt.stream {
				for _, e := range client.Models.GenerateContentStream(t.Context(), model, hello(), nil) {
					if err = e; err != nil {
						break
					}
				}
			} else {
				_, err = client.Models.GenerateContent(t.Context(), model, hello(), nil)
			}
			apiErr := genai.APIError{}
			if !errors.As(err, &apiErr) || apiErr.Message == "" {
				t.Fatalf("error = %v (%T), want genai.APIError with a message", err, err)
			}
			got := of(err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Of (-want +got):\n%s", diff)
			}
			if strings.Contains(got.Msg, apiErr.Message) {
				t.Errorf("message %q quotes the provider's message", got.Msg)
			}
		})
	}
}

// Through adk-go's Gemini model the error arrives wrapped ("failed to call model: …"); the kind
// and message are the same, the wrapper's text is not in the message.
func TestModelErrorThroughADK(t *testing.T) {
	srv := geminitest.NewServer(t, geminitest.Options{})
	srv.Enqueue(geminitest.Fail(429))
	var err error
	llm, err := gemini.NewModel(t.Context(), modelName, srv.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range llm.GenerateContent(t.Context(), &model.LLMRequest{Contents: hello()}, false) {
		err = e
	}
	want := classified{"quota", "model API 429 RESOURCE_EXHAUSTED"}
	if diff := cmp.Diff(want, of(err)); diff != "" {
		t.Errorf("Of(%v) (-want +got):\n%s", err, diff)
	}
}
