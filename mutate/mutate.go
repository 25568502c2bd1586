// Package mutate runs mutation experiments on Go code: a [Mutant] is a
// named bug made in the source — one textual rewrite of one file — and
// [Run] builds and tests the code with it through the go command's
// -overlay flag, so the checkout is never edited (an interrupted campaign
// leaves it as it was). The result says whether the mutant was killed and
// by which detector: the first test that failed, or the build.
//
// A mutant names the tests expected to kill it; a mutant that survives
// them is a bug the suite does not catch.
package mutate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Mutant is a named bug made in source code.
type Mutant struct {
	// Name names the mutant, e.g. "publisher/skip-the-reload".
	Name string `json:"name"`
	// Doc says what the bug is.
	Doc string `json:"doc"`
	// File is the file rewritten, relative to the module root.
	File string `json:"file"`
	// Old is the exact text replaced; it must occur exactly once in File.
	Old string `json:"old"`
	// New replaces it.
	New string `json:"new"`
	// Tests are what should kill the mutant: go test runs, each of a
	// package pattern and an optional -run expression.
	Tests []Test `json:"tests"`
	// Package is, for a generated operator mutant, the package (a
	// ./relative directory) whose tests' coverage selects the tests to
	// run ([Campaign]); empty for a named mutant, whose Tests are run.
	Package string `json:"package,omitempty"`
	// Line and Col locate an operator mutant in File (1-based).
	Line int `json:"line,omitempty"`
	Col  int `json:"col,omitempty"`
	// Operator names the operator that made it (OpBoundary, ...).
	Operator string `json:"operator,omitempty"`
	// CoverLine and CoverCol, if set, are where coverage selection looks
	// instead of Line and Col: the switch statement of a mutated case
	// expression, which no coverage block contains.
	CoverLine int `json:"cover_line,omitempty"`
	CoverCol  int `json:"cover_col,omitempty"`
}

// Test is one go test run: go test [-run Run] Package. With Command set,
// it is a command instead: Package (a main package) is built with the
// mutant, then run with the arguments Command in the module root, and a
// non-zero exit kills the mutant. That makes a whole gate, such as
// tracecheck verify, a detector.
type Test struct {
	Package string   `json:"package"`
	Run     string   `json:"run,omitempty"`
	Command []string `json:"command,omitempty"`
}

// ErrNotApplicable reports a mutant whose Old text is not found exactly
// once: the code it mutates has changed.
var ErrNotApplicable = errors.New("mutant does not apply")

// Apply writes the mutated File under dir and an overlay file mapping the
// original to it, and returns the overlay file's path (for go's -overlay).
// root is the module root.
func (m Mutant) Apply(root, dir string) (string, error) {
	orig := filepath.Join(root, filepath.FromSlash(m.File))
	b, err := os.ReadFile(orig)
	if err != nil {
		return "", fmt.Errorf("mutant %s: %w", m.Name, err)
	}
	if n := bytes.Count(b, []byte(m.Old)); n != 1 {
		return "", fmt.Errorf("%w: %s: the text to replace occurs %d times in %s", ErrNotApplicable, m.Name, n, m.File)
	}
	mutated := filepath.Join(dir, strings.ReplaceAll(m.Name, "/", "_")+"_"+filepath.Base(m.File))
	if err := os.WriteFile(mutated, bytes.Replace(b, []byte(m.Old), []byte(m.New), 1), 0o644); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(orig)
	if err != nil {
		return "", err
	}
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: mutated}})
	path := filepath.Join(dir, strings.ReplaceAll(m.Name, "/", "_")+".overlay.json")
	return path, os.WriteFile(path, ov, 0o644)
}

