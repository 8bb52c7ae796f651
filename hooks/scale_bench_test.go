package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/platform"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/server/adkrest"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
)

// scalePlan is what one run of BenchmarkScale measures.
type scalePlan struct {
	sizes []int // stored events per session
	// turns returns the warm turns an arm plays at a size (after its cold first turn).
	turns func(size int, withAdkctx, rest bool) int
}

func newScalePlan() scalePlan {
	if testing.Short() || os.Getenv("ADKCTX_SCALE") == "quick" {
		return scalePlan{sizes: []int{1_000, 5_000}, turns: func(_ int, withAdkctx, _ bool) int { return map[bool]int{true: 10, false: 5}[withAdkctx] }}
	}
	// Plain adk-go's turns take seconds at 20k events and more: fewer of them.
	return scalePlan{sizes: []int{1_000, 5_000, 20_000, 50_000}, turns: func(size int, withAdkctx, rest bool) int {
		switch {
		case withAdkctx:
			return 30 // cheap: more turns, more CPU samples
		case size <= 5_000:
			return 10
		case size <= 20_000 || !rest:
			return 3
		}
		return 2
	}}
}

// BenchmarkScale measures a turn of a long session with and without adkctx, on SQLite and on
// PostgreSQL (skipped without $ADKCTX_POSTGRES_DSN), at 1k, 5k, 20k and 50k stored events.
//
// The session is a coding agent's (a user message, a tool call, a 2–8 KB tool result, an answer
// per invocation), played once through adk-go's runner on an in-memory service with adkctx
// compacting it (default configuration, extractive summaries): its markers are the ones adkctx
// writes. Each cell is a database of its own, with the session index (sessiondb), into which the
// first n events are loaded through adk-go's own AppendEvent, and copied row for row: with
// markers for the adkctx arms, without them for plain adk-go (what it would have stored of the
// same conversation). Four arms then each play a cold first turn and warm turns on their copy:
// with and without adkctx, through adk-go's runner and through its REST handler (POST /run). A
// turn's wall time excludes the background compaction it triggers (the next turn starts after
// it); its reads include that compaction's.
//
// Reported per cell: the p50 wall time of warm turns per arm (*_p50_ms) and the cold turn
// (*_cold_ms); per warm runner turn, the time spent in the base service's Get (get_ms), the
// events and bytes it returned (bytes: the JSON adk-go stores for each event), whole-session
// reads, and the request bytes the model was sent; adkctx's own CPU per warm turn (cpu_ms: CPU
// profile samples at 1 kHz whose innermost function of adkctx, storage or this benchmark is
// adkctx's; storage is adk-go's database service, gorm and the drivers); the heap kept after GC
// by adkctx and its runner once the turns are done (kept_MB); the share of the stored bytes that
// are markers (marker_bytes_%). A table of all cells and the targets is logged at the end.
//
// Setting the profiling rate prints "runtime: cannot set cpu profile rate until previous profile
// has finished" once per profile: the 1 kHz rate holds.
//
//	go test -run '^$' -bench BenchmarkScale -timeout 60m .               (in hooks/; 23 min on 2 busy cores)
//	go test -run '^$' -bench BenchmarkScale -short .                     (1k and 5k, 2 min)
func BenchmarkScale(b *testing.B) {
	plan := newScalePlan()
	text := newScaleText()
	builder, err := newSessionBuilder(b.Context(), text)
	if err != nil {
		b.Fatal(err)
	}
	defer builder.Close(b.Context())
	var table scaleTable
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			for _, size := range plan.sizes {
				b.Run(fmt.Sprintf("%dk", size/1000), func(b *testing.B) {
					events, err := builder.session(size, text)
					if err != nil {
						b.Fatal(err)
					}
					c := measureCell(b, backend, events, text, plan)
					c.report(b)
					a := c.arms["adkctx"]
					var sites strings.Builder
					writeSites(&sites, a.sites, a.turns)
					fmt.Fprintf(&sites, "cold turn (%s):\n", fmtDuration(a.cold))
					writeSites(&sites, a.coldSites, 1)
					b.Logf("reads with adkctx (runner) per warm turn, by caller and query (re-reads %v):\n%s", a.reasons, sites.String())
					table.add(backend, size, c)
					if dir := os.Getenv("ADKCTX_SCALE_PROFILES"); dir != "" {
						writeProfiles(b, dir, backend+"-"+fmt.Sprint(size), c)
					}
				})
			}
		})
	}
	// The table is printed, not logged: the testing package keeps 10 lines of a benchmark's log.
	fmt.Print("\n" + table.String())
}

