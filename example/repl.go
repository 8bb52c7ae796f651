package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/processors/request"
)

const replHelp = `Type a question for the agent, or a command:
  /tokens             token usage of this session, the model's limits, turns left before compaction
  /compact            compact the session's history now
  /compaction-status  compaction markers in storage: ranges, event counts, token ratios
  /instructions       the merged AGENTS.md instructions, with the files they come from
  /help               this text
  /quit               leave (the session stays in the SQLite file)`

// repl is the interactive mode.
type repl struct {
	r         *runner.Runner
	h         *hooks.Hooks
	sessions  session.Service // the bare store (raw events)
	sessionID string
	modelName string
	out       io.Writer
	progress  *progress
}

// loop reads lines from in until EOF, /quit or ctx's end (Ctrl-C).
func (s *repl) loop(ctx context.Context, in io.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the reader
	lines, readErr := readLines(ctx, in)
	fmt.Fprint(s.out, "> ")
	for {
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			fmt.Fprintln(s.out)
			return ctx.Err()
		case line, ok = <-lines:
		}
		if !ok {
			fmt.Fprintln(s.out)
			return <-readErr
		}
		line = strings.TrimSpace(line)
		if line == "" {
			fmt.Fprint(s.out, "> ")
			continue
		}
		if strings.HasPrefix(line, "/") {
			cmd := strings.Fields(line)[0]
			switch cmd {
			case "/quit", "/exit":
				fmt.Fprintln(s.out, "bye")
				return nil
			case "/help":
				fmt.Fprintln(s.out, replHelp)
			case "/tokens":
				s.tokens(ctx)
			case "/compact":
				s.compact(ctx)
			case "/compaction-status":
				s.compactionStatus(ctx)
			case "/instructions":
				s.instructions()
			default:
				fmt.Fprintf(s.out, "unknown command %s (try /help)\n", cmd)
			}
		} else if err := s.ask(ctx, line); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(s.out)
				return ctx.Err()
			}
			fmt.Fprintf(s.out, "error: %s\n", oneLine(err))
		}
		fmt.Fprint(s.out, "> ")
	}
}

// readLines reads in line by line on its own goroutine, so that Ctrl-C ends the REPL even while
// it waits for input. The goroutine stops at EOF or once ctx is done.
func readLines(ctx context.Context, in io.Reader) (<-chan string, <-chan error) {
	lines := make(chan string)
	errc := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				errc <- ctx.Err()
				return
			}
		}
		errc <- sc.Err()
	}()
	return lines, errc
}

// ask sends one message to the agent and prints its tool calls and answer.
func (s *repl) ask(ctx context.Context, text string) error {
	stop := s.progress.start("thinking")
	defer stop()
	msg := genai.NewContentFromText(text, genai.RoleUser)
	for ev, err := range s.r.Run(ctx, userID, s.sessionID, msg, agent.RunConfig{}) {
		if err != nil {
			stop()
			var be *request.BudgetExceededError
			if errors.As(err, &be) {
				return fmt.Errorf("the message does not fit the model's context window: %w", err)
			}
			return err
		}
		if ev == nil || ev.Partial || ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if p == nil {
				continue
			}
			switch {
			case p.FunctionCall != nil:
				stop()
				fmt.Fprintf(s.out, "  → %s(%s)\n", p.FunctionCall.Name, formatArgs(p.FunctionCall.Args))
				stop = s.progress.start("thinking")
			case p.Text != "" && !p.Thought && ev.Author == agentName:
				stop()
				fmt.Fprintln(s.out, strings.TrimSpace(p.Text))
			}
		}
	}
	return nil
}

func formatArgs(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, args[k]))
	}
	return strings.Join(parts, ", ")
}

// rawEvents returns every stored event of the session, markers included.
func (s *repl) rawEvents(ctx context.Context) ([]*session.Event, error) {
	resp, err := s.sessions.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: s.sessionID})
	if err != nil {
		return nil, err
	}
	return compaction.RawEvents(resp.Session), nil
}