// Diff returns the mutant as a unified-looking two-line diff, for reports.
func (m Mutant) Diff() string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s (%s)\n", m.File, m.File, m.Name)
	for _, l := range strings.Split(strings.TrimRight(m.Old, "\n"), "\n") {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range strings.Split(strings.TrimRight(m.New, "\n"), "\n") {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

// Result is what became of a mutant.
type Result struct {
	Mutant string `json:"mutant"`
	File   string `json:"file"`
	// Killed reports that a test failed (or the build did) with the mutant.
	Killed bool `json:"killed"`
	// Detector names what killed it: "package.TestName" of the first test
	// that failed, "build", or "timeout".
	Detector string `json:"detector,omitempty"`
	// Kind says which kind of detector killed the mutant (KindRace,
	// KindTraceValidation, ..., [Classify]), Evidence the line(s) of the
	// output that show it, clipped.
	Kind     string `json:"kind,omitempty"`
	Evidence string `json:"evidence,omitempty"`
	// Output is the end of the failing test's output (or of the build's).
	Output string `json:"output,omitempty"`
	// Error is why the mutant could not be run (it does not apply).
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration_ns"`

	// The fields below are set by a [Campaign].

	// Status is StatusKilled, StatusSurvived, StatusNotCovered,
	// StatusEquivalent, StatusNotApplicable or StatusError.
	Status string `json:"status,omitempty"`
	// Line, Col and Operator locate an operator mutant (see [Mutant]).
	Line     int    `json:"line,omitempty"`
	Col      int    `json:"col,omitempty"`
	Operator string `json:"operator,omitempty"`
	// Change is the mutant's one-line description (its Doc).
	Change string `json:"change,omitempty"`
	// Tests are the tests run against the mutant, after selection.
	Tests []string `json:"tests,omitempty"`
	// Cached reports a result taken from the cache: nothing ran.
	Cached bool `json:"cached,omitempty"`
	// Reason says why an equivalent mutant is equivalent.
	Reason string `json:"reason,omitempty"`
}

// Options parameterise [Run].
type Options struct {
	// Root is the module root (default: the current directory).
	Root string
	// Go is the go command (default "go").
	Go string
	// Timeout bounds one go test run, build included (default 10m); its
	// expiry kills the mutant as "timeout" (a deadlock).
	Timeout time.Duration
	// Race runs the tests under the race detector.
	Race bool
	// Short runs the tests with -short.
	Short bool
	// NoVet runs go test with -vet=off (a mutant that vet rejects would
	// otherwise count as killed by the build).
	NoVet bool
	// Staged builds each package's test binary once per mutant (go test
	// -c with the overlay) and runs the tests through it, one Test (a
	// wave: the fastest covering test first, then the rest) after the
	// other, each with -test.failfast: a mutant that the fastest test
	// kills runs nothing else, and no wave links the binary again.
	Staged bool
	// RunTimeout, if set, bounds each run of a test binary (go test's
	// -timeout, or a staged run), its build apart (which Timeout still
	// bounds): a deadlocking mutant is stopped without waiting out the
	// allowance for a build.
	RunTimeout time.Duration
	// Classifiers name the kind of detector that killed a mutant from
	// the failing test's name and output; they are tried before
	// [DefaultClassifiers].
	Classifiers []Classifier
}

func (o *Options) fill() {
	if o.Root == "" {
		o.Root = "."
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Minute
	}
}

// Run applies m through an overlay and runs its tests, in order, until one
// kills it.
func Run(ctx context.Context, m Mutant, opt Options) (res Result) {
	opt.fill()
	start := time.Now()
	res = Result{Mutant: m.Name, File: m.File}
	defer func() { res.Duration = time.Since(start) }()
	dir, err := os.MkdirTemp("", "tracecheck-mutant-")
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer os.RemoveAll(dir)
	overlay, err := m.Apply(opt.Root, dir)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	bins := map[string]*testBinary{} // Staged: each package's, built once
	for _, t := range m.Tests {
		run := goTest
		switch {
		case t.Command != nil:
			run = command
		case opt.Staged:
			run = func(ctx context.Context, opt Options, overlay string, t Test) (string, string, error) {
				return stagedTest(ctx, opt, overlay, dir, t, bins)
			}
		}
		det, out, err := run(ctx, opt, overlay, t)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		if det != "" {
			res.Killed, res.Detector, res.Output = true, det, tail(out, 2000)
			res.Kind, res.Evidence = Classify(opt.Classifiers, det, out)
			if t.Command != nil && det != "build" && det != "timeout" {
				// A command (a gate) is its own detector: its output holds
				// every stage's figures, whose words (porcupine, race ...)
				// say nothing of what failed; its FAIL line does.
				res.Kind, res.Evidence = KindCommand, clip(det, maxEvidence)
			}
			return res
		}
	}
	return res
}

// noFailFiles keeps rapid (pgregory.net/rapid) from writing the failing
// cases of the tests a mutant breaks into the package's testdata.
const noFailFiles = "RAPID_NOFAILFILE=true"

// goTest runs one go test with the overlay and returns the detector that
// failed ("" if every test passed) and its output.
func goTest(ctx context.Context, opt Options, overlay string, t Test) (detector, output string, err error) {
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	// go test's -timeout bounds the test binary, not the build: with
	// RunTimeout, a deadlock panics (showing where) once the tests have
	// had their time.
	binTimeout := opt.Timeout - 10*time.Second
	if opt.RunTimeout > 0 {
		binTimeout = min(binTimeout, opt.RunTimeout)
	}
	args := []string{"test", "-json", "-count=1", "-overlay", overlay, "-timeout", binTimeout.String()}
	if opt.Race {
		args = append(args, "-race")
	}
	if opt.Short {
		args = append(args, "-short")
	}
	if opt.NoVet {
		args = append(args, "-vet=off")
	}
	if t.Run != "" {
		args = append(args, "-run", t.Run)
	}
	args = append(args, t.Package)
	cmd := exec.CommandContext(ctx, opt.Go, args...)
	cmd.Dir = opt.Root
	// A property-based test that a mutant makes fail must not leave its
	// failing case in the checkout (rapid writes testdata/rapid/*.fail).
	cmd.Env = append(os.Environ(), noFailFiles)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return "timeout", stdout.String() + stderr.String(), nil
	}
	if parent := ctx.Err(); parent != nil {
		return "", "", parent
	}
	failed, outputs := parseTestJSON(&stdout)
	if len(failed) > 0 {
		out := outputs[failed[0]]
		for _, o := range outputs {
			if strings.Contains(o, "panic: test timed out") {
				return "timeout", o, nil
			}
		}
		switch {
		case failed[0] == buildFailed || strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
			return "build", outputs[buildFailed] + out + stderr.String(), nil
		}
		return failed[0], out, nil
	}
	if runErr != nil { // failed without a failing test: the build (or vet)
		return "build", stderr.String() + stdout.String(), nil
	}
	return "", "", nil
}

// testBinary is a package's test binary built with a mutant.
type testBinary struct {
	path, dir, importPath string
	// build is the build's failure output ("" if it built).
	build string
}

// stagedTest runs t's tests through its package's test binary, built with
// the overlay (once per mutant: bins) into tmp, under test2json, and
// returns the detector that failed as goTest does.
func stagedTest(ctx context.Context, opt Options, overlay, tmp string, t Test, bins map[string]*testBinary) (detector, output string, err error) {
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	b := bins[t.Package]
	if b == nil {
		importPath, dir, err := listPackageCached(ctx, opt, t.Package)
		if err != nil {
			return "", "", err
		}
		b = &testBinary{path: filepath.Join(tmp, fmt.Sprintf("pkg%d.test", len(bins))), dir: dir, importPath: importPath}
		args := []string{"test", "-c", "-o", b.path, "-overlay", overlay}
		if opt.Race {
			args = append(args, "-race")
		}
		build := exec.CommandContext(ctx, opt.Go, append(args, t.Package)...)
		build.Dir = opt.Root
		out, err := build.CombinedOutput()
		switch {
		case ctx.Err() == context.DeadlineExceeded:
			return "timeout", string(out), nil
		case ctx.Err() != nil:
			return "", "", ctx.Err()
		case err != nil:
			b.build = string(out)
		}
		bins[t.Package] = b
	}
	if b.build != "" {
		return "build", b.build, nil
	}
	if _, err := os.Stat(b.path); err != nil {
		return "", "", nil // no test files
	}
	limit := opt.Timeout
	if opt.RunTimeout > 0 {
		limit = min(limit, opt.RunTimeout)
		var cancelRun context.CancelFunc
		ctx, cancelRun = context.WithTimeout(ctx, limit)
		defer cancelRun()
	}
	// The binary's own timeout comes first: its panic shows where the
	// tests were stuck.
	args := []string{"-test.v=test2json", "-test.count=1", "-test.failfast", "-test.timeout", (limit - limit/10).String()}
	if opt.Short {
		args = append(args, "-test.short")
	}
	if t.Run != "" {
		args = append(args, "-test.run", t.Run)
	}
	cmd := exec.CommandContext(ctx, b.path, args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), noFailFiles)
	cmd.WaitDelay = 10 * time.Second
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	runErr := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return "timeout", stdout.String(), nil
	}
	if parent := ctx.Err(); parent != nil {
		return "", "", parent
	}
	failed, outputs := parseTestJSON(framedEvents(&stdout, b.importPath, runErr != nil))
	if len(failed) > 0 {
		for _, o := range outputs {
			if strings.Contains(o, "panic: test timed out") {
				return "timeout", o, nil
			}
		}
		return failed[0], outputs[failed[0]], nil
	}
	return "", "", nil
}