// describeWorkload summarizes the events of a session.
func describeWorkload(events []*session.Event) string {
	var markers, results, resultBytes int
	for _, e := range events {
		switch {
		case isMarker(e):
			markers++
		case e.Content != nil && len(e.Content.Parts) > 0 && e.Content.Parts[0].FunctionResponse != nil:
			results++
			resultBytes += storedBytes(e)
		}
	}
	return fmt.Sprintf("%d events, %d invocations, %d markers, tool results %d B on average",
		len(events), results, markers, resultBytes/max(results, 1))
}

// scaleCell is what one cell measured.
type scaleCell struct {
	events, plainEvents int
	markerShare         float64
	arms                map[string]*armResult // "adkctx", "plain", "adkctx_rest", "plain_rest"
}

// measureCell loads events into a fresh database and plays the four arms on it.
func measureCell(b *testing.B, backend string, events []*session.Event, text *scaleText, plan scalePlan) *scaleCell {
	b.Logf("workload: %s", describeWorkload(events))
	db := openScaleDB(b, backend)
	// The arms' turns follow the session's on its clock.
	clock := scaleClock(events[len(events)-1].Timestamp)
	plain := withoutMarkers(events)
	if err := loadSession(b.Context(), db.loader, "adkctx", events); err != nil {
		b.Fatal(err)
	}
	for to, without := range map[string]bool{"adkctx_rest": false, "plain": true, "plain_rest": true} {
		if err := db.copySession("adkctx", to, without); err != nil {
			b.Fatal(err)
		}
		want := map[bool]int{false: len(events), true: len(plain)}[without]
		if n, err := db.count(to); err != nil || int(n) != want {
			b.Fatalf("session %s holds %d events (%v), want %d", to, n, err, want)
		}
	}
	sizes := newEventSizes(events)
	c := &scaleCell{events: len(events), plainEvents: len(plain), arms: map[string]*armResult{}}
	var all, markers int
	for _, e := range events {
		all += sizes.of(e)
		if isMarker(e) {
			markers += sizes.of(e)
		}
	}
	c.markerShare = float64(markers) / float64(all)
	invocation := invocations(events)
	for b.Loop() {
		for _, arm := range []string{"adkctx", "adkctx_rest", "plain", "plain_rest"} {
			base, err := db.serve()
			if err != nil {
				b.Fatal(err)
			}
			withAdkctx := strings.HasPrefix(arm, "adkctx")
			a := &scaleArm{session: arm, adkctx: withAdkctx, rest: strings.HasSuffix(arm, "_rest"), text: text, clock: clock,
				store: newScaleStore(base, sizes), firstStep: invocation}
			c.arms[arm] = a.play(b, plan.turns(len(events), withAdkctx, a.rest))
		}
	}
	return c
}

// invocations counts the invocations of events.
func invocations(events []*session.Event) int {
	seen := map[string]bool{}
	for _, e := range events {
		seen[e.InvocationID] = true
	}
	return len(seen)
}

