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

// specArg parses explore's and chart's arguments: flags and one spec name.
// It returns the name, or an exit code >= 0 when parsing stopped.
func specArg(fs *flag.FlagSet, args []string) (string, int) {
	pos, code := Parse(fs, args)
	if code >= 0 {
		return "", code
	}
	if len(pos) != 1 {
		fs.Usage()
		return "", ExitUsage
	}
	return pos[0], -1
}

const exploreSynopsis = `[--format text|json] [--mutant NAME] SPECS

Explores every reachable state of the Go transcription of a registered
spec, checks its invariants, action properties and deadlock freedom, and
prints what TLC prints: distinct states, transitions, depth, what was
checked and the verdict. On a violation it prints the shortest
counterexample and exits 1.`

func (a *app) runExplore(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("explore", strings.Replace(exploreSynopsis, "SPECS", a.specNames(), 1), stderr)
	format := fs.String("format", "text", "output `format`: text or json")
	mutant := fs.String("mutant", "", "explore a spec `mutant`: "+a.mutantNames())
	name, code := specArg(fs, args)
	if code >= 0 {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "tracecheck explore: unknown format %q (want text or json)\n", *format)
		return ExitUsage
	}
	s, m, ok := a.spec(name, *mutant, stderr)
	if !ok {
		return ExitUsage
	}
	return m.explore(s.Name, strings.Join(s.Files, ", "), *format, stdout, stderr)
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

const chartSynopsis = `[--format mermaid|dot|json] [--mutant NAME] SPECS

Draws the state graph of a registered spec. Mermaid (the default) prints a
stateDiagram-v2 that hides terminal self-loops (for program it is seed
000's chart). DOT draws the same projection; JSON is the whole graph, with
every state as a variable assignment and every labelled edge.`

func (a *app) runChart(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("chart", strings.Replace(chartSynopsis, "SPECS", a.specNames(), 1), stderr)
	format := fs.String("format", "mermaid", "output `format`: mermaid, dot or json")
	mutant := fs.String("mutant", "", "draw a spec `mutant`: "+a.mutantNames())
	name, code := specArg(fs, args)
	if code >= 0 {
		return code
	}
	switch *format {
	case "mermaid", "dot", "json":
	default:
		fmt.Fprintf(stderr, "tracecheck chart: unknown format %q (want mermaid, dot or json)\n", *format)
		return ExitUsage
	}
	_, m, ok := a.spec(name, *mutant, stderr)
	if !ok {
		return ExitUsage
	}
	return m.chart(*format, stdout, stderr)
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
		err = chart.Mermaid(stdout, sp, &r.Graph, st)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck chart: %v\n", err)
		return ExitInput
	}
	return ExitOK
}
