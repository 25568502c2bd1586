package tlccross

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

// step is one action of a generated run and the state after it.
type step struct {
	action              string
	phase               string
	verified, published bool
}

// paths are the valid runs of Program from Ready to a terminal phase.
var paths = [][]step{
	{{"ExecutePython", "Running", false, false}, {"ExecutionFails", "Failed", false, false}},
	{{"ExecutePython", "Running", false, false}, {"Interrupt", "Interrupted", false, false}},
	{{"ExecutePython", "Running", false, false}, {"ProgramSucceeds", "Staging", false, false}, {"Interrupt", "Interrupted", false, false}},
	{{"ExecutePython", "Running", false, false}, {"ProgramSucceeds", "Staging", false, false}, {"SaveOrVerificationFails", "Failed", false, false}},
	{{"ExecutePython", "Running", false, false}, {"ProgramSucceeds", "Staging", false, false}, {"ReloadAndVerify", "Verified", true, false}, {"AtomicPublication", "Published", true, true}},
	{{"ExecutePython", "Running", false, false}, {"ProgramSucceeds", "Staging", false, false}, {"ReloadAndVerify", "Verified", true, false}, {"PublicationFails", "Failed", true, false}},
	{{"ExecutePython", "Running", false, false}, {"ProgramSucceeds", "Staging", false, false}, {"ReloadAndVerify", "Verified", true, false}, {"InterruptBeforePublication", "Interrupted", true, false}},
}

