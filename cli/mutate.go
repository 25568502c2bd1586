package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tracecheck/tracecheck/mutate"
)

// MutateConfig says what a mutate command runs.
type MutateConfig struct {
	// Mutants are the named code mutants (package mutate), in the order
	// the kill matrix lists them.
	Mutants []mutate.Mutant
	// Gate, if set, is the detector --gate uses instead of each mutant's
	// tests: a command built with the mutant (Test.Command set), such as
	// a gate binary's quick mode. An argument "{dir}" is replaced by a
	// fresh empty temporary directory for each mutant (a run directory).
	Gate *mutate.Test
	// What names the system the mutants belong to, in the summary line.
	What string
	// Classifiers name the kind of detector that killed a mutant (a
	// team's durability oracle, crash campaign, fault injection), tried
	// before mutate.DefaultClassifiers.
	Classifiers []mutate.Classifier
}

const mutateSynopsis = `[flags] [PATTERN...]
       tracecheck mutate --operators [flags] PACKAGE...
       tracecheck mutate --merge [--json-file FILE] [--markdown FILE] SHARD.json...

Runs code mutants: each is a bug made in the real source (one small rewrite
of one file) that the test suite must catch. Each is applied only through
go's -overlay flag, never in the checkout, and its tests run until one
fails. It prints a progress line per mutant on stderr (done/total, killed,
survived, ETA), then the kill matrix: each mutant, the file it mutates, what
killed it (the first failing test, "build", "timeout", or the gate's first
FAIL line), the kind of detector (race, goleak, porcupine, rapid,
trace-validation, model-invariant, assertion, ... recognised in the failing
test's output, with the line that shows it in the JSON and Markdown) and
the time taken, and the mutation score, killed / (total −
equivalent − not applicable). A mutant that survived is a bug nothing
catches.

Without --operators, PATTERNs select the named mutants (path.Match, e.g.
'publisher/*'); none means all. With --operators, the arguments are
packages (./impl/checkpoint): mutants are generated from their source with
classic operators (boundary < ↔ <=, cond-negate == ↔ !=, if-negate,
err-check: if err != nil never taken, arith + ↔ -, call-drop (mu.Unlock()
too), defer-drop, incdec, branch-swap: if/else branches exchanged), type-checked in memory (those that do not compile are dropped),
and each runs only the tests of its package whose coverage includes the
mutated position (measured once, per test, with -short unless --long); a
mutant no test executes is "not covered" and nothing runs (--no-select
runs the whole package suite instead). --tests adds packages whose tests
exercise the mutated ones (a harness): their tests are measured and
selected too.

Mutants run -j at a time. A result is cached under --cache (default: the
user cache directory) keyed by the sha256 of the mutated file, of what the
tests depend on in the module (Go files, embedded files, testdata) and of
the tests run, so an unchanged mutant is not run again.
--shard i/n runs a CI shard's share; --merge combines the shards'
--json-file files. --json prints the kill matrix as JSON instead of the
table. --equivalents FILE names mutants judged equivalent, a line each:
NAME REASON; they are not run and are left out of the score. --gate uses
the gate instead of each mutant's tests, when the program has one: the gate
is built with the mutant and must fail (not cached). Run it from the module
root (or name it with --root).

Exit codes: 0 every mutant killed (or, with --min-score, the score
reached); 1 a mutant survived or is not covered (or the score is below
--min-score); 2 usage; 3 a mutant no longer applies (the code it rewrites
changed) or could not run.`

// MutateCommand returns the mutate command for cfg's mutants: a team's
// own binary adds it to Config.Commands to run its mutants, and the kill
// matrix, as tracecheck does for its bundled systems. It also generates
// and runs operator mutants (--operators).
func MutateCommand(cfg MutateConfig) Command {
	what := cfg.What
	if what == "" {
		what = "the"
	}
	return Command{Name: "mutate", Summary: "run " + what + " named code mutants (or operator mutants of packages) and print the kill matrix",
		Run: func(args []string, stdout, stderr io.Writer) int { return runMutate(cfg, args, stdout, stderr) }}
}

