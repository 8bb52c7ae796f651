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
	"strconv"
	"strings"
	"time"

	"google.golang.org/adk/session"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// options are the command-line flags.
type options struct {
	demo      bool
	report    string
	turns     int
	dir       string
	db        string
	logPath   string
	model     string
	offline   bool
	sessionID string
}

func parseFlags(args []string, stdout io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&o.demo, "demo", false, "run the scripted session with and without adkctx and print the comparison")
	fs.StringVar(&o.report, "report", "text", "demo report format: text or json")
	fs.IntVar(&o.turns, "turns", len(demoScript), "demo: number of scripted user turns")
	fs.StringVar(&o.dir, "dir", "", "directory the agent works in (default: the embedded demo repository, extracted to a temp dir)")
	fs.StringVar(&o.db, "db", "", "SQLite file for sessions (default: a file in the temp dir; -demo: a fresh temp file)")
	fs.StringVar(&o.logPath, "log", "", "zap JSON-lines log file (default: a file in the temp dir)")
	fs.StringVar(&o.model, "model", "gemini-2.5-flash", "Gemini model, used when GOOGLE_API_KEY or GEMINI_API_KEY is set")
	fs.BoolVar(&o.offline, "offline", false, "use the offline model even when an API key is set")
	fs.StringVar(&o.sessionID, "session", "", "interactive: session id to resume or create (default: a new one)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: example [flags]")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return o, err
		}
		return o, usagef("%s (see -h)", oneLine(err))
	}
	if fs.NArg() > 0 {
		return o, usagef("unexpected argument %q (see -h)", fs.Arg(0))
	}
	if o.report != "text" && o.report != "json" {
		return o, usagef("-report %s: want text or json", o.report)
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

func execute(ctx context.Context, o options, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) error {
	key := apiKey(env)
	offline := key == "" || o.offline || o.demo
	if !offline {
		if _, err := chooseModelName(o.model); err != nil {
			return err
		}
	}

	// The directory the agent works in.
	workDir := o.dir
	if workDir != "" {
		st, err := os.Stat(workDir)
		if err != nil || !st.IsDir() {
			return usagef("-dir %s: no such directory", workDir)
		}
		if workDir, err = filepath.Abs(workDir); err != nil {
			return usagef("-dir %s: %v", o.dir, err)
		}
	} else {
		root, wd, err := extractDemoRepo()
		if err != nil {
			return err
		}
		defer os.RemoveAll(root)
		workDir = wd
	}

	// Storage and log.
	dbPath, logPath := o.db, o.logPath
	if dbPath == "" {
		if o.demo {
			p, err := tempFile("adkctx-demo-*.db")
			if err != nil {
				return err
			}
			dbPath = p
		} else {
			dbPath = filepath.Join(os.TempDir(), "adkctx-example.db")
		}
	}
	if logPath == "" {
		if o.demo {
			p, err := tempFile("adkctx-demo-*.jsonl")
			if err != nil {
				return err
			}
			logPath = p
		} else {
			logPath = filepath.Join(os.TempDir(), "adkctx-example.jsonl")
		}
	}
	sessions, err := openSessions(dbPath)
	if err != nil {
		return err
	}
	var logOffset int64
	if st, err := os.Stat(logPath); err == nil {
		logOffset = st.Size()
	}
	logger, closeLog, err := openLog(logPath)
	if err != nil {
		return err
	}
	defer closeLog()

	choice, err := chooseModel(ctx, o.model, key, offline, logger)
	if err != nil {
		return err
	}
	tools, err := newTools(workDir)
	if err != nil {
		return usagef("-dir %s: %v", workDir, err)
	}
	setup := agentSetup{
		LLM: choice.llm, Tools: tools, Sessions: sessions, WorkDir: workDir,
		Summarizer: choice.summarizer, Fallback: choice.fallback, Models: choice.models, Logger: logger,
	}
	prog := newProgress(stderr)

	if o.demo {
		if o.report == "text" {
			fmt.Fprintf(stdout, "adkctx demo with the OFFLINE model %q: deterministic, no network,\na %s-token context window.\n",
				choice.llm.Name(), thousands(offlineWindow))
			about := workDir
			if o.dir == "" {
				about = "the demo repository (" + demoWorkDir + " of a small monorepo)"
			}
			fmt.Fprintf(stdout, "%d scripted turns about %s,\nplayed twice: with adkctx (SQLite sessions) and without (in-memory sessions, no callbacks).\n",
				o.turns, about)
			if key != "" {
				fmt.Fprintln(stdout, "(An API key is set, but -demo always uses the offline model so that both runs\nsee the same answers; run without -demo to talk to Gemini.)")
			}
		}
		rep, err := runDemo(ctx, demoOptions{
			turns: o.turns, workDir: workDir, dbPath: dbPath, logPath: logPath,
			sessions: sessions, choice: choice, progress: prog, setup: setup,
		}, logOffset)
		if err != nil {
			return err
		}
		closeLog()
		if o.report == "json" {
			return writeJSON(stdout, rep)
		}
		writeText(stdout, rep, terminalWidth(env))
		return nil
	}

	// Interactive.
	r, h, err := newAgent(setup)
	if err != nil {
		return err
	}
	sessionID := o.sessionID
	resumed := false
	if sessionID == "" {
		sessionID = "repl-" + time.Now().UTC().Format("20060102-150405") + "-" + newID()[:4]
	}
	if _, err := sessions.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sessionID}); err == nil {
		resumed = true
	} else if _, err := sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: sessionID}); err != nil {
		return fmt.Errorf("create session %s: %w", sessionID, err)
	}
	if choice.offline {
		fmt.Fprintf(stdout, "adkctx example with the OFFLINE model %q (no API key set: deterministic, no network).\n", choice.llm.Name())
		fmt.Fprintln(stdout, "It lists, reads and searches when you name files in `backticks` or say \"search for X\".")
	} else {
		fmt.Fprintf(stdout, "adkctx example with Gemini model %q.\n", choice.llm.Name())
	}
	verb := "new session"
	if resumed {
		verb = "resumed session"
	}
	fmt.Fprintf(stdout, "working directory: %s\n%s %s in %s; log: %s\n/help for commands.\n", workDir, verb, sessionID, dbPath, logPath)
	rp := &repl{r: r, h: h, sessions: sessions, sessionID: sessionID, modelName: choice.llm.Name(), out: stdout, progress: prog}
	return rp.loop(ctx, stdin)
}

// chooseModelName checks that adkctx knows the model's context window.
func chooseModelName(name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", usagef("-model is empty")
	}
	return name, checkKnownModel(name)
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
