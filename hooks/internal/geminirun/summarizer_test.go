package geminirun_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/hooks/internal/geminitest"
	"github.com/adkctx/adkctx/hooks/internal/scenario"
)

// compaction.LLMSummarizer over the real Gemini model: the prompt it sends, the summary and usage
// it returns.
func TestLLMSummarizer(t *testing.T) {
	srv := geminitest.NewServer(t, geminitest.Options{})
	const summary = "Goal: plan a walk in Paris. Done: the forecast was checked (sunny, 21 °C)."
	srv.Enqueue(geminitest.Text(summary))
	llm := geminiModel(t, srv, modelName)
	sum, err := summarize(t, llm, "What is the weather in Paris?", "Sunny, 21 °C.")
	if err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model calls = %d, want 1", len(reqs))
	}
	r := reqs[0]
	got := struct {
		Summary, Summarizer string
		Prompt, Output      int
	}{sum.Content.Parts[0].Text, sum.Summarizer, sum.Usage.Prompt, sum.Usage.Output}
	want := got
	want.Summary, want.Summarizer = summary, summarizerName(llm)
	want.Prompt, want.Output = int(r.Reported.PromptTokenCount), int(r.Reported.CandidatesTokenCount)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	// One user content holding the template and the transcript; no tools, no system instruction,
	// the output cap; not streamed.
	if r.Stream || len(r.Contents) != 1 || r.Contents[0].Role != genai.RoleUser || r.SystemInstruction != nil || len(r.Tools) != 0 {
		t.Fatalf("summarizer request: stream %v, contents %v, system %v, tools %d", r.Stream, describeAll(r.Contents), r.SystemInstruction, len(r.Tools))
	}
	prompt := r.Contents[0].Parts[0].Text
	for _, line := range []string{"[user]: What is the weather in Paris?", "[model]: Sunny, 21 °C."} {
		if !strings.Contains(prompt, line) {
			t.Errorf("prompt lacks transcript line %q:\n%s", line, prompt)
		}
	}
	if r.GenerationConfig == nil || r.GenerationConfig.MaxOutputTokens != 2048 {
		t.Errorf("generationConfig = %+v, want maxOutputTokens 2048", r.GenerationConfig)
	}
}

// A failed summarizer call: the genai error, wrapped by the summarizer, keeps its kind.
func TestLLMSummarizerErrors(t *testing.T) {
	tests := []struct {
		code int
		want string
	}{
		{429, "quota"},
		{401, "auth"},
		{403, "auth"},
		{404, "not_found"},
		{500, "server"},
		{503, "server"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			srv := geminitest.NewServer(t, geminitest.Options{})
			srv.Enqueue(geminitest.Fail(tt.code))
			_, err := summarize(t, geminiModel(t, srv, modelName), "question", "answer")
			var apiErr genai.APIError
			if !isSummarizerError(err) || !errors.As(err, &apiErr) || apiErr.Code != tt.code {
				t.Fatalf("error = %v (%T), want a summarizer error wrapping genai.APIError %d", err, err, tt.code)
			}
			if kind, _ := glue.ErrorKind(err); kind != tt.want {
				t.Errorf("kind = %q, want %q", kind, tt.want)
			}
		})
	}
}

// Replies the summarizer refuses: cut off, empty, thoughts only, blocked.
func TestLLMSummarizerRejects(t *testing.T) {
	tests := []struct {
		name  string
		reply *geminitest.Reply
		want  string
	}{
		{"cut off", &geminitest.Reply{Parts: []*genai.Part{{Text: "Goal: plan a"}}, FinishReason: genai.FinishReasonMaxTokens}, "finish_reason"},
		{"empty", &geminitest.Reply{Parts: []*genai.Part{{Text: "  "}}}, "empty"},
		{"thoughts only", &geminitest.Reply{Parts: []*genai.Part{{Text: "Let me think.", Thought: true}}}, "thought_only"},
		// adk-go's Gemini model answers a blocked prompt (no candidate) with a plain "empty response"
		// error when not streaming: a failure, not a reply to reject.
		{"blocked", &geminitest.Reply{BlockReason: genai.BlockedReasonSafety}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := geminitest.NewServer(t, geminitest.Options{})
			srv.Enqueue(tt.reply)
			_, err := summarize(t, geminiModel(t, srv, modelName), "question", "answer")
			if !isSummarizerError(err) {
				t.Fatalf("error = %v (%T), want a summarizer error", err, err)
			}
			if got := summaryRejection(err); got != tt.want {
				t.Errorf("rejection = %q (error %v), want %q", got, err, tt.want)
			}
		})
	}
}

