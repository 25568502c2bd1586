package mutate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Coverage is what each test of one package covers of that package, from
// one run per test with a coverage-instrumented test binary.
type Coverage struct {
	// Package is the package, as a ./relative directory.
	Package string `json:"package"`
	// ImportPath is its import path.
	ImportPath string `json:"import_path"`
	// Tests are its tests (Test, Fuzz and Example functions), in the
	// order the test binary lists them.
	Tests []TestCoverage `json:"tests"`
	// Duration is the time the measurement took (build and runs).
	Duration time.Duration `json:"duration_ns"`
}

// TestCoverage is what one test covers.
type TestCoverage struct {
	Name string `json:"name"`
	// Package is the test's package when it is not the measured one (a
	// harness's tests exercising it).
	Package string `json:"package,omitempty"`
	// Duration is the test's run time, process start to exit.
	Duration time.Duration `json:"duration_ns"`
	// Failed reports that the test fails without any mutant: it is never
	// selected, since it would "kill" every mutant.
	Failed bool `json:"failed,omitempty"`
	// Blocks are the blocks it executed, by module-relative file.
	Blocks map[string][]Block `json:"blocks,omitempty"`
}

// Block is a span of source, from a coverage profile: lines and columns
// are 1-based, the end inclusive of its line and exclusive of its column
// as the go tool writes them.
type Block struct {
	StartLine int `json:"sl"`
	StartCol  int `json:"sc"`
	EndLine   int `json:"el"`
	EndCol    int `json:"ec"`
}

func (b Block) contains(line, col int) bool {
	if line < b.StartLine || line > b.EndLine {
		return false
	}
	if line == b.StartLine && col < b.StartCol {
		return false
	}
	if line == b.EndLine && col >= b.EndCol {
		return false
	}
	return true
}

