package geminitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"unicode/utf8"

	"google.golang.org/genai"
)

// DefaultAPIKey is the key the client helpers send when Options.APIKey is empty.
const DefaultAPIKey = "test-api-key"

// maxBody bounds a request body, well above anything a test sends.
const maxBody = 64 << 20

// Options configures NewServer. The zero value serves every model name, accepts any API key and
// answers "ok" once the queue is empty.
type Options struct {
	// APIKey, when set, is the only key accepted; another key is refused as the service does
	// (400 INVALID_ARGUMENT, reason API_KEY_INVALID). A request without a key is always refused
	// (403 PERMISSION_DENIED).
	APIKey string
	// Models, when set, are the model names served (without "models/"); another name is refused
	// with 404 NOT_FOUND.
	Models []string
	// PromptTokens gives the promptTokenCount reported for a request. Default: DefaultPromptTokens.
	PromptTokens func(*Request) int
	// Handler answers requests once the queue is empty. Default: Text("ok").
	Handler func(*Request) *Reply
}

// Request is one request as the fake received it.
type Request struct {
	// Model is the model named in the path, without "models/"; Stream is set for
	// streamGenerateContent.
	Model  string
	Stream bool
	// APIKey is the x-goog-api-key header (or the key query parameter).
	APIKey string
	Header http.Header
	// Body is the request body as received.
	Body []byte

	// The decoded body.
	Contents          []*genai.Content
	SystemInstruction *genai.Content
	Tools             []*genai.Tool
	ToolConfig        *genai.ToolConfig
	SafetySettings    []*genai.SafetySetting
	GenerationConfig  *genai.GenerationConfig
	CachedContent     string
	ServiceTier       string

	// Rejected is why the fake answered the request itself with an error (path, body, key or
	// model); "" when the script answered it.
	Rejected string
	// Reported is the usage the fake reported: the response's usageMetadata, the final event's
	// when streaming. Nil when the reply was an error.
	Reported *genai.GenerateContentResponseUsageMetadata
}

// DefaultPromptTokens is a deterministic stand-in for a tokenizer: ⌈bytes ÷ 4⌉ of the JSON of the
// request's contents, system instruction and tools.
func DefaultPromptTokens(r *Request) int {
	n := 0
	for _, v := range []any{r.Contents, r.SystemInstruction, r.Tools} {
		b, _ := json.Marshal(v)
		if string(b) != "null" {
			n += len(b)
		}
	}
	return (n + 3) / 4
}

// Server is the fake. Create it with NewServer; it is closed when the test ends.
type Server struct {
	t    testing.TB
	opts Options
	srv  *httptest.Server
	done chan struct{} // closed by Close: stalled replies return

	closeOnce sync.Once

	mu      sync.Mutex
	queue   []*Reply
	records []*Request
	seq     int // requests received
}

// NewServer starts a fake on a loopback port. It is closed by t's cleanup.
func NewServer(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.PromptTokens == nil {
		opts.PromptTokens = DefaultPromptTokens
	}
	s := &Server{t: t, opts: opts, done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(s.Close)
	return s
}

// URL is the server's base URL (http://127.0.0.1:port).
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server; stalled replies end first.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Enqueue appends replies to the queue: each request takes the next one, before Options.Handler.
func (s *Server) Enqueue(replies ...*Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Requests returns every request received so far, oldest first, each recorded before its reply
// was sent. The records must not be modified.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records)
}

// ClientConfig returns a genai client configuration for the fake: the Gemini API backend, the
// server's base URL and HTTP client, and Options.APIKey (DefaultAPIKey when empty).
func (s *Server) ClientConfig() *genai.ClientConfig {
	key := s.opts.APIKey
	if key == "" {
		key = DefaultAPIKey
	}
	return &genai.ClientConfig{
		APIKey:      key,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: s.srv.URL},
		HTTPClient:  s.srv.Client(),
	}
}

// Client returns a genai client for the fake (see ClientConfig).
func (s *Server) Client(t testing.TB) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), s.ClientConfig())
	if err != nil {
		t.Fatalf("genai.NewClient: %v", err)
	}
	return c
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	rec, body, why, apiErr := s.accept(r)
	if apiErr != nil {
		s.reject(w, rec, why, apiErr)
		return
	}
	s.reply(w, r, rec, body, seq)
}

