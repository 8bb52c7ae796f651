package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/fixture"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runCmd runs the command line and returns its exit code, stdout and stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// jsonReport is the JSON report as a test reads it.
type jsonReport struct {
	Tool    string `json:"tool"`
	Tokens  string `json:"tokens"`
	Configs []struct {
		Label      string `json:"label"`
		Window     int    `json:"window"`
		SoftLimit  int    `json:"soft_limit"`
		HardLimit  int    `json:"hard_limit"`
		Summarizer string `json:"summarizer"`
		Recall     bool   `json:"recall"`
		Compaction bool   `json:"compaction"`
	} `json:"configs"`
	Sessions []struct {
		ID      string           `json:"id"`
		Format  string           `json:"format"`
		Model   string           `json:"model"`
		Notes   []string         `json:"notes"`
		Steps   int              `json:"steps"`
		Turns   int              `json:"turns"`
		Configs []map[string]int `json:"configs"`
		Misses  [][]struct {
			Step      int    `json:"step"`
			Reference string `json:"reference"`
			Reach     string `json:"one_recall_call"`
		} `json:"missed_references"`
	} `json:"sessions"`
	Skipped []struct {
		Source string `json:"source"`
		Error  string `json:"error"`
	} `json:"skipped"`
	Totals []map[string]int `json:"totals"`
}

func decodeReport(t *testing.T, s string) jsonReport {
	t.Helper()
	var r jsonReport
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		t.Fatalf("JSON report: %v\n%.600s", err, s)
	}
	return r
}

// writeFixtures writes a shell and a service session into dir and returns their paths.
func writeFixtures(t *testing.T, dir string, shellSteps int) (string, string) {
	t.Helper()
	shell, service := filepath.Join(dir, "shell.traj.json"), filepath.Join(dir, "service.json")
	if err := os.WriteFile(shell, fixture.Shell(11, shellSteps), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(service, fixture.Service(11, 9), 0o644); err != nil {
		t.Fatal(err)
	}
	return shell, service
}

func TestReplayEveryFormat(t *testing.T) {
	td := "internal/trajectory/testdata/"
	code, out, errs := runCmd(t, "replay", "-json", "-window", "8192,16384",
		td+"chat.json", td+"messages.json", td+"tau.json", td+"text.traj.json", td+"toolcalls.traj.json", td+"atif.json", td+"adk-session.json", td+"claude-code.jsonl", td+"anthropic.json", td+"codex.jsonl", td+"gemini-cli.json", td+"gemini-request.json", td+"responses.json")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q (no progress bar when stderr is not a terminal)", code, errs)
	}
	r := decodeReport(t, out)
	var got []string
	for _, s := range r.Sessions {
		got = append(got, s.Format)
		if len(s.Configs) != 2 || s.Configs[0]["steps"] != s.Steps || s.Steps == 0 {
			t.Errorf("%s: %d steps, configs %v", s.ID, s.Steps, s.Configs)
		}
		for i, f := range s.Configs {
			// Every step sent a request in each arm: nothing here comes near a limit.
			if f["prompt_tokens_adkctx"] == 0 || f["prompt_tokens_no_adkctx"] == 0 || f["requests_refused"] != 0 || f["steps_not_replayed"] != 0 {
				t.Errorf("%s config %d: %v", s.ID, i, f)
			}
		}
	}
	want := "openai-chat openai-chat tau-bench tau-bench mini-swe-agent-text mini-swe-agent-toolcalls atif adk-session-json claude-code anthropic-messages codex gemini-cli genai-contents openai-responses"
	if strings.Join(got, " ") != want {
		t.Errorf("formats %q, want %q", strings.Join(got, " "), want)
	}
	if len(r.Totals) != 2 || r.Totals[0]["sessions"] != 14 || r.Configs[1].Window != 16384 || !r.Configs[0].Recall {
		t.Errorf("totals %v configs %+v", r.Totals, r.Configs)
	}
}

// TestReplayIsDeterministic: the same sessions replayed twice give the same report, byte for
// byte, as text, JSON and HTML.
func TestReplayIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	shell, service := writeFixtures(t, dir, 50)
	var texts, jsons, htmls []string
	for i := range 2 {
		html := filepath.Join(dir, "r"+string(rune('0'+i))+".html")
		code, out, errs := runCmd(t, "replay", "-window", "8192", "-html", html, shell, service)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		texts = append(texts, out)
		b, err := os.ReadFile(html)
		if err != nil {
			t.Fatal(err)
		}
		htmls = append(htmls, string(b))
		code, out, errs = runCmd(t, "replay", "-json", "-window", "8192", shell, service)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		jsons = append(jsons, out)
	}
	for name, pair := range map[string][]string{"text": texts, "json": jsons, "html": htmls} {
		if pair[0] != pair[1] {
			t.Errorf("%s reports differ between two replays", name)
		}
	}
	// The replay did something worth repeating: compactions and misses at 8K. (No trims: the
	// compacted view keeps these sessions under the hard limit, as it should.)
	r := decodeReport(t, jsons[0])
	tot := r.Totals[0]
	if tot["compactions"] == 0 || tot["references"] == tot["references_kept_adkctx"] {
		t.Errorf("totals %v: want compactions and misses", tot)
	}
}

func TestMalformedSessionFailsTheRun(t *testing.T) {
	dir := t.TempDir()
	shell, _ := writeFixtures(t, dir, 10)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`[{"role": "user", "content": "hi"}, {"role": "robot"}]`), 0o644)
	html := filepath.Join(dir, "r.html")
	code, out, errs := runCmd(t, "replay", "-html", html, shell, bad)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q: want 1 and no report", code, out)
	}
	want := bad + `: message 1.role: expected "system", "developer", "user", "assistant", "tool" or "function", got "robot"`
	if !strings.Contains(errs, want) {
		t.Errorf("stderr %q, want it to hold %q", errs, want)
	}
	if _, err := os.Stat(html); !os.IsNotExist(err) {
		t.Errorf("an HTML report was left: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".r.html.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// With -skip-bad the run goes on and the report lists the file as skipped.
	code, out, errs = runCmd(t, "replay", "-json", "-skip-bad", shell, bad)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := decodeReport(t, out)
	if len(r.Sessions) != 1 || len(r.Skipped) != 1 || r.Skipped[0].Source != bad+" (message 1.role on)" || !strings.Contains(r.Skipped[0].Error, `got "robot"`) {
		t.Errorf("sessions %d, skipped %+v", len(r.Sessions), r.Skipped)
	}
	code, out, _ = runCmd(t, "replay", "-skip-bad", shell, bad)
	if code != 0 || !strings.Contains(out, "Skipped (-skip-bad), not in the figures above:\n  "+bad) {
		t.Errorf("exit %d, text report without the skipped file:\n%s", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"replay"}, "no sessions"},
		{[]string{"replay", "-window", "big", "x.json"}, `-window "big"`},
		{[]string{"replay", "-summarizer", "gpt", "x.json"}, `-summarizer "gpt"`},
		{[]string{"replay", "-recall", "maybe", "x.json"}, `-recall "maybe"`},
		{[]string{"replay", "-tokens", "words", "x.json"}, `unknown token counter "words"`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		code, _, errs := runCmd(t, tt.args...)
		if code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errs, tt.want)
		}
	}
}
