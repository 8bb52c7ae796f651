package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// writeJSON prints the report as one JSON object.
func writeJSON(w io.Writer, rep *DemoReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// writeText prints the chart and the summary.
func writeText(w io.Writer, rep *DemoReport, width int) {
	fmt.Fprintf(w, "\nPrompt tokens sent per turn (all the turn's model calls): █ with adkctx, ░ without\n\n")
	writeChart(w, rep.PerTurn, width)
	fmt.Fprintln(w)
	writeSummary(w, rep)
}

// eighths are the partial block characters for 1/8 … 7/8 of a column.
var eighths = []rune{'▏', '▎', '▍', '▌', '▋', '▊', '▉'}

// bar draws v on a scale where full is width columns, with 1/8-column resolution.
func bar(v, full, width int, solid rune) string {
	if full <= 0 || v <= 0 {
		return ""
	}
	units := int(int64(v) * int64(width) * 8 / int64(full))
	if units == 0 {
		units = 1 // never draw a non-zero value as nothing
	}
	s := strings.Repeat(string(solid), units/8)
	if rem := units % 8; rem > 0 {
		if solid == '█' {
			s += string(eighths[rem-1])
		} else {
			s += string(solid)
		}
	}
	return s
}

// writeChart draws two bars per turn scaled to width columns.
func writeChart(w io.Writer, turns []TurnFigures, width int) {
	peak := 0
	for _, t := range turns {
		peak = max(peak, t.PromptTokensWith, t.PromptTokensWithout)
	}
	numW := len(thousands(peak))
	// "  12 with    " + bar + " " + number
	barW := max(width-4-1-8-1-numW, 10)
	for _, t := range turns {
		fmt.Fprintf(w, "%4d %-8s%-*s %*s\n", t.Turn, "with", barW, bar(t.PromptTokensWith, peak, barW, '█'), numW, thousands(t.PromptTokensWith))
		fmt.Fprintf(w, "%4s %-8s%-*s %*s\n", "", "without", barW, bar(t.PromptTokensWithout, peak, barW, '░'), numW, thousands(t.PromptTokensWithout))
	}
	fmt.Fprintf(w, "%4s %-8s%s\n", "", "", "scale: the longest bar is "+thousands(peak)+" tokens")
}

func writeSummary(w io.Writer, rep *DemoReport) {
	row := func(label, with, without, note string) {
		fmt.Fprintf(w, "  %-26s %11s %11s  %s\n", label, with, without, note)
	}
	row("", "with adkctx", "without", "")
	row("prompt tokens, total", thousands(rep.PromptTokensWith), thousands(rep.PromptTokensWithout),
		fmt.Sprintf("%.1f%% fewer", rep.ReductionPercent))
	row("model calls", thousands(rep.ModelCallsWith), thousands(rep.ModelCallsWithout), "")
	row("largest request", thousands(rep.LargestRequestWith), thousands(rep.LargestRequestWithout),
		"window "+thousands(rep.ContextWindow))
	row("requests over soft limit", thousands(rep.RequestsOverSoftWith), thousands(rep.RequestsOverSoftWithout),
		"soft "+thousands(rep.SoftLimit))
	row("requests over the window", thousands(rep.RequestsOverWindowWith), thousands(rep.RequestsOverWindowWithout),
		"a real model rejects them")
	last := rep.PerTurn[len(rep.PerTurn)-1]
	row("last turn's prompt tokens", thousands(last.PromptTokensWith), thousands(last.PromptTokensWithout), "")
	fmt.Fprintln(w)
	triggers := make([]string, 0, len(rep.CompactionsByTrigger))
	for k, v := range rep.CompactionsByTrigger {
		triggers = append(triggers, fmt.Sprintf("%s: %d", k, v))
	}
	slices.Sort(triggers)
	const indent = "                        "
	fmt.Fprintf(w, "  compactions done:     %d markers in storage (trigger %s)\n", rep.Compactions, orNone(strings.Join(triggers, ", ")))
	fmt.Fprintf(w, "  outputs truncated:    %d tool results cut to head + tail, %s bytes kept out\n", rep.OutputsTruncated, thousands(rep.TruncatedBytes))
	fmt.Fprintf(w, "                        %d full outputs saved as artifacts and named in the marker\n", rep.FullOutputsSaved)
	fmt.Fprintf(w, "%s(without adkctx %d results over 10 KiB went in whole)\n", indent, rep.LargeOutputsWithout)
	fmt.Fprintf(w, "  budget decisions:     %d logged, one per model call; %d requests trimmed\n", rep.BudgetDecisions, rep.RequestsTrimmed)
	fmt.Fprintf(w, "  AGENTS.md:            %d files merged into every request (%s bytes)\n", rep.InstructionFiles, thousands(rep.InstructionsBytes))
	fmt.Fprintf(w, "  SQLite session:       %s: %d events, every original one + %d markers\n", rep.SessionID, rep.EventsStored, rep.Compactions)
	fmt.Fprintf(w, "%s%s%s\n", indent, rep.DBPath, tempNote(rep.DBTemporary, "-db"))
	fmt.Fprintf(w, "  zap log (JSON lines): %s%s\n", rep.LogPath, tempNote(rep.LogTemporary, "-log"))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// thousands formats n with comma separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
