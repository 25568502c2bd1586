// Package python_test checks the Python emitter (tracecheck_trace.py) with
// real Python: a threaded program's trace is checked against session.fizz,
// and the emitter's values and header read back as the format says.
package python_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/trace"
)

func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("SKIP: python3 not found; the Python emitter is not tested")
	}
	return py
}

// sessions runs sessions.py and returns its trace.
func sessions(t *testing.T, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "trace.ndjson")
	cmd := exec.Command(python(t), append([]string{"-I", "sessions.py", out}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sessions.py: %v\n%s", err, b)
	}
	return out
}

func checkSession(t *testing.T, path string) *check.Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := cli.CheckWith(context.Background(), bundled.Specs(), "session", f, path, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Fifty sessions in threads share one writer: every line is whole, every
// instance valid; with --bug every instance violates
// ChildrenDieWithParent.
func TestSessionsTrace(t *testing.T) {
	good := sessions(t, "--sessions", "50", "--spec-sha256", bundled.Session().SHA256)
	rep := checkSession(t, good)
	if rep.Verdict() != check.Valid || rep.Count(check.Valid) != 50 {
		t.Fatalf("verdict %s, %d valid of %d", rep.Verdict(), rep.Count(check.Valid), len(rep.Instances))
	}
	bad := sessions(t, "--sessions", "10", "--bug")
	rep = checkSession(t, bad)
	if rep.Count(check.Violation) != 10 {
		t.Fatalf("--bug: %d violations of %d instances, want 10", rep.Count(check.Violation), len(rep.Instances))
	}
	for _, in := range rep.Instances {
		if in.Divergence == nil || !strings.Contains(in.Divergence.Reason, "Teardown") {
			t.Errorf("%s: %+v", in.Instance, in.Divergence)
		}
	}
	// The CLI reads the header: the model is session without --model, and
	// a hash of another version is warned about.
	stale := sessions(t, "--sessions", "2", "--spec-sha256", strings.Repeat("0", 64))
	var out, errb strings.Builder
	if code := cli.Run(cli.Config{Specs: bundled.Specs()}, []string{"check", stale}, &out, &errb); code != cli.ExitOK ||
		!strings.Contains(out.String(), "model session") || !strings.Contains(errb.String(), "another version of spec session") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// The emitter writes the header and the values as docs/trace-format.md
// says, and refuses what the format has no room for.
func TestEmitterValues(t *testing.T) {
	out := filepath.Join(t.TempDir(), "v.ndjson")
	prog := `import sys
sys.path.insert(0, ".")
from tracecheck_trace import TraceWriter
with TraceWriter(sys.argv[1], spec="demo", spec_sha256="ab" * 32, emitter="test") as w:
    w.emit("i", "Init", {"s": {3, 1, 2}, "t": (1, "a"), "big": 1 << 70, "seq": [1, 2], "rec": {"a": True}, "u": "é"})
    w.emit("i", "Step", {"x": 1}, detail={"why": "because"}, args=["r1", {2, 1}])
    w.emit("i", "Tick", {}, stutter=True)
    for bad in (1.5, None):
        try:
            w.emit("i", "Bad", {"x": bad})
        except TypeError:
            print("refused", type(bad).__name__)
    try:
        w.emit("i", "Both", {}, stutter=True, part="begin")
    except ValueError:
        print("refused stutter part")
    try:
        w.emit("i", "Tick", {}, stutter=True, args=["x"])
    except ValueError:
        print("refused stutter args")
`
	cmd := exec.Command(python(t), "-I", "-c", prog, out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if got := string(b); got != "refused float\nrefused NoneType\nrefused stutter part\nrefused stutter args\n" {
		t.Errorf("python printed %q", got)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := trace.NewDecoder(f, out)
	var events []trace.Event
	for {
		e, err := d.Decode()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	h, ok := d.Header()
	if !ok || h.Spec != "demo" || h.SpecSHA256 != strings.Repeat("ab", 32) || h.Emitter != "test" {
		t.Fatalf("header %+v %v", h, ok)
	}
	if len(events) != 3 || events[0].Seq != 0 || events[1].Seq != 1 || events[2].Seq != 2 || !events[2].Stutter || len(events[1].Args) != 2 {
		t.Fatalf("events %+v", events)
	}
	raw, _ := os.ReadFile(out)
	for _, want := range []string{`"s":{"#set":[1,2,3]}`, `"t":{"#tup":[1,"a"]}`, `"big":{"#bigint":"1180591620717411303424"}`,
		`"seq":[1,2]`, `"rec":{"a":true}`, `"u":"é"`, `"detail":{"why":"because"}`, `"action":"Step","args":["r1",{"#set":[1,2]}]`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("trace lacks %s:\n%s", want, raw)
		}
	}
}