// accept reads and checks r as the Gemini REST API does: the request it records, its body, or
// what is wrong with it (a short reason for the record, and the API's error).
func (s *Server) accept(r *http.Request) (rec *Request, body []byte, why string, apiErr *genai.APIError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	rec = &Request{Header: r.Header.Clone(), Body: body, APIKey: r.Header.Get("x-goog-api-key")}
	if rec.APIKey == "" {
		rec.APIKey = r.URL.Query().Get("key")
	}
	if err != nil || len(body) > maxBody {
		return rec, nil, "body", errInvalidArgument("Request payload size exceeds the limit or could not be read.")
	}
	m, method, ok := parsePath(r.URL.Path)
	if !ok || r.Method != http.MethodPost {
		return rec, nil, "path", errNoSuchMethod(r.URL.Path)
	}
	rec.Model, rec.Stream = m, method == methodStream
	if rec.Stream && r.URL.Query().Get("alt") != "sse" {
		return rec, nil, "alt", errInvalidArgument("geminitest: streamGenerateContent is served with alt=sse only")
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return rec, nil, "content-type", errInvalidArgument("Invalid Content-Type %q.", r.Header.Get("Content-Type"))
	}
	switch {
	case rec.APIKey == "":
		return rec, nil, "no api key", errMissingKey()
	case s.opts.APIKey != "" && rec.APIKey != s.opts.APIKey:
		return rec, nil, "api key", errInvalidKey()
	}
	wr, err := decodeBody(body)
	if err != nil {
		return rec, nil, "json", errInvalidArgument("Invalid JSON payload received. %v", err)
	}
	fill(rec, wr)
	if len(s.opts.Models) > 0 && !slices.Contains(s.opts.Models, m) {
		return rec, nil, "model", errUnknownModel(m, method)
	}
	return rec, body, "", nil
}

// reply answers an accepted request with the next scripted reply.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, rec *Request, body []byte, seq int) {
	reply := s.next(rec, body)
	if err := reply.validate(); err != nil {
		s.t.Errorf("geminitest: invalid reply to request %d: %v", seq, err)
		s.reject(w, rec, "invalid reply", &genai.APIError{Code: http.StatusInternalServerError, Status: "INTERNAL",
			Message: "geminitest: invalid scripted reply: " + err.Error()})
		return
	}
	switch {
	case reply.Err != nil:
		s.record(rec)
		writeError(w, reply.Err)
	case reply.Raw != nil:
		s.record(rec)
		w.Header().Set("Content-Type", reply.Raw.ContentType)
		w.WriteHeader(reply.Raw.Status)
		_, _ = io.WriteString(w, reply.Raw.Body)
	case reply.Hangup:
		s.record(rec)
		hangup(w)
	case reply.Stall:
		s.record(rec)
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case rec.Stream:
		s.stream(w, rec, reply, seq)
	default:
		resp := s.response(rec, reply, seq)
		rec.Reported = resp.UsageMetadata
		s.record(rec)
		b, err := json.MarshalIndent(resp, "", "  ")
		if err != nil {
			s.t.Errorf("geminitest: encode response: %v", err)
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(b)
	}
}

// next takes the reply for rec: the queue's head, else the handler's, else "ok". The handler
// gets its own decoded copy of the request, so what it changes is not recorded.
func (s *Server) next(rec *Request, body []byte) *Reply {
	s.mu.Lock()
	var reply *Reply
	if len(s.queue) > 0 {
		reply, s.queue = s.queue[0], s.queue[1:]
	}
	s.mu.Unlock()
	if reply == nil && s.opts.Handler != nil {
		cp := *rec
		cp.Header = rec.Header.Clone()
		if wr, err := decodeBody(body); err == nil {
			fill(&cp, wr)
		}
		reply = s.opts.Handler(&cp)
	}
	if reply == nil {
		reply = Text("ok")
	}
	return reply
}

func fill(rec *Request, wr *wireRequest) {
	rec.Contents = wr.Contents
	rec.SystemInstruction = wr.SystemInstruction
	rec.Tools = wr.Tools
	rec.ToolConfig = wr.ToolConfig
	rec.SafetySettings = wr.SafetySettings
	rec.GenerationConfig = wr.GenerationConfig
	rec.CachedContent = wr.CachedContent
	rec.ServiceTier = wr.ServiceTier
}

func (s *Server) record(rec *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, rec)
}

func (s *Server) reject(w http.ResponseWriter, rec *Request, why string, e *genai.APIError) {
	rec.Rejected = why
	s.record(rec)
	writeError(w, e)
}

// writeError writes a Google API error body, indented as the service does.
func writeError(w http.ResponseWriter, e *genai.APIError) {
	b, _ := json.MarshalIndent(wireError{Error: e}, "", "  ")
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Code)
	_, _ = w.Write(b)
}

// hangup resets the connection: SO_LINGER 0 makes the close send a RST.
func hangup(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// usage is the usage reported for reply: Reply.Usage, or derived from the request and the parts.
func (s *Server) usage(rec *Request, reply *Reply) *genai.GenerateContentResponseUsageMetadata {
	if reply.Usage != nil {
		u := *reply.Usage
		return &u
	}
	prompt := int32(s.opts.PromptTokens(rec))
	out, thoughts := partTokens(reply.Parts)
	u := &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount:     prompt,
		CandidatesTokenCount: out,
		ThoughtsTokenCount:   thoughts,
		TotalTokenCount:      prompt + out + thoughts,
		PromptTokensDetails:  []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: prompt}},
	}
	return u
}

