package tlccross

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

// tlc runs TLC's trace validation on one trace file, as tlc-traces.sh does.
type tlc struct {
	java, tools, modules, specDir, workDir string
}

// newTLC configures TLC from TLA2TOOLS, COMMUNITY_MODULES and JAVA; ok is
// false if TLA2TOOLS is not set.
func newTLC(workDir string) (t tlc, ok bool, err error) {
	t.tools = os.Getenv("TLA2TOOLS")
	if t.tools == "" {
		return t, false, nil
	}
	t.modules = os.Getenv("COMMUNITY_MODULES")
	if t.modules == "" {
		t.modules = filepath.Join(filepath.Dir(t.tools), "CommunityModules-deps.jar")
	}
	t.java = os.Getenv("JAVA")
	if t.java == "" {
		t.java = "java"
	}
	t.specDir, err = filepath.Abs(filepath.Join(root, "spec"))
	t.workDir = workDir
	return t, true, err
}

// run validates file (an absolute path) and returns TLC's exit code and
// output; err is set only if TLC could not be run at all.
func (t tlc) run(file string, n int) (int, string, error) {
	cmd := exec.Command(t.java, "-XX:+UseParallelGC", "-cp", t.tools+string(os.PathListSeparator)+t.modules, "tlc2.TLC",
		"-workers", "1", "-noGenerateSpecTE", "-metadir", filepath.Join(t.workDir, "states-"+strconv.Itoa(n)),
		"-config", filepath.Join(t.specDir, "TraceProgram.cfg"), filepath.Join(t.specDir, "TraceProgram.tla"))
	cmd.Dir = t.workDir
	cmd.Env = append(os.Environ(), "TRACE="+file)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out), nil
	}
	return 0, string(out), err
}

var actionNames = []string{"ExecutePython", "ProgramSucceeds", "ExecutionFails", "ReloadAndVerify",
	"SaveOrVerificationFails", "Interrupt", "AtomicPublication", "PublicationFails",
	"InterruptBeforePublication", "Terminated"}

var phaseNames = []string{"Ready", "Running", "Staging", "Verified", "Published", "Failed", "Interrupted"}

// randomTrace returns a run of Program along a random path, padded with
// Terminated, each non-initial state random in which variables it gives,
// then changed by up to two random mutations: dropped, swapped, renamed or
// cut-off events, changed values, stutter marks, early Terminated steps,
// and (rarely) bad input. It returns the events and the mutations.
func randomTrace(rng *rand.Rand, inst string) ([]trace.Event, []string) {
	p := paths[rng.IntN(len(paths))]
	evs := []trace.Event{{Action: trace.InitAction, State: map[string]any{"phase": "Ready", "verified": false, "published": false}}}
	steps := append([]step(nil), p...)
	for range rng.IntN(3) {
		steps = append(steps, step{"Terminated", p[len(p)-1].phase, p[len(p)-1].verified, p[len(p)-1].published})
	}
	for _, s := range steps {
		st := map[string]any{}
		for _, kv := range []struct {
			k string
			v any
		}{{"phase", s.phase}, {"verified", s.verified}, {"published", s.published}} {
			if rng.IntN(3) > 0 { // in a fixed order, so that a seed replays
				st[kv.k] = kv.v
			}
		}
		evs = append(evs, trace.Event{Action: s.action, State: st})
	}
	var muts []string
	for range rng.IntN(3) {
		j := 1 + rng.IntN(len(evs)-1)
		switch m := rng.IntN(11); m {
		case 0:
			evs = append(evs[:j:j], evs[j+1:]...)
			muts = append(muts, fmt.Sprintf("drop %d", j))
		case 1:
			if j+1 < len(evs) {
				evs[j], evs[j+1] = evs[j+1], evs[j]
				muts = append(muts, fmt.Sprintf("swap %d", j))
			}
		case 2:
			evs[j].Action = actionNames[rng.IntN(len(actionNames))]
			muts = append(muts, fmt.Sprintf("action %d %s", j, evs[j].Action))
		case 3:
			j = rng.IntN(len(evs))
			evs[j].State["phase"] = phaseNames[rng.IntN(len(phaseNames))]
			muts = append(muts, fmt.Sprintf("phase %d %s", j, evs[j].State["phase"]))
		case 4:
			j = rng.IntN(len(evs))
			v := []string{"verified", "published"}[rng.IntN(2)]
			b, _ := evs[j].State[v].(bool)
			evs[j].State[v] = !b
			muts = append(muts, fmt.Sprintf("flip %d %s", j, v))
		case 5:
			evs[j].Stutter, evs[j].Action = true, "internal"
			muts = append(muts, fmt.Sprintf("stutter %d", j))
		case 6:
			evs = evs[:j]
			muts = append(muts, fmt.Sprintf("cut %d", j))
		case 7:
			evs = append(evs[:j:j], append([]trace.Event{{Action: "Terminated", State: map[string]any{}}}, evs[j:]...)...)
			muts = append(muts, fmt.Sprintf("terminated at %d", j))
		case 8:
			evs[j].Part = trace.PartBegin
			evs = append(evs[:j+1:j+1], append([]trace.Event{{Action: evs[j].Action, Part: trace.PartEnd, State: map[string]any{}}}, evs[j+1:]...)...)
			muts = append(muts, fmt.Sprintf("composite %d", j))
		case 9:
			if rng.IntN(2) == 0 {
				evs[j].Action = "Fly"
				muts = append(muts, fmt.Sprintf("unknown action %d", j))
			} else {
				evs[j].State["pid"] = 7
				muts = append(muts, fmt.Sprintf("unknown variable %d", j))
			}
		case 10:
			evs[j].Action = trace.InitAction
			muts = append(muts, fmt.Sprintf("init at %d", j))
		}
		if len(evs) < 2 {
			break
		}
	}
	for i := range evs {
		evs[i].V, evs[i].Instance, evs[i].Seq = trace.Version, inst, uint64(i)
	}
	return evs, muts
}