// GenerateTraces writes n valid Program traces into dir, one file and one
// instance per run: the paths above in turn, padded with Terminated steps
// to 5 or 6 events, every third run with partial states (phase only), and
// seq numbers with gaps in every fourth. It returns the files.
func GenerateTraces(dir string, n int) ([]string, error) {
	files := make([]string, n)
	for i := range n {
		var buf bytes.Buffer
		w := trace.NewWriter(&buf)
		inst := fmt.Sprintf("run-%03d", i)
		p := paths[i%len(paths)]
		want := 5 + i%2
		seq := uint64(0)
		emit := func(action string, s step) error {
			state := map[string]any{"phase": s.phase, "verified": s.verified, "published": s.published}
			if i%3 == 0 && action != trace.InitAction {
				state = map[string]any{"phase": s.phase}
			}
			err := w.Emit(trace.Event{V: trace.Version, Instance: inst, Seq: seq, Action: action, State: state,
				Detail: map[string]any{"run": i}})
			seq += 1 + uint64(i%4/3)
			return err
		}
		if err := emit(trace.InitAction, step{phase: "Ready"}); err != nil {
			return nil, err
		}
		for _, s := range p {
			if err := emit(s.action, s); err != nil {
				return nil, err
			}
		}
		for k := 1 + len(p); k < want; k++ {
			if err := emit("Terminated", p[len(p)-1]); err != nil {
				return nil, err
			}
		}
		files[i] = filepath.Join(dir, inst+".ndjson")
		if err := os.WriteFile(files[i], buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func TestGenerateTraces(t *testing.T) {
	files, err := GenerateTraces(t.TempDir(), 30)
	if err != nil {
		t.Fatal(err)
	}
	lens := map[int]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lens[bytes.Count(data, []byte("\n"))] = true
		if v, err := Verdict(context.Background(), data, f); err != nil || v != Valid {
			t.Errorf("%s: %s, %v; want a valid trace:\n%s", f, v, err, data)
		}
	}
	if !lens[5] || !lens[6] || len(lens) != 2 {
		t.Errorf("trace lengths %v, want 5 and 6 events", lens)
	}
}

// BenchmarkTLCTraceValidation times TLC's trace validation
// (spec/TraceProgram.tla, one java process per file, as etcd-raft's
// validate.sh runs it) against tracecheck on the same 100 generated valid
// Program traces, one file at a time: the tracecheck binary run once per
// file, and the library (check.Check) in-process per file, interleaved
// file by file so that all three see the same machine load. Every verdict
// must be valid. It reports the three total times and the ratios, and with
// BENCH_TLC_OUT=FILE also writes them there. It needs TLA2TOOLS (and
// COMMUNITY_MODULES, default: beside it); without it, it is skipped.
//
//	TLA2TOOLS=/path/to/tla2tools.jar make bench-tlc
func BenchmarkTLCTraceValidation(b *testing.B) {
	tools := os.Getenv("TLA2TOOLS")
	if tools == "" {
		b.Skip("SKIPPED: TLA2TOOLS is not set, so TLC was not benchmarked; run TLA2TOOLS=/path/to/tla2tools.jar make bench-tlc")
	}
	cm := os.Getenv("COMMUNITY_MODULES")
	if cm == "" {
		cm = filepath.Join(filepath.Dir(tools), "CommunityModules-deps.jar")
	}
	java := os.Getenv("JAVA")
	if java == "" {
		java = "java"
	}
	specDir, err := filepath.Abs(filepath.Join(root, "spec"))
	if err != nil {
		b.Fatal(err)
	}
	const n = 100
	dir := b.TempDir()
	files, err := GenerateTraces(dir, n)
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "tracecheck")
	build := exec.Command("go", "build", "-o", bin, "./cmd/tracecheck")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}

	loadBefore := loadavg()
	var tlcTotal, cliTotal, libTotal time.Duration
	var tlcVersion string
	for range b.N {
		// Interleaved per file, so that the three validators share whatever
		// load the machine is under.
		for i, f := range files {
			start := time.Now()
			cmd := exec.Command(java, "-XX:+UseParallelGC", "-cp", tools+string(os.PathListSeparator)+cm, "tlc2.TLC",
				"-workers", "1", "-noGenerateSpecTE", "-metadir", filepath.Join(dir, fmt.Sprintf("states-%d", i)),
				"-config", filepath.Join(specDir, "TraceProgram.cfg"), filepath.Join(specDir, "TraceProgram.tla"))
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "TRACE="+f)
			out, err := cmd.CombinedOutput()
			if err != nil {
				b.Fatalf("TLC on %s: %v (TLC says it is not valid)\n%s", f, err, out)
			}
			tlcTotal += time.Since(start)
			if tlcVersion == "" {
				tlcVersion, _, _ = strings.Cut(string(out), "\n")
			}

			start = time.Now()
			if out, err := exec.Command(bin, "check", "--model", "program", f).CombinedOutput(); err != nil {
				b.Fatalf("tracecheck check %s: %v\n%s", f, err, out)
			}
			cliTotal += time.Since(start)

			start = time.Now()
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			if v, err := Verdict(context.Background(), data, f); err != nil || v != Valid {
				b.Fatalf("check.Check %s: %s, %v", f, v, err)
			}
			libTotal += time.Since(start)
		}
	}
	tlc, cli, lib := tlcTotal/time.Duration(b.N), cliTotal/time.Duration(b.N), libTotal/time.Duration(b.N)
	b.ReportMetric(tlc.Seconds(), "tlc-total-s")
	b.ReportMetric(cli.Seconds(), "cli-total-s")
	b.ReportMetric(lib.Seconds(), "lib-total-s")
	b.ReportMetric(float64(tlc)/float64(cli), "tlc/cli")
	b.ReportMetric(float64(tlc)/float64(lib), "tlc/lib")

	javaVersion, _ := exec.Command(java, "-version").CombinedOutput()
	first, _, _ := strings.Cut(string(javaVersion), "\n")
	summary := fmt.Sprintf(`TLC vs tracecheck trace validation: %d valid Program traces of 5-6 events, one file at a time
(BenchmarkTLCTraceValidation, harness/tlccross; make bench-tlc). Finished %s, %d iteration(s);
the three validators run in turn on each file, so they share the machine's load.
machine: %s/%s, %d CPUs; %s; java: %s
load average (1, 5, 15 min) before: %s; after: %s
TLC: %s (spec/TraceProgram.tla, one java process per file, -workers 1)

| validator                                    | total      | per file   | TLC / this |
|----------------------------------------------|------------|------------|------------|
| TLC (java per file)                          | %10s | %10s | 1          |
| tracecheck check (binary per file)           | %10s | %10s | %9.0fx |
| tracecheck library (check.Check, in-process) | %10s | %10s | %9.0fx |
`, n, time.Now().UTC().Format(time.RFC3339), b.N, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), first,
		loadBefore, loadavg(), tlcVersion,
		tlc.Round(time.Millisecond), (tlc / n).Round(time.Millisecond),
		cli.Round(time.Millisecond), (cli / n).Round(10*time.Microsecond), float64(tlc)/float64(cli),
		lib.Round(10*time.Microsecond), (lib / n).Round(time.Microsecond), float64(tlc)/float64(lib))
	b.Log("\n" + summary)
	if out := os.Getenv("BENCH_TLC_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(summary), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// loadavg returns the first three fields of /proc/loadavg, or "unknown".
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
