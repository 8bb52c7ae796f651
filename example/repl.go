package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/processors/request"
)

const replHelp = `Type a question for the agent, or a command:
  /tokens             token usage of this session, the model's limits, user turns left before compaction
  /compact            compact the session's history now
  /compaction-status  compaction markers in storage: ranges, event counts, token ratios
  /instructions       the merged AGENTS.md instructions, with the files they come from
  /help               this text
  /quit               leave (the session stays in the SQLite file named with -db)`

// maxLine bounds one line of input: a longer line is refused, and the session goes on.
const maxLine = 1 << 20

// repl is the interactive mode.
type repl struct {
	r         *runner.Runner
	h         *hooks.Hooks
	stored    session.Service // the bare store: every event, markers included
	viewed    session.Service // adkctx's wrapper: what the model sees
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
		var l line
		var ok bool
		select {
		case <-ctx.Done():
			fmt.Fprintln(s.out)
			return ctx.Err()
		case l, ok = <-lines:
		}
		if !ok {
			fmt.Fprintln(s.out)
			return <-readErr
		}
		if l.tooLong > 0 {
			fmt.Fprintf(s.out, "line refused: %s bytes is over the %s-byte limit of one message; nothing was sent\n",
				thousands(l.tooLong), thousands(maxLine))
			fmt.Fprint(s.out, "> ")
			continue
		}
		text := strings.TrimSpace(l.text)
		if text == "" {
			fmt.Fprint(s.out, "> ")
			continue
		}
		if strings.HasPrefix(text, "/") {
			cmd := strings.Fields(text)[0]
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
		} else if err := s.ask(ctx, text); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(s.out)
				return ctx.Err()
			}
			fmt.Fprintf(s.out, "error: %s\n", oneLine(err))
		}
		fmt.Fprint(s.out, "> ")
	}
}

// line is one line of input, or the length of a line over maxLine (which is dropped).
type line struct {
	text    string
	tooLong int
}

// readLines reads in line by line on its own goroutine, so that Ctrl-C ends the REPL even while
// it waits for input. A line over maxLine is read through and dropped (only its length is
// kept). The goroutine stops at EOF or once ctx is done.
func readLines(ctx context.Context, in io.Reader) (<-chan line, <-chan error) {
	lines := make(chan line)
	errc := make(chan error, 1)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			l, err := readLine(br)
			if err != nil && (l.text == "" && l.tooLong == 0) {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				errc <- err
				return
			}
			select {
			case lines <- l:
			case <-ctx.Done():
				errc <- ctx.Err()
				return
			}
			if err != nil { // the last line had no newline
				errc <- nil
				return
			}
		}
	}()
	return lines, errc
}

// readLine reads one line without its line ending ("\n" or "\r\n"), keeping it only when it is
// at most maxLine bytes; a longer line is read through and only its length kept.
func readLine(br *bufio.Reader) (line, error) {
	var buf []byte
	n := 0 // bytes read for this line, its ending included
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if n <= maxLine+2 { // maxLine bytes and "\r\n"
			buf = append(buf, chunk...)
		} else {
			buf = nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if buf != nil || n == 0 {
			text := strings.TrimSuffix(strings.TrimSuffix(string(buf), "\n"), "\r")
			if len(text) <= maxLine {
				return line{text: text}, err
			}
			return line{tooLong: len(text)}, err
		}
		if bytes.HasSuffix(chunk, []byte("\n")) {
			n--
		}
		return line{tooLong: n}, err
	}
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
	parts := make([]string, 0, len(args))
	for _, k := range slices.Sorted(maps.Keys(args)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, args[k]))
	}
	return strings.Join(parts, ", ")
}

// tokens prints the session's usage report and the model's limits.
func (s *repl) tokens(ctx context.Context) {
	limits := s.h.Limits(s.modelName)
	rep := s.h.Usage(appName, userID, s.sessionID)
	fmt.Fprintf(s.out, "session %s: %d user turns, %d model calls\n", s.sessionID, rep.Turns, rep.ModelCalls)
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
		fmt.Fprintln(s.out, "  user turns remaining before the soft limit: unknown yet (needs two turns with growth)")
	default:
		fmt.Fprintf(s.out, "  user turns remaining before the soft limit: about %d (average growth %.0f tokens per turn)\n", rep.TurnsRemaining, rep.AvgTurnGrowth)
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
		fmt.Fprintf(s.out, "compacted: %s\n", describeMarker(m))
	}
}

// compactionStatus lists the markers in storage.
func (s *repl) compactionStatus(ctx context.Context) {
	events, err := storedEvents(ctx, s.stored, s.sessionID)
	if err != nil {
		fmt.Fprintf(s.out, "cannot read the session: %s\n", oneLine(err))
		return
	}
	view, err := storedEvents(ctx, s.viewed, s.sessionID)
	if err != nil {
		fmt.Fprintf(s.out, "cannot read the session's view: %s\n", oneLine(err))
		return
	}
	n := 0
	for i, e := range events {
		m, err := compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata})
		if m == nil && err == nil {
			continue
		}
		n++
		if err != nil {
			fmt.Fprintf(s.out, "  #%d at event %d: unreadable marker (ignored): %s\n", n, i+1, oneLine(err))
			continue
		}
		fmt.Fprintf(s.out, "  #%d at event %d/%d: %s\n", n, i+1, len(events), describeMarker(m))
	}
	if n == 0 {
		fmt.Fprintln(s.out, "  no compaction markers yet")
	}
	fmt.Fprintf(s.out, "storage: %d events (%d markers); the model sees %d (summary + recent events)\n", len(events), n, len(view))
}

// describeMarker is one line about a compaction marker.
func describeMarker(m *compaction.Marker) string {
	return fmt.Sprintf("seq %d covers %d events (%s..%s, invocations %s..%s, %s–%s), %s → %s tokens (%.1f× smaller), trigger %s, summarizer %s",
		m.Seq, m.EventCount, short(m.FirstEventID), short(m.LastEventID), short(m.FirstInvocationID), short(m.LastInvocationID),
		seconds(m.StartTimestamp).Format(time.TimeOnly), seconds(m.EndTimestamp).Format(time.TimeOnly),
		thousands(m.OriginalTokens), thousands(m.CompactedTokens), m.CompressionRatio, m.Trigger, orNone(m.Summarizer))
}

// seconds converts a marker timestamp (seconds since the Unix epoch) to local time.
func seconds(f float64) time.Time {
	return time.Unix(0, int64(f*float64(time.Second))).Local()
}

// storedEvents returns the session's events as svc serves them: every stored event from the
// bare store, the compacted view from adkctx's wrapper.
func storedEvents(ctx context.Context, svc session.Service, sessionID string) ([]*session.Event, error) {
	resp, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sessionID})
	if err != nil {
		return nil, err
	}
	return slices.Collect(resp.Session.Events().All()), nil
}

// readMarker returns the compaction marker an event carries, or nil.
func readMarker(e *session.Event) *compaction.Marker {
	m, err := compaction.ReadMarker(&compaction.Event{ID: e.ID, Metadata: e.CustomMetadata})
	if err != nil {
		return nil
	}
	return m
}

// instructions prints the merged AGENTS.md text with its provenance.
func (s *repl) instructions() {
	m, err := s.h.Instructions(context.Background(), "")
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
