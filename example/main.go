package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"google.golang.org/adk/cmd/launcher/full"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"

	"github.com/adkctx/adkctx/hooks"
)

func main() {
	// SIGTERM (a service manager's or a container runtime's stop) ends the program as Ctrl-C
	// does: background compactions drain and the database is closed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// options are the command-line flags.
type options struct {
	demo        bool
	report      string
	turns       int
	dir         string
	db          string
	logPath     string
	model       string
	offline     bool
	sessionID   string
	metricsAddr string
	// compactEvery is compaction.Config.Interval: the cost policy (0: compact only when the
	// window needs it).
	compactEvery int
	// launch are the arguments for adk-go's launcher: "console ..." or "web ...".
	launch []string
}

// launcherModes are the first words that hand the rest of the command line to adk-go's launcher.
var launcherModes = []string{"console", "web"}

func parseFlags(args []string, stdout io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&o.demo, "demo", false, "run the scripted session with and without adkctx and print the comparison")
	fs.StringVar(&o.report, "report", "text", "demo report format: text or json")
	fs.IntVar(&o.turns, "turns", len(demoScript), "demo: number of scripted user turns")
	fs.StringVar(&o.dir, "dir", "", "directory the agent works in (default: the embedded demo repository, extracted to a temp dir and removed at exit)")
	fs.StringVar(&o.db, "db", "", "SQLite file for sessions, kept (default: a temp file removed at exit)")
	fs.StringVar(&o.logPath, "log", "", "zap JSON-lines log file, kept (default: a temp file removed at exit)")
	fs.StringVar(&o.model, "model", "gemini-2.5-flash", "Gemini model, used when GOOGLE_API_KEY or GEMINI_API_KEY is set")
	fs.BoolVar(&o.offline, "offline", false, "use the offline model even when an API key is set")
	fs.StringVar(&o.sessionID, "session", "", "interactive: session id to resume or create (default: a new one)")
	fs.IntVar(&o.compactEvery, "compact-every", 0, "compact every N turns, whatever room the window has left (the cost policy, compaction.Config.Interval; default 0: only when the window needs it)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve adkctx's OpenTelemetry metrics for Prometheus at http://ADDR/metrics (e.g. 127.0.0.1:9464)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: example [flags]              interactive session (REPL)")
			fmt.Fprintln(stdout, "       example -demo [flags]        scripted session with and without adkctx")
			fmt.Fprintln(stdout, "       example [flags] web [...]    adk-go's launcher: REST API and web UI (default: web api webui)")
			fmt.Fprintln(stdout, "       example [flags] console      adk-go's launcher: its console")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return o, err
		}
		return o, usagef("%s (see -h)", oneLine(err))
	}
	if fs.NArg() > 0 {
		if !slices.Contains(launcherModes, fs.Arg(0)) {
			return o, usagef("unexpected argument %q (see -h)", fs.Arg(0))
		}
		o.launch = fs.Args()
		if o.demo {
			return o, usagef("-demo and %s exclude each other", fs.Arg(0))
		}
		if len(o.launch) == 1 && o.launch[0] == "web" {
			o.launch = append(o.launch, "api", "webui")
		}
	}
	if o.report != "text" && o.report != "json" {
		return o, usagef("-report %s: want text or json", o.report)
	}
	if o.compactEvery < 0 {
		return o, usagef("-compact-every %d: want 0 (only when the window needs it) or more", o.compactEvery)
	}
	if o.turns < 1 || o.turns > 1000 {
		return o, usagef("-turns %d: want 1 to 1000", o.turns)
	}
	return o, nil
}

// run is the whole program; it returns the exit code: 0 done, 1 failed, 2 bad input, 130
// interrupted.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) int {
	o, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = execute(ctx, o, stdin, stdout, stderr, env)
	}
	if err == nil {
		return 0
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		fmt.Fprintln(stderr, "example: interrupted")
		return 130
	}
	fmt.Fprintf(stderr, "example: %s\n", oneLine(err))
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// cleanups run in reverse order of registration, whatever the exit path.
type cleanups []func() error

func (c *cleanups) add(f func() error) { *c = append(*c, f) }

func (c cleanups) run() error {
	var errs []error
	for _, f := range slices.Backward(c) {
		errs = append(errs, f())
	}
	return errors.Join(errs...)
}

