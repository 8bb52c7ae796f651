package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	yaml := write("c.yaml", "Limits:\n  SoftFraction: 0.6\nTruncation: {MaxBytes: 4096}\ncompaction:\n  Interval: 3\n  RetainRecentInvocations: 1\n  timeout: 45s\n  Backoff: 1m\n")
	c, err := loadConfig(yaml)
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.SoftFraction != 0.6 || c.Truncation.MaxBytes != 4096 || c.Compaction == nil || c.Compaction.Interval != 3 ||
		c.Compaction.RetainRecentInvocations != 1 || c.Compaction.Timeout != 45*time.Second || c.Compaction.Backoff != time.Minute {
		t.Errorf("decoded %+v, compaction %+v", c, c.Compaction)
	}
	js := write("c.json", `{"Models": [{"Name": "gpt-4o", "ContextWindow": 64000}], "NoFullOutputArtifacts": true}`)
	c, err = loadConfig(js)
	if err != nil || len(c.Models) != 1 || c.Models[0].ContextWindow != 64000 || !c.NoFullOutputArtifacts || c.Compaction != nil {
		t.Errorf("JSON: %+v, %v", c, err)
	}
	for _, tt := range []struct{ body, want string }{
		{"Compaction: {Intervall: 3}", `unknown field "Intervall"`},
		{"Logger: {}", "Logger cannot be set from a file"},
		{"compaction: {summarizer: llm}", "Compaction.Summarizer cannot be set from a file: use -summarizer"},
		{"Compaction: {Timeout: soon}", `Compaction.Timeout: time: invalid duration "soon"`},
		{"Limits: {SoftFraction: 2}", "SoftFraction"},
		{"- a list", "expected an object of adkctx.Config's fields"},
	} {
		_, err := loadConfig(write("bad.yaml", tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error holding %q", tt.body, err, tt.want)
		}
	}
	// The file's configuration is what the run uses: compaction off when the file leaves it out.
	td := "internal/trajectory/testdata/"
	code, out, errs := runCmd(t, "replay", "-json", "-config", js, td+"chat.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if r := decodeReport(t, out); r.Configs[0].Compaction {
		t.Errorf("configs %+v: the file leaves compaction off", r.Configs)
	}
}