// scaleArm is one arm of a cell: a runner or REST handler over the cell's service, with adkctx
// or without, on its own copy of the session.
type scaleArm struct {
	session     string
	adkctx      bool
	rest        bool
	text        *scaleText
	clock       *fakeClock
	store       *scaleStore
	firstStep   int
	sentMu      sync.Mutex
	sent        int
	h           *hooks.Hooks
	logs        *observer.ObservedLogs
	turn        func(ctx context.Context, message string) error
	sessionsSvc session.Service
}

// armResult is what an arm measured.
type armResult struct {
	cold       time.Duration
	coldReads  scaleReads
	coldSites  map[readSite]scaleReads
	walls      []time.Duration
	reads      scaleReads // summed over the warm turns
	sent       int        // request bytes sent to the model over the warm turns
	turns      int
	cpu        cpuSplit
	profile    []byte // the CPU profile of the warm turns (adkctx arms)
	kept       int64  // heap bytes kept after GC by the Hooks and the runner (adkctx arms)
	viewEvents int    // events of the model's view after each warm turn, summed (adkctx arms)
	reasons    map[string]int
	sites      map[readSite]scaleReads
}

func (r *armResult) p50() time.Duration {
	if len(r.walls) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(r.walls))
	return s[len(s)/2]
}

// perTurn divides by the warm turns.
func (r *armResult) perTurn(v float64) float64 { return v / float64(max(r.turns, 1)) }

// play plays the arm's cold turn and warm turns.
func (a *scaleArm) play(b *testing.B, warm int) *armResult {
	baseline := heapAfterGC()
	a.wire(b)
	ctx := platform.WithTimeProvider(b.Context(), a.clock.Now)
	res := &armResult{turns: warm}
	step := a.firstStep
	res.cold = a.timedTurn(b, ctx, step)
	res.coldReads, _ = a.take()
	res.coldSites = a.store.takeSites()
	var cpu bytes.Buffer
	profiling := a.adkctx && startCPUProfile(&cpu)
	for i := range warm {
		res.walls = append(res.walls, a.timedTurn(b, ctx, step+1+i))
		r, sent := a.take()
		res.reads.add(r)
		res.sent += sent
		if a.adkctx {
			res.viewEvents += a.viewEvents(b, ctx) // not counted as the turn's reads
		}
	}
	if profiling {
		pprof.StopCPUProfile()
		res.profile = cpu.Bytes()
		var err error
		if res.cpu, err = splitProfile(cpu.Bytes()); err != nil {
			b.Logf("CPU profile: %v", err)
		}
	}
	res.sites = a.store.takeSites()
	if a.adkctx {
		res.kept = heapAfterGC() - baseline
		runtime.KeepAlive(a)
		res.reasons = map[string]int{}
		for _, e := range a.logs.FilterMessage("session read again").All() {
			res.reasons[fmt.Sprint(e.ContextMap()["reason"])]++
		}
		if err := a.h.Close(context.Background()); err != nil {
			b.Errorf("Close: %v", err)
		}
	}
	return res
}

