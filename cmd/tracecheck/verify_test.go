package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestVerifyUsage(t *testing.T) {
	used := t.TempDir()
	os.WriteFile(filepath.Join(used, "x"), nil, 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"verify", "--quick", "--full"}, exitUsage, "exclude each other"},
		{[]string{"verify", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"verify", "--dir", used, "--root", "../.."}, exitInput, "is not empty"},
		{[]string{"verify", "-h"}, exitOK, "Exit codes: 0 every stage passed"},
	} {
		_, errs, code := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want %d; stderr lacks %q:\n%s", c.args, code, c.code, c.want, errs)
		}
	}
}

// The gate end to end, as make verify runs it (quick): every stage passes
// on this repository, and the run directory holds the summary and the
// report.
func TestVerifyQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP in -short: builds tracecheck and runs the whole gate")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIPPED: no python3, the publisher stage cannot run")
	}
	bin := filepath.Join(t.TempDir(), "tracecheck")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "verify", "--quick", "--json", "--seed", "7", "--dir", dir, "--root", "../..")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("verify --quick: %v\n%s\n%s", err, out, stderr.String())
	}
	var sum struct {
		Verdict  string
		Seed     int64
		Stages   []struct{ Name, Verdict string }
		Coverage map[string][2]int
		Report   string
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if sum.Verdict != "PASS" || sum.Seed != 7 || len(sum.Stages) != 7 {
		t.Fatalf("summary %+v", sum)
	}
	if sum.Coverage["program"] != [2]int{10, 10} || sum.Coverage["session"] != [2]int{36, 36} {
		t.Errorf("coverage %v, want program 10/10 and session 36/36", sum.Coverage)
	}
	for _, s := range []string{"explore", "conformance", "corpus", "publisher", "sessions", "traces and coverage"} {
		if !strings.Contains(stderr.String(), "gate: "+s) {
			t.Errorf("no progress line for %s", s)
		}
	}
	html, err := os.ReadFile(sum.Report)
	if err != nil || !strings.Contains(string(html), "session: 36/36 transitions exercised") {
		t.Fatalf("report %s: %v", sum.Report, err)
	}
}