// framedEvents turns the output of a test binary run with
// -test.v=test2json (its framing lines marked with ^V) into go test -json
// events for parseTestJSON: each test's runs, results and output, and the
// package's failure when the binary exited with an error.
func framedEvents(r io.Reader, importPath string, exitErr bool) io.Reader {
	type event struct {
		Action  string
		Package string
		Test    string `json:",omitempty"`
		Output  string `json:",omitempty"`
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	emit := func(action, test, output string) {
		_ = enc.Encode(event{action, importPath, test, output})
	}
	current := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		frame, ok := strings.CutPrefix(line, "\x16")
		if !ok {
			emit("output", current, line+"\n")
			continue
		}
		result := func(prefix, action string) bool {
			rest, ok := strings.CutPrefix(frame, prefix)
			if !ok {
				return false
			}
			name, _, _ := strings.Cut(rest, " (")
			emit("output", name, frame+"\n")
			emit(action, name, "")
			return true
		}
		switch {
		case strings.HasPrefix(frame, "=== RUN   "):
			current = strings.TrimPrefix(frame, "=== RUN   ")
			emit("run", current, "")
			emit("output", current, frame+"\n")
		case strings.HasPrefix(frame, "=== CONT  "), strings.HasPrefix(frame, "=== NAME  "), strings.HasPrefix(frame, "=== PAUSE "):
			current = strings.TrimSpace(frame[len("=== NAME  "):])
		case result("--- FAIL: ", "fail"), result("--- PASS: ", "pass"), result("--- SKIP: ", "skip"):
		default:
			emit("output", "", frame+"\n")
		}
	}
	if exitErr {
		emit("fail", "", "")
	}
	return &out
}

