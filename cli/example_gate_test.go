package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
)

// A team's binary adds the gate to its command line: here for the light
// spec, with its traces and a coverage minimum. verify runs every stage
// (the mutants stage only with --mutants) and exits 0 when all pass.
func ExampleGateCommand() {
	root, _ := os.MkdirTemp("", "light-")
	defer os.RemoveAll(root)
	_ = os.WriteFile(filepath.Join(root, "switched.ndjson"), []byte(
		`{"v":1,"instance":"l1","seq":0,"action":"Init","state":{"on":false,"used":false}}
{"v":1,"instance":"l1","seq":1,"action":"TurnOn","state":{"on":true,"used":false}}
{"v":1,"instance":"l1","seq":2,"action":"TurnOff","state":{"on":false,"used":true}}
`), 0o644)
	_ = os.WriteFile(filepath.Join(root, "off-first-bad.ndjson"), []byte(
		`{"v":1,"instance":"l2","seq":0,"action":"Init","state":{"on":false,"used":false}}
{"v":1,"instance":"l2","seq":1,"action":"TurnOff","state":{"on":false,"used":true}}
`), 0o644)

	specs := []cli.Spec{{Name: "light", Model: cli.Of(light())}}
	gate := cli.GateConfig{
		Specs: specs,
		Steps: []cli.GateStep{{Name: "unit tests", Argv: []string{"sh", "-c", "exit 0"}}}, // e.g. go test ./...
		Traces: []cli.GateTraces{
			{Name: "recorded", Spec: "light", Files: []string{"switched.ndjson"}},
			{Name: "known-bad", Spec: "light", Files: []string{"*-bad.ndjson"}, Want: check.Violation},
		},
		Coverage: []cli.GateCoverage{{Spec: "light", Min: 1, Actions: true}},
	}
	cfg := cli.Config{Specs: specs, Commands: []cli.Command{cli.GateCommand(gate)}}

	var out bytes.Buffer
	code := cli.Run(cfg, []string{"verify", "--json", "--root", root, "--dir", filepath.Join(root, "run")}, &out, io.Discard)
	var res cli.GateResult
	_ = json.Unmarshal(out.Bytes(), &res)
	for _, s := range res.Stages {
		fmt.Printf("%-12s %s  %s\n", s.Name, s.Verdict, s.Figures)
	}
	fmt.Println(res.Verdict, "exit", code)
	// Output:
	// explore      PASS  light: 3 states, 2 transitions
	// conformance  SKIP  no retained tool output configured
	// commands     PASS  1/1 steps passed
	// traces       PASS  recorded: 1/1 files valid (1 instances, 3 events); known-bad: 1/1 files violation (1 instances, 2 events); light: 2/2 (100%) transitions covered (minimum 2); light: 2/2 actions
	// mutants      SKIP  no code mutants configured
	// PASS exit 0
}