// tokens prints the session's usage report and the model's limits.
func (s *repl) tokens(ctx context.Context) {
	limits := s.h.Limits(s.modelName)
	rep := s.h.Usage(appName, userID, s.sessionID)
	source := "this process"
	if rep.Turns == 0 {
		// A resumed session: rebuild the accounting from the usage stored on its events.
		if events, err := s.rawEvents(ctx); err == nil {
			stored := budget.ReportFromEvents(s.sessionID, func(yield func(*session.Event) bool) {
				for _, e := range events {
					if !yield(e) {
						return
					}
				}
			}, limits)
			if stored.Turns > 0 {
				rep, source = stored, "stored events"
			}
		}
	}
	fmt.Fprintf(s.out, "session %s (usage from %s): %d model calls\n", s.sessionID, source, rep.Turns)
	fmt.Fprintf(s.out, "  total:  %s prompt + %s output tokens (cached %s, thinking %s)\n",
		thousands(rep.Total.Prompt), thousands(rep.Total.Output), thousands(rep.Total.Cached), thousands(rep.Total.Thought))
	fmt.Fprintf(s.out, "  last request: %s prompt tokens, %s output tokens\n", thousands(rep.Last.Prompt), thousands(rep.Last.Output))
	known := ""
	if !limits.Known {
		known = " (unknown model: fallback window)"
	}
	fmt.Fprintf(s.out, "  limits for %s%s: window %s, usable input %s, soft limit %s (compaction), hard limit %s (never sent above)\n",
		s.modelName, known, thousands(limits.Window), thousands(limits.Usable), thousands(limits.Soft), thousands(limits.Hard))
	switch {
	case rep.TurnsRemaining < 0:
		fmt.Fprintln(s.out, "  turns remaining before the soft limit: unknown yet (needs two model calls with growth)")
	default:
		fmt.Fprintf(s.out, "  turns remaining before the soft limit: about %d (average growth %.0f tokens per call)\n", rep.TurnsRemaining, rep.AvgTurnGrowth)
	}
}

// compact compacts the session now.
func (s *repl) compact(ctx context.Context) {
	stop := s.progress.start("compacting")
	m, err := s.h.Compact(ctx, appName, userID, s.sessionID)
	stop()
	switch {
	case err != nil:
		fmt.Fprintf(s.out, "compaction failed: %s\n", oneLine(err))
	case m == nil:
		fmt.Fprintln(s.out, "nothing to compact")
	default:
		fmt.Fprintf(s.out, "compacted %d events (%s..%s, %s–%s): %s → %s tokens (%.1f× smaller), summarizer %s\n",
			m.EventCount, short(m.FirstEventID), short(m.LastEventID),
			m.Start().Format(time.TimeOnly), m.End().Format(time.TimeOnly),
			thousands(m.OriginalTokens), thousands(m.CompactedTokens), m.CompressionRatio, orNone(m.Summarizer))
	}
}

// compactionStatus lists the markers in storage.
func (s *repl) compactionStatus(ctx context.Context) {
	events, err := s.rawEvents(ctx)
	if err != nil {
		fmt.Fprintf(s.out, "cannot read the session: %s\n", oneLine(err))
		return
	}
	view := compaction.View(events, nil)
	n := 0
	for i, e := range events {
		if !compaction.IsCompactionEvent(e) {
			continue
		}
		n++
		m, err := compaction.ReadMarker(e)
		if err != nil {
			fmt.Fprintf(s.out, "  #%d at event %d: unreadable marker (ignored): %s\n", n, i+1, oneLine(err))
			continue
		}
		fmt.Fprintf(s.out, "  #%d at event %d/%d: covers %d events (%s..%s, invocations %s..%s), %s → %s tokens (%.1f× smaller), trigger %s, summarizer %s\n",
			n, i+1, len(events), m.EventCount, short(m.FirstEventID), short(m.LastEventID),
			short(m.FirstInvocationID), short(m.LastInvocationID),
			thousands(m.OriginalTokens), thousands(m.CompactedTokens), m.CompressionRatio, m.Trigger, orNone(m.Summarizer))
	}
	if n == 0 {
		fmt.Fprintln(s.out, "  no compaction markers yet")
	}
	fmt.Fprintf(s.out, "storage: %d events (%d markers); the model sees %d (summaries + recent events)\n", len(events), n, len(view))
}

// instructions prints the merged AGENTS.md text with its provenance.
func (s *repl) instructions() {
	m, err := s.h.Instructions("")
	if err != nil {
		fmt.Fprintf(s.out, "instructions unavailable: %s\n", oneLine(err))
		return
	}
	state := "complete"
	if m.Truncated {
		state = "cut to fit the budget"
	}
	fmt.Fprintf(s.out, "AGENTS.md for %s (project root %s): %d files, %s bytes merged, %s\n",
		m.WorkDir, m.Root, len(m.Sources), thousands(m.Bytes), state)
	for _, src := range m.Sources {
		note := ""
		switch {
		case src.Omitted:
			note = " — omitted to fit the budget"
		case src.Truncated:
			note = fmt.Sprintf(" — cut to %s bytes", thousands(src.KeptBytes))
		}
		if src.FileTruncated {
			note += " — over the per-file read cap"
		}
		fmt.Fprintf(s.out, "  %-40s %8s bytes (%s)%s\n", src.Path, thousands(src.Bytes), src.Scope, note)
	}
	for _, sk := range m.Skipped {
		fmt.Fprintf(s.out, "  skipped %s: %s\n", sk.Path, sk.Reason)
	}
	if m.Text != "" {
		fmt.Fprintf(s.out, "----- merged text -----\n%s\n-----------------------\n", strings.TrimRight(m.Text, "\n"))
	}
}

// short abbreviates a long id for display.
func short(id string) string {
	if len(id) > 12 {
		return id[:8]
	}
	if id == "" {
		return "?"
	}
	return id
}