// wire builds the arm's agent, runner or REST handler.
func (a *scaleArm) wire(b *testing.B) {
	ag, err := newScaleAgent(a.text, func(n int) { a.sentMu.Lock(); a.sent += n; a.sentMu.Unlock() })
	if err != nil {
		b.Fatal(err)
	}
	rc := runner.Config{AppName: scaleApp, Agent: ag, SessionService: a.store}
	if a.adkctx {
		core, logs := observer.New(zapcore.InfoLevel)
		a.logs = logs
		if a.h, err = hooks.New(adkctx.Config{Logger: zap.New(core), Compaction: &compaction.Config{Interval: 5, Summarizer: &compaction.ExtractiveSummarizer{}}}); err != nil { // the cost policy the scale figures measure
			b.Fatal(err)
		}
		if rc, err = a.h.Wire(rc); err != nil {
			b.Fatal(err)
		}
	}
	a.sessionsSvc = rc.SessionService
	if a.rest {
		a.turn = restTurns(b, rc, a)
		return
	}
	r, err := runner.New(rc)
	if err != nil {
		b.Fatal(err)
	}
	a.turn = func(ctx context.Context, message string) error {
		for _, err := range r.Run(ctx, scaleUser, a.session, genai.NewContentFromText(message, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// restTurns serves rc through adk-go's REST handler and returns a turn as a POST /run.
func restTurns(b *testing.B, rc runner.Config, a *scaleArm) func(context.Context, string) error {
	srv, err := adkrest.NewServer(adkrest.ServerConfig{SessionService: rc.SessionService, AgentLoader: agent.NewSingleLoader(rc.Agent),
		PluginConfig: rc.PluginConfig})
	if err != nil {
		b.Fatal(err)
	}
	// The requests' context carries the benchmark's clock, as the runner arms' do.
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r.WithContext(platform.WithTimeProvider(r.Context(), a.clock.Now)))
	}))
	b.Cleanup(web.Close)
	return func(ctx context.Context, message string) error {
		body, err := json.Marshal(map[string]any{"appName": scaleApp, "userId": scaleUser, "sessionId": a.session,
			"newMessage": map[string]any{"role": "user", "parts": []map[string]any{{"text": message}}}})
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, web.URL+"/run", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("POST /run: %s: %.200s", resp.Status, out)
		}
		return err
	}
}

// timedTurn plays step n and returns its wall time; with adkctx it then waits for the
// compaction the turn triggered (not timed).
func (a *scaleArm) timedTurn(b *testing.B, ctx context.Context, n int) time.Duration {
	start := time.Now()
	if err := a.turn(ctx, a.text.message(n)); err != nil {
		b.Fatalf("%s, step %d: %v", a.session, n, err)
	}
	took := time.Since(start)
	if a.adkctx && !hooks.WaitIdle(ctx, a.h) {
		b.Fatal("the compaction did not finish")
	}
	return took
}

// take returns the reads and the request bytes since the last take.
func (a *scaleArm) take() (scaleReads, int) {
	a.sentMu.Lock()
	defer a.sentMu.Unlock()
	sent := a.sent
	a.sent = 0
	return a.store.take(), sent
}

// viewEvents returns how many events the model's view of the session shows now (its read is
// not counted).
func (a *scaleArm) viewEvents(b *testing.B, ctx context.Context) int {
	a.store.uncounted.Store(true)
	defer a.store.uncounted.Store(false)
	resp, err := a.sessionsSvc.Get(ctx, &session.GetRequest{AppName: scaleApp, UserID: scaleUser, SessionID: a.session})
	if err != nil {
		b.Fatal(err)
	}
	return len(hooks.ModelView(resp.Session))
}

// writeProfiles writes the CPU profiles of a cell's adkctx arms into dir, for go tool pprof.
func writeProfiles(b *testing.B, dir, cell string, c *scaleCell) {
	for name, r := range c.arms {
		if len(r.profile) == 0 {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, cell+"-"+name+".pprof"), r.profile, 0o644); err != nil {
			b.Error(err)
		}
	}
}

// heapAfterGC returns the bytes of live heap objects after a full collection.
func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// startCPUProfile starts a CPU profile at 1 kHz into w; false when another profile runs (go test
// -cpuprofile).
func startCPUProfile(w io.Writer) bool {
	// With a profile running already, this changes nothing (and says so), and StartCPUProfile
	// fails.
	runtime.SetCPUProfileRate(1000)
	return pprof.StartCPUProfile(w) == nil
}

// cpuSplit is CPU time by whose code ran it.
type cpuSplit struct{ adkctx, storage, total time.Duration }

