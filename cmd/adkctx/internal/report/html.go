package report

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/replay"
)

// The HTML report: one page, no script and nothing loaded from anywhere (styles and charts
// inline, charts as SVG with native tooltips). Each session has, per configuration, a chart of
// every step's prompt tokens without adkctx, cut plainly and with adkctx, the window and hard
// limit, compactions (vertical lines), trimmed requests (triangles), refusals (crosses) and
// missed references (red dots, sized by count, listed in the tooltip), then its figures.
type htmlWriter struct {
	w   *bufio.Writer
	h   Header
	n   int
	err error
}

// NewHTML returns a writer of the HTML report to w.
func NewHTML(w io.Writer, h Header) Writer {
	x := &htmlWriter{w: bufio.NewWriter(w), h: h}
	x.exec("head", h)
	return x
}

func (x *htmlWriter) exec(name string, data any) {
	if x.err == nil {
		x.err = pages.ExecuteTemplate(x.w, name, data)
	}
}

const (
	chartW, chartH = 960.0, 260.0
	padL, padR     = 64.0, 16.0
	padT, padB     = 12.0, 34.0
	missBand       = 14.0
)

type chart struct {
	Label                   string
	Width, Height           float64
	Steps                   int
	None, Cut, Adkctx       string // polyline points
	WindowY, HardY          float64
	Compactions             []mark
	Trims, Refusals, Misses []mark
	YTicks                  []tick
	XTicks                  []tick
	PlotLeft, PlotRight     float64
	PlotTop, PlotBottom     float64
	Figures                 Figures
	Config                  ConfigInfo
	MissList                []Miss
	MoreMisses              int
}

type mark struct {
	X, Y, R float64
	Title   string
}

type tick struct {
	Pos   float64
	Label string
}

type htmlSession struct {
	Index  int
	ID     string
	Format string
	Model  string
	Steps  int
	Turns  int
	Notes  []string
	Charts []chart
}

func (x *htmlWriter) Session(res *replay.Result, figs []Figures) error {
	x.n++
	s := htmlSession{Index: x.n, ID: res.Session.ID, Format: string(res.Session.Format), Model: res.Session.Model,
		Steps: len(res.Baseline), Turns: len(res.Session.Turns), Notes: res.Session.Notes}
	for i, run := range res.Runs {
		s.Charts = append(s.Charts, x.chart(res, i, run, figs[i]))
	}
	x.exec("session", s)
	return x.err
}

