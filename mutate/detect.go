package mutate

import (
	"regexp"
	"strings"
)

// The kinds of detector that kill a mutant ([Result.Kind]), as the default
// classifiers and the runner name them.
const (
	// KindTraceValidation: a trace checked against the spec diverged (a
	// divergence report names the trace and the event), or a check's
	// verdict was not the one the test expects.
	KindTraceValidation = "trace-validation"
	// KindInvariant: a state broke a model invariant.
	KindInvariant = "model-invariant"
	// KindLinearizability: Porcupine found a history not linearizable.
	KindLinearizability = "porcupine"
	// KindProperty: a rapid property failed; the evidence holds the
	// shrunk draws.
	KindProperty = "rapid"
	// KindFaultInjection: a test that injects faults (failing file
	// operations, teardown at every point) failed.
	KindFaultInjection = "fault-injection"
	// KindCrash: a crash campaign (a process killed mid-way, then
	// recovered) failed.
	KindCrash = "crash-campaign"
	// KindDurability: the durability oracle found a write not fsynced
	// before it was relied on.
	KindDurability = "durability-oracle"
	// KindGoroutineLeak: goleak found goroutines left running.
	KindGoroutineLeak = "goleak"
	// KindRace: the race detector reported a data race.
	KindRace = "race"
	// KindPanic: the test panicked (a nil dereference, an index out of
	// range, a panic of the code).
	KindPanic = "panic"
	// KindAssertion: an ordinary test assertion (none of the above).
	KindAssertion = "assertion"
	// KindCommand: a command (a gate such as tracecheck verify) exited
	// non-zero.
	KindCommand = "command"
	// KindBuild: the mutant does not build (or vet rejects it).
	KindBuild = "build"
	// KindTimeout: the tests did not end in time (a deadlock).
	KindTimeout = "timeout"
	// KindCrashed: the test binary died (a fatal runtime error).
	KindCrashed = "test-binary-crash"
)

// Classifier recognises a kind of detector in a failing test: by the
// test's name (Test), by a line of its output (Line), or both. The first
// line that Line matches, with the Next lines after it (or, with More,
// every later line that More matches), is the evidence.
type Classifier struct {
	// Kind names the detector, e.g. KindRace or a team's own.
	Kind string
	// Test, if set, must match the failing test's name
	// ("pkg.TestName/subtest").
	Test *regexp.Regexp
	// Line, if set, must match a line of the test's output.
	Line *regexp.Regexp
	// Next is how many non-blank lines after the matching one the
	// evidence takes in (a race report's accesses).
	Next int
	// More, if set, adds to the evidence every later line it matches
	// (rapid's draws: the shrunk sequence).
	More *regexp.Regexp
}

// maxEvidence bounds a result's Evidence.
const maxEvidence = 400

// match reports whether c recognises the failing test and returns the
// evidence: the matching line(s), or, for a classifier by name only, the
// first line of the output that looks like a failure.
func (c Classifier) match(test string, lines []string) (string, bool) {
	if c.Test == nil && c.Line == nil {
		return "", false
	}
	if c.Test != nil && !c.Test.MatchString(test) {
		return "", false
	}
	if c.Line == nil {
		return failureLine(lines), true
	}
	for i, l := range lines {
		if !c.Line.MatchString(l) {
			continue
		}
		ev := []string{strings.TrimSpace(l)}
		for j := i + 1; j < len(lines) && c.Next > 0 && len(ev) <= c.Next; j++ {
			if s := strings.TrimSpace(lines[j]); s != "" {
				ev = append(ev, s)
			}
		}
		if c.More != nil {
			for _, m := range lines[i+1:] {
				if c.More.MatchString(m) {
					ev = append(ev, strings.TrimSpace(m))
				}
			}
		}
		return clip(strings.Join(ev, " · "), maxEvidence), true
	}
	return "", false
}

