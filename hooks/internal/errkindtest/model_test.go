package errkindtest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/internal/geminitest"
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
		{name: "400", reply: geminitest.Fail(400),
			want: classified{errkind.InvalidRequest, "model API 400 INVALID_ARGUMENT: Request contains an invalid argument."}},
		{name: "401", reply: geminitest.Fail(401),
			want: classified{errkind.Auth, "model API 401 UNAUTHENTICATED: Request had invalid authentication credentials. " +
				"Expected OAuth 2 access token, login cookie or other valid authentication credential."}},
		{name: "403", reply: geminitest.Fail(403),
			want: classified{errkind.Auth, "model API 403 PERMISSION_DENIED: The caller does not have permission"}},
		{name: "404", reply: geminitest.Fail(404),
			want: classified{errkind.NotFound, "model API 404 NOT_FOUND: Requested entity was not found."}},
		{name: "429", reply: geminitest.Fail(429),
			want: classified{errkind.Quota, "model API 429 RESOURCE_EXHAUSTED: You exceeded your current quota, please check " +
				"your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."}},
		{name: "499", reply: geminitest.Fail(499), want: classified{errkind.Canceled, "model API 499 CANCELLED: The operation was cancelled."}},
		{name: "500", reply: geminitest.Fail(500),
			want: classified{errkind.Server, "model API 500 INTERNAL: An internal error has occurred. Please retry or report in " +
				"https://developers.generativeai.google/guide/troubleshooting"}},
		{name: "503", reply: geminitest.Fail(503),
			want: classified{errkind.Server, "model API 503 UNAVAILABLE: The model is overloaded. Please try again later."}},
		{name: "504", reply: geminitest.Fail(504),
			want: classified{errkind.Timeout, "model API 504 DEADLINE_EXCEEDED: Deadline expired before operation could complete."}},
		{name: "503 streamed", reply: geminitest.Fail(503), stream: true,
			want: classified{errkind.Server, "model API 503 UNAVAILABLE: The model is overloaded. Please try again later."}},
		{name: "500 mid-stream", stream: true,
			reply: &geminitest.Reply{Parts: []*genai.Part{{Text: "half an answer"}}, StreamErr: geminitest.APIError(500)},
			want: classified{errkind.Server, "model API 500 INTERNAL: An internal error has occurred. Please retry or report in " +
				"https://developers.generativeai.google/guide/troubleshooting"}},
		{name: "invalid API key is a 400 with reason API_KEY_INVALID", opts: geminitest.Options{APIKey: "right"}, key: "wrong",
			want: classified{errkind.Auth, "model API 400 INVALID_ARGUMENT (reason API_KEY_INVALID): API key not valid. Please pass a valid API key."}},
		{name: "unknown model", opts: geminitest.Options{Models: []string{modelName}}, model: "gemini-0-nano",
			want: classified{errkind.NotFound, "model API 404 NOT_FOUND: models/gemini-0-nano is not found for API version v1beta, " +
				"or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods."}},
		{name: "proxy page: one line, capped", reply: &geminitest.Reply{Raw: &geminitest.RawReply{Status: 502, ContentType: "text/html", Body: page}},
			want: classified{errkind.Server, "model API 502 502 Bad Gateway: <html> <body> Bad gateway. Bad gateway. Bad gateway. " +
				"Bad gateway. Bad gateway. Bad gateway. Bad gateway. Bad gateway. Bad gateway. Bad gateway. Bad gateway. Bad gateway. " +
				"Bad gateway. Bad gateway. B…"}},
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
			if apiErr := (genai.APIError{}); !errors.As(err, &apiErr) {
				t.Fatalf("error = %v (%T), want genai.APIError", err, err)
			}
			if diff := cmp.Diff(tt.want, of(err)); diff != "" {
				t.Errorf("Of (-want +got):\n%s", diff)
			}
			if len(tt.want.Msg) > len("model API 502 502 Bad Gateway: ")+200 {
				t.Errorf("message of %d bytes exceeds the cap", len(tt.want.Msg))
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
	want := classified{errkind.Quota, "model API 429 RESOURCE_EXHAUSTED: You exceeded your current quota, please check " +
		"your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."}
	if diff := cmp.Diff(want, of(err)); diff != "" {
		t.Errorf("Of(%v) (-want +got):\n%s", err, diff)
	}
}

// Errors the service does not send but a caller may build or receive: a pointer, a status without
// a JSON body's code, an unknown code; provider text with line breaks and control characters.
func TestModelErrorShapes(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want classified
	}{
		{"pointer", &genai.APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "quota"},
			classified{errkind.Quota, "model API 429 RESOURCE_EXHAUSTED: quota"}},
		{"status decides over code", genai.APIError{Code: 400, Status: "FAILED_PRECONDITION", Message: "User location is not supported."},
			classified{errkind.InvalidRequest, "model API 400 FAILED_PRECONDITION: User location is not supported."}},
		{"code alone", genai.APIError{Code: 418}, classified{errkind.InvalidRequest, "model API 418"}},
		{"no code", genai.APIError{Message: "?"}, classified{errkind.Unknown, "model API 0: ?"}},
		{"line breaks and controls", genai.APIError{Code: 500, Status: "INTERNAL\r\nX-Injected: 1", Message: "line one\nline two\x1b[31m\u2028three\u202e"},
			classified{errkind.Server, "model API 500 INTERNAL X-Injected: 1: line one line two [31m three"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, of(tt.err)); diff != "" {
				t.Errorf("Of (-want +got):\n%s", diff)
			}
		})
	}
}
