package mutate

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// The statuses of a mutant in a kill matrix.
const (
	// StatusKilled: a selected test (or the build, or a timeout) failed.
	StatusKilled = "killed"
	// StatusSurvived: every selected test passed with the mutant.
	StatusSurvived = "survived"
	// StatusNotCovered: no test executes the mutated code; nothing ran.
	StatusNotCovered = "not-covered"
	// StatusEquivalent: listed in the equivalents file, with a reason;
	// not run, and left out of the score.
	StatusEquivalent = "equivalent"
	// StatusNotApplicable: the mutant's Old text is no longer in its file.
	StatusNotApplicable = "not-applicable"
	// StatusError: the mutant could not be run (the campaign was
	// interrupted, or a tool failed).
	StatusError = "error"
)

// Campaign runs many mutants: in parallel, each against only the tests
// whose coverage includes the mutated line (for operator mutants, with
// Select), with results cached by content so an unchanged mutant is not
// run again.
type Campaign struct {
	// Options apply to every run; Timeout is also the cap of the timeouts
	// derived from the baseline.
	Options
	// Jobs is how many mutants run at once (default 1).
	Jobs int
	// CacheDir, if set, holds results keyed by the hash of the mutated
	// file, the Go files its tests depend on ([DepsHash]) and the tests
	// run.
	CacheDir string
	// Select runs an operator mutant (Package set) against only the tests
	// of its package that execute the mutated position, measured once per
	// package by [MeasureCoverage] (and cached); a mutant that no test
	// executes is StatusNotCovered. Without Select, an operator mutant runs
	// its package's whole suite.
	Select bool
	// Equivalents maps mutants judged equivalent to the reason: they are
	// not run and are left out of the score.
	Equivalents map[string]string
	// Progress, if set, is called after each mutant (from one goroutine
	// at a time).
	Progress func(Progress)
	// TestPackages are packages whose tests exercise the mutated packages
	// too (a harness): with Select, their tests are measured and selected
	// alongside the mutated package's own; without, each operator mutant
	// runs their whole suites after its package's.
	TestPackages []string
	// Log, if set, receives a line per coverage measurement.
	Log io.Writer

	mu        sync.Mutex
	coverage  map[string]*coverageOnce
	deps      map[string]*hashOnce
	paths     sync.Once
	redact    *strings.Replacer
	testRuns  int
	covRuns   int
	covTime   time.Duration
	covFailed map[string][]string
}

type hashOnce struct {
	once sync.Once
	hash string
	err  error
}

type coverageOnce struct {
	once sync.Once
	cov  *Coverage
	err  error
}

// Progress reports a campaign's advance.
type Progress struct {
	Done, Total                                   int
	Killed, Survived, NotCovered, Cached, Skipped int
	Elapsed, ETA                                  time.Duration
	Last                                          Result
}

// Summary counts a kill matrix.
type Summary struct {
	Total         int `json:"total"`
	Killed        int `json:"killed"`
	Survived      int `json:"survived"`
	NotCovered    int `json:"not_covered"`
	Equivalent    int `json:"equivalent"`
	NotApplicable int `json:"not_applicable"`
	Errors        int `json:"errors"`
	// Score is Killed / (Total − Equivalent − NotApplicable): a mutant
	// that no test covers counts against it.
	Score float64 `json:"score"`
	// Wall is the campaign's wall time (for a merge, the longest shard's).
	Wall time.Duration `json:"wall_ns"`
	// Jobs is the campaign's parallelism; Selection whether coverage
	// selected the tests.
	Jobs      int  `json:"jobs,omitempty"`
	Selection bool `json:"selection"`
	// TestRuns counts the go test runs of mutants; Cached the results
	// taken from the cache instead.
	TestRuns int `json:"test_runs"`
	Cached   int `json:"cached"`
	// CoverageRuns counts the per-test coverage runs (0 when the coverage
	// came from the cache), CoverageTime their wall time.
	CoverageRuns int           `json:"coverage_runs"`
	CoverageTime time.Duration `json:"coverage_ns"`
	// FailingTests are tests that fail without any mutant (never selected).
	FailingTests []string `json:"failing_tests,omitempty"`
	// Shard is "i/n" for a shard's matrix.
	Shard string `json:"shard,omitempty"`
}

