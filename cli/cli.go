package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/trace"
)

// Exit codes shared by every command. Commands document any others.
const (
	ExitOK        = 0 // success: no violation
	ExitViolation = 1 // a property or trace was violated
	ExitUsage     = 2 // bad flags or arguments
	ExitInput     = 3 // unreadable or malformed input
	// ExitIncomplete is check's and replay's code for a trace that broke
	// nothing but does not end where the spec may stop (or was truncated).
	ExitIncomplete = 4
)

// Spec is one spec registered with the command line: everything the
// commands know of it. explore, chart, check, replay, coverage and export
// derive from it their arguments, their usage texts and the inference of a
// trace's spec.
type Spec struct {
	// Name names the spec on the command line (explore NAME, check
	// --model NAME). It must be unique, without spaces. Default: the
	// transcription's name (Model.Name()).
	Name string
	// Doc says in one line what the spec models.
	Doc string
	// Files are the spec's source files (e.g. spec/Program.tla,
	// spec/Program.cfg), as the user's repository names them: explore
	// prints them with its verdict.
	Files []string
	// SHA256, if set, is the lowercase hex SHA-256 of Files concatenated
	// in order, as trace headers give it (docs/trace-format.md): check
	// warns about a trace whose header names another version of the spec.
	SHA256 string
	// Model is the spec's Go transcription ([Of]).
	Model Model
	// Mutants are variants of the spec with a known bug: explore, chart,
	// check, replay and coverage select one with --mutant NAME (check's
	// reports name its model SPEC-mutant-NAME, which --model still
	// accepts, with a deprecation notice).
	Mutants []Mutant
	// Describe, if set, names in a few words what an instance of a trace
	// is about, from its Init event (the bundled program: "checkpoint
	// NAME", from the journal's Init receipt). check prints it next to the
	// instance's ID when it says how a one-instance file ends.
	Describe func(init trace.Event) string
	// Projections check the spec's traces against other registered specs
	// at once (check --projections): a composition spec's trace projected
	// onto each of its machines' specs ([Projection]).
	Projections []Projection
	// Monitors check properties the spec cannot state, timing say, over
	// its traces' timestamped events; check runs them on every trace of
	// the spec ([Monitor]).
	Monitors []Monitor
}

// Mutant is a variant of a spec with a known bug, kept to show that the
// checks catch it.
type Mutant struct {
	// Name names the mutant (e.g. no-compaction-teardown).
	Name string
	// Doc says what was changed.
	Doc string
	// Breaks names the property the mutant is expected to violate.
	Breaks string
	// Model is the mutant's transcription ([Of]).
	Model Model
}

// Command is a command of a program's own, beside the spec commands.
type Command struct {
	// Name is the command's name; Summary its one line in the usage text.
	Name, Summary string
	// Run runs the command with the arguments after its name and returns
	// the exit code. It should offer -h (see [NewFlagSet]).
	Run func(args []string, stdout, stderr io.Writer) int
}

// Config is a command line: the specs it checks against and its own
// commands.
type Config struct {
	// Specs are the registered specs, in the order the usage texts list
	// them.
	Specs []Spec
	// Commands are commands of the program's own (tracecheck's bundled
	// binary adds run, recover, inspect and session-demo).
	Commands []Command
	// Stdin is what "-" reads; nil means os.Stdin.
	Stdin io.Reader
}

// Main runs the tracecheck command line with specs registered and exits
// with its code: a team's own tracecheck binary is
//
//	func main() { cli.Main(cli.Spec{Name: "twophase", Model: cli.Of(twophase.Spec()), ...}) }
func Main(specs ...Spec) {
	os.Exit(Run(Config{Specs: specs}, os.Args[1:], os.Stdout, os.Stderr))
}

// Run runs the command line cfg with args (the arguments after the
// program's name) and returns the exit code. An invalid cfg (a spec
// without a name or model, a name given twice) is reported on stderr with
// [ExitUsage].
func Run(cfg Config, args []string, stdout, stderr io.Writer) int {
	a, err := newApp(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck: %v\n", err)
		return ExitUsage
	}
	return a.run(args, stdout, stderr)
}

// app is one command line: its specs, resolved, and its commands.
type app struct {
	specs  []Spec
	models []namedModel // every model name check accepts, in order
	stdin  io.Reader
	cmds   map[string]Command
	graph  *namedModel // check --graph's model, once loaded
}

// namedModel is a model under the name the command line gives it.
type namedModel struct {
	name  string
	spec  *Spec
	model Model
	// mutant is the name of the spec's mutant this model is, or "".
	mutant string
	// how says how a trace's model was chosen (byFlag, byHeader,
	// byInferred); warnings what the trace's header disagreed with.
	how      string
	warnings []string
	// timed says that the head of the trace (its first 64 KiB) has an
	// event time: the spec's monitors run (check).
	timed bool
}