// splitProfile attributes each sample of a CPU profile to the innermost function on its stack
// that is adkctx's, storage's (adk-go's database service, gorm, the drivers) or this
// benchmark's (its model and tools, which stand in for the application's): runtime and library
// code counts for whoever called it; samples with none of them (adk-go's runner and flows, the
// garbage collector) count only in the total.
func splitProfile(data []byte) (cpuSplit, error) {
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		return cpuSplit{}, err
	}
	idx := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" })
	if idx < 0 {
		return cpuSplit{}, fmt.Errorf("no cpu values in the profile")
	}
	var out cpuSplit
	for _, s := range p.Sample {
		d := time.Duration(s.Value[idx])
		out.total += d
		switch owner(s) {
		case "adkctx":
			out.adkctx += d
		case "storage":
			out.storage += d
		}
	}
	return out, nil
}

// owner returns who ran a sample: see splitProfile. The benchmark's own reads of the view
// between turns (scaleArm.viewEvents) are the benchmark's.
func owner(s *profile.Sample) string {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function != nil && strings.HasSuffix(line.Function.Name, "hooks_test.(*scaleArm).viewEvents") {
				return "benchmark"
			}
		}
	}
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			switch name := line.Function.Name; {
			case strings.HasPrefix(name, "github.com/adkctx/adkctx/hooks_test."), strings.HasPrefix(name, "github.com/adkctx/adkctx/hooks/internal/"):
				return "benchmark"
			case strings.HasPrefix(name, "github.com/adkctx/adkctx/"):
				return "adkctx"
			case strings.HasPrefix(name, "google.golang.org/adk/session/database."), strings.HasPrefix(name, "gorm.io/"),
				strings.HasPrefix(name, "github.com/glebarez/"), strings.HasPrefix(name, "modernc.org/"),
				strings.HasPrefix(name, "github.com/jackc/"), strings.HasPrefix(name, "database/sql."):
				return "storage"
			}
		}
	}
	return "other"
}

// report reports the cell's figures as benchmark metrics.
func (c *scaleCell) report(b *testing.B) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, name := range []string{"adkctx", "plain", "adkctx_rest", "plain_rest"} {
		r := c.arms[name]
		b.ReportMetric(ms(r.p50()), name+"_p50_ms")
		b.ReportMetric(ms(r.cold), name+"_cold_ms")
		b.ReportMetric(r.perTurn(ms(r.reads.getTime)), name+"_get_ms/turn")
		b.ReportMetric(r.perTurn(float64(r.reads.events)), name+"_events/turn")
		b.ReportMetric(r.perTurn(float64(r.reads.bytes)/1024), name+"_KB/turn")
	}
	for _, name := range []string{"adkctx", "plain"} {
		b.ReportMetric(c.arms[name].perTurn(float64(c.arms[name].sent)/1024), name+"_request_KB/turn")
	}
	a := c.arms["adkctx"]
	b.ReportMetric(a.perTurn(float64(a.reads.whole)), "adkctx_whole_reads/turn")
	b.ReportMetric(float64(a.coldReads.events), "adkctx_cold_events")
	b.ReportMetric(a.perTurn(float64(a.viewEvents)), "adkctx_view_events")
	b.ReportMetric(a.perTurn(ms(a.cpu.adkctx)), "adkctx_cpu_ms/turn")
	b.ReportMetric(a.perTurn(ms(a.cpu.storage)), "adkctx_storage_cpu_ms/turn")
	b.ReportMetric(a.perTurn(ms(a.cpu.total)), "adkctx_process_cpu_ms/turn")
	b.ReportMetric(float64(a.kept)/(1<<20), "kept_MB")
	b.ReportMetric(100*c.markerShare, "marker_bytes_%")
	b.ReportMetric(float64(c.arms["plain"].p50())/float64(max(a.p50(), 1)), "plain/adkctx_x")
	b.ReportMetric(0, "ns/op") // a cell is one measurement, not an operation
}

// scaleTable collects the cells for the README table.
type scaleTable struct {
	mu    sync.Mutex
	cells []tableRow
}

type tableRow struct {
	backend string
	size    int
	c       *scaleCell
}