// Compaction through adkctx's plugin with the LLM summarizer on the same Gemini model: a summary
// from the model lands; a failed summarizer call falls back to the extractive summary, and the
// compaction still lands; with no fallback nothing lands and the turn still succeeds.
func TestCompactionWithGeminiSummarizer(t *testing.T) {
	const canary = "okapi-canary-5521"
	const summary = "Goal: plan walks in Paris. Done: three forecasts checked."
	tests := []struct {
		name         string
		reply        *geminitest.Reply // the summarizer call's reply
		noFallback   bool
		wantOutcome  string
		wantMarker   string // the marker's summarizer, "" for no marker
		wantFallback bool
		wantKind     string // the primary error's kind when the fallback was used
	}{
		{name: "summary", reply: geminitest.Text(summary), wantOutcome: outcomeCompacted, wantMarker: "llm"},
		{name: "429 falls back", reply: geminitest.Fail(429), wantOutcome: outcomeCompacted, wantMarker: "extractive", wantFallback: true, wantKind: "quota"},
		{name: "401 falls back", reply: geminitest.Fail(401), wantOutcome: outcomeCompacted, wantMarker: "extractive", wantFallback: true, wantKind: "auth"},
		{name: "404 falls back", reply: geminitest.Fail(404), wantOutcome: outcomeCompacted, wantMarker: "extractive", wantFallback: true, wantKind: "not_found"},
		{name: "500 falls back", reply: geminitest.Fail(500), wantOutcome: outcomeCompacted, wantMarker: "extractive", wantFallback: true, wantKind: "server"},
		{name: "cut off falls back", reply: &geminitest.Reply{Parts: []*genai.Part{{Text: "Goal:"}}, FinishReason: genai.FinishReasonMaxTokens},
			wantOutcome: outcomeCompacted, wantMarker: "extractive", wantFallback: true, wantKind: "invalid_reply"},
		{name: "503 without fallback", reply: geminitest.Fail(503), noFallback: true, wantOutcome: outcomeFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := geminitest.NewServer(t, geminitest.Options{Handler: func(r *geminitest.Request) *geminitest.Reply {
				if isSummarizerRequest(r) {
					return tt.reply
				}
				return geminitest.Text("Noted.")
			}})
			llm := geminiModel(t, srv, modelName)
			w := wire(t, llm, &compactionOptions{interval: 2, summarizer: llm, noFallback: tt.noFallback})
			// θ = 2 and the two newest invocations stay raw: the fourth invocation compacts.
			for i := range 4 {
				if _, err := run(t, w.runner, "s1", fmt.Sprintf("Walk %d: %s, what is the forecast along the river, street by street? %s",
					i, canary, strings.Repeat("Consider the bridges and the parks on the way. ", 12)), agentModeNone); err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
			}

			var summarizerCalls []*geminitest.Request
			var agent *geminitest.Request // the agent's request before the summarizer's
			for _, r := range srv.Requests() {
				if !isSummarizerRequest(r) {
					agent = r
					continue
				}
				summarizerCalls = append(summarizerCalls, r)
				// On the wire, the summarizer's request extends the agent's last one: the same
				// system instruction, tools and first contents, so Gemini's cache serves them.
				if p := wirePrefixProblem(agent, r); p != "" {
					t.Errorf("summarizer request %d: %s", len(summarizerCalls), p)
				}
			}
			if len(summarizerCalls) == 0 {
				t.Fatal("the summarizer never called the model")
			}
			// One attempt per invocation: the fourth summarizes.
			wantOutcomes := []string{outcomeNothingToDo, outcomeNothingToDo, outcomeNothingToDo, tt.wantOutcome}
			var outcomes []string
			var attempts []map[string]any // the attempts that summarized
			for _, e := range w.compactionEntries() {
				outcomes = append(outcomes, e["outcome"].(string))
				if e["outcome"] != outcomeNothingToDo {
					attempts = append(attempts, e)
				}
			}
			if diff := cmp.Diff(wantOutcomes, outcomes); diff != "" {
				t.Fatalf("compaction outcomes (-want +got):\n%s", diff)
			}
			if len(summarizerCalls) != len(attempts) {
				t.Errorf("summarizer calls = %d, want one per attempt (%d)", len(summarizerCalls), len(attempts))
			}
			attempt := attempts[0]
			if shared, _ := attempt["summarizer_shared_prefix"].(bool); tt.wantMarker == "llm" && !shared {
				t.Errorf("compaction attempt = %v, want the summary written from the shared prefix", attempt)
			}
			if attempt["fallback_used"] != tt.wantFallback {
				t.Errorf("compaction attempt = %v, want fallback %v", attempt, tt.wantFallback)
			}
			if kind, _ := attempt["primary_error_kind"].(string); tt.wantFallback && kind != tt.wantKind {
				t.Errorf("primary error kind logged = %q (error %q), want %q", kind, attempt["primary_error"], tt.wantKind)
			}

			markers := w.markers(t, "s1")
			if tt.wantMarker == "" {
				if len(markers) != 0 {
					t.Errorf("markers = %d, want none", len(markers))
				}
			} else {
				if len(markers) == 0 {
					t.Fatalf("no marker stored; compaction outcomes %v", outcomes)
				}
				m := markers[0]
				want := tt.wantMarker
				if want == "llm" {
					want = summarizerName(llm)
				}
				if m.Summarizer != want {
					t.Errorf("marker summarizer = %q, want %q", m.Summarizer, want)
				}
				if want == summarizerName(llm) && !strings.HasPrefix(m.CompactedContent.Parts[0].Text, summary) {
					t.Errorf("marker summary = %q, want the model's", m.CompactedContent.Parts[0].Text)
				}
				// The agent's next request carries the summary.
				if _, err := run(t, w.runner, "s1", "And tomorrow?", agentModeNone); err != nil {
					t.Fatal(err)
				}
				var last *geminitest.Request
				for _, r := range srv.Requests() {
					if !isSummarizerRequest(r) {
						last = r
					}
				}
				if !strings.HasPrefix(last.Contents[0].Parts[0].Text, summaryHeader) {
					t.Errorf("last agent request does not start with the summary: %v", describeAll(last.Contents))
				}
			}
			assertNoText(t, w.logs, canary)
		})
	}
}

// isSummarizerRequest reports whether r is an LLMSummarizer's request: the agent's conversation
// with the summary instruction appended, or a transcript.
func isSummarizerRequest(r *geminitest.Request) bool {
	if len(r.Contents) == 0 {
		return false
	}
	var text string
	for _, p := range r.Contents[len(r.Contents)-1].Parts {
		text += p.Text
	}
	return strings.Contains(text, "Write a summary of the whole conversation above") || strings.Contains(text, "You are maintaining the working memory")
}

// wirePrefixProblem says how a summarizer request, as Gemini received it, fails to extend the
// agent's request before it with one content ("" when it does).
func wirePrefixProblem(agent, summary *geminitest.Request) string {
	if agent == nil {
		return "no agent request before it"
	}
	prompt := func(r *geminitest.Request) scenario.Prompt {
		return scenario.Prompt{System: r.SystemInstruction, Tools: r.Tools, Contents: r.Contents}
	}
	return scenario.ExtensionProblem(prompt(agent), prompt(summary))
}