func (x *htmlWriter) chart(res *replay.Result, i int, run replay.Run, f Figures) chart {
	cfg := x.h.Configs[i]
	n := len(res.Baseline)
	ymax := float64(cfg.Window)
	for k, b := range res.Baseline {
		ymax = max(ymax, float64(b.Tokens), float64(run.Steps[k].Tokens))
	}
	ymax *= 1.05
	plotB := chartH - padB - missBand
	xOf := func(k float64) float64 {
		if n <= 1 {
			return padL
		}
		return padL + k*(chartW-padL-padR)/float64(n-1)
	}
	yOf := func(v float64) float64 { return padT + (plotB-padT)*(1-v/ymax) }
	var none, cut, ad strings.Builder
	c := chart{Label: cfg.Label, Width: chartW, Height: chartH, Steps: n, PlotLeft: padL, PlotRight: chartW - padR, PlotTop: padT, PlotBottom: plotB,
		WindowY: yOf(float64(cfg.Window)), HardY: yOf(float64(cfg.HardLimit)), Figures: f, Config: cfg}
	pt := func(b *strings.Builder, k int, v int) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(b, "%.1f,%.1f", xOf(float64(k)), yOf(float64(v)))
	}
	for k, b := range res.Baseline {
		st := run.Steps[k]
		pt(&none, k, b.Tokens)
		pt(&cut, k, b.Cuts[i].Tokens)
		pt(&ad, k, st.Tokens)
		switch {
		case st.Refused:
			c.Refusals = append(c.Refusals, mark{X: xOf(float64(k)), Y: yOf(float64(cfg.HardLimit)), Title: fmt.Sprintf("step %d: refused by adkctx", k)})
		case st.Action == "trimmed":
			c.Trims = append(c.Trims, mark{X: xOf(float64(k)), Y: yOf(float64(st.Tokens)), Title: fmt.Sprintf("step %d: trimmed, %d contents dropped", k, st.ContentsDropped)})
		}
		if m := len(st.Score.Missed); m > 0 {
			list := st.Score.Missed
			if len(list) > 12 {
				list = append(list[:12:12], "…")
			}
			c.Misses = append(c.Misses, mark{X: xOf(float64(k)), Y: plotB + missBand/2 + 6, R: min(2+float64(m), 6),
				Title: fmt.Sprintf("step %d: %d of %d references not kept: %s", k, m, st.Score.Refs, strings.Join(list, ", "))})
		}
	}
	c.None, c.Cut, c.Adkctx = none.String(), cut.String(), ad.String()
	for _, cp := range run.Compactions {
		k := float64(cp.BeforeStep) - 0.5
		c.Compactions = append(c.Compactions, mark{X: xOf(max(k, 0)), Title: fmt.Sprintf("compaction before step %d (%s, %s summarizer, %d events)", cp.BeforeStep, cp.Trigger, cp.Summarizer, cp.EventsCovered)})
	}
	for _, v := range niceTicks(ymax) {
		c.YTicks = append(c.YTicks, tick{Pos: yOf(v), Label: num(int64(v))})
	}
	step := max(1, n/10)
	for k := 0; k < n; k += step {
		c.XTicks = append(c.XTicks, tick{Pos: xOf(float64(k)), Label: fmt.Sprint(k)})
	}
	all := missesOf(run)
	const shown = 60
	if len(all) > shown {
		c.MoreMisses = len(all) - shown
		all = all[:shown]
	}
	c.MissList = all
	return c
}

// niceTicks returns 4–6 round values from 0 up to top.
func niceTicks(top float64) []float64 {
	if top <= 0 {
		return []float64{0}
	}
	step := 1.0
	for top/step > 6 {
		switch {
		case top/(step*2) <= 6:
			step *= 2
		case top/(step*5) <= 6:
			step *= 5
		default:
			step *= 10
		}
	}
	var out []float64
	for v := 0.0; v <= top; v += step {
		out = append(out, v)
	}
	return out
}

func (x *htmlWriter) Close(totals []Figures, skipped []Skipped) error {
	type tot struct {
		Config  ConfigInfo
		Figures Figures
	}
	var ts []tot
	for i, f := range totals {
		ts = append(ts, tot{Config: x.h.Configs[i], Figures: f})
	}
	x.exec("tail", map[string]any{"Totals": ts, "Skipped": skipped, "Sessions": x.n})
	if x.err == nil {
		x.err = x.w.Flush()
	}
	return x.err
}

var pages = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":   func(n any) string { return num(toInt64(n)) },
	"pct":   pct,
	"of":    ofTokens,
	"sub":   func(a, b any) int64 { return toInt64(a) - toInt64(b) },
	"onOff": onOff,
}).Parse(pageTemplate))

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