func runMutate(cfg MutateConfig, args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("mutate", mutateSynopsis, stderr)
	list := fs.Bool("list", false, "list the mutants and their diffs; run nothing")
	asJSON := fs.Bool("json", false, UsageJSON)
	jsonOut := fs.String("json-file", "", "also write the kill matrix as JSON to `FILE`")
	mdOut := fs.String("markdown", "", "write the kill matrix as Markdown to `FILE`")
	title := fs.String("title", "Mutation kill matrix", "the Markdown matrix's title")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound on one test run of a mutant (a deadlock is killed as \"timeout\"); with coverage selection, the cap of a bound derived from the tests' baseline")
	race := fs.Bool("race", false, "run the tests under the race detector")
	root := fs.String("root", ".", UsageRoot)
	useGate := fs.Bool("gate", false, "detect with the gate, built with the mutant, instead of the mutant's tests")
	operators := fs.Bool("operators", false, "generate operator mutants of the PACKAGE arguments instead of running the named mutants")
	long := fs.Bool("long", false, "with --operators: run the tests without -short")
	jobs := fs.Int("j", max(1, runtime.GOMAXPROCS(0)/2), "mutants run in parallel")
	cacheDir := fs.String("cache", "", "the result cache `DIR` (default: tracecheck/mutate under the user cache directory)")
	noCache := fs.Bool("no-cache", false, "neither read nor write the result cache")
	noSelect := fs.Bool("no-select", false, "with --operators: run the package's whole suite against each mutant, not the tests covering it")
	staged := fs.Bool("staged", true, "with --operators and selection: build each package's test binary once per mutant and run the fastest covering test first, then the rest, with -test.failfast (--staged=false: one go test run per package)")
	shard := fs.String("shard", "", "run only shard `i/n` of the mutants (by a hash of the name), for a CI matrix")
	merge := fs.Bool("merge", false, "merge the kill matrices (JSON files) named as arguments; run nothing")
	equivFile := fs.String("equivalents", "", "`FILE` of mutants judged equivalent: lines NAME REASON")
	testPkgs := fs.String("tests", "", "with --operators: comma-separated `PACKAGES` whose tests exercise the mutated packages too (./harness/pubcheck), measured and selected alongside their own")
	minScore := fs.Float64("min-score", -1, "exit 0 when the mutation score (0..1) reaches this, even with survivors")
	patterns, code := Parse(fs, args)
	if code >= 0 {
		return code
	}
	if *merge {
		var ms []*mutate.Matrix
		for _, f := range patterns {
			m, err := mutate.ReadMatrix(f)
			if err != nil {
				fmt.Fprintf(stderr, "tracecheck mutate: %v\n", err)
				return ExitInput
			}
			ms = append(ms, m)
		}
		if len(ms) == 0 {
			fmt.Fprintln(stderr, "tracecheck mutate: --merge: name the shards' JSON files")
			return ExitUsage
		}
		m, err := mutate.Merge(ms)
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck mutate: %v\n", err)
			return ExitInput
		}
		return reportMatrix(m, *asJSON, *jsonOut, *mdOut, *title, *minScore, stdout, stderr)
	}
	var chosen []mutate.Mutant
	if *operators {
		if len(patterns) == 0 {
			fmt.Fprintln(stderr, "tracecheck mutate: --operators: name the packages to mutate (./impl/checkpoint)")
			return ExitUsage
		}
		start := time.Now()
		ms, st, err := mutate.Generate(*root, patterns...)
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck mutate: %v\n", err)
			return ExitInput
		}
		fmt.Fprintf(stderr, "tracecheck mutate: %d operator mutants of %s (%d candidates, %d dropped: they do not type-check) in %s\n",
			len(ms), strings.Join(patterns, " "), st.Candidates, st.Dropped, time.Since(start).Round(100*time.Millisecond))
		chosen = ms
	} else {
		for _, m := range cfg.Mutants {
			if len(patterns) == 0 {
				chosen = append(chosen, m)
				continue
			}
			for _, p := range patterns {
				if ok, err := path.Match(p, m.Name); err != nil {
					fmt.Fprintf(stderr, "tracecheck mutate: bad pattern %q: %v\n", p, err)
					return ExitUsage
				} else if ok || p == m.Name {
					chosen = append(chosen, m)
					break
				}
			}
		}
	}
	if *useGate && cfg.Gate == nil {
		fmt.Fprintln(stderr, "tracecheck mutate: --gate: this program has no gate")
		return ExitUsage
	}
	if len(chosen) == 0 {
		fmt.Fprintf(stderr, "tracecheck mutate: no mutant matches %q\n", patterns)
		return ExitUsage
	}
	shardName := ""
	if *shard != "" {
		i, n, err := mutate.ParseShard(*shard)
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck mutate: %v\n", err)
			return ExitUsage
		}
		chosen, shardName = mutate.Shard(chosen, i, n), *shard
	}
	if *list {
		for _, m := range chosen {
			fmt.Fprintf(stdout, "%s: %s\n%s\n", m.Name, m.Doc, m.Diff())
		}
		return ExitOK
	}
	camp := &mutate.Campaign{
		Options: mutate.Options{Root: *root, Timeout: *timeout, Race: *race, Short: *operators && !*long, NoVet: *operators, Classifiers: cfg.Classifiers,
			Staged: *operators && !*noSelect && *staged},
		Jobs:   max(1, *jobs),
		Select: !*noSelect,
		Log:    stderr,
	}
	if *testPkgs != "" {
		camp.TestPackages = strings.Split(*testPkgs, ",")
	}
	if *equivFile != "" {
		f, err := os.Open(*equivFile)
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck mutate: %v\n", err)
			return ExitInput
		}
		camp.Equivalents, err = mutate.ParseEquivalents(io.LimitReader(f, 16<<20))
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck mutate: %v\n", err)
			return ExitInput
		}
	}
	if *useGate {
		dirs, err := os.MkdirTemp("", "tracecheck-gate-")
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck mutate: %v\n", err)
			return ExitInput
		}
		defer os.RemoveAll(dirs)
		chosen = append([]mutate.Mutant(nil), chosen...)
		for i := range chosen {
			d := filepath.Join(dirs, fmt.Sprint(i))
			if err := os.Mkdir(d, 0o755); err != nil {
				fmt.Fprintf(stderr, "tracecheck mutate: %v\n", err)
				return ExitInput
			}
			chosen[i] = gateMutant(chosen[i], *cfg.Gate, d)
		}
	} else if !*noCache {
		camp.CacheDir = *cacheDir
		if camp.CacheDir == "" {
			d, err := mutate.DefaultCacheDir()
			if err != nil {
				fmt.Fprintf(stderr, "tracecheck mutate: %v; running without a cache\n", err)
			}
			camp.CacheDir = d
		}
	}
	camp.Progress = func(p mutate.Progress) {
		fmt.Fprintf(stderr, "tracecheck mutate: %d/%d done, %d killed, %d survived, %d not covered, %d cached; %s: %s (%s); ETA %s\n",
			p.Done, p.Total, p.Killed, p.Survived, p.NotCovered, p.Cached, p.Last.Mutant, verdict(p.Last), p.Last.Duration.Round(100*time.Millisecond), p.ETA.Round(time.Second))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m, err := camp.Run(ctx, chosen)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck mutate: %v; the checkout is untouched\n", err)
		if m == nil {
			return ExitInput
		}
	}
	m.Summary.Shard = shardName
	code = reportMatrix(m, *asJSON, *jsonOut, *mdOut, *title, *minScore, stdout, stderr)
	if err != nil {
		return ExitInput
	}
	return code
}

