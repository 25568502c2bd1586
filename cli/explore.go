package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tracecheck/tracecheck/chart"
	"github.com/tracecheck/tracecheck/model"
)

// specArg parses explore's and chart's arguments: flags and one spec name,
// which may be left out when --mutant names a mutant only one spec has. It
// returns the name, or an exit code >= 0 when parsing stopped.
func (a *app) specArg(fs *flag.FlagSet, args []string, mutant *string) (string, int) {
	pos, code := Parse(fs, args)
	if code >= 0 {
		return "", code
	}
	if len(pos) == 0 && *mutant != "" {
		if s := a.mutantSpec(*mutant); s != "" {
			return s, -1
		}
	}
	if len(pos) != 1 {
		fs.Usage()
		return "", ExitUsage
	}
	return pos[0], -1
}

const exploreSynopsis = `[--json] [--mutant NAME] SPECS

Explores every reachable state of the Go transcription of a registered
spec, checks its invariants, action properties and deadlock freedom, and
prints what TLC prints: distinct states, transitions, depth, what was
checked and the verdict. On a violation it prints the shortest
counterexample and exits 1. --mutant explores one of the spec's mutants
(a copy of the spec with a known bug, which the checks must catch; the
spec may be left out, a mutant's name says whose it is).

--json writes one object: {"spec", "states", "transitions", "depth",
"checked": [property], "verdict": "pass"|"violation", "violations":
[{"kind", "name", "trace": [{"action", VARIABLE: value...}]}], "millis"}.
(--format json is a deprecated spelling of --json.)`

func (a *app) runExplore(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("explore", strings.Replace(exploreSynopsis, "SPECS", a.specNames(), 1), stderr)
	asJSON := fs.Bool("json", false, UsageJSON)
	mutant := fs.String("mutant", "", UsageMutant+a.mutantNames())
	Deprecated(fs, stderr, "format", "--json", false, func(v string) error {
		switch v {
		case "json":
			*asJSON = true
		case "text":
			*asJSON = false
		default:
			return fmt.Errorf("unknown format %q (want --json, or nothing for text)", v)
		}
		return nil
	})
	name, code := a.specArg(fs, args, mutant)
	if code >= 0 {
		return code
	}
	s, m, ok := a.spec(name, *mutant, stderr)
	if !ok {
		return ExitUsage
	}
	format := "text"
	if *asJSON {
		format = "json"
	}
	return m.explore(s.Name, strings.Join(s.Files, ", "), format, stdout, stderr)
}

// exploreJSON is explore's JSON output.
type exploreJSON struct {
	Spec        string          `json:"spec"`
	States      int             `json:"states"`
	Transitions int             `json:"transitions"`
	Depth       int             `json:"depth"`
	Checked     []string        `json:"checked"`
	Verdict     string          `json:"verdict"` // "pass" or "violation"
	Violations  []violationJSON `json:"violations"`
	Millis      float64         `json:"millis"`
}

type violationJSON struct {
	Kind  string              `json:"kind"`
	Name  string              `json:"name"`
	Trace []map[string]string `json:"trace"` // each: "action" plus the variables
}

