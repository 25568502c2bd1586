// Package htmlreport writes the report of a tracecheck gate run as one
// self-contained HTML file: no script, font or stylesheet is fetched, so
// it opens from a CI artifact with no network.
//
// The report shows, in order: the verdict and the command that produced
// it; each stage of the gate with its verdict, figures and time; each
// spec's state graph drawn as an SVG statechart whose transitions are
// coloured by how often the traces exercised them (red and dashed: never);
// every divergence report with the trace excerpt and the command that
// replays it; the mutation kill matrix, when there is one; and links to
// other artifacts (such as Porcupine's visualizations) by relative path.
//
//	err := htmlreport.Write(f, &htmlreport.Run{Title: "gate", Verdict: "PASS", Stages: stages, Charts: charts})
package htmlreport

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
)

// Run is everything one report shows.
type Run struct {
	// Title heads the page.
	Title string
	// Command is the command line that produced the run.
	Command string
	// Started is when the run began; Elapsed how long it took.
	Started time.Time
	Elapsed time.Duration
	// Verdict is the run's overall verdict ("PASS" or "FAIL").
	Verdict string
	// Stages are the gate's stages, in the order they ran.
	Stages []Stage
	// Charts are the specs' state graphs with transition coverage.
	Charts []Chart
	// Divergences are the violations found, with their reports.
	Divergences []Divergence
	// Kills is the mutation kill matrix; empty when no mutant ran.
	Kills []Kill
	// Links point to other artifacts of the run, by relative path.
	Links []Link
}

// Stage is one stage of the gate.
type Stage struct {
	Name string
	// Verdict is "PASS", "FAIL" or "SKIP".
	Verdict string
	// Figures says what the stage measured, in one line.
	Figures string
	Elapsed time.Duration
	// Detail is optional longer output (shown folded).
	Detail string
}

// Divergence is one violation: where it is and how to replay it.
type Divergence struct {
	// Spec and Instance name the spec and the instance that diverged;
	// Trace the trace file.
	Spec, Instance, Trace string
	// Report is the divergence report, as `tracecheck check` prints it.
	Report string
	// Excerpt is the part of the trace around the divergence.
	Excerpt string
	// Replay is the command that reproduces the verdict.
	Replay string
}

// Kill is one row of the mutation kill matrix.
type Kill struct {
	Mutant, File string
	// KilledBy names what killed the mutant (a test, "build", "timeout");
	// empty when it survived.
	KilledBy string
	Elapsed  time.Duration
}

// Link is a link to another artifact.
type Link struct{ Text, Href string }

type chartView struct {
	*Chart
	SVG       template.HTML
	Exercised int
	Percent   string
}

type page struct {
	*Run
	ChartViews []chartView
	Generated  string
	Survivors  int
}

