// Package bundled registers tracecheck's bundled specs with the command
// line: spec/Program.tla (seed 000, the checkpoint publisher's lifecycle)
// and spec/session.fizz (seed 001, the realtime session hierarchy) with
// their mutants, then seed 001's per-machine specs under spec/machines (M1
// to M5, see docs/machines.md) with theirs. It is the one place that names
// them: the tracecheck binary, its tests and the corpus tests all derive
// the list from Specs.
package bundled

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/tracecheck/tracecheck/chart"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/machines"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
	"github.com/tracecheck/tracecheck/spec"
	specmachines "github.com/tracecheck/tracecheck/spec/machines"
	"github.com/tracecheck/tracecheck/trace"
)

// hash is the spec files' SHA-256 as trace headers give it ("" if a file
// is missing, which only a broken build could do: then no header is
// compared).
func hash(files []string) string {
	h, err := spec.SHA256(files...)
	if err != nil {
		return ""
	}
	return h
}

// Specs returns the bundled specs: program, session, then the per-machine
// specs ([Machines]).
func Specs() []cli.Spec {
	return append([]cli.Spec{Program(), Session()}, Machines()...)
}

// Machines returns seed 001's per-machine specs (spec/machines, transcribed
// in model/machines), M1 to M5, each with its mutants.
func Machines() []cli.Spec {
	return []cli.Spec{
		machine(machines.Connection, "Connection", "M1, the connection: teardown happens once, from every exit path (close, drop, child panic) (spec/machines/Connection.tla)",
			machines.ConnectionMutants),
		machine(machines.Turn, "Turn", "M2, turn detection: a turn is open exactly while speech is detected, an abort clears both (spec/machines/Turn.tla)",
			machines.TurnMutants),
		machine(machines.Response, "Response", "M3, the response coordinator: at most one live response, superseding ends the old first, none after teardown (spec/machines/Response.tla)",
			machines.ResponseMutants),
		machine(machines.Compaction, "Compaction", "M4, history compaction: single flight, none after teardown (spec/machines/Compaction.tla)",
			machines.CompactionMutants),
		machine(machines.TTS, "TTS", "M5, a response's TTS pipeline: close once, join once, no audio after the response ended (spec/machines/TTS.tla)",
			machines.TTSMutants),
	}
}

// machine registers the machine spec spec/machines/<module>.tla, whose
// transcription (or a mutant's) spec returns.
func machine[S comparable](spec func(machines.Mutant) *model.Spec[S], module, doc string, mutants []machines.Mutant) cli.Spec {
	m := cli.Of(spec(machines.Written))
	files := specmachines.Files(module)
	h, err := specmachines.SHA256(files...)
	if err != nil {
		h = ""
	}
	s := cli.Spec{Name: m.Name(), Doc: doc, SHA256: h, Model: m}
	for _, f := range files {
		s.Files = append(s.Files, "spec/machines/"+f)
	}
	for _, mu := range mutants {
		s.Mutants = append(s.Mutants, cli.Mutant{Name: mu.Name, Doc: mu.Doc, Breaks: mu.Breaks, Model: cli.Of(spec(mu))})
	}
	return s
}

// Program is spec/Program.tla, drawn (its mutants too) with the labels of
// seed 000's chart: the publisher's original design chart, which the spec
// formalises.
func Program() cli.Spec {
	style := chart.Style[program.State]{
		State: func(s program.State) string { return s.Phase.String() },
		Edge:  func(a string) string { return program.Labels[a] },
	}
	m := cli.Of(program.Spec(), style)
	s := cli.Spec{
		Name:   m.Name(),
		Doc:    "a Python program's run and its checkpoint's publication, as the bundled publisher does it (spec/Program.tla)",
		Files:  []string{"spec/Program.tla", "spec/Program.cfg"},
		SHA256: hash(spec.ProgramFiles),
		Model:  m,
		// A publisher journal's Init receipt names the checkpoint.
		Describe: describeRun,
	}
	for _, mu := range program.Mutants {
		s.Mutants = append(s.Mutants, cli.Mutant{Name: mu.String(), Doc: programMutantDocs[mu], Breaks: mu.Breaks(),
			Model: cli.Of(program.MutantSpec(mu), style)})
	}
	return s
}

// describeRun names the checkpoint of a publisher journal's run, from its
// Init receipt's detail (quoted if it is not a plain name: the trace may
// come from anywhere, and the name reaches a terminal).
func describeRun(init trace.Event) string {
	name, _ := init.Detail["name"].(string)
	if name == "" {
		return ""
	}
	if len(name) > 100 || strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) || r == '"' }) >= 0 {
		return "checkpoint " + strconv.QuoteToASCII(name[:min(len(name), 100)])
	}
	return "checkpoint " + name
}

// programMutantDocs say what each mutant of Program.tla does.
var programMutantDocs = map[program.Mutant]string{
	program.PublishFromStaging:      "publication from Staging, skipping the reload and verification",
	program.FailedToPublished:       "publication from Failed",
	program.LeavePublished:          "a published checkpoint relabelled Failed",
	program.InterruptAfterPublished: "an interrupt after publication",
}

// sessionMutants are session.fizz's mutants: each deletes one child's
// teardown from Teardown, and ChildrenDieWithParent must then fail.
var sessionMutants = []struct {
	opt session.Options
	doc string
}{
	{session.Options{NoCompactionTeardown: true}, "Teardown leaves compaction running (a bug the session code once had)"},
	{session.Options{NoVadTeardown: true}, "Teardown leaves the VAD goroutine running"},
	{session.Options{NoRespTeardown: true}, "Teardown leaves the response active"},
	{session.Options{ChildStartsAfterTeardown: true}, "a response may start after teardown"},
}

// SessionMutants returns the options of session.fizz's mutants, in the
// order Session lists them.
func SessionMutants() []session.Options {
	out := make([]session.Options, len(sessionMutants))
	for i, m := range sessionMutants {
		out[i] = m.opt
	}
	return out
}

// Session is spec/session.fizz and its mutants.
func Session() cli.Spec {
	m := cli.Of(session.Spec(session.Options{}))
	s := cli.Spec{
		Name:   m.Name(),
		Doc:    "a voice server's realtime session: the connection and its child coordinators stop together (spec/session.fizz)",
		Files:  []string{"spec/session.fizz"},
		SHA256: hash(spec.SessionFiles),
		Model:  m,
		// One trace, every spec: a session trace projected onto M1–M5,
		// and its timing (docs/trace-format.md).
		Projections: SessionProjections(),
		Monitors:    []cli.Monitor{SessionTiming()},
	}
	for _, m := range sessionMutants {
		s.Mutants = append(s.Mutants, cli.Mutant{Name: m.opt.String(), Doc: m.doc, Breaks: "ChildrenDieWithParent",
			Model: cli.Of(session.Spec(m.opt))})
	}
	return s
}
