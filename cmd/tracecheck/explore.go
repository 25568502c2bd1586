package main

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
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

func init() {
	register("explore", command{"explore a bundled spec exhaustively and check its properties, as TLC does", runExplore})
	register("chart", command{"draw a bundled spec's state graph (Mermaid, DOT or JSON)", runChart})
}

// mutants are the spec mutants selectable with --mutant.
var mutants = map[string]session.Options{
	"no-compaction-teardown": {NoCompactionTeardown: true},
	"no-vad-teardown":        {NoVadTeardown: true},
	"no-resp-teardown":       {NoRespTeardown: true},
}

func mutantNames() string {
	return "no-compaction-teardown, no-vad-teardown, no-resp-teardown"
}

// specFiles names the spec each bundled transcription comes from.
var specFiles = map[string]string{"program": "spec/Program.tla", "session": "spec/session.fizz"}

// graphSpec checks the spec name and mutant, and hands the chosen spec to
// the matching instantiation of f.
func graphSpec(name, mutant string, stderr io.Writer,
	prog func(*model.Spec[program.State]) int, sess func(*model.Spec[session.State]) int) int {
	opt, ok := mutants[mutant]
	if mutant != "" && !ok {
		fmt.Fprintf(stderr, "tracecheck: unknown mutant %q (have %s)\n", mutant, mutantNames())
		return exitUsage
	}
	switch name {
	case "program":
		if mutant != "" {
			fmt.Fprintf(stderr, "tracecheck: spec program has no mutants\n")
			return exitUsage
		}
		return prog(program.Spec())
	case "session":
		return sess(session.Spec(opt))
	}
	fmt.Fprintf(stderr, "tracecheck: unknown spec %q (want program or session)\n", name)
	return exitUsage
}

// specArg parses explore's and chart's arguments: flags and one spec name.
// It returns the name, or an exit code >= 0 when parsing stopped.
func specArg(fs *flag.FlagSet, args []string) (string, int) {
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return "", code
	}
	if len(pos) != 1 {
		fs.Usage()
		return "", exitUsage
	}
	return pos[0], -1
}

const exploreSynopsis = `[--format text|json] [--mutant NAME] program|session

Explores every reachable state of the Go transcription of a bundled spec
(program: spec/Program.tla; session: spec/session.fizz), checks its
invariants, action properties and deadlock freedom, and prints what TLC
prints: distinct states, transitions, depth, what was checked and the
verdict. On a violation it prints the shortest counterexample and exits 1.`

func runExplore(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("explore", exploreSynopsis, stderr)
	format := fs.String("format", "text", "output `format`: text or json")
	mutant := fs.String("mutant", "", "explore a session spec `mutant`: "+mutantNames())
	name, code := specArg(fs, args)
	if code >= 0 {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "tracecheck explore: unknown format %q (want text or json)\n", *format)
		return exitUsage
	}
	return graphSpec(name, *mutant, stderr,
		func(sp *model.Spec[program.State]) int { return explore(sp, *format, stdout, stderr) },
		func(sp *model.Spec[session.State]) int { return explore(sp, *format, stdout, stderr) })
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

func explore[S comparable](sp *model.Spec[S], format string, stdout, stderr io.Writer) int {
	start := time.Now()
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck explore: %v\n", err)
		return exitInput
	}
	elapsed := time.Since(start)
	code := exitOK
	if !r.OK() {
		code = exitViolation
	}
	if format == "json" {
		out := exploreJSON{Spec: sp.Name, States: r.States(), Transitions: r.Transitions(), Depth: r.Depth,
			Checked: r.Checked, Verdict: "pass", Violations: []violationJSON{},
			Millis: float64(elapsed.Microseconds()) / 1000}
		if code != exitOK {
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
			return exitInput
		}
		return code
	}

	fmt.Fprintf(stdout, "tracecheck explore %s (%s)\n", sp.Name, specFiles[strings.SplitN(sp.Name, "[", 2)[0]])
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

const chartSynopsis = `[--format mermaid|dot|json] [--mutant NAME] program|session

Draws the state graph of a bundled spec. Mermaid (the default) prints a
stateDiagram-v2 that hides terminal self-loops: for program it is seed
000's chart. DOT draws the same projection; JSON is the whole graph, with
every state as a variable assignment and every labelled edge.`

func runChart(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("chart", chartSynopsis, stderr)
	format := fs.String("format", "mermaid", "output `format`: mermaid, dot or json")
	mutant := fs.String("mutant", "", "draw a session spec `mutant`: "+mutantNames())
	name, code := specArg(fs, args)
	if code >= 0 {
		return code
	}
	switch *format {
	case "mermaid", "dot", "json":
	default:
		fmt.Fprintf(stderr, "tracecheck chart: unknown format %q (want mermaid, dot or json)\n", *format)
		return exitUsage
	}
	progStyle := chart.Style[program.State]{
		State: func(s program.State) string { return s.Phase.String() },
		Edge:  func(a string) string { return program.Labels[a] },
	}
	return graphSpec(name, *mutant, stderr,
		func(sp *model.Spec[program.State]) int { return drawChart(sp, progStyle, *format, stdout, stderr) },
		func(sp *model.Spec[session.State]) int {
			return drawChart(sp, chart.Style[session.State]{}, *format, stdout, stderr)
		})
}

func drawChart[S comparable](sp *model.Spec[S], st chart.Style[S], format string, stdout, stderr io.Writer) int {
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck chart: %v\n", err)
		return exitInput
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
		return exitInput
	}
	return exitOK
}