// Matrix is a kill matrix: every mutant's result and the counts.
type Matrix struct {
	Summary Summary  `json:"summary"`
	Results []Result `json:"results"`
}

// Run runs the mutants and returns the kill matrix, in the mutants' order.
// An interrupted campaign (ctx done) returns the results so far, the rest
// StatusError, and ctx's error.
func (c *Campaign) Run(ctx context.Context, mutants []Mutant) (*Matrix, error) {
	c.fill()
	start := time.Now()
	results := make([]Result, len(mutants))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var pmu sync.Mutex
	var p Progress
	p.Total = len(mutants)
	for range max(c.Jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = c.one(ctx, mutants[i])
				pmu.Lock()
				p.Done++
				switch r := results[i]; {
				case r.Status == StatusKilled:
					p.Killed++
				case r.Status == StatusSurvived:
					p.Survived++
				case r.Status == StatusNotCovered:
					p.NotCovered++
				default:
					p.Skipped++
				}
				if results[i].Cached {
					p.Cached++
				}
				p.Elapsed = time.Since(start)
				p.ETA = p.Elapsed / time.Duration(p.Done) * time.Duration(p.Total-p.Done)
				p.Last = results[i]
				if c.Progress != nil {
					c.Progress(p)
				}
				pmu.Unlock()
			}
		}()
	}
	for i := range mutants {
		if ctx.Err() != nil {
			results[i] = Result{Mutant: mutants[i].Name, File: mutants[i].File, Status: StatusError, Error: ctx.Err().Error()}
			continue
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	m := &Matrix{Results: results}
	m.Summary = Summarize(results)
	m.Summary.Wall = time.Since(start)
	m.Summary.Jobs = c.Jobs
	m.Summary.Selection = c.Select
	c.mu.Lock()
	m.Summary.TestRuns, m.Summary.CoverageRuns, m.Summary.CoverageTime = c.testRuns, c.covRuns, c.covTime
	for _, names := range c.covFailed {
		m.Summary.FailingTests = append(m.Summary.FailingTests, names...)
	}
	c.mu.Unlock()
	sort.Strings(m.Summary.FailingTests)
	return m, ctx.Err()
}

func (c *Campaign) fill() {
	c.Options.fill()
	if c.Jobs < 1 {
		c.Jobs = 1
	}
	c.mu.Lock()
	if c.coverage == nil {
		c.coverage = map[string]*coverageOnce{}
		c.covFailed = map[string][]string{}
		c.deps = map[string]*hashOnce{}
	}
	c.mu.Unlock()
}

// one runs (or looks up, or skips) one mutant.
func (c *Campaign) one(ctx context.Context, m Mutant) Result {
	res := Result{Mutant: m.Name, File: m.File, Line: m.Line, Col: m.Col, Operator: m.Operator, Change: m.Doc}
	if why, ok := c.Equivalents[m.Name]; ok {
		res.Status, res.Reason = StatusEquivalent, why
		return res
	}
	src, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(m.File)))
	if err != nil {
		res.Status, res.Error = StatusError, err.Error()
		return res
	}
	if n := bytes.Count(src, []byte(m.Old)); n != 1 {
		res.Status, res.Error = StatusNotApplicable, fmt.Sprintf("%v: the text to replace occurs %d times in %s", ErrNotApplicable, n, m.File)
		return res
	}
	opt := c.Options
	if !c.Select && m.Package != "" {
		for _, tp := range c.TestPackages {
			if tp != m.Package {
				m.Tests = append(m.Tests[:len(m.Tests):len(m.Tests)], Test{Package: tp})
			}
		}
	}
	if c.Select && m.Package != "" {
		start := time.Now()
		cov, err := c.coverageOf(ctx, m.Package)
		if err != nil {
			res.Status, res.Error, res.Duration = StatusError, err.Error(), time.Since(start)
			return res
		}
		line, col := m.Line, m.Col
		if m.CoverLine > 0 {
			line, col = m.CoverLine, m.CoverCol
		}
		tests := cov.Covering(m.File, line, col)
		if len(tests) == 0 {
			res.Status = StatusNotCovered
			return res
		}
		m.Tests, res.Tests = selection(m.Package, tests, opt.Staged)
		if len(m.Tests) == 1 {
			// One wave: go test reuses its cached link of the test
			// binary, which go test -c would redo.
			opt.Staged = false
		}
		var base time.Duration
		for _, t := range tests {
			base += t.Duration
		}
		// A deadlocking mutant fails fast: two minutes for the build and
		// ten times the selected tests' baseline, within Options.Timeout.
		opt.Timeout = min(opt.Timeout, 2*time.Minute+10*base)
		// The test binary's run is bounded apart: 20 s and five times
		// the baseline (each test's measured time includes its process's
		// start, so the margin is wider than it looks).
		opt.RunTimeout = 20*time.Second + 5*base
	}
	for _, t := range m.Tests {
		if c.Select && m.Package != "" {
			break // res.Tests named by the selection
		}
		name := t.Package
		if t.Run != "" {
			name += " -run " + t.Run
		}
		if t.Command != nil {
			name += " " + strings.Join(t.Command, " ")
		}
		res.Tests = append(res.Tests, name)
	}
	mutated := bytes.Replace(src, []byte(m.Old), []byte(m.New), 1)
	var key string
	if c.CacheDir != "" {
		var pkgs []string
		for _, t := range m.Tests {
			pkgs = append(pkgs, t.Package)
		}
		if deps, err := c.depsHash(ctx, pkgs); err == nil {
			key = c.key(m, mutated, deps)
		} else {
			c.logf("mutate: %s: not cached: %v", m.Name, err)
		}
	}
	if r, ok := c.lookup(key); ok {
		r.Cached = true
		return r
	}
	c.mu.Lock()
	c.testRuns++
	c.mu.Unlock()
	r := Run(ctx, m, opt)
	r.Line, r.Col, r.Operator, r.Change, r.Tests = res.Line, res.Col, res.Operator, res.Change, res.Tests
	r.Output, r.Error = c.redactPaths(ctx, r.Output), c.redactPaths(ctx, r.Error)
	switch {
	case r.Error != "" && strings.Contains(r.Error, ErrNotApplicable.Error()):
		r.Status = StatusNotApplicable
	case r.Error != "":
		r.Status = StatusError
	case r.Killed:
		r.Status = StatusKilled
	default:
		r.Status = StatusSurvived
	}
	if r.Status == StatusKilled || r.Status == StatusSurvived {
		c.store(key, r)
	}
	return r
}