// partTokens is ⌈bytes ÷ 4⌉ of the non-thought and of the thought parts' JSON.
func partTokens(parts []*genai.Part) (out, thoughts int32) {
	var o, th int
	for _, p := range parts {
		if p == nil {
			continue
		}
		n := len(p.Text)
		if p.Text == "" {
			b, _ := json.Marshal(p)
			n = len(b)
		}
		if p.Thought {
			th += n
		} else {
			o += n
		}
	}
	return int32((o + 3) / 4), int32((th + 3) / 4)
}

// response is the whole reply of generateContent.
func (s *Server) response(rec *Request, reply *Reply, seq int) *wireResponse {
	resp := &wireResponse{UsageMetadata: s.usage(rec, reply), ModelVersion: reply.ModelVersion, ResponseID: reply.ResponseID}
	if resp.ModelVersion == "" {
		resp.ModelVersion = rec.Model
	}
	if resp.ResponseID == "" {
		resp.ResponseID = fmt.Sprintf("fake-%d", seq)
	}
	if reply.BlockReason != "" {
		resp.PromptFeedback = &genai.GenerateContentResponsePromptFeedback{BlockReason: reply.BlockReason}
		return resp
	}
	finish := reply.FinishReason
	if finish == "" {
		finish = genai.FinishReasonStop
	}
	resp.Candidates = []wireCandidate{{
		Content:      &genai.Content{Role: genai.RoleModel, Parts: reply.Parts},
		FinishReason: finish,
	}}
	return resp
}

// stream answers streamGenerateContent: the content split into events (text parts in Chunks
// pieces, other parts whole), each with the usage so far; the last with the finish reason and
// the full usage — or, with StreamErr, an error chunk in its place.
func (s *Server) stream(w http.ResponseWriter, rec *Request, reply *Reply, seq int) {
	final := s.response(rec, reply, seq)
	rec.Reported = final.UsageMetadata
	if reply.StreamErr != nil {
		rec.Reported = nil
	}
	s.record(rec)

	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			s.t.Errorf("geminitest: encode event: %v", err)
			return
		}
		// The service frames events with CRLF; the genai client accepts LF too.
		_, _ = fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		_ = rc.Flush()
	}
	if len(final.Candidates) == 0 {
		send(final)
		return
	}
	pieces := splitParts(reply.Parts, reply.Chunks)
	var soFar []*genai.Part
	for i, p := range pieces {
		soFar = append(soFar, p)
		if i == len(pieces)-1 && reply.StreamErr == nil {
			break // the final event carries the last piece
		}
		u := *final.UsageMetadata
		u.CandidatesTokenCount, u.ThoughtsTokenCount = partTokens(soFar)
		if reply.Usage == nil {
			u.TotalTokenCount = u.PromptTokenCount + u.CandidatesTokenCount + u.ThoughtsTokenCount
		}
		send(&wireResponse{
			Candidates:    []wireCandidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{p}}}},
			UsageMetadata: &u, ModelVersion: final.ModelVersion, ResponseID: final.ResponseID,
		})
	}
	if reply.StreamErr != nil {
		// As the genai client parses a failure mid-stream: a bare error object as the event.
		b, _ := json.Marshal(wireError{Error: reply.StreamErr})
		_, _ = fmt.Fprintf(w, "%s\r\n\r\n", b)
		_ = rc.Flush()
		return
	}
	last := final.Candidates[0]
	last.Content = &genai.Content{Role: genai.RoleModel}
	if len(pieces) > 0 {
		last.Content.Parts = []*genai.Part{pieces[len(pieces)-1]}
	}
	final.Candidates = []wireCandidate{last}
	send(final)
}

// splitParts splits each text part into up to chunks pieces (default 3) of whole characters;
// other parts stay whole.
func splitParts(parts []*genai.Part, chunks int) []*genai.Part {
	if chunks == 0 {
		chunks = 3
	}
	var out []*genai.Part
	for _, p := range parts {
		if p == nil || p.Text == "" {
			out = append(out, p)
			continue
		}
		pieces := splitText(p.Text, chunks)
		for i, piece := range pieces {
			cp := *p
			cp.Text = piece
			if i < len(pieces)-1 {
				cp.ThoughtSignature = nil // the signature travels with the part's last piece
			}
			out = append(out, &cp)
		}
	}
	return out
}

// splitText cuts s into at most n pieces of about equal length, at character boundaries.
func splitText(s string, n int) []string {
	runes := utf8.RuneCountInString(s)
	n = max(min(n, runes), 1)
	out := make([]string, 0, n)
	per := runes / n
	for range n - 1 {
		cut, count := 0, 0
		for cut < len(s) && count < per {
			_, size := utf8.DecodeRuneInString(s[cut:])
			cut += size
			count++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}