// Write writes r as a self-contained HTML page.
func Write(w io.Writer, r *Run) error {
	p := page{Run: r, Generated: r.Started.UTC().Format(time.RFC3339)}
	for i := range r.Charts {
		c := &r.Charts[i]
		var svg bytes.Buffer
		if err := WriteSVG(&svg, c); err != nil {
			return err
		}
		pct := "—"
		switch {
		case c.Required > 0:
			pct = fmt.Sprintf("%.0f%%", 100*float64(c.RequiredExercised)/float64(c.Required))
		case len(c.Edges) > 0:
			pct = fmt.Sprintf("%.0f%%", 100*float64(c.Exercised())/float64(len(c.Edges)))
		}
		// WriteSVG escapes every string it writes.
		p.ChartViews = append(p.ChartViews, chartView{Chart: c, SVG: template.HTML(svg.String()), Exercised: c.Exercised(), Percent: pct})
	}
	for _, k := range r.Kills {
		if k.KilledBy == "" {
			p.Survivors++
		}
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return fmt.Errorf("htmlreport: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func verdictClass(v string) string {
	switch strings.ToUpper(v) {
	case "PASS", "VALID", "KILLED":
		return "pass"
	case "SKIP", "INCOMPLETE":
		return "skip"
	default:
		return "fail"
	}
}

func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(100 * time.Millisecond).String()
	}
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"class": verdictClass,
	"dur":   duration,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} — {{.Verdict}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #17202a; margin: 0 auto; padding: 1.5em 2em; max-width: 1400px; }
h1 { margin: 0 0 .2em; font-size: 1.6em; }
h2 { margin-top: 2em; border-bottom: 1px solid #d5d8dc; padding-bottom: .2em; }
code, pre { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #f4f6f7; padding: .8em 1em; overflow-x: auto; border-radius: 4px; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { text-align: left; padding: .3em .9em .3em 0; border-bottom: 1px solid #eaeded; vertical-align: top; }
th { font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: .05em .55em; border-radius: 3px; font-weight: 600; font-size: .9em; color: #fff; }
.pass { background: #1e8449; } .fail { background: #c0392b; } .skip { background: #b9770e; }
.meta { color: #566573; }
.chart { max-width: 100%; height: auto; border: 1px solid #eaeded; border-radius: 4px; background: #fff; }
.legend span { margin-right: 1.5em; }
details { margin: .3em 0; }
</style>
</head>
<body>
<header>
<h1>{{.Title}} <span class="badge {{class .Verdict}}" id="verdict">{{.Verdict}}</span></h1>
<p class="meta">{{if .Command}}<code>{{.Command}}</code> · {{end}}started {{.Generated}} · {{dur .Elapsed}}</p>
</header>

<h2>Stages</h2>
<table id="stages">
<thead><tr><th>stage</th><th>verdict</th><th>figures</th><th>time</th></tr></thead>
<tbody>
{{range .Stages}}<tr><td>{{.Name}}</td><td><span class="badge {{class .Verdict}}">{{.Verdict}}</span></td><td>{{.Figures}}{{if .Detail}}<details><summary>output</summary><pre>{{.Detail}}</pre></details>{{end}}</td><td class="num">{{dur .Elapsed}}</td></tr>
{{end}}</tbody>
</table>

{{if .ChartViews}}<h2>Transition coverage</h2>
<p class="legend"><span style="color:#1e8449">━ exercised (wider: more often)</span><span style="color:#c0392b">╌ never exercised</span><span>double border: initial state</span></p>
{{range .ChartViews}}<section class="spec" data-spec="{{.Spec}}">
{{if .Required}}<h3>{{.Spec}}: {{.RequiredExercised}}/{{.Required}} required transitions exercised ({{.Percent}}) · {{.Exercised}}/{{len .Edges}} in all</h3>
{{if .RequiredRule}}<p class="legend">required: {{.RequiredRule}}</p>{{end}}{{else}}<h3>{{.Spec}}: {{.Exercised}}/{{len .Edges}} transitions exercised ({{.Percent}})</h3>{{end}}
{{.SVG}}
{{if .NotRequired}}<details><summary>{{len .NotRequired}} transitions not required, not counted in the percentage</summary>
<table class="transitions"><thead><tr><th>from</th><th>action</th><th>to</th><th>taken</th></tr></thead><tbody>
{{range .NotRequired}}<tr><td><code>{{.From}}</code></td><td>{{.Action}}</td><td><code>{{.To}}</code></td><td class="num">{{.Count}}</td></tr>
{{end}}</tbody></table></details>{{end}}
<details><summary>every transition</summary>
<table class="transitions"><thead><tr><th>from</th><th>action</th><th>to</th><th>taken</th></tr></thead><tbody>
{{range .Edges}}<tr><td><code>{{.From}}</code></td><td>{{.Action}}</td><td><code>{{.To}}</code></td><td class="num">{{.Count}}</td></tr>
{{end}}</tbody></table></details>
</section>
{{end}}{{end}}
<h2>Divergences</h2>
{{if .Divergences}}<div id="divergences">{{range .Divergences}}<section class="divergence">
<h3>{{.Spec}} · {{.Instance}} <span class="meta">in {{.Trace}}</span></h3>
<pre>{{.Report}}</pre>
{{if .Excerpt}}<p>Trace excerpt:</p><pre>{{.Excerpt}}</pre>{{end}}
{{if .Replay}}<p>Replay: <code>{{.Replay}}</code></p>{{end}}
</section>
{{end}}</div>{{else}}<p id="divergences">None: every trace followed its spec.</p>{{end}}

{{if .Kills}}<h2>Mutation kill matrix</h2>
<p>{{len .Kills}} mutants, {{.Survivors}} survived.</p>
<table id="kills"><thead><tr><th>mutant</th><th>file</th><th>killed by</th><th>time</th></tr></thead><tbody>
{{range .Kills}}<tr><td>{{.Mutant}}</td><td><code>{{.File}}</code></td><td>{{if .KilledBy}}{{.KilledBy}}{{else}}<span class="badge fail">SURVIVED</span>{{end}}</td><td class="num">{{dur .Elapsed}}</td></tr>
{{end}}</tbody></table>{{end}}

{{if .Links}}<h2>Artifacts</h2>
<ul id="links">{{range .Links}}<li><a href="{{.Href}}">{{.Text}}</a></li>
{{end}}</ul>{{end}}
</body>
</html>
`))