// redactPaths rewrites the paths of this machine in a test's output so
// that a kill matrix can be kept and compared elsewhere: the module root
// becomes relative, GOROOT, GOMODCACHE and the home directory are named.
func (c *Campaign) redactPaths(ctx context.Context, s string) string {
	c.paths.Do(func() {
		var pairs []string
		if root, err := filepath.Abs(c.Root); err == nil {
			pairs = append(pairs, root+string(filepath.Separator), "")
		}
		env := exec.CommandContext(ctx, c.Go, "env", "GOROOT", "GOMODCACHE")
		env.Dir = c.Root
		if out, err := env.Output(); err == nil {
			vals := strings.Split(strings.TrimSpace(string(out)), "\n")
			for i, name := range []string{"$GOROOT", "$GOMODCACHE"} {
				if i < len(vals) && strings.TrimSpace(vals[i]) != "" {
					pairs = append(pairs, strings.TrimSpace(vals[i]), name)
				}
			}
		}
		if home, err := os.UserHomeDir(); err == nil && home != "/" {
			pairs = append(pairs, home+string(filepath.Separator), "~/")
		}
		c.redact = strings.NewReplacer(pairs...)
	})
	return c.redact.Replace(s)
}

// coverageOf measures (once per campaign, or from the cache) the per-test
// coverage of pkg.
func (c *Campaign) coverageOf(ctx context.Context, pkg string) (*Coverage, error) {
	c.mu.Lock()
	co := c.coverage[pkg]
	if co == nil {
		co = &coverageOnce{}
		c.coverage[pkg] = co
	}
	c.mu.Unlock()
	co.once.Do(func() {
		var key string
		deps, err := c.depsHash(ctx, append([]string{pkg}, c.TestPackages...))
		if c.CacheDir != "" && err == nil {
			h := sha256.New()
			fmt.Fprintf(h, "tracecheck-mutate-coverage-v3\x00%s\x00%s\x00%q\x00race=%v short=%v\x00", deps, pkg, c.TestPackages, c.Race, c.Short)
			key = "coverage-" + hex.EncodeToString(h.Sum(nil))
			if b, err := readBounded(filepath.Join(c.CacheDir, key[:11], key+".json"), 256<<20); err == nil {
				var cov Coverage
				if json.Unmarshal(b, &cov) == nil {
					co.cov = &cov
					c.noteFailing(&cov)
					c.logf("mutate: coverage of %s: %d tests, from the cache", pkg, len(cov.Tests))
					return
				}
			}
		}
		co.cov, co.err = MeasureCoverage(ctx, c.Options, pkg, c.Jobs, c.TestPackages...)
		if co.err != nil {
			return
		}
		c.mu.Lock()
		c.covRuns += len(co.cov.Tests)
		c.covTime += co.cov.Duration
		c.mu.Unlock()
		c.noteFailing(co.cov)
		c.logf("mutate: coverage of %s: %d tests measured in %s", pkg, len(co.cov.Tests), co.cov.Duration.Round(time.Second))
		if key != "" {
			if b, err := json.Marshal(co.cov); err == nil {
				_ = writeAtomic(filepath.Join(c.CacheDir, key[:11], key+".json"), b)
			}
		}
	})
	return co.cov, co.err
}

