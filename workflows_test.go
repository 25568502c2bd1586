// The GitHub Actions workflows users run (.github/workflows), linted with
// actionlint and checked for what docs/ci.md promises of them.
package tracecheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// lintWorkflow runs actionlint on one workflow file (with shellcheck on
// its scripts when shellcheck is installed) and returns what it found.
func lintWorkflow(t *testing.T, path string, content []byte) []*actionlint.Error {
	t.Helper()
	opts := &actionlint.LinterOptions{Color: actionlint.ColorOptionKindNever}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		opts.Shellcheck = sc
	}
	l, err := actionlint.NewLinter(&strings.Builder{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := actionlint.NewProject(".")
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(path, content, proj)
	if err != nil {
		t.Fatalf("actionlint %s: %v", path, err)
	}
	return errs
}

func TestWorkflowsLint(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Log("shellcheck is not installed: the workflows' scripts are linted by actionlint alone (.ci/run installs shellcheck)")
	}
	files, err := filepath.Glob(".github/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("want the CI and the reusable gate workflow in .github/workflows, found %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range lintWorkflow(t, f, b) {
			t.Errorf("%s:%d:%d: %s [%s]", f, e.Line, e.Column, e.Message, e.Kind)
		}
	}
}

// The linter is wired up: a workflow with mistakes of the kinds a change
// to ours could make is rejected.
func TestWorkflowsLintBites(t *testing.T) {
	bad := []byte(`name: bad
on:
  workflow_call:
    inputs:
      command:
        type: string
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v6
      - run: echo "${{ inputs.comand }}"
      - run: rm $REPORT
      - uses: actions/upload-artifact@v5
        with:
          nme: report
`)
	errs := lintWorkflow(t, ".github/workflows/bad.yml", bad)
	kinds := map[string]bool{}
	for _, e := range errs {
		kinds[e.Kind] = true
	}
	if !kinds["expression"] || !kinds["action"] {
		t.Fatalf("actionlint missed a misspelt input and a misspelt action input: %v", errs)
	}
	if _, err := exec.LookPath("shellcheck"); err == nil && !kinds["shellcheck"] {
		t.Fatalf("shellcheck is installed but missed an unquoted variable: %v", errs)
	}
}

func parseWorkflow(t *testing.T, path string) *actionlint.Workflow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w, errs := actionlint.Parse(b)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", path, errs[0])
	}
	return w
}

// The reusable gate does what docs/ci.md says: callable from another
// repository, tools pinned (never "latest"), their paths exported under
// the names our scripts read, the command run with them, the report
// uploaded whatever the verdict.
func TestGateWorkflow(t *testing.T) {
	w := parseWorkflow(t, ".github/workflows/tracecheck-gate.yml")
	call, ok := w.FindWorkflowCallEvent()
	if !ok {
		t.Fatal("tracecheck-gate.yml is not callable (no workflow_call): other repositories cannot reuse it")
	}
	inputs := map[string]string{}
	for _, in := range call.Inputs {
		def := ""
		if in.Default != nil {
			def = in.Default.Value
		}
		inputs[in.ID] = def
	}
	pinned := regexp.MustCompile(`^v?[0-9][0-9.]*$`)
	for _, name := range []string{"tlc-version", "community-modules-version", "fizzbee-version"} {
		v, ok := inputs[name]
		if !ok || !pinned.MatchString(v) {
			t.Errorf("input %s = %q: want a pinned release (digits and dots)", name, v)
		}
	}
	if inputs["command"] != "make formal verify" {
		t.Errorf("command defaults to %q, want make formal verify", inputs["command"])
	}
	job := w.Jobs["gate"]
	if job == nil {
		t.Fatal("no job named gate")
	}
	var scripts strings.Builder
	uploadAlways := false
	for _, s := range job.Steps {
		switch e := s.Exec.(type) {
		case *actionlint.ExecRun:
			scripts.WriteString(e.Run.Value)
		case *actionlint.ExecAction:
			if strings.HasPrefix(e.Uses.Value, "actions/upload-artifact@") && s.If != nil && strings.Contains(s.If.Value, "always()") {
				uploadAlways = true
			}
		}
	}
	all := scripts.String()
	if strings.Contains(all, "latest") {
		t.Error("a script downloads a 'latest' release: the tools must be pinned")
	}
	for _, env := range []string{"TLA2TOOLS=", "COMMUNITY_MODULES=", "FIZZ="} {
		if !strings.Contains(all, env) {
			t.Errorf("the tools step never exports %s (formal-verification/*.sh read it)", strings.TrimSuffix(env, "="))
		}
	}
	if !strings.Contains(all, "GATE_COMMAND") {
		t.Error("no step runs the command input")
	}
	if !uploadAlways {
		t.Error("the report is not uploaded with if: always() (a failing gate must still leave its report)")
	}
}

// Our own CI runs the tests the way .ci/run does and the gate through the
// reusable workflow, so the workflow users copy is the one we run.
func TestCIWorkflow(t *testing.T) {
	w := parseWorkflow(t, ".github/workflows/ci.yml")
	var runsCI, callsGate bool
	for _, j := range w.Jobs {
		if j.WorkflowCall != nil && j.WorkflowCall.Uses.Value == "./.github/workflows/tracecheck-gate.yml" {
			callsGate = true
		}
		for _, s := range j.Steps {
			if r, ok := s.Exec.(*actionlint.ExecRun); ok && strings.Contains(r.Run.Value, ".ci/run") {
				runsCI = true
			}
		}
	}
	if !runsCI || !callsGate {
		t.Errorf("ci.yml: runs .ci/run %v, calls tracecheck-gate.yml %v; want both", runsCI, callsGate)
	}
}