// command builds t.Package with the overlay and runs it with t.Command;
// a non-zero exit is a detection, named by the command and the first line
// of its output that says FAIL; the output is returned whole.
func command(ctx context.Context, opt Options, overlay string, t Test) (detector, output string, err error) {
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "tracecheck-mutant-bin-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "detector")
	build := exec.CommandContext(ctx, opt.Go, "build", "-overlay", overlay, "-o", bin, t.Package)
	build.Dir = opt.Root
	if out, err := build.CombinedOutput(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return "timeout", string(out), nil
		}
		if parent := ctx.Err(); parent != nil {
			return "", "", parent
		}
		return "build", string(out), nil
	}
	cmd := exec.CommandContext(ctx, bin, t.Command...)
	cmd.Dir = opt.Root
	cmd.WaitDelay = 10 * time.Second
	out, runErr := cmd.CombinedOutput()
	name := filepath.Base(t.Package)
	if len(t.Command) > 0 {
		name += " " + t.Command[0]
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return "timeout", string(out), nil
	case ctx.Err() != nil:
		return "", "", ctx.Err()
	case runErr == nil:
		return "", "", nil
	}
	var exit *exec.ExitError
	if !errors.As(runErr, &exit) {
		return "", "", fmt.Errorf("mutate: running %s: %w", name, runErr)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "FAIL") {
			l = strings.Join(strings.Fields(l), " ")
			if len(l) > 80 {
				l = l[:80] + "..."
			}
			return name + ": " + l, string(out), nil
		}
	}
	return fmt.Sprintf("%s: exit %d", name, exit.ExitCode()), string(out), nil
}

// buildFailed is the key of a build failure in parseTestJSON's results.
const buildFailed = "(build)"

// parseTestJSON returns the tests (and packages) that failed, the first
// test to fail first, with each one's output.
func parseTestJSON(r io.Reader) ([]string, map[string]string) {
	type event struct {
		Action  string
		Package string
		Test    string
		Output  string
	}
	var failed []string
	out := map[string]string{}
	running := map[string]bool{} // tests started and not ended
	isTest := map[string]bool{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		key := shortPackage(e.Package)
		if e.Test != "" {
			key += "." + e.Test
			isTest[key] = true
		}
		switch e.Action {
		case "run":
			running[key] = true
			order = append(order, key)
		case "pass", "skip":
			delete(running, key)
		case "output":
			if len(out[key]) < 64<<10 {
				out[key] += e.Output
			}
		case "fail":
			delete(running, key)
			failed = append(failed, key)
		case "build-output":
			out[buildFailed] += e.Output
		case "build-fail":
			failed = append(failed, buildFailed)
		}
	}
	// A test binary that crashed (a fatal error such as an unlock of an
	// unlocked mutex) fails its package only: the detector is the test
	// that was running, the last one started (a subtest before its parent).
	if len(failed) > 0 && !isTest[failed[0]] {
		for i := len(order) - 1; i >= 0; i-- {
			if running[order[i]] {
				crash := order[i] + " (crash)"
				out[crash] = out[order[i]] + out[failed[0]]
				isTest[crash] = true
				failed = append([]string{crash}, failed...)
				break
			}
		}
	}
	// A subtest's failure comes before its parent's and its package's: the
	// first failure of a test is the most precise detector.
	for i, f := range failed {
		if isTest[f] {
			failed[0], failed[i] = failed[i], failed[0]
			break
		}
	}
	return failed, out
}

// shortPackage drops a host/owner/repo module prefix from a package path
// (github.com/tracecheck/tracecheck/harness/pubcheck is harness/pubcheck).
func shortPackage(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) > 3 && strings.Contains(parts[0], ".") {
		return strings.Join(parts[3:], "/")
	}
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
