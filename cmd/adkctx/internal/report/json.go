package report

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/replay"
)

// The JSON report, written as it goes:
//
//	{"tool": "adkctx replay", "tokens": ..., "configs": [ConfigInfo...],
//	 "sessions": [{"id", "format", "model", "turns", "steps", "notes", "configs": [Figures...],
//	               "missed_references": [[Miss...] per configuration]}...],
//	 "skipped": [Skipped...], "totals": [Figures per configuration]}
type jsonWriter struct {
	w     *bufio.Writer
	first bool
	err   error
}

type jsonSession struct {
	ID      string    `json:"id"`
	Format  string    `json:"format"`
	Model   string    `json:"model,omitempty"`
	Turns   int       `json:"turns"`
	Steps   int       `json:"steps"`
	Notes   []string  `json:"notes,omitempty"`
	Configs []Figures `json:"configs"`
	Misses  [][]Miss  `json:"missed_references"`
}

// NewJSON returns a writer of the JSON report to w.
func NewJSON(w io.Writer, h Header) Writer {
	j := &jsonWriter{w: bufio.NewWriter(w), first: true}
	j.write(`{"tool":"adkctx replay","tokens":`)
	j.value(h.Tokens)
	j.write(`,"configs":`)
	j.value(h.Configs)
	j.write(`,"sessions":[`)
	return j
}

func (j *jsonWriter) write(s string) {
	if j.err == nil {
		_, j.err = j.w.WriteString(s)
	}
}

func (j *jsonWriter) value(v any) {
	if j.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		j.err = err
		return
	}
	_, j.err = j.w.Write(b)
}

func (j *jsonWriter) Session(res *replay.Result, figs []Figures) error {
	s := jsonSession{ID: res.Session.ID, Format: string(res.Session.Format), Model: res.Session.Model,
		Turns: len(res.Session.Turns), Steps: len(res.Baseline), Notes: res.Session.Notes, Configs: figs}
	for _, run := range res.Runs {
		m := missesOf(run)
		if m == nil {
			m = []Miss{}
		}
		s.Misses = append(s.Misses, m)
	}
	if !j.first {
		j.write(",")
	}
	j.first = false
	j.write("\n")
	j.value(s)
	return j.err
}

func (j *jsonWriter) Close(totals []Figures, skipped []Skipped) error {
	j.write("\n],\"skipped\":")
	if skipped == nil {
		skipped = []Skipped{}
	}
	j.value(skipped)
	j.write(",\"totals\":")
	j.value(totals)
	j.write("}\n")
	if j.err == nil {
		j.err = j.w.Flush()
	}
	return j.err
}