// TestTLCDifferential validates TLC_DIFF random Program traces (valid
// ones and mutated ones) with TLC and with tracecheck and asserts the
// same verdict for each. It needs TLA2TOOLS and TLC_DIFF (TLC takes a few
// seconds a trace); TLC_DIFF_SEED replays a run.
//
//	TLA2TOOLS=/path/to/tla2tools.jar make tlc-diff
func TestTLCDifferential(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TLC_DIFF"))
	if n <= 0 {
		t.Skip("SKIPPED: set TLC_DIFF=N (and TLA2TOOLS) to compare TLC and tracecheck on N random traces: make tlc-diff")
	}
	dir := t.TempDir()
	tl, ok, err := newTLC(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("SKIPPED: TLA2TOOLS is not set: make tlc-diff")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TLC_DIFF_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("TLC_DIFF_SEED: %v", err)
		}
	}
	t.Logf("seed %d (replay: TLC_DIFF_SEED=%d TLC_DIFF=%d TLA2TOOLS=%s go test -run TestTLCDifferential ./harness/tlccross)", seed, seed, n, tl.tools)
	rng := rand.New(rand.NewPCG(seed, 0))
	count := map[string]int{}
	for i := range n {
		evs, muts := randomTrace(rng, fmt.Sprintf("d%d", i))
		var buf bytes.Buffer
		w := trace.NewWriter(&buf)
		for _, e := range evs {
			if err := w.Emit(e); err != nil {
				t.Fatal(err)
			}
		}
		file := filepath.Join(dir, fmt.Sprintf("d%03d.ndjson", i))
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		exit, out, err := tl.run(file, i)
		if err != nil {
			t.Fatalf("running TLC: %v\n%s", err, out)
		}
		want, ok := TLCVerdict(exit, out)
		if !ok {
			t.Fatalf("trace %d (%s): TLC exit %d is no verdict:\n%s\n%s", i, strings.Join(muts, ", "), exit, buf.String(), out)
		}
		got, err := Verdict(context.Background(), buf.Bytes(), file)
		if err != nil {
			t.Fatal(err)
		}
		count[want]++
		if got != want {
			t.Errorf("trace %d (mutations: %s): TLC says %s (exit %d), tracecheck says %s\n%s--- TLC:\n%s",
				i, strings.Join(muts, ", "), want, exit, got, buf.String(), tail(out, 15))
		}
	}
	t.Logf("%d traces, TLC verdicts: %v; every one agreed unless reported above", n, count)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestTLCOnTraces runs TLC and tracecheck on every Program trace matching
// the glob TLC_TRACES (say, journals written by the real publisher), one
// instance a file as tlc-traces.sh does, and asserts the same verdicts. It
// retains nothing: it is for traces that are not in the repository.
//
//	TLC_TRACES='bin/publisher-journals/*.ndjson' TLA2TOOLS=/path/to/tla2tools.jar go test -run TestTLCOnTraces ./harness/tlccross
func TestTLCOnTraces(t *testing.T) {
	pattern := os.Getenv("TLC_TRACES")
	if pattern == "" {
		t.Skip("SKIPPED: set TLC_TRACES=GLOB (and TLA2TOOLS) to compare TLC and tracecheck on those traces")
	}
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(root, pattern)
	}
	dir := t.TempDir()
	tl, ok, err := newTLC(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("SKIPPED: TLA2TOOLS is not set")
	}
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces match %s: %v", pattern, err)
	}
	count := map[string]int{}
	n := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		order, pieces := SplitInstances(data)
		for _, inst := range order {
			piece := pieces[inst]
			truncated := len(piece) > 0 && !bytes.HasSuffix(piece, []byte("\n"))
			if truncated { // the script drops a partial last line before TLC reads the file
				piece = piece[:bytes.LastIndexByte(piece, '\n')+1]
			}
			path := filepath.Join(dir, fmt.Sprintf("piece-%04d.ndjson", n))
			if err := os.WriteFile(path, piece, 0o644); err != nil {
				t.Fatal(err)
			}
			exit, out, err := tl.run(path, n)
			n++
			if err != nil {
				t.Fatalf("running TLC: %v\n%s", err, out)
			}
			want, ok := TLCVerdict(exit, out)
			if !ok {
				t.Errorf("%s [%s]: TLC exit %d is no verdict:\n%s", file, inst, exit, tail(out, 15))
				continue
			}
			if truncated && want == Valid {
				want = Incomplete
			}
			got, err := Verdict(context.Background(), pieces[inst], file)
			if err != nil {
				t.Fatal(err)
			}
			count[want]++
			if got != want {
				t.Errorf("%s [%s]: TLC says %s (exit %d), tracecheck says %s\n--- TLC:\n%s", file, inst, want, exit, got, tail(out, 15))
			}
		}
	}
	t.Logf("%d traces, %d instances, TLC verdicts: %v; every one agreed unless reported above", len(files), n, count)
}