func (c *Campaign) noteFailing(cov *Coverage) {
	if f := cov.Failing(); len(f) > 0 {
		c.mu.Lock()
		c.covFailed[cov.Package] = f
		c.mu.Unlock()
		c.logf("mutate: %s: tests failing without any mutant, never selected: %s", cov.Package, strings.Join(f, ", "))
	}
}

func (c *Campaign) logf(format string, args ...any) {
	if c.Log != nil {
		c.mu.Lock()
		fmt.Fprintf(c.Log, format+"\n", args...)
		c.mu.Unlock()
	}
}

// key is the cache key of m's result: the sha256 of the mutated file's
// content, of the Go files the tests depend on (deps, [Campaign.depsHash]),
// of the tests run and of the options that change a verdict (race, short,
// vet).
func (c *Campaign) key(m Mutant, mutated []byte, deps string) string {
	h := sha256.New()
	tests, _ := json.Marshal(m.Tests)
	fmt.Fprintf(h, "tracecheck-mutate-result-v3\x00%s\x00%s\x00%d\x00", deps, m.File, len(mutated))
	h.Write(mutated)
	fmt.Fprintf(h, "\x00%s\x00race=%v short=%v novet=%v", tests, c.Race, c.Short, c.NoVet)
	return hex.EncodeToString(h.Sum(nil))
}

// depsHash returns the sha256 of the Go files of the main module's
// packages that pkgs and their tests depend on (go list -deps -test), with
// go.mod and go.sum, once per package list: a change elsewhere in the
// module leaves the cached results of these tests valid.
func (c *Campaign) depsHash(ctx context.Context, pkgs []string) (string, error) {
	sorted := append([]string(nil), pkgs...)
	sort.Strings(sorted)
	id := strings.Join(sorted, "\x00")
	c.mu.Lock()
	ho := c.deps[id]
	if ho == nil {
		ho = &hashOnce{}
		c.deps[id] = ho
	}
	c.mu.Unlock()
	ho.once.Do(func() { ho.hash, ho.err = DepsHash(ctx, c.Options, sorted...) })
	return ho.hash, ho.err
}