func newApp(cfg Config) (*app, error) {
	a := &app{specs: cfg.Specs, stdin: cfg.Stdin, cmds: map[string]Command{}}
	if a.stdin == nil {
		a.stdin = os.Stdin
	}
	seen := map[string]bool{}
	a.specs = slices.Clone(a.specs)
	for i := range a.specs {
		s := &a.specs[i]
		if s.Name == "" && s.Model != nil {
			s.Name = s.Model.Name()
		}
		if s.Name == "" || strings.ContainsAny(s.Name, " \t\n") || s.Model == nil {
			return nil, fmt.Errorf("spec %d: a spec needs a name without spaces and a model", i)
		}
		names := []namedModel{{name: s.Name, spec: s, model: s.Model}}
		for _, m := range s.Mutants {
			if m.Name == "" || m.Model == nil {
				return nil, fmt.Errorf("spec %s: a mutant needs a name and a model", s.Name)
			}
			names = append(names, namedModel{name: s.Name + mutantSep + m.Name, spec: s, model: m.Model, mutant: m.Name})
		}
		for _, n := range names {
			if seen[n.name] {
				return nil, fmt.Errorf("model %s registered twice", n.name)
			}
			seen[n.name] = true
			a.models = append(a.models, n)
		}
	}
	for _, c := range a.builtins() {
		a.cmds[c.Name] = c
	}
	for _, c := range cfg.Commands {
		if _, dup := a.cmds[c.Name]; dup || c.Name == "" || c.Run == nil {
			return nil, fmt.Errorf("command %q: empty, or registered twice", c.Name)
		}
		a.cmds[c.Name] = c
	}
	return a, nil
}

// builtins are the spec commands every command line has.
func (a *app) builtins() []Command {
	// What they print passes through safe: a trace's strings never reach
	// a terminal as control characters.
	guard := func(run func([]string, io.Writer, io.Writer) int) func([]string, io.Writer, io.Writer) int {
		return func(args []string, stdout, stderr io.Writer) int { return run(args, safe(stdout), safe(stderr)) }
	}
	return []Command{
		{"explore", "explore a spec's transcription exhaustively and check its properties, as TLC does", guard(a.runExplore)},
		{"chart", "draw a spec's state graph (Mermaid, DOT or JSON)", guard(a.runChart)},
		{"check", "validate NDJSON or ITF traces against a spec: valid, violation or incomplete", guard(a.runCheck)},
		{"replay", "replay a trace step by step: each event with the spec state and enabled actions", guard(a.runReplay)},
		{"coverage", "say which transitions of a spec's state graph the traces exercised", guard(a.runCoverage)},
		{"export", "convert traces between NDJSON and ITF (Apalache/Quint Informal Trace Format)", guard(a.runExport)},
		{"version", "print the program's module version, VCS revision and Go version (also --version)", a.runVersion},
		{"completion", "print a shell completion script for bash, zsh or fish", a.runCompletion},
	}
}

func (a *app) run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		a.usage(stderr)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			c, ok := a.cmds[args[1]]
			if !ok {
				fmt.Fprintf(stderr, "tracecheck help: unknown command %q (want one of %s)\n", args[1], strings.Join(a.commandNames(), ", "))
				return ExitUsage
			}
			return c.Run([]string{"-h"}, stdout, stderr)
		}
		a.usage(stdout)
		return ExitOK
	case "-version", "--version":
		return a.runVersion(args[1:], stdout, stderr)
	}
	c, ok := a.cmds[name]
	if !ok {
		fmt.Fprintf(stderr, "tracecheck: unknown command %q\n\n", name)
		a.usage(stderr)
		return ExitUsage
	}
	return c.Run(args[1:], stdout, stderr)
}

func (a *app) usage(w io.Writer) {
	fmt.Fprint(w, `tracecheck keeps an implementation honest against its TLA+ and FizzBee specs.

Usage:
  tracecheck <command> [flags] [arguments]

Commands:
`)
	for _, n := range a.commandNames() {
		fmt.Fprintf(w, "  %-13s %s\n", n, a.cmds[n].Summary)
	}
	fmt.Fprint(w, "\nSpecs:\n")
	for _, s := range a.specs {
		fmt.Fprintf(w, "  %-13s %s\n", s.Name, s.Doc)
		for _, m := range s.Mutants {
			fmt.Fprintf(w, "  %-13s   mutant %s: %s\n", "", m.Name, m.Doc)
		}
	}
	fmt.Fprint(w, `
Run "tracecheck <command> -h" for a command's flags, "tracecheck version"
for the build.

Exit codes: 0 ok, 1 violation, 2 usage error, 3 input error; commands
document any others.
`)
}

