package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/adk/session"

	"github.com/adkctx/adkctx/compaction"
)

// A scrape names the example's service (not unknown_service), and shows the series of fixed
// attribute sets at 0 before any turn: an alert on failed compactions has a series to watch.
func TestMetricsNameTheServiceAndStartAtZero(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	m, err := serveMetrics("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	h, _, err := wire(agentSetup{LLM: offlineModel{}, Sessions: session.InMemoryService(), WorkDir: t.TempDir(),
		Summarizer: &compaction.ExtractiveSummarizer{}, Meter: m.Provider})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	code, body := get(t, m.URL)
	if code != http.StatusOK {
		t.Fatalf("scrape: HTTP %d\n%s", code, body)
	}
	for _, want := range []string{
		`target_info{service_name="adkctx-example"`,
		`adkctx_compaction_attempts_total{adkctx_compaction_outcome="failed",adkctx_compaction_trigger="tokens",`,
		`adkctx_compaction_fallbacks_total{error_type="quota",`,
		`adkctx_instructions_files_skipped_total{`,
	} {
		line := ""
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, want) {
				line = l
			}
		}
		if want == `target_info{service_name="adkctx-example"` {
			if line == "" {
				t.Errorf("scrape lacks %s:\n%s", want, grepLines(body, "target_info"))
			}
			continue
		}
		if !strings.HasSuffix(line, "} 0") {
			t.Errorf("scrape lacks %s… 0 (found %q)", want, line)
		}
	}
	if strings.Contains(body, "unknown_service") {
		t.Errorf("the service is unknown_service:\n%s", grepLines(body, "unknown_service"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
