package report

import (
	"github.com/adkctx/adkctx/cmd/adkctx/internal/replay"
)

// Header says how the replay ran.
type Header struct {
	// Tokens is the counter ("estimator" or "o200k").
	Tokens  string       `json:"tokens"`
	Configs []ConfigInfo `json:"configs"`
}

// ConfigInfo is one adkctx configuration as the report shows it.
type ConfigInfo struct {
	Label      string `json:"label"`
	Window     int    `json:"window"`
	SoftLimit  int    `json:"soft_limit"`
	HardLimit  int    `json:"hard_limit"`
	Summarizer string `json:"summarizer"`
	Recall     bool   `json:"recall"`
	Compaction bool   `json:"compaction"`
}

// HeaderOf describes a replayer's configurations.
func HeaderOf(rp *replay.Replayer, tokens string) Header {
	h := Header{Tokens: tokens}
	for i, c := range rp.Configs() {
		l := rp.Limits(i)
		h.Configs = append(h.Configs, ConfigInfo{Label: c.Label(), Window: c.Window, SoftLimit: l.Soft, HardLimit: l.Hard,
			Summarizer: c.Summarizer, Recall: c.Recall, Compaction: c.Base.Compaction != nil})
	}
	return h
}

// Skipped is a source left out with -skip-bad.
type Skipped struct {
	Source string `json:"source"`
	Error  string `json:"error"`
}

// Writer writes a report: each session as its replay ends, then the totals.
type Writer interface {
	Session(res *replay.Result, figs []Figures) error
	Close(totals []Figures, skipped []Skipped) error
}

// Miss is a reference adkctx did not keep.
type Miss struct {
	Step      int    `json:"step"`
	Reference string `json:"reference"`
	// Reach is the recall tool one call of which returns it ("" when none would, or recall is off).
	Reach string `json:"one_recall_call,omitempty"`
}

// missesOf lists a run's misses in step order.
func missesOf(run replay.Run) []Miss {
	var out []Miss
	for k, st := range run.Steps {
		for i, m := range st.Score.Missed {
			r := ""
			if i < len(st.Reach) {
				r = st.Reach[i]
			}
			out = append(out, Miss{Step: k, Reference: m, Reach: r})
		}
	}
	return out
}