func (t *scaleTable) add(backend string, size int, c *scaleCell) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cells = append(t.cells, tableRow{backend, size, c})
}

// String renders the table, the targets and the read sites of the largest sessions.
func (t *scaleTable) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s strings.Builder
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d.Microseconds())/1000) }
	s.WriteString("| backend | stored events | plain adk-go p50 ms (runner / REST) | with adkctx p50 ms (runner / REST) | cold turn ms (plain / adkctx) | " +
		"Get ms per turn (plain / adkctx) | events read per turn (plain / adkctx) | KB read per turn (plain / adkctx) | adkctx CPU ms per turn | kept MB | marker bytes |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range t.cells {
		p, pr, a, ar := r.c.arms["plain"], r.c.arms["plain_rest"], r.c.arms["adkctx"], r.c.arms["adkctx_rest"]
		fmt.Fprintf(&s, "| %s | %d | %s / %s | %s / %s | %s / %s | %.1f / %.1f | %.0f / %.0f | %.0f / %.0f | %.1f | %.2f | %.1f%% |\n",
			r.backend, r.size, ms(p.p50()), ms(pr.p50()), ms(a.p50()), ms(ar.p50()), ms(p.cold), ms(a.cold),
			p.perTurn(float64(p.reads.getTime.Microseconds())/1000), a.perTurn(float64(a.reads.getTime.Microseconds())/1000),
			p.perTurn(float64(p.reads.events)), a.perTurn(float64(a.reads.events)),
			p.perTurn(float64(p.reads.bytes)/1024), a.perTurn(float64(a.reads.bytes)/1024),
			a.perTurn(float64(a.cpu.adkctx.Microseconds())/1000), float64(a.kept)/(1<<20), 100*r.c.markerShare)
	}
	t.targets(&s)
	return s.String()
}

// targets appends issue 21's targets, per backend, measured at the smallest and largest size.
func (t *scaleTable) targets(s *strings.Builder) {
	for _, backend := range []string{"sqlite", "postgres"} {
		var rows []tableRow
		for _, r := range t.cells {
			if r.backend == backend {
				rows = append(rows, r)
			}
		}
		if len(rows) < 2 {
			continue
		}
		small, large := rows[0], rows[len(rows)-1]
		a, p := large.c.arms["adkctx"], large.c.arms["plain"]
		fmt.Fprintf(s, "\n%s, %d vs %d events: adkctx p50 %.2f× its time at %d (target ≤ 1.5×); plain adk-go %.1f× slower than adkctx (target ≥ 20×); "+
			"marker bytes %.1f%% (target ≤ 15%%); kept %.2f MB (target ≤ 2 MB); events read per warm turn %.1f, the view shows %.1f; re-reads %v\n",
			backend, large.size, small.size, float64(a.p50())/float64(max(small.c.arms["adkctx"].p50(), 1)), small.size,
			float64(p.p50())/float64(max(a.p50(), 1)), 100*large.c.markerShare, float64(a.kept)/(1<<20),
			a.perTurn(float64(a.reads.events)), a.perTurn(float64(a.viewEvents)), a.reasons)
	}
}

// writeSites lists reads per site, divided by turns.
func writeSites(s *strings.Builder, sites map[readSite]scaleReads, turns int) {
	keys := slices.Collect(maps.Keys(sites))
	sort.Slice(keys, func(i, j int) bool { return sites[keys[i]].events > sites[keys[j]].events })
	per := func(v float64) float64 { return v / float64(max(turns, 1)) }
	for _, k := range keys {
		v := sites[k]
		fmt.Fprintf(s, "  %-32s %-10s %5.2f gets %8.1f events %9.1f KB %7.1f ms\n", k.caller, k.query,
			per(float64(v.gets)), per(float64(v.events)), per(float64(v.bytes)/1024), per(float64(v.getTime.Microseconds())/1000))
	}
}

func fmtDuration(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}
