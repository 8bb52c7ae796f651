package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds Debian's headless-capable Chromium.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH: .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("browser test skipped: no chromium on PATH (apt-get install chromium)")
	return ""
}

// TestHTMLReportInABrowser opens the HTML report in headless Chromium and checks each chart
// was drawn with one point per step in every series and one line per compaction the JSON report
// counts; it saves a screenshot of the first session (to $ADKCTX_REPLAY_SCREENSHOT when set,
// which is how docs/replay-report.png is made).
func TestHTMLReportInABrowser(t *testing.T) {
	bin := chromium(t)
	dst, err := filepath.Abs(os.Getenv("ADKCTX_REPLAY_SCREENSHOT")) // before the Chdir below
	if os.Getenv("ADKCTX_REPLAY_SCREENSHOT") == "" || err != nil {
		dst = filepath.Join(t.TempDir(), "report.png")
	}
	dir := t.TempDir()
	writeFixtures(t, dir, 60)
	t.Chdir(dir) // sessions are named as given: short names in the report
	shell, service := "shell.traj.json", "service.json"
	html := filepath.Join(dir, "report.html")
	code, out, errs := runCmd(t, "replay", "-json", "-window", "8192,32768", "-html", html, shell, service)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := decodeReport(t, out)
	var wantPoints, wantCompactions []int
	for _, s := range r.Sessions {
		for _, f := range s.Configs {
			wantPoints = append(wantPoints, s.Steps)
			wantCompactions = append(wantCompactions, f["compactions"])
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 900))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()

	type drawn struct {
		None, Cut, Adkctx, Compactions int
		Width                          float64
	}
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+html)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS("#totals"))); err != nil {
		t.Fatal(err)
	}
	charts, err := chromedp.Run(bctx, chromedp.Evaluate[[]drawn](`Array.from(document.querySelectorAll('svg.chart')).map(s => ({
		None: s.querySelector('polyline[data-series=none]').points.numberOfItems,
		Cut: s.querySelector('polyline[data-series=cut]').points.numberOfItems,
		Adkctx: s.querySelector('polyline[data-series=adkctx]').points.numberOfItems,
		Compactions: s.querySelectorAll('line.compaction').length,
		Width: s.querySelector('polyline[data-series=adkctx]').getBBox().width}))`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.CSS("#session-1")))
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != len(wantPoints) {
		t.Fatalf("%d charts drawn, want %d", len(charts), len(wantPoints))
	}
	for i, c := range charts {
		if c.None != wantPoints[i] || c.Cut != wantPoints[i] || c.Adkctx != wantPoints[i] || c.Compactions != wantCompactions[i] || c.Width < 500 {
			t.Errorf("chart %d: %+v, want %d points per series, %d compactions, drawn across the plot", i, c, wantPoints[i], wantCompactions[i])
		}
	}
	if len(shot) < 10_000 {
		t.Errorf("screenshot of %d bytes", len(shot))
	}
	if err := os.WriteFile(dst, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	cancelBrowser()
	cancelAlloc()
}