// removeFiles removes files that may not exist.
func removeFiles(paths ...string) func() error {
	return func() error {
		var errs []error
		for _, p := range paths {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
}

// app is everything the modes share.
type app struct {
	workDir, dbPath, logPath string
	tempDB, tempLog          bool
	store                    *store
	choice                   modelChoice
	setup                    agentSetup
	metrics                  *metricsServer
}

// prepare opens what every mode needs and registers how to close it.
func prepare(ctx context.Context, o options, env func(string) string, cl *cleanups) (*app, error) {
	a := &app{}
	offline := apiKey(env) == "" || o.offline || o.demo
	if !offline {
		if err := checkKnownModel(o.model); err != nil {
			return nil, err
		}
	}
	// The directory the agent works in.
	if o.dir != "" {
		st, err := os.Stat(o.dir)
		if err != nil || !st.IsDir() {
			return nil, usagef("-dir %s: no such directory", o.dir)
		}
		if a.workDir, err = filepath.Abs(o.dir); err != nil {
			return nil, usagef("-dir %s: %v", o.dir, err)
		}
	} else {
		root, wd, err := extractDemoRepo()
		if err != nil {
			return nil, err
		}
		cl.add(removeFiles(root))
		a.workDir = wd
	}

	// Storage and log: temporary unless named.
	a.dbPath, a.logPath = o.db, o.logPath
	if a.dbPath == "" {
		p, err := tempFile("adkctx-example-*.db")
		if err != nil {
			return nil, err
		}
		a.dbPath, a.tempDB = p, true
		cl.add(removeFiles(sqliteFiles(p)...)) // after the store is closed
	}
	if a.logPath == "" {
		p, err := tempFile("adkctx-example-*.jsonl")
		if err != nil {
			return nil, err
		}
		a.logPath, a.tempLog = p, true
		cl.add(removeFiles(p))
	}
	var err error
	if a.store, err = openStore(ctx, a.dbPath); err != nil {
		return nil, err
	}
	cl.add(a.store.Close)
	logger, closeLog, err := openLog(a.logPath)
	if err != nil {
		return nil, err
	}
	cl.add(closeLog)
	if o.metricsAddr != "" {
		if a.metrics, err = serveMetrics(o.metricsAddr); err != nil {
			return nil, err
		}
		cl.add(a.metrics.Close)
	}

	if a.choice, err = chooseModel(ctx, o.model, apiKey(env), offline, env); err != nil {
		return nil, err
	}
	tools, err := newTools(a.workDir)
	if err != nil {
		return nil, usagef("-dir %s: %v", a.workDir, err)
	}
	a.setup = agentSetup{
		LLM: a.choice.llm, Tools: tools, Sessions: a.store, Artifacts: a.store.artifacts, WorkDir: a.workDir,
		Summarizer: a.choice.summarizer, Models: a.choice.models, Logger: logger, Interval: o.compactEvery,
	}
	if a.metrics != nil {
		a.setup.Meter = a.metrics.Provider
	}
	return a, nil
}

// wire wires the agent and registers Hooks.Close: background compactions drain before the
// store is closed.
func (a *app) wire(s agentSetup, cl *cleanups) (*hooks.Hooks, runner.Config, error) {
	h, rc, err := wire(s)
	if err != nil {
		return nil, rc, err
	}
	cl.add(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return h.Close(ctx)
	})
	return h, rc, nil
}

func execute(ctx context.Context, o options, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) (err error) {
	var cl cleanups
	defer func() { err = errors.Join(err, cl.run()) }()
	a, err := prepare(ctx, o, env, &cl)
	if err != nil {
		return err
	}
	if a.metrics != nil {
		w := stdout
		if o.report == "json" || len(o.launch) > 0 {
			w = stderr // stdout is the JSON report, or the launcher's
		}
		fmt.Fprintf(w, "adkctx metrics for Prometheus: %s\n", a.metrics.URL)
	}
	switch {
	case o.demo:
		return a.demo(ctx, o, apiKey(env) != "", stdout, stderr, env)
	case len(o.launch) > 0:
		_, rc, err := a.wire(a.setup, &cl)
		if err != nil {
			return err
		}
		return full.NewLauncher().Execute(ctx, launcherConfig(rc), o.launch)
	default:
		return a.interactive(ctx, o, stdin, stdout, stderr, &cl)
	}
}

// interactive runs the REPL.
func (a *app) interactive(ctx context.Context, o options, stdin io.Reader, stdout, stderr io.Writer, cl *cleanups) error {
	h, rc, err := a.wire(a.setup, cl)
	if err != nil {
		return err
	}
	r, err := runner.New(rc)
	if err != nil {
		return err
	}
	sessionID := o.sessionID
	resumed := false
	if sessionID == "" {
		sessionID = "repl-" + time.Now().UTC().Format("20060102-150405") + "-" + newID()[:4]
	}
	if _, err := a.store.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sessionID}); err == nil {
		resumed = true
	} else if _, err := a.store.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: sessionID}); err != nil {
		return fmt.Errorf("create session %s: %w", sessionID, err)
	}
	if a.choice.offline {
		fmt.Fprintf(stdout, "adkctx example with the OFFLINE model %q (no API key set: deterministic, no network).\n", a.choice.llm.Name())
		fmt.Fprintln(stdout, "It lists, reads and searches when you name files in `backticks` or say \"search for X\".")
	} else {
		fmt.Fprintf(stdout, "adkctx example with Gemini model %q (summaries by the same model, extractive fallback).\n", a.choice.llm.Name())
	}
	verb := "new session"
	if resumed {
		verb = "resumed session"
	}
	fmt.Fprintf(stdout, "working directory: %s\n%s %s in %s%s; log: %s%s\n/help for commands.\n",
		a.workDir, verb, sessionID, a.dbPath, tempNote(a.tempDB, "-db"), a.logPath, tempNote(a.tempLog, "-log"))
	rp := &repl{r: r, h: h, stored: a.store, viewed: rc.SessionService, sessionID: sessionID,
		modelName: a.choice.llm.Name(), out: stdout, progress: newProgress(stderr)}
	return rp.loop(ctx, stdin)
}

// tempNote says that a file is removed at exit.
func tempNote(temp bool, flag string) string {
	if !temp {
		return ""
	}
	return " (temporary: removed at exit; name it with " + flag + " to keep it)"
}

func tempFile(pattern string) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	name := f.Name()
	return name, f.Close()
}

// terminalWidth is $COLUMNS, or 80.
func terminalWidth(env func(string) string) int {
	if n, err := strconv.Atoi(env("COLUMNS")); err == nil && n >= 40 {
		return min(n, 160)
	}
	return 80
}