// commandNames lists the commands' names, sorted.
func (a *app) commandNames() []string {
	names := make([]string, 0, len(a.cmds))
	for n := range a.cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// specNames lists the registered specs' names, for usage texts.
func (a *app) specNames() string {
	names := make([]string, len(a.specs))
	for i, s := range a.specs {
		names[i] = s.Name
	}
	return strings.Join(names, "|")
}

// modelList lists every model name check accepts.
func (a *app) modelList() string {
	names := make([]string, len(a.models))
	for i, m := range a.models {
		names[i] = m.name
	}
	return strings.Join(names, ", ")
}

// model returns the model check knows as name.
func (a *app) model(name string) (namedModel, bool) {
	for _, m := range a.models {
		if m.name == name {
			return m, true
		}
	}
	return namedModel{}, false
}

// spec returns the spec called name, and with mutant its mutant's model.
func (a *app) spec(name, mutant string, stderr io.Writer) (*Spec, Model, bool) {
	for i := range a.specs {
		s := &a.specs[i]
		if s.Name != name {
			continue
		}
		if mutant == "" {
			return s, s.Model, true
		}
		var have []string
		for _, m := range s.Mutants {
			if m.Name == mutant {
				return s, m.Model, true
			}
			have = append(have, m.Name)
		}
		if len(have) == 0 {
			fmt.Fprintf(stderr, "tracecheck: spec %s has no mutants\n", name)
		} else {
			fmt.Fprintf(stderr, "tracecheck: unknown mutant %q of %s (have %s)\n", mutant, name, strings.Join(have, ", "))
		}
		return nil, nil, false
	}
	fmt.Fprintf(stderr, "tracecheck: unknown spec %q (want %s)\n", name, strings.ReplaceAll(a.specNames(), "|", " or "))
	return nil, nil, false
}

// mutantSpec returns the name of the one spec that has a mutant called
// mutant, or "" if none or several have.
func (a *app) mutantSpec(mutant string) string {
	found := ""
	for _, s := range a.specs {
		for _, m := range s.Mutants {
			if m.Name != mutant {
				continue
			}
			if found != "" {
				return ""
			}
			found = s.Name
		}
	}
	return found
}

// mutantNames lists the mutants of every spec, for usage texts.
func (a *app) mutantNames() string {
	var out []string
	for _, s := range a.specs {
		for _, m := range s.Mutants {
			out = append(out, m.Name)
		}
	}
	if len(out) == 0 {
		return "none registered"
	}
	return strings.Join(out, ", ")
}

// NewFlagSet returns a FlagSet for a command: it prints "Usage: tracecheck
// NAME SYNOPSIS" and the flags to stderr, and reports errors instead of
// exiting. Parse its arguments with [Parse].
func NewFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: tracecheck %s %s\n\nFlags:\n", name, strings.TrimSpace(synopsis))
		printFlags(fs, stderr)
	}
	return fs
}

// Parse parses args, allowing flags after positional arguments
// (`explore session --mutant x`), the way people type them. It returns the
// positional arguments, and an exit code >= 0 when parsing stopped: ExitOK
// after -h, ExitUsage after bad flags. A lone "--" ends flag parsing.
func Parse(fs *flag.FlagSet, args []string) ([]string, int) {
	var pos []string
	for {
		if code := parseFlags(fs, args); code >= 0 {
			return nil, code
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, -1
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), -1
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseFlags parses args, returning the exit code to use when parsing
// stopped (help asked for, or bad flags), or -1 to go on.
func parseFlags(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return ExitOK
		}
		return ExitUsage
	}
	return -1
}

// mutantSep joins a spec's name and its mutant's in the name of the
// mutant's model: SPEC-mutant-NAME.
const mutantSep = "-mutant-"

// Lookup returns the model that check --model NAME selects among specs:
// a spec's name, or SPEC-mutant-MUTANT (what check --model SPEC --mutant
// MUTANT selects).
func Lookup(specs []Spec, name string) (Model, bool) {
	a, err := newApp(Config{Specs: specs})
	if err != nil {
		return nil, false
	}
	m, ok := a.model(name)
	return m.model, ok
}

// CheckWith checks the trace r against the model check --model name
// selects among specs, as check.Check does, with the report's Model set to
// name.
func CheckWith(ctx context.Context, specs []Spec, name string, r io.Reader, file string, opt check.Options) (*check.Report, error) {
	m, ok := Lookup(specs, name)
	if !ok {
		return nil, fmt.Errorf("unknown model %q", name)
	}
	rep, err := m.Check(ctx, r, file, opt)
	if rep != nil {
		rep.Model = name
	}
	return rep, err
}
