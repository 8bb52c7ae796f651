package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/example/internal/geminitest"
)

const summaryCanary = "Goal: find why the nightly build fails (fake summary)."

// isSummarization reports whether a request to the fake is the LLM summarizer's: its last
// content is the summary instruction after the agent's conversation, or a transcript.
func isSummarization(r *geminitest.Request) bool {
	if len(r.Contents) == 0 {
		return false
	}
	for _, p := range r.Contents[len(r.Contents)-1].Parts {
		if strings.Contains(p.Text, "Write a summary of the whole conversation above") ||
			strings.Contains(p.Text, "You are maintaining the working memory of a long conversation") {
			return true
		}
	}
	return false
}

// logEntries reads the zap JSON-lines log.
func logEntries(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %v", err)
		}
		out = append(out, m)
	}
	return out
}

// With an API key the example talks to adk-go's Gemini model (here the genai client against a
// loopback fake of the Gemini REST API, named by GOOGLE_GEMINI_BASE_URL), and that model writes
// the summaries (an LLMSummarizer on the agent's model); when it fails, the extractive
// summarizer takes over. Background compactions drain before the program exits.
func TestGeminiPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	const key = "test-key-7"
	tests := []struct {
		name           string
		summary        *geminitest.Reply
		wantSummarizer string
		wantKind       string // primary_error_kind of the compaction log entry
	}{
		{"summarizer answers", geminitest.Text(summaryCanary), "llm:gemini-2.5-flash", ""},
		{"summarizer over quota", geminitest.Fail(429), "extractive", "quota"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := geminitest.NewServer(t, geminitest.Options{APIKey: key, Models: []string{"gemini-2.5-flash"},
				Handler: func(r *geminitest.Request) *geminitest.Reply {
					if isSummarization(r) {
						return tc.summary
					}
					// Answers long enough that a summary (the extractive ledger included) is
					// smaller than what it replaces.
					return geminitest.Text("I would start with the CI log's tail and the rounding in invoice.go. " +
						strings.Repeat("The failing step converts amounts before the currency is known, so totals drift by a cent. ", 8))
				}})
			env := func(k string) string {
				switch k {
				case "GEMINI_API_KEY":
					return key
				case "GOOGLE_GEMINI_BASE_URL":
					return srv.URL()
				}
				return ""
			}
			dir := t.TempDir()
			db, logPath := filepath.Join(dir, "s.db"), filepath.Join(dir, "l.jsonl")
			var in strings.Builder
			const turns = 8 // with -compact-every 5, a sliding window compacts after 5 invocations beyond the 2 kept raw
			for i := range turns {
				fmt.Fprintf(&in, "Question %d: why did the nightly build fail?\n", i+1)
			}
			in.WriteString("/tokens\n/quit\n")
			code, out, stderr := runMain(t, in.String(), env, "-db", db, "-log", logPath, "-session", "g1", "-compact-every", "5")
			if code != 0 {
				t.Fatalf("exit code %d, stderr %s", code, stderr)
			}
			for _, want := range []string{`Gemini model "gemini-2.5-flash"`, "rounding in invoice.go", "8 user turns, 8 model calls", "limits for gemini-2.5-flash: window 1,048,576"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}

			var agentCalls, summaryCalls int
			for _, r := range srv.Requests() {
				if r.Rejected != "" || r.APIKey != key {
					t.Errorf("request refused (%q) or sent with key %q", r.Rejected, r.APIKey)
				}
				if isSummarization(r) {
					summaryCalls++
				} else {
					agentCalls++
				}
			}
			if agentCalls != turns || summaryCalls == 0 {
				t.Errorf("requests to the fake: %d agent, %d summarizer; want %d and ≥ 1", agentCalls, summaryCalls, turns)
			}

			// The marker the background compaction stored before the exit, and its log entry.
			var got []string
			for _, ev := range reopen(t, db, "g1") {
				if m := readMarker(ev); m != nil {
					got = append(got, m.Summarizer)
					// A model's summary stores its own text; the extractive one stores the
					// ledger only (a view renders it).
					text := ""
					if m.CompactedContent != nil {
						text = m.CompactedContent.Parts[0].Text
					}
					if (tc.wantKind == "") != strings.Contains(text, summaryCanary) {
						t.Errorf("summary %q: model's summary expected %v", text, tc.wantKind == "")
					}
				}
			}
			if diff := cmp.Diff([]string{tc.wantSummarizer}, got); diff != "" {
				t.Errorf("markers' summarizers (-want +got):\n%s", diff)
				for _, e := range logEntries(t, logPath) {
					if e["msg"] == "compaction" {
						t.Logf("compaction: %v", e)
					}
				}
			}
			var kinds []string
			for _, e := range logEntries(t, logPath) {
				if e["msg"] == "compaction" && e["outcome"] == "compacted" {
					kind, _ := e["primary_error_kind"].(string)
					kinds = append(kinds, kind)
					if fallback := e["fallback_used"] == true; fallback != (tc.wantKind != "") {
						t.Errorf("fallback_used = %v", e["fallback_used"])
					}
				}
			}
			if diff := cmp.Diff([]string{tc.wantKind}, kinds); diff != "" {
				t.Errorf("compaction log entries' primary_error_kind (-want +got):\n%s", diff)
			}
			assertClosed(t, db)
		})
	}
}
