package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/replay"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/report"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/source"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
	"github.com/adkctx/adkctx/compaction"
)

const replayUsage = `Usage: adkctx replay [flags] [FILE|DIR ...]

Replays recorded agent sessions through adk-go's runner, without adkctx and with it, offline
and deterministically, and reports prompt tokens, the references each step's calls make to what
the agent read earlier and whether the requests kept them, user facts, the task's head, and what
adkctx did (compactions, trims, refusals).

Sources (any mix):
  FILE|DIR        trajectory files, recognized by content: OpenAI-style chat messages (an object
                  with "messages", a bare array, or tau-bench results; Anthropic's Messages
                  form too), mini-swe-agent .traj / .traj.json (text actions or tool calls),
                  ATIF, stored adk sessions in JSON (adk-go's REST API:
                  GET /apps/{app}/users/{user}/sessions/{id}), logged Gemini API requests
                  (genai contents) and OpenAI Responses API requests, Gemini CLI sessions,
                  Claude Code transcripts and Codex CLI rollouts (.jsonl); a directory is
                  walked for *.json, *.jsonl and *.traj files
  -sqlite PATH    adk-go database-service sessions in SQLite (opened read-only)
  -postgres DSN   adk-go database-service sessions in PostgreSQL (read-only transactions)
  -app, -user, -session pick database sessions (default: all)

Flags:
`

type replayFlags struct {
	sqlite, postgres         string
	app, user, session       string
	windows, summ, recall    string
	configFile, tokens, html string
	json, skipBad, quiet     bool
}

func replayCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f replayFlags
	fs.StringVar(&f.sqlite, "sqlite", "", "adk-go SQLite session database `PATH`")
	fs.StringVar(&f.postgres, "postgres", "", "adk-go PostgreSQL session database `DSN`")
	fs.StringVar(&f.app, "app", "", "only sessions of this app")
	fs.StringVar(&f.user, "user", "", "only sessions of this user")
	fs.StringVar(&f.session, "session", "", "only the session with this id")
	fs.StringVar(&f.windows, "window", "32768", "context windows to replay with, comma-separated (one adkctx run per window)")
	fs.StringVar(&f.summ, "summarizer", "extractive", "summarizers, comma-separated: extractive, llm (an offline scripted model: no API call)")
	fs.StringVar(&f.recall, "recall", "on", "recall tools given to the agent, comma-separated: on, off")
	fs.StringVar(&f.configFile, "config", "", "an adkctx.Config in JSON or YAML `FILE` (default: the zero Config with compaction on)")
	fs.StringVar(&f.tokens, "tokens", "estimator", "token counter: estimator (adkctx's) or o200k")
	fs.BoolVar(&f.json, "json", false, "write the report as JSON instead of a text table")
	fs.StringVar(&f.html, "html", "", "also write a self-contained HTML report with per-step charts to `FILE`")
	fs.BoolVar(&f.skipBad, "skip-bad", false, "skip sources that cannot be read, listing them in the report (default: fail)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fs.Usage = func() { fmt.Fprint(stderr, replayUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := replayMain(ctx, f, fs.Args(), stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "adkctx replay: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

type usageError struct{ error }

func configs(f replayFlags) ([]replay.Config, error) {
	base := adkctx.Config{Compaction: &compaction.Config{}}
	if f.configFile != "" {
		c, err := loadConfig(f.configFile)
		if err != nil {
			return nil, usageError{err}
		}
		base = c
	}
	var out []replay.Config
	for _, w := range strings.Split(f.windows, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n <= 0 {
			return nil, usageError{fmt.Errorf("-window %q: want positive token counts, comma-separated", f.windows)}
		}
		for _, s := range strings.Split(f.summ, ",") {
			s = strings.TrimSpace(s)
			if s != replay.Extractive && s != replay.LLM {
				return nil, usageError{fmt.Errorf("-summarizer %q: want extractive or llm", s)}
			}
			for _, r := range strings.Split(f.recall, ",") {
				var on bool
				switch strings.TrimSpace(r) {
				case "on":
					on = true
				case "off":
				default:
					return nil, usageError{fmt.Errorf("-recall %q: want on or off", r)}
				}
				out = append(out, replay.Config{Window: n, Summarizer: s, Recall: on, Base: base})
			}
		}
	}
	return out, nil
}

func replayMain(ctx context.Context, f replayFlags, paths []string, stdout, stderr io.Writer) error {
	if len(paths) == 0 && f.sqlite == "" && f.postgres == "" {
		return usageError{errors.New("no sessions: give trajectory files or directories, -sqlite or -postgres")}
	}
	cfgs, err := configs(f)
	if err != nil {
		return err
	}
	rp, err := replay.New(replay.Tokens(f.tokens), cfgs)
	if err != nil {
		return usageError{err}
	}
	// Files are read once before any replay: a file that cannot be read fails the run at once
	// (or is listed, with -skip-bad), and the step count sizes the progress bar.
	files, err := source.Files(paths)
	if err != nil {
		return err
	}
	total := 0
	var skipped []report.Skipped
	bad := map[string]bool{}
	for it := range source.ReadFiles(ctx, files) {
		if it.Err != nil {
			if !f.skipBad {
				return it.Err
			}
			skipped = append(skipped, report.Skipped{Source: it.Source, Error: it.Err.Error()})
			bad[it.Source] = true
			continue
		}
		total += it.Session.Steps()
	}
	var dbs []*source.DB
	defer func() {
		for _, d := range dbs {
			d.Close()
		}
	}()
	filter := source.Filter{App: f.app, User: f.user, Session: f.session}
	sources := []iter.Seq[source.Item]{func(yield func(source.Item) bool) {
		for it := range source.ReadFiles(ctx, files) {
			if it.Err != nil && bad[it.Source] {
				continue // listed by the first pass
			}
			if !yield(it) {
				return
			}
		}
	}}
	for _, open := range []struct {
		arg string
		fn  func(string) (*source.DB, error)
	}{{f.sqlite, source.OpenSQLite}, {f.postgres, source.OpenPostgres}} {
		if open.arg == "" {
			continue
		}
		d, err := open.fn(open.arg)
		if err != nil {
			return err
		}
		dbs = append(dbs, d)
		n, items := d.Sessions(ctx, filter)
		total += n
		sources = append(sources, items)
	}

	out := newOutputs(f, report.HeaderOf(rp, f.tokens), stdout)
	defer out.abort()
	if out.err != nil {
		return out.err
	}
	o := report.Options{SkipBad: f.skipBad, Writers: out.writers()}
	if fd, ok := stderr.(*os.File); ok && !f.quiet && isatty.IsTerminal(fd.Fd()) {
		bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("replaying"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
		// Files advance the bar by their steps, database sessions (not read ahead) by one.
		o.Done = func(it source.Item) {
			if it.Session.Format == trajectory.ADKSession {
				bar.Add(1)
			} else {
				bar.Add(it.Session.Steps())
			}
		}
		defer bar.Finish()
	}
	totals, more, err := report.Replay(ctx, rp, func(yield func(source.Item) bool) {
		for _, src := range sources {
			for it := range src {
				if !yield(it) {
					return
				}
			}
		}
	}, o)
	if err != nil {
		return err
	}
	skipped = append(skipped, more...)
	if totals[0].Sessions == 0 && len(skipped) == 0 {
		return errors.New("no sessions found")
	}
	return out.close(totals, skipped)
}

// outputs writes the reports to temporary places and moves them where they belong only when
// the whole run succeeded: a failed run leaves no partial report.
type outputs struct {
	stdout           io.Writer
	main, html       report.Writer
	mainTmp, htmlTmp *os.File
	htmlPath         string
	text             *strings.Builder
	err              error
}

func newOutputs(f replayFlags, h report.Header, stdout io.Writer) *outputs {
	o := &outputs{stdout: stdout}
	if f.json {
		o.mainTmp, o.err = os.CreateTemp("", "adkctx-replay-*.json")
		if o.err == nil {
			o.main = report.NewJSON(o.mainTmp, h)
		}
	} else {
		o.text = &strings.Builder{}
		o.main = report.NewText(o.text, h)
	}
	if f.html != "" && o.err == nil {
		o.htmlPath = f.html
		o.htmlTmp, o.err = os.CreateTemp(filepath.Dir(f.html), "."+filepath.Base(f.html)+".*.tmp")
		if o.err == nil {
			o.html = report.NewHTML(o.htmlTmp, h)
		}
	}
	return o
}

func (o *outputs) writers() []report.Writer {
	var ws []report.Writer
	for _, w := range []report.Writer{o.main, o.html} {
		if w != nil {
			ws = append(ws, w)
		}
	}
	return ws
}

func (o *outputs) close(totals []report.Figures, skipped []report.Skipped) error {
	if o.err != nil {
		return o.err
	}
	for _, w := range []report.Writer{o.main, o.html} {
		if w != nil {
			if err := w.Close(totals, skipped); err != nil {
				return err
			}
		}
	}
	if o.htmlTmp != nil {
		if err := o.htmlTmp.Close(); err != nil {
			return err
		}
		if err := os.Rename(o.htmlTmp.Name(), o.htmlPath); err != nil {
			return err
		}
		o.htmlTmp = nil
	}
	if o.text != nil {
		_, err := io.WriteString(o.stdout, o.text.String())
		return err
	}
	if _, err := o.mainTmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(o.stdout, o.mainTmp)
	return err
}

// abort removes what a failed (or finished) run left in temporary places.
func (o *outputs) abort() {
	for _, f := range []*os.File{o.mainTmp, o.htmlTmp} {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
}