const pageTemplate = `{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>adkctx replay</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1010px;color:#1c2430;padding:0 12px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 4px} h3{font-size:14px;margin:14px 0 2px;color:#394150}
.meta{color:#5a6472} table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}
td,th{padding:3px 10px;border-bottom:1px solid #e3e6ea;text-align:right} th{text-align:left;font-weight:600} td:first-child{text-align:left}
svg{background:#fbfcfd;border:1px solid #e3e6ea;border-radius:4px}
.none{stroke:#9aa3ad} .cut{stroke:#e08a1e;stroke-dasharray:5 3} .adkctx{stroke:#1f6fd1}
.series{fill:none;stroke-width:1.6} .window{stroke:#c0392b;stroke-dasharray:6 4} .hard{stroke:#5b2c6f;stroke-dasharray:2 3}
.compaction{stroke:#2e8b57;stroke-width:1.2;opacity:.8} .trim{fill:#8e44ad} .refusal{stroke:#c0392b;stroke-width:2.2} .miss{fill:#d63031;opacity:.85}
.axis{stroke:#b6bdc6} .tick{font-size:10px;fill:#5a6472} .legend span{display:inline-block;margin-right:14px} .sw{display:inline-block;width:18px;height:3px;vertical-align:middle;margin-right:4px}
details{margin:4px 0 10px} code{font-size:12px}
</style></head><body>
<h1>adkctx replay</h1>
<p class="meta">Recorded sessions replayed through adk-go's runner and llmagent, without adkctx and with it; prompt tokens counted by the {{.Tokens}}.
A step's <b>references</b> are the tokens of its call arguments the agent read earlier (in a tool output or a user message) but not right before the step; <b>kept</b>: present in the request sent at that step.
The <b>plain cut</b> is the requests without adkctx cut to adkctx's hard limit by dropping the oldest contents.</p>
<p class="legend"><span><i class="sw" style="background:#9aa3ad"></i>no adkctx</span><span><i class="sw" style="background:#e08a1e"></i>plain cut</span><span><i class="sw" style="background:#1f6fd1"></i>adkctx</span><span><i class="sw" style="background:#c0392b"></i>window</span><span><i class="sw" style="background:#5b2c6f"></i>hard limit</span><span><i class="sw" style="background:#2e8b57"></i>compaction</span><span>▲ trimmed</span><span>✕ refused</span><span style="color:#d63031">● references missed</span></p>
<p><a href="#totals">Totals</a></p>
{{end}}
{{define "session"}}<section class="session" id="session-{{.Index}}">
<h2>{{.ID}}</h2>
<p class="meta">{{.Format}}{{with .Model}}, recorded with {{.}}{{end}}; {{.Turns}} turns, {{.Steps}} steps{{range .Notes}}; {{.}}{{end}}</p>
{{range .Charts}}{{template "chart" .}}
{{end}}</section>
{{end}}
{{define "chart"}}<h3>{{.Label}}</h3>
<svg class="chart" data-steps="{{.Steps}}" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="prompt tokens per step">
<line class="axis" x1="{{.PlotLeft}}" y1="{{.PlotBottom}}" x2="{{.PlotRight}}" y2="{{.PlotBottom}}"/>
{{range .YTicks}}<line class="axis" x1="{{$.PlotLeft}}" x2="{{$.PlotRight}}" y1="{{.Pos}}" y2="{{.Pos}}" opacity=".25"/><text class="tick" x="{{sub $.PlotLeft 4}}" y="{{.Pos}}" text-anchor="end" dy="3">{{.Label}}</text>
{{end}}{{range .XTicks}}<text class="tick" x="{{.Pos}}" y="{{$.Height}}" dy="-6" text-anchor="middle">{{.Label}}</text>
{{end}}<line class="window" x1="{{.PlotLeft}}" x2="{{.PlotRight}}" y1="{{.WindowY}}" y2="{{.WindowY}}"><title>window {{num .Config.Window}}</title></line>
<line class="hard" x1="{{.PlotLeft}}" x2="{{.PlotRight}}" y1="{{.HardY}}" y2="{{.HardY}}"><title>hard limit {{num .Config.HardLimit}}</title></line>
{{range .Compactions}}<line class="compaction" x1="{{.X}}" x2="{{.X}}" y1="{{$.PlotTop}}" y2="{{$.PlotBottom}}"><title>{{.Title}}</title></line>
{{end}}<polyline class="series none" data-series="none" points="{{.None}}"/>
<polyline class="series cut" data-series="cut" points="{{.Cut}}"/>
<polyline class="series adkctx" data-series="adkctx" points="{{.Adkctx}}"/>
{{range .Trims}}<path class="trim" d="M{{.X}} {{.Y}}m-4 3h8l-4-7z"><title>{{.Title}}</title></path>
{{end}}{{range .Refusals}}<path class="refusal" d="M{{.X}} {{.Y}}m-4-4l8 8m0-8l-8 8"><title>{{.Title}}</title></path>
{{end}}{{range .Misses}}<circle class="miss" cx="{{.X}}" cy="{{.Y}}" r="{{.R}}"><title>{{.Title}}</title></circle>
{{end}}</svg>
{{template "figures" .Figures}}
{{if .MissList}}<details><summary>References adkctx did not keep ({{num (sub .Figures.References .Figures.ReferencesKeptAdkctx)}}; {{num .Figures.MissedOneRecallAway}} one recall call away)</summary>
<table><tr><th>step</th><th>reference</th><th>one recall call</th></tr>
{{range .MissList}}<tr><td>{{.Step}}</td><td><code>{{.Reference}}</code></td><td>{{or .Reach "—"}}</td></tr>
{{end}}</table>{{if .MoreMisses}}<p class="meta">… and {{.MoreMisses}} more (the JSON report lists them all)</p>{{end}}</details>{{end}}
{{end}}
{{define "figures"}}<table class="figures">
<tr><th></th><th>no adkctx</th><th>plain cut</th><th>adkctx</th></tr>
<tr><td>prompt tokens</td><td>{{num .TokensNoAdkctx}}</td><td>{{of .TokensPlainCut .TokensNoAdkctx}}</td><td>{{of .TokensAdkctx .TokensNoAdkctx}}</td></tr>
<tr><td>largest request</td><td>{{num .LargestNoAdkctx}}</td><td>{{num .LargestPlainCut}}</td><td>{{num .LargestAdkctx}}</td></tr>
<tr><td>requests over the window</td><td>{{num .OverWindowNoAdkctx}}</td><td>{{num .OverWindowPlainCut}}</td><td></td></tr>
<tr><td>references kept ({{num .References}})</td><td></td><td>{{pct .ReferencesKeptPlainCut .References}} ({{pct .ReferencesKeptSameSizeCut .References}} cut to adkctx's size)</td><td>{{pct .ReferencesKeptAdkctx .References}}</td></tr>
<tr><td>user facts kept ({{num .UserFacts}})</td><td></td><td>{{pct .UserFactsKeptPlainCut .UserFacts}} ({{pct .UserFactsKeptSameSizeCut .UserFacts}} cut to adkctx's size)</td><td>{{pct .UserFactsKeptAdkctx .UserFacts}}</td></tr>
<tr><td>task head present ({{num .Steps}} requests)</td><td></td><td>{{pct .TaskHeadPlainCut .Steps}}</td><td>{{pct .TaskHeadAdkctx .Steps}}</td></tr>
<tr><td>compactions · trimmed · refused</td><td></td><td></td><td>{{num .Compactions}} · {{num .RequestsTrimmed}} ({{num .ContentsDropped}} contents) · {{num .RequestsRefused}}</td></tr>
</table>{{end}}
{{define "tail"}}<h2 id="totals">Totals: {{.Sessions}} sessions</h2>
{{range .Totals}}<h3>{{.Config.Label}} (soft limit {{num .Config.SoftLimit}}, hard limit {{num .Config.HardLimit}}{{if not .Config.Compaction}}, compaction off{{end}})</h3>
{{template "figures" .Figures}}
{{end}}{{if .Skipped}}<h3>Skipped (-skip-bad), not in the figures</h3><ul>{{range .Skipped}}<li><code>{{.Source}}</code>: {{.Error}}</li>{{end}}</ul>{{end}}
</body></html>
{{end}}`