func explore[S comparable](sp *model.Spec[S], label, files, format string, stdout, stderr io.Writer) int {
	start := time.Now()
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck explore: %v\n", err)
		return ExitInput
	}
	elapsed := time.Since(start)
	code := ExitOK
	if !r.OK() {
		code = ExitViolation
	}
	if format == "json" {
		out := exploreJSON{Spec: sp.Name, States: r.States(), Transitions: r.Transitions(), Depth: r.Depth,
			Checked: r.Checked, Verdict: "pass", Violations: []violationJSON{},
			Millis: float64(elapsed.Microseconds()) / 1000}
		if code != ExitOK {
			out.Verdict = "violation"
		}
		for _, v := range r.Violations {
			vj := violationJSON{Kind: v.Kind.String(), Name: v.Name}
			for _, st := range v.Trace {
				m := map[string]string{"action": st.Action}
				for i, val := range sp.Valuation(st.State) {
					m[sp.Vars[i]] = val.String()
				}
				vj.Trace = append(vj.Trace, m)
			}
			out.Violations = append(out.Violations, vj)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "tracecheck explore: %v\n", err)
			return ExitInput
		}
		return code
	}

	if files == "" {
		files = label
	}
	fmt.Fprintf(stdout, "tracecheck explore %s (%s)\n", sp.Name, files)
	fmt.Fprintf(stdout, "Checking %d properties: %s\n", len(r.Checked), strings.Join(r.Checked, ", "))
	for _, v := range r.Violations {
		switch v.Kind {
		case model.Deadlock:
			fmt.Fprintf(stdout, "Error: Deadlock reached.\n")
		case model.PropertyViolation:
			fmt.Fprintf(stdout, "Error: Action property %s is violated.\n", v.Name)
		default:
			fmt.Fprintf(stdout, "Error: Invariant %s is violated.\n", v.Name)
		}
		fmt.Fprintf(stdout, "Error: The behavior up to this point is:\n")
		for i, st := range v.Trace {
			label := "<" + st.Action + ">"
			if i == 0 {
				label = "<Initial predicate>"
			}
			fmt.Fprintf(stdout, "State %d: %s\n", i+1, label)
			vals := sp.Valuation(st.State)
			for j, name := range sp.Vars {
				fmt.Fprintf(stdout, "/\\ %s = %s\n", name, vals[j])
			}
			fmt.Fprintln(stdout)
		}
	}
	if r.OK() {
		fmt.Fprintf(stdout, "Model checking completed. No error has been found.\n")
	} else {
		fmt.Fprintf(stdout, "Model checking completed. %d of %d properties violated.\n", len(r.Violations), len(r.Checked))
	}
	fmt.Fprintf(stdout, "%d distinct states found, %d transitions, %d initial.\n", r.States(), r.Transitions(), len(r.Graph.Init))
	fmt.Fprintf(stdout, "The depth of the complete state graph search is %d.\n", r.Depth)
	if n := len(r.Graph.Stutters); n > 0 {
		fmt.Fprintf(stdout, "%d terminal state(s) stutter by declaration (not counted as transitions).\n", n)
	}
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	fmt.Fprintf(stdout, "Verdict: %s (%s)\n", verdict, elapsed.Round(time.Microsecond))
	return code
}

const chartSynopsis = `[--format mermaid|dot | --json] [--mutant NAME] SPECS

Draws the state graph of a registered spec. Mermaid (the default) prints a
stateDiagram-v2 that hides terminal self-loops; where the spec's chart
style gives its edges labels of their own (program's are the labels of
the publisher's original design chart), comment lines after the chart
("%% label: Action") pair each label with the spec's action. DOT draws the
same projection. --json writes the whole graph: every state as a variable
assignment and every labelled edge (--format json is a deprecated
spelling of it). --mutant draws one of the spec's mutants (the spec may
then be left out).`

func (a *app) runChart(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("chart", strings.Replace(chartSynopsis, "SPECS", a.specNames(), 1), stderr)
	format := fs.String("format", "mermaid", "text `format`: mermaid or dot")
	asJSON := fs.Bool("json", false, UsageJSON)
	mutant := fs.String("mutant", "", UsageMutant+a.mutantNames())
	name, code := a.specArg(fs, args, mutant)
	if code >= 0 {
		return code
	}
	switch *format {
	case "mermaid", "dot":
	case "json":
		fmt.Fprintln(stderr, "tracecheck chart: --format json is deprecated: use --json")
		*asJSON = true
	default:
		fmt.Fprintf(stderr, "tracecheck chart: unknown format %q (want mermaid or dot, or --json)\n", *format)
		return ExitUsage
	}
	if *asJSON {
		*format = "json"
	}
	_, m, ok := a.spec(name, *mutant, stderr)
	if !ok {
		return ExitUsage
	}
	return m.chart(*format, stdout, stderr)
}

// labelLegend writes, after a Mermaid chart whose style labels edges, one
// comment line per action whose label is not its name: "%% label: Action",
// so that the chart's words and the spec's (in traces and reports) can be
// read side by side.
func labelLegend[S comparable](w io.Writer, sp *model.Spec[S], st chart.Style[S]) error {
	if st.Edge == nil {
		return nil
	}
	var b strings.Builder
	for _, a := range sp.Actions {
		if l := st.Edge(a.Name); l != "" && l != a.Name {
			if b.Len() == 0 {
				b.WriteString("    %% edge labels and the spec's actions:\n")
			}
			fmt.Fprintf(&b, "    %%%% %s: %s\n", l, a.Name)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func drawChart[S comparable](sp *model.Spec[S], st chart.Style[S], format string, stdout, stderr io.Writer) int {
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck chart: %v\n", err)
		return ExitInput
	}
	switch format {
	case "dot":
		err = chart.DOT(stdout, sp, &r.Graph, st)
	case "json":
		err = chart.JSON(stdout, sp, &r.Graph)
	default:
		if err = chart.Mermaid(stdout, sp, &r.Graph, st); err == nil {
			err = labelLegend(stdout, sp, st)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck chart: %v\n", err)
		return ExitInput
	}
	return ExitOK
}