func (c *Campaign) lookup(key string) (Result, bool) {
	if c.CacheDir == "" || key == "" {
		return Result{}, false
	}
	b, err := readBounded(filepath.Join(c.CacheDir, key[:2], key+".json"), 1<<20)
	if err != nil {
		return Result{}, false
	}
	var r Result
	if json.Unmarshal(b, &r) != nil || (r.Status != StatusKilled && r.Status != StatusSurvived) {
		return Result{}, false
	}
	return r, true
}

func (c *Campaign) store(key string, r Result) {
	if c.CacheDir == "" || key == "" {
		return
	}
	if b, err := json.Marshal(r); err == nil {
		_ = writeAtomic(filepath.Join(c.CacheDir, key[:2], key+".json"), b)
	}
}

// readBounded reads at most limit bytes of path.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("mutate: %s is larger than %d bytes", path, limit)
	}
	return b, nil
}

// writeAtomic writes b to path through a temporary file and a rename, so
// a concurrent reader sees the whole file or none.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// DefaultCacheDir is the result cache under the user's cache directory.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("mutate: %w", err)
	}
	return filepath.Join(d, "tracecheck", "mutate"), nil
}

// DepsHash is the sha256 of what the tests of pkgs depend on in the main
// module, as go list -deps -test names the packages: their Go files, their
// embedded files and their testdata trees, with the module's go.mod and
// go.sum (names and contents). opt's Root and Go apply.
func DepsHash(ctx context.Context, opt Options, pkgs ...string) (string, error) {
	opt.fill()
	const format = "{{if .Module}}{{if .Module.Main}}{{.Dir}}" +
		"{{range .EmbedFiles}}\t{{.}}{{end}}{{range .TestEmbedFiles}}\t{{.}}{{end}}{{range .XTestEmbedFiles}}\t{{.}}{{end}}{{end}}{{end}}"
	args := append([]string{"list", "-deps", "-test", "-f", format}, pkgs...)
	cmd := exec.CommandContext(ctx, opt.Go, args...)
	cmd.Dir = opt.Root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("mutate: go list -deps %v: %w", pkgs, withStderr(err))
	}
	set := map[string]bool{}
	dirs := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Split(strings.TrimSpace(line), "\t")
		d := fields[0]
		if d == "" {
			continue
		}
		dirs[d] = true
		for _, e := range fields[1:] {
			set[filepath.Join(d, filepath.FromSlash(e))] = true
		}
	}
	for d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			return "", fmt.Errorf("mutate: hashing the dependencies: %w", err)
		}
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".go") {
				set[filepath.Join(d, e.Name())] = true
			}
		}
		td := filepath.Join(d, "testdata")
		err = filepath.WalkDir(td, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == td {
					return nil
				}
				return err
			}
			if e.Type().IsRegular() {
				set[p] = true
			}
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("mutate: hashing the dependencies: %w", err)
		}
	}
	files := make([]string, 0, len(set))
	for f := range set {
		files = append(files, f)
	}
	root, err := filepath.Abs(opt.Root)
	if err != nil {
		return "", fmt.Errorf("mutate: %w", err)
	}
	sort.Strings(files)
	files = append(files, filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum"))
	h := sha256.New()
	for _, f := range files {
		b, err := readBounded(f, 256<<20)
		if errors.Is(err, fs.ErrNotExist) && filepath.Dir(f) == root {
			continue // no go.sum
		}
		if err != nil {
			return "", fmt.Errorf("mutate: hashing the dependencies: %w", err)
		}
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Summarize counts results.
func Summarize(results []Result) Summary {
	var s Summary
	s.Total = len(results)
	for _, r := range results {
		switch r.Status {
		case StatusKilled:
			s.Killed++
		case StatusSurvived:
			s.Survived++
		case StatusNotCovered:
			s.NotCovered++
		case StatusEquivalent:
			s.Equivalent++
		case StatusNotApplicable:
			s.NotApplicable++
		default:
			s.Errors++
		}
		if r.Cached {
			s.Cached++
		}
	}
	if d := s.Total - s.Equivalent - s.NotApplicable; d > 0 {
		s.Score = float64(s.Killed) / float64(d)
	}
	return s
}

// Shard returns the mutants of shard i of n (1 ≤ i ≤ n): those whose
// name hashes to i−1 modulo n, so a mutant stays in its shard when others
// are added or removed.
func Shard(mutants []Mutant, i, n int) []Mutant {
	var out []Mutant
	for _, m := range mutants {
		h := fnv.New32a()
		h.Write([]byte(m.Name))
		if int(h.Sum32()%uint32(n)) == i-1 {
			out = append(out, m)
		}
	}
	return out
}

// ParseShard parses "i/n".
func ParseShard(s string) (i, n int, err error) {
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || n < 1 || i < 1 || i > n || fmt.Sprintf("%d/%d", i, n) != s {
		return 0, 0, fmt.Errorf("mutate: shard %q: want i/n with 1 ≤ i ≤ n", s)
	}
	return i, n, nil
}

// Merge combines shard matrices into one: results ordered by file, line,
// column and name, counts recomputed, wall time the longest shard's, runs
// summed. A mutant in two shards is an error.
func Merge(ms []*Matrix) (*Matrix, error) {
	out := &Matrix{}
	seen := map[string]bool{}
	var wall time.Duration
	var runs, covRuns, jobs int
	var covTime time.Duration
	failing := map[string]bool{}
	sel := len(ms) > 0
	for _, m := range ms {
		for _, r := range m.Results {
			if seen[r.Mutant] {
				return nil, fmt.Errorf("mutate: merge: %s is in two matrices", r.Mutant)
			}
			seen[r.Mutant] = true
			out.Results = append(out.Results, r)
		}
		wall = max(wall, m.Summary.Wall)
		covTime = max(covTime, m.Summary.CoverageTime)
		runs += m.Summary.TestRuns
		covRuns += m.Summary.CoverageRuns
		jobs = max(jobs, m.Summary.Jobs)
		sel = sel && m.Summary.Selection
		for _, f := range m.Summary.FailingTests {
			failing[f] = true
		}
	}
	SortResults(out.Results)
	out.Summary = Summarize(out.Results)
	out.Summary.Wall, out.Summary.TestRuns, out.Summary.CoverageRuns, out.Summary.CoverageTime = wall, runs, covRuns, covTime
	out.Summary.Jobs, out.Summary.Selection = jobs, sel
	for f := range failing {
		out.Summary.FailingTests = append(out.Summary.FailingTests, f)
	}
	sort.Strings(out.Summary.FailingTests)
	return out, nil
}

// comparePos orders two mutants by file, line, column, then name.
func comparePos(af string, al, ac int, an string, bf string, bl, bc int, bn string) int {
	return cmp.Or(cmp.Compare(af, bf), cmp.Compare(al, bl), cmp.Compare(ac, bc), cmp.Compare(an, bn))
}

// SortResults orders results by file, line, column and name (the order
// [Generate] returns operator mutants in).
func SortResults(rs []Result) {
	slices.SortStableFunc(rs, func(a, b Result) int {
		return comparePos(a.File, a.Line, a.Col, a.Mutant, b.File, b.Line, b.Col, b.Mutant)
	})
}

// ReadMatrix reads a kill matrix written as JSON (at most 256 MiB).
func ReadMatrix(path string) (*Matrix, error) {
	b, err := readBounded(path, 256<<20)
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	var m Matrix
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("mutate: %s: %w", path, err)
	}
	return &m, nil
}

// ParseEquivalents reads an equivalents file: a line per mutant judged
// equivalent, its name then the reason ("op/f.go:3:7/boundary i is never
// negative"); blank lines and lines starting with # are ignored. A name
// without a reason is an error.
func ParseEquivalents(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		reason = strings.TrimSpace(reason)
		if reason == "" {
			return nil, fmt.Errorf("mutate: equivalents line %d: %s has no reason", n, name)
		}
		out[name] = reason
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mutate: equivalents: %w", err)
	}
	return out, nil
}