// reportMatrix prints the matrix (table or JSON), writes the files asked
// for, and returns the exit code.
func reportMatrix(m *mutate.Matrix, asJSON bool, jsonOut, mdOut, title string, minScore float64, stdout, stderr io.Writer) int {
	write := func(name string, f func(io.Writer) error) bool {
		if name == "-" {
			return f(stdout) == nil
		}
		out, err := os.Create(name)
		if err == nil {
			err = f(out)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck mutate: %v\n", err)
			return false
		}
		return true
	}
	if asJSON {
		if err := m.WriteJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "tracecheck mutate: %v\n", err)
			return ExitInput
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "MUTANT\tFILE\tKILLED BY\tKIND\tTIME")
		for _, r := range m.Results {
			t := r.Duration.Round(100 * time.Millisecond).String()
			if r.Cached {
				t += " (cached)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Mutant, r.File, verdict(r), r.Kind, t)
		}
		tw.Flush()
		fmt.Fprintf(stdout, "%s\n%s\n", m.Summary.ScoreLine(), m.Summary.RunLine())
	}
	ok := true
	if jsonOut != "" {
		ok = write(jsonOut, m.WriteJSON) && ok
	}
	if mdOut != "" {
		ok = write(mdOut, func(w io.Writer) error { return m.WriteMarkdown(w, title) }) && ok
	}
	if !ok {
		return ExitInput
	}
	s := m.Summary
	if s.Errors > 0 || s.NotApplicable > 0 {
		for _, r := range m.Results {
			if r.Error != "" {
				fmt.Fprintf(stderr, "tracecheck mutate: %s: %s\n", r.Mutant, r.Error)
			}
		}
		return ExitInput
	}
	if minScore >= 0 {
		if s.Score >= minScore {
			return ExitOK
		}
		fmt.Fprintf(stderr, "tracecheck mutate: mutation score %.3f is below --min-score %.3f\n", s.Score, minScore)
		return ExitViolation
	}
	if s.Survived > 0 || s.NotCovered > 0 {
		return ExitViolation
	}
	return ExitOK
}

// gateMutant returns m with gate as its only detector, "{dir}" in its
// arguments replaced by dir.
func gateMutant(m mutate.Mutant, gate mutate.Test, dir string) mutate.Mutant {
	gate.Command = append([]string(nil), gate.Command...)
	for i, a := range gate.Command {
		gate.Command[i] = strings.ReplaceAll(a, "{dir}", dir)
	}
	m.Tests = []mutate.Test{gate}
	m.Package = ""
	return m
}

// verdict says what became of a mutant, in a word or two.
func verdict(r mutate.Result) string {
	switch {
	case r.Status == mutate.StatusEquivalent:
		return "EQUIVALENT: " + r.Reason
	case r.Status == mutate.StatusNotCovered:
		return "NOT COVERED"
	case r.Error != "":
		return "NOT RUN: " + strings.SplitN(r.Error, "\n", 2)[0]
	case r.Killed:
		return r.Detector
	}
	return "SURVIVED"
}