// Covering returns the tests (that pass without mutants) whose coverage
// includes file:line:col, fastest first.
func (c *Coverage) Covering(file string, line, col int) []TestCoverage {
	var out []TestCoverage
	for _, t := range c.Tests {
		if t.Failed {
			continue
		}
		for _, b := range t.Blocks[file] {
			if b.contains(line, col) {
				out = append(out, t)
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Duration < out[j].Duration })
	return out
}

// Failing returns the tests that fail without any mutant.
func (c *Coverage) Failing() []string {
	var out []string
	for _, t := range c.Tests {
		if t.Failed {
			out = append(out, t.Name)
		}
	}
	return out
}

// MeasureCoverage measures what each test covers of pkg: for pkg itself
// and for each of testPkgs (other packages whose tests exercise pkg, such
// as a harness), it builds the test binary once with coverage of pkg,
// lists its tests and runs each alone (jobs at a time). opt's Root, Go,
// Race, Short and Timeout apply (Timeout bounds each test).
func MeasureCoverage(ctx context.Context, opt Options, pkg string, jobs int, testPkgs ...string) (*Coverage, error) {
	opt.fill()
	start := time.Now()
	if jobs < 1 {
		jobs = 1
	}
	importPath, dir, err := listPackage(ctx, opt, pkg)
	if err != nil {
		return nil, err
	}
	absRoot, err := filepath.Abs(opt.Root)
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	relDir, err := filepath.Rel(absRoot, dir)
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	cov := &Coverage{Package: pkg, ImportPath: importPath}
	tmp, err := os.MkdirTemp("", "tracecheck-coverage-")
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	defer os.RemoveAll(tmp)
	type binary struct{ path, dir string }
	bins := map[string]binary{}
	for i, tp := range append([]string{pkg}, testPkgs...) {
		if _, ok := bins[tp]; ok {
			continue
		}
		tpDir := dir
		if i > 0 {
			if _, tpDir, err = listPackage(ctx, opt, tp); err != nil {
				return nil, err
			}
		}
		bin := filepath.Join(tmp, fmt.Sprintf("pkg%d.test", i))
		args := []string{"test", "-c", "-o", bin, "-cover", "-covermode=set", "-coverpkg=" + importPath}
		if opt.Race {
			args = append(args, "-race")
		}
		build := exec.CommandContext(ctx, opt.Go, append(args, tp)...)
		build.Dir = opt.Root
		if b, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("mutate: building %s's tests with coverage of %s: %w\n%s", tp, pkg, err, tail(string(b), 2000))
		}
		if _, err := os.Stat(bin); err != nil { // no test files
			continue
		}
		bins[tp] = binary{bin, tpDir}
		lister := exec.CommandContext(ctx, bin, "-test.list", ".*")
		lister.Dir = tpDir
		names, err := lister.Output()
		if err != nil {
			return nil, fmt.Errorf("mutate: listing %s's tests: %w", tp, withStderr(err))
		}
		for _, n := range strings.Fields(string(names)) {
			if strings.HasPrefix(n, "Test") || strings.HasPrefix(n, "Fuzz") || strings.HasPrefix(n, "Example") {
				t := TestCoverage{Name: n}
				if tp != pkg {
					t.Package = tp
				}
				cov.Tests = append(cov.Tests, t)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(cov.Tests))
	sem := make(chan struct{}, jobs)
	for i := range cov.Tests {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			tp := cov.Tests[i].Package
			if tp == "" {
				tp = pkg
			}
			b := bins[tp]
			errs[i] = runCovered(ctx, opt, b.path, b.dir, filepath.ToSlash(relDir), importPath, filepath.Join(tmp, fmt.Sprintf("%d.out", i)), &cov.Tests[i])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	cov.Duration = time.Since(start)
	return cov, nil
}

// listPackage returns pkg's import path and directory; pkg must name one
// package.
func listPackage(ctx context.Context, opt Options, pkg string) (importPath, dir string, err error) {
	list := exec.CommandContext(ctx, opt.Go, "list", "-f", "{{.ImportPath}}\t{{.Dir}}", pkg)
	list.Dir = opt.Root
	out, err := list.Output()
	if err != nil {
		return "", "", fmt.Errorf("mutate: go list %s: %w", pkg, withStderr(err))
	}
	fields := strings.SplitN(strings.TrimSpace(string(out)), "\t", 2)
	if len(fields) != 2 || strings.Contains(fields[1], "\n") {
		return "", "", fmt.Errorf("mutate: coverage: %s names %d packages; name exactly one", pkg, strings.Count(string(out), "\n")+1)
	}
	return fields[0], fields[1], nil
}

// listed caches listPackage's answers for staged runs: every mutant of
// a campaign asks about the same few packages.
var listed sync.Map // Root, Go and package → [2]string{importPath, dir}

func listPackageCached(ctx context.Context, opt Options, pkg string) (importPath, dir string, err error) {
	root, err := filepath.Abs(opt.Root)
	if err != nil {
		return "", "", fmt.Errorf("mutate: %w", err)
	}
	key := root + "\x00" + opt.Go + "\x00" + pkg
	if v, ok := listed.Load(key); ok {
		a := v.([2]string)
		return a[0], a[1], nil
	}
	importPath, dir, err = listPackage(ctx, opt, pkg)
	if err == nil {
		listed.Store(key, [2]string{importPath, dir})
	}
	return importPath, dir, err
}

// runCovered runs one test of the binary and reads its profile into t.
func runCovered(ctx context.Context, opt Options, bin, dir, relDir, importPath, profile string, t *TestCoverage) error {
	args := []string{"-test.run", "^" + t.Name + "$", "-test.count=1", "-test.coverprofile=" + profile,
		"-test.timeout=" + opt.Timeout.String()}
	if opt.Short {
		args = append(args, "-test.short")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	t.Duration = time.Since(start)
	if ctx.Err() != nil {
		return fmt.Errorf("mutate: coverage of %s: %w", t.Name, ctx.Err())
	}
	t.Failed = runErr != nil
	f, err := os.Open(profile)
	if err != nil {
		if t.Failed {
			return nil
		}
		return fmt.Errorf("mutate: coverage of %s: %w", t.Name, err)
	}
	defer f.Close()
	t.Blocks, err = parseProfile(io.LimitReader(f, 256<<20), importPath, relDir)
	if err != nil {
		return fmt.Errorf("mutate: coverage of %s: %w", t.Name, err)
	}
	return nil
}

// parseProfile reads a coverage profile's executed blocks of the package
// importPath, keyed by module-relative file (relDir/base).
func parseProfile(r io.Reader, importPath, relDir string) (map[string][]Block, error) {
	out := map[string][]Block{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		// importpath/file.go:12.3,14.5 2 1
		colon := strings.LastIndexByte(line, ':')
		if colon < 0 {
			return nil, fmt.Errorf("bad profile line %q", line)
		}
		file := line[:colon]
		f := strings.Fields(line[colon+1:])
		if len(f) != 3 {
			return nil, fmt.Errorf("bad profile line %q", line)
		}
		if f[2] == "0" || !strings.HasPrefix(file, importPath+"/") {
			continue
		}
		var b Block
		if _, err := fmt.Sscanf(f[0], "%d.%d,%d.%d", &b.StartLine, &b.StartCol, &b.EndLine, &b.EndCol); err != nil {
			return nil, fmt.Errorf("bad profile line %q: %w", line, err)
		}
		rel := strings.TrimPrefix(file, importPath+"/")
		if relDir != "." {
			rel = relDir + "/" + rel
		}
		out[rel] = append(out[rel], b)
	}
	return out, sc.Err()
}

// selection returns the go test runs of the tests, a run per package
// (pkg's own first), each with a -run expression that selects exactly
// the named top-level tests (and their subtests), and the tests' names
// (package-qualified when not pkg's own).
func selection(pkg string, tests []TestCoverage, staged bool) ([]Test, []string) {
	pkgOf := func(t TestCoverage) string {
		if t.Package == "" {
			return pkg
		}
		return t.Package
	}
	var names []string
	for _, t := range tests {
		n := t.Name
		if p := pkgOf(t); p != pkg {
			n = strings.TrimPrefix(p, "./") + "." + n
		}
		names = append(names, n)
	}
	var runs []Test
	if staged {
		// Waves: every package's quick covering tests (each under
		// quickTest alone), the packages with the quickest first, then
		// the slow ones: most mutants die in the first wave, and a slow
		// test runs only for the mutants the quick ones miss.
		var quick, slow []TestCoverage
		for _, t := range tests {
			if t.Duration < quickTest {
				quick = append(quick, t)
			} else {
				slow = append(slow, t)
			}
		}
		for _, wave := range [][]TestCoverage{quick, slow} {
			runs = append(runs, packageRuns(wave, pkgOf, func(order []string, took map[string]time.Duration) {
				sort.SliceStable(order, func(i, j int) bool { return took[order[i]] < took[order[j]] })
			})...)
		}
		return runs, names
	}
	byPkg := map[string][]string{}
	var order []string
	for _, t := range tests {
		p := pkgOf(t)
		if byPkg[p] == nil {
			order = append(order, p)
		}
		byPkg[p] = append(byPkg[p], t.Name)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i] == pkg && order[j] != pkg })
	for _, p := range order {
		ns := byPkg[p]
		sort.Strings(ns)
		runs = append(runs, Test{Package: p, Run: "^(" + strings.Join(ns, "|") + ")$"})
	}
	names = names[:0]
	for _, p := range order {
		for _, n := range byPkg[p] {
			if p != pkg {
				n = strings.TrimPrefix(p, "./") + "." + n
			}
			names = append(names, n)
		}
	}
	return runs, names
}

// quickTest is the measured run time (process start to exit) under which
// a covering test is in a staged campaign's first wave.
const quickTest = time.Second

// packageRuns groups tests by package, a Test each, in the order sortPkgs
// leaves the packages in (given each one's summed duration).
func packageRuns(tests []TestCoverage, pkgOf func(TestCoverage) string, sortPkgs func([]string, map[string]time.Duration)) []Test {
	byPkg := map[string][]string{}
	took := map[string]time.Duration{}
	var order []string
	for _, t := range tests {
		p := pkgOf(t)
		if byPkg[p] == nil {
			order = append(order, p)
		}
		byPkg[p] = append(byPkg[p], t.Name)
		took[p] += t.Duration
	}
	sortPkgs(order, took)
	var runs []Test
	for _, p := range order {
		ns := byPkg[p]
		sort.Strings(ns)
		runs = append(runs, Test{Package: p, Run: "^(" + strings.Join(ns, "|") + ")$"})
	}
	return runs
}

func withStderr(err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) && len(exit.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(exit.Stderr))
	}
	return err
}

// formatSeconds prints d in seconds with one decimal, for tables.
func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
}
