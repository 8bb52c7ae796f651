package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The example runs offline, compacts, and goes on from a SQLite file when run again.
func TestExampleRunsOffline(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	var first, second bytes.Buffer
	noEnv := func(string) string { return "" }
	if err := run(t.Context(), []string{"-turns", "30", "-window", "32768", "-db", db}, &first, noEnv); err != nil {
		t.Fatal(err)
	}
	compactions := regexp.MustCompile(`(\d+) compactions`)
	last := func(out string) string {
		m := compactions.FindAllStringSubmatch(out, -1)
		if len(m) == 0 {
			t.Fatalf("no turn lines in:\n%s", out)
		}
		return m[len(m)-1][1]
	}
	if got := last(first.String()); got == "0" {
		t.Errorf("30 turns on a 32K window did not compact:\n%s", first.String())
	}
	if err := run(t.Context(), []string{"-turns", "10", "-db", db}, &second, noEnv); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(second.String(), "model calls so far") || last(second.String()) < last(first.String()) {
		t.Errorf("the second run did not go on with the stored session:\n%s", second.String())
	}
	if err := run(t.Context(), []string{"-online"}, &second, noEnv); err == nil || !strings.Contains(err.Error(), "API_KEY") {
		t.Errorf("-online without a key: %v", err)
	}
}
