package main_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The example's own binary, built from the library entry point, checks the
// example's traces: against the transcription, and against TLC's graph.
func TestBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "twophase-check")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"explore", "twophase"}, 0, "288 distinct states found, 994 transitions"},
		{[]string{"check", "../../testdata/commit-ok.ndjson"}, 0, "VALID (model twophase"},
		{[]string{"check", "../../testdata/commit-early-bad.ndjson"}, 1, "guard tmPrepared = RM is false"},
		{[]string{"check", "--graph", "../../formal/tlc/states.dot", "../../testdata/commit-ok.ndjson"}, 0, "VALID (model graph:states.dot"},
		{[]string{"check", "--graph", "../../formal/tlc/states.dot", "../../testdata/commit-early-bad.ndjson"}, 1, "no TMCommit edge leaves this state in the TLC graph"},
		{[]string{"check", "../../testdata/commit-args-ok.ndjson"}, 0, "VALID (model twophase"},
		{[]string{"check", "../../testdata/prepare-wrong-args-bad.ndjson"}, 1, `action RMPrepare("r2"): no RMPrepare("r2") successor has the event's state, the successor after RMPrepare("r1") has it`},
		{[]string{"check", "--graph", "../../formal/tlc/states.dot", "../../testdata/commit-args-ok.ndjson"}, 0, "VALID (model graph:states.dot"},
		{[]string{"check", "--graph", "../../formal/tlc/states.dot", "../../testdata/prepare-wrong-args-bad.ndjson"}, 1, `action RMPrepare("r2"): no RMPrepare("r2") successor has the event's state, the successor after RMPrepare("r1") has it`},
		{[]string{"replay", "../../testdata/commit-args-ok.ndjson"}, 0, `t3  seq 2  RMPrepare("r3")`},
		{[]string{"replay", "--json", "../../testdata/commit-args-ok.ndjson"}, 0, `"seq":2,"action":"RMPrepare","args":["\"r3\""],"states"`},
		{[]string{"mutate", "--root", "../.."}, 0, "1 mutants: 1 killed, 0 survived"},
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		code := 0
		if e, ok := err.(*exec.ExitError); ok {
			code = e.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: exit %d (want %d), output lacks %q:\n%s", c.args, code, c.code, c.want, out)
		}
	}
}