// DefaultClassifiers recognise the libraries' and tracecheck's own
// reports: the race detector, goleak, Porcupine, rapid, a model invariant,
// tracecheck's divergence report or a check verdict mismatch, and a
// panic. A
// [Campaign]'s (or [Options]') own classifiers are tried before these.
var DefaultClassifiers = []Classifier{
	{Kind: KindRace, Line: regexp.MustCompile(`WARNING: DATA RACE`), Next: 2},
	{Kind: KindGoroutineLeak, Line: regexp.MustCompile(`found unexpected goroutines`), Next: 1},
	{Kind: KindLinearizability, Line: regexp.MustCompile(`porcupine: |not linearizable|\bIllegal\b.*operations`)},
	{Kind: KindProperty, Line: regexp.MustCompile(`\[rapid\] (failed|panic)`), More: regexp.MustCompile(`\[rapid\] draw `)},
	{Kind: KindInvariant, Line: regexp.MustCompile(`breaks invariant|invariant \S+ (is )?violated|violates (the )?invariant`)},
	{Kind: KindTraceValidation, Line: regexp.MustCompile(`no \S+ successor has the event's state|is not a step from any candidate|is not an initial state of the spec|: instance \S+, seq \d+, action `)},
	{Kind: KindTraceValidation, Line: regexp.MustCompile(`verdict (valid|violation|incomplete)\b|\d+ valid, \d+ violation|want (valid|violation|incomplete)\b|want \d+ × (valid|violation|incomplete)`)},
	{Kind: KindCrashed, Line: regexp.MustCompile(`^fatal error: `)},
	{Kind: KindPanic, Line: regexp.MustCompile(`^\s*panic: `)},
}

// Classify names the kind of detector that killed a mutant, and the
// evidence, from the failing test's name (pkg.Test, "build", "timeout",
// "... (crash)") and its output: the first of classifiers, then of
// [DefaultClassifiers], that recognises it; otherwise KindAssertion with
// the first line that looks like a failure.
func Classify(classifiers []Classifier, detector, output string) (kind, evidence string) {
	lines := strings.Split(output, "\n")
	switch detector {
	case "build":
		if l := firstMatch(lines, compileError); l != "" {
			return KindBuild, l
		}
		return KindBuild, failureLine(lines)
	case "timeout":
		for _, l := range lines {
			if strings.Contains(l, "panic: test timed out") {
				return KindTimeout, clip(strings.TrimSpace(l), maxEvidence)
			}
		}
		return KindTimeout, ""
	}
	for _, cs := range [][]Classifier{classifiers, DefaultClassifiers} {
		for _, c := range cs {
			if ev, ok := c.match(detector, lines); ok {
				return c.Kind, ev
			}
		}
	}
	if strings.HasSuffix(detector, " (crash)") {
		return KindCrashed, firstMatch(lines, regexp.MustCompile(`^(fatal error|panic):`))
	}
	return KindAssertion, failureLine(lines)
}

// compileError is a compiler's or vet's "file.go:line:col: message".
var compileError = regexp.MustCompile(`\S+\.go:\d+:\d+: `)

// assertion is the "file_test.go:12: message" line of a failed test.
var assertion = regexp.MustCompile(`^\s+\S+\.go:\d+: `)

// failureLine returns the first line that looks like a test's failure
// message (file.go:line: ...), else the first line that is not go test's
// own bookkeeping.
func failureLine(lines []string) string {
	if l := firstMatch(lines, assertion); l != "" {
		return l
	}
	for _, l := range lines {
		s := strings.TrimSpace(l)
		if s == "" || strings.HasPrefix(s, "=== ") || strings.HasPrefix(s, "--- ") || s == "FAIL" || strings.HasPrefix(s, "FAIL\t") || strings.HasPrefix(s, "ok ") {
			continue
		}
		return clip(s, maxEvidence)
	}
	return ""
}

func firstMatch(lines []string, re *regexp.Regexp) string {
	for _, l := range lines {
		if re.MatchString(l) {
			return clip(strings.TrimSpace(l), maxEvidence)
		}
	}
	return ""
}

// clip cuts s to at most n bytes (on a rune boundary), marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
