package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/replay"
)

// textWriter keeps each session's row (a few hundred bytes) until Close lays out the table.
type textWriter struct {
	w     io.Writer
	h     Header
	rows  [][]string // per configuration
	notes []string
}

// NewText returns a writer of the text report to w.
func NewText(w io.Writer, h Header) Writer {
	return &textWriter{w: w, h: h, rows: make([][]string, len(h.Configs))}
}

func (t *textWriter) Session(res *replay.Result, figs []Figures) error {
	for i, f := range figs {
		t.rows[i] = append(t.rows[i], row(res.Session.ID, f))
	}
	for _, n := range res.Session.Notes {
		t.notes = append(t.notes, res.Session.ID+": "+n)
	}
	return nil
}

var columns = []string{"session", "steps", "tokens: no adkctx", "plain cut", "adkctx", "largest: no adkctx", "adkctx",
	"over window", "cut over window", "refs", "kept: plain cut", "same size", "adkctx", "missed, 1 recall away", "user facts kept: cut", "same size", "adkctx",
	"task head: cut", "adkctx", "compactions", "trimmed", "refused"}

func row(name string, f Figures) string {
	cells := []string{
		name, num(int64(f.Steps)), num(f.TokensNoAdkctx),
		ofTokens(f.TokensPlainCut, f.TokensNoAdkctx), ofTokens(f.TokensAdkctx, f.TokensNoAdkctx),
		num(int64(f.LargestNoAdkctx)), num(int64(f.LargestAdkctx)),
		num(int64(f.OverWindowNoAdkctx)), num(int64(f.OverWindowPlainCut)), num(int64(f.References)),
		pct(f.ReferencesKeptPlainCut, f.References), pct(f.ReferencesKeptSameSizeCut, f.References), pct(f.ReferencesKeptAdkctx, f.References),
		fmt.Sprintf("%s of %s", num(int64(f.MissedOneRecallAway)), num(int64(f.References-f.ReferencesKeptAdkctx))),
		pct(f.UserFactsKeptPlainCut, f.UserFacts), pct(f.UserFactsKeptSameSizeCut, f.UserFacts), pct(f.UserFactsKeptAdkctx, f.UserFacts),
		pct(f.TaskHeadPlainCut, f.Steps), pct(f.TaskHeadAdkctx, f.Steps),
		num(int64(f.Compactions)), num(int64(f.RequestsTrimmed)), num(int64(f.RequestsRefused)),
	}
	return strings.Join(cells, "\t")
}

func (t *textWriter) Close(totals []Figures, skipped []Skipped) error {
	var b strings.Builder
	sessions, steps := 0, 0
	if len(totals) > 0 {
		sessions, steps = totals[0].Sessions, totals[0].Steps
	}
	fmt.Fprintf(&b, "adkctx replay: %d sessions, %s steps, through adk-go's runner without adkctx and with it; tokens counted by the %s\n", sessions, num(int64(steps)), t.h.Tokens)
	for i, c := range t.h.Configs {
		compaction := "compaction on"
		if !c.Compaction {
			compaction = "compaction off"
		}
		fmt.Fprintf(&b, "\n[%d] window %s (soft limit %s, hard limit %s), %s, %s summarizer, recall tools %s\n",
			i+1, num(int64(c.Window)), num(int64(c.SoftLimit)), num(int64(c.HardLimit)), compaction, c.Summarizer, onOff(c.Recall))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(columns, "\t")+"\t")
		for _, r := range t.rows[i] {
			fmt.Fprintln(tw, r+"\t")
		}
		if i < len(totals) {
			fmt.Fprintln(tw, row("total", totals[i])+"\t")
		}
		tw.Flush()
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "\nSkipped (-skip-bad), not in the figures above:\n")
		for _, s := range skipped {
			fmt.Fprintf(&b, "  %s: %s\n", s.Source, s.Error)
		}
	}
	if len(t.notes) > 0 {
		fmt.Fprintf(&b, "\nNotes on reading the sessions:\n")
		for _, n := range t.notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	b.WriteString(legend)
	_, err := io.WriteString(t.w, b.String())
	return err
}

const legend = `
How to read it: tokens are summed over every request (plain cut and adkctx as % of no adkctx);
"plain cut" is the same requests without adkctx cut to adkctx's hard limit by dropping the
oldest contents, "same size" cut so to the size of the request adkctx sent at each step. A
step's references are the tokens of its call arguments (paths, dotted names, identifiers and ids
of 4+ characters, numbers of 4+ digits) that the agent read in an earlier tool output or user
message but not in the output right before the step: what it carried forward. "kept" counts those present in the request sent at that step; "missed, 1 recall away"
counts the ones adkctx left out that a single exact search_saved_outputs or search_history call
returns. User facts are the tokens of the person's messages, checked in every later request;
task head is the % of requests holding the first message's first 200 bytes.
`

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// num writes n with thousands separators.
func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func pct(part, whole int) string {
	if whole == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

func ofTokens(part, whole int64) string {
	if whole == 0 {
		return num(part)
	}
	return fmt.Sprintf("%s (%.1f%%)", num(part), 100*float64(part)/float64(whole))
}
