package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/mutate"
)

// lamp is a small spec for the gate: a lamp turned on once and off once,
// or unplugged before it is ever on; used or unplugged, it rests (an
// explicit self-loop, as TLC's graphs have). States: 0 off, 1 on, 2 used,
// 3 unplugged. Options break it: noTurnOff removes TurnOff (state 1
// deadlocks); neverUsed adds an invariant that state 2 violates.
func lamp(noTurnOff, neverUsed bool) *model.Spec[int] {
	at := func(text string, ok ...int) func(int) string {
		return func(s int) string {
			for _, o := range ok {
				if s == o {
					return ""
				}
			}
			return text
		}
	}
	to := func(t int) func(int, func(int)) { return func(_ int, emit func(int)) { emit(t) } }
	sp := &model.Spec[int]{
		Name: "lamp",
		Vars: []string{"on", "used", "plugged"},
		Valuation: func(s int) []model.Value {
			return []model.Value{model.Bool(s == 1), model.Bool(s == 2), model.Bool(s != 3)}
		},
		Init: func() []int { return []int{0} },
		Actions: []model.Action[int]{
			{Name: "TurnOn", Guard: at(`~on /\ ~used /\ plugged`, 0), Next: to(1)},
			{Name: "Unplug", Guard: at(`~on /\ ~used /\ plugged`, 0), Next: to(3)},
			{Name: "TurnOff", Guard: at("on", 1), Next: to(2)},
			{Name: "Rest", Guard: at(`used \/ ~plugged`, 2, 3), Next: func(s int, emit func(int)) { emit(s) }},
		},
		Invariants:    []model.Invariant[int]{{Name: "TypeOK", Holds: func(s int) bool { return 0 <= s && s <= 3 }}},
		CheckDeadlock: true,
	}
	if noTurnOff {
		sp.Actions = append(sp.Actions[:2:2], sp.Actions[3])
	}
	if neverUsed {
		sp.Invariants = append(sp.Invariants, model.Invariant[int]{Name: "NeverUsed", Holds: func(s int) bool { return s != 2 }})
	}
	return sp
}

// lampDot is TLC's `-dump dot,actionlabels` form of lamp's graph; drop
// leaves out the edges labelled so.
func lampDot(drop string) string {
	state := func(on, used, plugged string) string {
		return `"/\\ on = ` + on + `\n/\\ used = ` + used + `\n/\\ plugged = ` + plugged + `"`
	}
	edges := []struct{ from, to, label string }{{"1", "2", "TurnOn"}, {"1", "4", "Unplug"}, {"2", "3", "TurnOff"}, {"3", "3", "Rest"}, {"4", "4", "Rest"}}
	var b strings.Builder
	b.WriteString("strict digraph DiskGraph {\nnode [shape=box,style=rounded]\nnodesep=0.35;\nsubgraph cluster_graph {\ncolor=\"white\";\n")
	b.WriteString("1 [label=" + state("FALSE", "FALSE", "TRUE") + ",style = filled]\n")
	b.WriteString("2 [label=" + state("TRUE", "FALSE", "TRUE") + "];\n")
	b.WriteString("3 [label=" + state("FALSE", "TRUE", "TRUE") + "];\n")
	b.WriteString("4 [label=" + state("FALSE", "FALSE", "FALSE") + "];\n")
	for _, e := range edges {
		if e.label != drop {
			b.WriteString(e.from + " -> " + e.to + ` [label="` + e.label + `",color="black",fontcolor="black"];` + "\n")
		}
	}
	b.WriteString("}\n}\n")
	return b.String()
}

// lampOn and lampOff are traces of lamp: valid (on, off, rest: 3 of the 4
// counted transitions), and a violation (off before on).
const (
	lampOK = `{"v":1,"instance":"l1","seq":0,"action":"Init","state":{"on":false,"used":false,"plugged":true}}
{"v":1,"instance":"l1","seq":1,"action":"TurnOn","state":{"on":true,"used":false,"plugged":true}}
{"v":1,"instance":"l1","seq":2,"action":"TurnOff","state":{"on":false,"used":true,"plugged":true}}
{"v":1,"instance":"l1","seq":3,"action":"Rest","state":{"on":false,"used":true,"plugged":true}}
`
	lampBad = `{"v":1,"instance":"l2","seq":0,"action":"Init","state":{"on":false,"used":false,"plugged":true}}
{"v":1,"instance":"l2","seq":1,"action":"TurnOff","state":{"on":false,"used":true,"plugged":true}}
`
)

// gateRoot writes a root for lamp's gate: lamp.dot, traces/ok.ndjson and
// bad/off-first.ndjson.
func gateRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range map[string]string{
		"lamp.dot": lampDot(""), "traces/ok.ndjson": lampOK, "bad/off-first.ndjson": lampBad,
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// lampGate is a gate on lamp that passes on gateRoot's files: a spec
// mutant caught, the graph equal to lamp.dot, a step, the valid and the
// known-bad traces, every action but Unplug exercised.
func lampGate() cli.GateConfig {
	return cli.GateConfig{
		Program: "lamp-check",
		Specs: []cli.Spec{{Name: "lamp", Model: cli.Of(lamp(false, false)), Mutants: []cli.Mutant{
			{Name: "no-turn-off", Doc: "TurnOff left out", Breaks: "Deadlock", Model: cli.Of(lamp(true, false))},
		}}},
		Conformance: []cli.GateConformance{{Spec: "lamp", Graph: "lamp.dot"}},
		Steps:       []cli.GateStep{{Name: "echo", Argv: []string{"sh", "-c", "echo hello from $WHO", "sh"}, Env: []string{"WHO=the-gate"}}},
		Traces: []cli.GateTraces{
			{Name: "ok", Spec: "lamp", Files: []string{"traces/*.ndjson"}},
			{Name: "known-bad", Files: []string{"bad/*.ndjson"}, Spec: "lamp", Want: check.Violation},
		},
		Coverage: []cli.GateCoverage{{Spec: "lamp", Min: 0.5}},
	}
}

// Each stage passes on a good configuration, and fails for its own reason
// when one thing is broken, saying what failed and how to reproduce it;
// the other stages are unaffected.
func TestGateStages(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(t *testing.T, cfg *cli.GateConfig, root string)
		opt   cli.GateOptions
		stage string   // the stage that fails ("": none)
		also  string   // another stage that fails as a consequence
		want  []string // in the failure (or, passing, in the figures)
	}{
		{name: "pass", want: []string{"lamp: 4 states, 5 transitions", "1/1 spec mutants caught", "lamp: 4 states, 5 edges equal to TLC's",
			"1/1 steps passed", "ok: 1/1 files valid (1 instances, 4 events)", "known-bad: 1/1 files violation", "lamp: 2/3 (67%) transitions covered (minimum 2)"}},
		{name: "invariant violated", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Specs[0].Model = cli.Of(lamp(false, true))
		}, stage: cli.StageExplore, also: cli.StageTraces, want: []string{"lamp: invariant NeverUsed violated", "reproduce: lamp-check explore lamp"}},
		{name: "spec mutant not caught", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Specs[0].Mutants[0].Model = cli.Of(lamp(false, false))
		}, stage: cli.StageExplore, want: []string{"lamp mutant no-turn-off is not caught: want Deadlock violated, nothing is violated",
			"reproduce: lamp-check explore lamp --mutant no-turn-off"}},
		{name: "spec mutant breaks another property", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Specs[0].Mutants[0].Model = cli.Of(lamp(false, true))
		}, stage: cli.StageExplore, want: []string{"want Deadlock violated, only NeverUsed is violated"}},
		{name: "graph differs", edit: func(t *testing.T, _ *cli.GateConfig, root string) {
			writeFile(t, filepath.Join(root, "lamp.dot"), lampDot("TurnOff"))
		}, stage: cli.StageConformance, want: []string{"the transcription's state graph is not the one the tool computed", "TurnOff",
			"reproduce: lamp-check chart lamp --format dot"}},
		{name: "retained output missing", edit: func(t *testing.T, _ *cli.GateConfig, root string) {
			if err := os.Remove(filepath.Join(root, "lamp.dot")); err != nil {
				t.Fatal(err)
			}
		}, stage: cli.StageConformance, want: []string{"lamp: no retained tool output at ", "lamp.dot"}},
		{name: "retained output unreadable", edit: func(t *testing.T, _ *cli.GateConfig, root string) {
			writeFile(t, filepath.Join(root, "lamp.dot"), "digraph {\n1 -> \n")
		}, stage: cli.StageConformance, want: []string{"lamp: the retained tool output: "}},
		{name: "command exits 1", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Steps = append(cfg.Steps, cli.GateStep{Name: "boom", Argv: []string{"sh", "-c", "echo one; echo boom >&2; exit 1"}})
		}, stage: cli.StageCommands, want: []string{"step boom: exit status 1", "one\n    boom", "reproduce: cd ", " && sh -c 'echo one; echo boom >&2; exit 1'"}},
		{name: "command times out", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Steps = append(cfg.Steps, cli.GateStep{Name: "hang", Argv: []string{"sleep", "60"}, Timeout: 200 * time.Millisecond})
		}, stage: cli.StageCommands, want: []string{"step hang: timed out after 200ms"}},
		{name: "slow command skipped by --quick", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Steps = append(cfg.Steps, cli.GateStep{Name: "slow", Argv: []string{"false"}, Slow: true})
		}, opt: cli.GateOptions{Quick: true}, want: []string{"1/1 steps passed; 1 slow skipped (--quick)"}},
		{name: "Go step writes the traces", edit: func(t *testing.T, cfg *cli.GateConfig, root string) {
			if err := os.RemoveAll(filepath.Join(root, "traces")); err != nil {
				t.Fatal(err)
			}
			cfg.Steps = []cli.GateStep{{Name: "emit", Run: func(_ context.Context, dir string, log io.Writer) error {
				fmt.Fprintln(log, "emitting")
				return os.WriteFile(filepath.Join(dir, "emitted.ndjson"), []byte(lampOK), 0o644)
			}}}
			cfg.Traces[0].Files = []string{"{dir}/*.ndjson"}
		}, want: []string{"1/1 steps passed", "ok: 1/1 files valid (1 instances, 4 events)"}},
		{name: "Go step fails", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Steps = []cli.GateStep{{Name: "workload", Run: func(context.Context, string, io.Writer) error {
				return errors.New("the system under test fell over")
			}}}
		}, stage: cli.StageCommands, want: []string{"step workload: the system under test fell over; no output",
			"reproduce: lamp-check verify --root ", " --stages commands"}},
		{name: "Go step panics", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Steps = []cli.GateStep{{Name: "workload", Run: func(context.Context, string, io.Writer) error { panic("nil map") }}}
		}, stage: cli.StageCommands, want: []string{"step workload: panic: nil map"}},
		{name: "trace invalid", edit: func(t *testing.T, _ *cli.GateConfig, root string) {
			writeFile(t, filepath.Join(root, "traces", "off-first.ndjson"), lampBad)
		}, stage: cli.StageTraces, want: []string{"trace set ok: ", "off-first.ndjson is violation, want valid",
			"TurnOff is not enabled", "reproduce: lamp-check check --model lamp ", "reproduce: lamp-check replay --model lamp --instance l2 "}},
		{name: "trace links out of the root", edit: func(t *testing.T, _ *cli.GateConfig, root string) {
			outside := filepath.Join(t.TempDir(), "elsewhere.ndjson")
			writeFile(t, outside, lampOK)
			if err := os.Symlink(outside, filepath.Join(root, "traces", "link.ndjson")); err != nil {
				t.Fatal(err)
			}
		}, stage: cli.StageTraces, want: []string{"link.ndjson: openat traces/link.ndjson: path escapes from parent"}},
		{name: "known-bad trace valid", edit: func(t *testing.T, _ *cli.GateConfig, root string) {
			writeFile(t, filepath.Join(root, "bad", "fine.ndjson"), strings.ReplaceAll(lampOK, "l1", "l3"))
		}, stage: cli.StageTraces, want: []string{"trace set known-bad: ", "fine.ndjson is valid, want violation"}},
		{name: "no trace", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Traces[0].Files = []string{"nowhere/*.ndjson"}
		}, stage: cli.StageTraces, want: []string{"nowhere/*.ndjson matches no file"}},
		{name: "coverage below the minimum", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Coverage[0].Min = 1
		}, stage: cli.StageTraces, want: []string{"coverage of lamp: 2 of 3 transitions exercised by 1 valid trace files, below the minimum 3 (100%); the 1 never exercised:",
			"--Unplug-->", "reproduce: lamp-check coverage --model lamp "}},
		{name: "an action never exercised", edit: func(t *testing.T, cfg *cli.GateConfig, _ string) {
			cfg.Coverage[0].Actions = true
		}, stage: cli.StageTraces, want: []string{"actions never exercised by the valid traces: Unplug"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := gateRoot(t)
			cfg := lampGate()
			if c.edit != nil {
				c.edit(t, &cfg, root)
			}
			var progress bytes.Buffer
			opt := c.opt
			opt.Root, opt.Dir, opt.Progress = root, t.TempDir(), &progress
			res, err := cli.RunGate(context.Background(), cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, s := range res.Stages {
				want := "PASS"
				switch {
				case s.Name == c.stage || s.Name == c.also:
					want = "FAIL"
				case s.Name == cli.StageMutants:
					want = "SKIP"
				}
				if s.Verdict != want {
					t.Errorf("stage %s: %s, want %s: %q", s.Name, s.Verdict, want, s.Failures)
				}
				if s.Name == c.stage || c.stage == "" {
					all = append(all, s.Figures)
					all = append(all, s.Failures...)
				}
			}
			text := strings.Join(all, "\n")
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
			if wantV := map[bool]string{true: "PASS", false: "FAIL"}[c.stage == ""]; res.Verdict != wantV {
				t.Errorf("verdict %s, want %s", res.Verdict, wantV)
			}
			for _, s := range []string{"explore", "conformance", "commands", "traces"} {
				if !strings.Contains(progress.String(), s+" ") {
					t.Errorf("no progress line for %s:\n%s", s, progress.String())
				}
			}
		})
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The verify command: its exit codes, -h, --json, and the summary it
// writes in the run directory.
func TestGateCommand(t *testing.T) {
	root := gateRoot(t)
	broken := lampGate()
	broken.Coverage[0].Min = 1
	unknown := lampGate()
	unknown.Coverage[0].Spec = "lump"
	full := t.TempDir()
	writeFile(t, filepath.Join(full, "x"), "")
	for _, c := range []struct {
		name   string
		cfg    cli.GateConfig
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"pass", lampGate(), []string{"--root", root}, cli.ExitOK,
			[]string{"stage        verdict", "explore      PASS", "traces       PASS", "mutants      SKIP", "verify: PASS in "},
			[]string{"verify: explore      ...", "verify: traces       PASS"}},
		{"fail", broken, []string{"--root", root}, cli.ExitViolation,
			[]string{"traces       FAIL", "verify: FAIL in ", "\nFAIL traces: coverage of lamp: 2 of 3 transitions", "reproduce: lamp-check coverage"},
			[]string{"verify:   coverage of lamp: 2 of 3 transitions exercised by 1 valid trace files, below the minimum 3 (100%); the 1 never exercised: ..."}},
		{"only some stages", broken, []string{"--root", root, "--stages", "explore,conformance"}, cli.ExitOK,
			[]string{"traces       SKIP", "not selected (--stages)", "verify: PASS"}, nil},
		{"help", lampGate(), []string{"-h"}, cli.ExitOK, nil, []string{"Usage: tracecheck verify [--quick]", "-stages list", "Exit codes: 0 every stage passed"}},
		{"bad flag", lampGate(), []string{"--bogus"}, cli.ExitUsage, nil, []string{"flag provided but not defined: -bogus"}},
		{"arguments", lampGate(), []string{"--root", root, "lamp"}, cli.ExitUsage, nil, []string{`unexpected arguments ["lamp"]`}},
		{"unknown stage", lampGate(), []string{"--root", root, "--stages", "explore,tests"}, cli.ExitUsage, nil, []string{`unknown stage "tests"`}},
		{"unknown spec", unknown, []string{"--root", root}, cli.ExitUsage, nil, []string{`a coverage rule names spec "lump", which is not registered (have lamp)`}},
		{"run directory not empty", lampGate(), []string{"--root", root, "--dir", full}, cli.ExitInput, nil, []string{"run directory " + full + " is not empty"}},
		{"no root", lampGate(), []string{"--root", filepath.Join(root, "nowhere")}, cli.ExitInput, nil, []string{"nowhere is not a directory"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if !strings.Contains(strings.Join(args, " "), "--dir") && c.name != "help" {
				args = append(args, "--dir", filepath.Join(t.TempDir(), "run"))
			}
			var out, errb bytes.Buffer
			code := cli.Run(cli.Config{Specs: c.cfg.Specs, Commands: []cli.Command{cli.GateCommand(c.cfg)}}, append([]string{"verify"}, args...), &out, &errb)
			if code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			for _, w := range c.stdout {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q", w)
				}
			}
			for _, w := range c.stderr {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr lacks %q", w)
				}
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
			}
		})
	}
}

// --json prints the summary that summary.json holds, and it parses.
func TestGateJSON(t *testing.T) {
	root, dir := gateRoot(t), filepath.Join(t.TempDir(), "run")
	cfg := lampGate()
	cfg.Name = "gate"
	var out, errb bytes.Buffer
	code := cli.Run(cli.Config{Specs: cfg.Specs, Commands: []cli.Command{cli.GateCommand(cfg)}}, []string{"gate", "--json", "--root", root, "--dir", dir}, &out, &errb)
	if code != cli.ExitOK {
		t.Fatalf("exit %d:\n%s\n%s", code, out.String(), errb.String())
	}
	var res cli.GateResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var saved cli.GateResult
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "PASS" || len(res.Stages) != 5 || res.Coverage["lamp"] != [2]int{2, 3} || res.Dir != dir || res.Summary != filepath.Join(dir, "summary.json") {
		t.Errorf("summary: %+v", res)
	}
	if saved.Verdict != res.Verdict || len(saved.Stages) != len(res.Stages) || saved.Stages[3].Figures != res.Stages[3].Figures {
		t.Errorf("summary.json %+v differs from --json's %+v", saved, res)
	}
	if log, err := os.ReadFile(filepath.Join(dir, "steps", "echo.log")); err != nil || string(log) != "hello from the-gate\n" {
		t.Errorf("the step's log: %q, %v", log, err)
	}
	if !strings.Contains(errb.String(), "gate: explore") {
		t.Errorf("progress lines are not named after the command:\n%s", errb.String())
	}
}

// A cancelled gate (SIGINT) stops: the stages not yet run fail as
// interrupted, and a running command is killed.
func TestGateInterrupted(t *testing.T) {
	cfg := lampGate()
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Steps = []cli.GateStep{
		{Name: "interrupt", Run: func(context.Context, string, io.Writer) error { cancel(); return nil }},
		{Name: "hang", Argv: []string{"sleep", "60"}},
	}
	start := time.Now()
	res, err := cli.RunGate(ctx, cfg, cli.GateOptions{Root: gateRoot(t), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("the gate took %s after its cancellation", time.Since(start))
	}
	got := map[string]string{}
	for _, s := range res.Stages {
		got[s.Name] = s.Verdict + " " + strings.Join(s.Failures, "; ")
	}
	if res.Verdict != "FAIL" || !strings.HasPrefix(got["explore"], "PASS") || !strings.Contains(got["commands"], "interrupted before step hang") ||
		!strings.Contains(got["traces"], "interrupted before the stage ran") {
		t.Errorf("verdict %s, stages %q", res.Verdict, got)
	}
}

// The mutants stage runs each code mutant through package mutate, in a
// real (tiny) Go module: one its test kills, one that survives.
func TestGateMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	mod := t.TempDir()
	writeFile(t, filepath.Join(mod, "go.mod"), "module example.com/adder\n\ngo 1.22\n")
	writeFile(t, filepath.Join(mod, "adder.go"), "// Package adder adds.\npackage adder\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n")
	writeFile(t, filepath.Join(mod, "adder_test.go"), "package adder\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(Add(1, 2))\n\t}\n}\n")
	cfg := cli.GateConfig{Program: "adder-check", Specs: lampGate().Specs, Mutants: []mutate.Mutant{
		{Name: "adder/subtract", Doc: "Add subtracts", File: "adder.go", Old: "a + b", New: "a - b", Tests: []mutate.Test{{Package: "."}}},
		{Name: "adder/comment", Doc: "a comment reworded", File: "adder.go", Old: "returns a plus b", New: "returns the sum", Tests: []mutate.Test{{Package: "."}}},
	}}
	for _, c := range []struct {
		name    string
		opt     cli.GateOptions
		verdict string
		want    []string
	}{
		{"not asked for", cli.GateOptions{}, "SKIP", []string{"not asked for (--mutants)"}},
		{"quick", cli.GateOptions{Mutants: true, Quick: true}, "SKIP", []string{"--quick"}},
		{"run", cli.GateOptions{Mutants: true}, "FAIL", []string{"1/2 code mutants killed",
			"mutant adder/comment survived: a comment reworded; no test of adder.go failed with it\n  reproduce: adder-check mutate --root " + mod + " adder/comment"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := c.opt
			opt.Root, opt.Dir, opt.Stages = mod, t.TempDir(), []string{cli.StageMutants}
			res, err := cli.RunGate(context.Background(), cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Stages[4]
			text := s.Figures + "\n" + strings.Join(s.Failures, "\n")
			if s.Name != cli.StageMutants || s.Verdict != c.verdict {
				t.Errorf("stage %s: %s, want %s", s.Name, s.Verdict, c.verdict)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

// The bundled specs through a gate of their own: every spec and spec
// mutant explored, program's transcription equal to TLC's retained graph
// and session's to FizzBee's (a directory of protobuf files), both
// reports fresh, and the replay corpus with its verdicts.
func TestGateBundled(t *testing.T) {
	specs := bundled.Specs()
	cfg := cli.GateConfig{
		Specs: specs,
		Conformance: []cli.GateConformance{
			{Spec: "program", Graph: "formal-verification/reports/tlc-program/states.dot", Report: "formal-verification/reports/tlc-program"},
			{Spec: "session", Graph: "formal-verification/reports/fizzbee-session", Report: "formal-verification/reports/fizzbee-session"},
			{Spec: "tts", Graph: "formal-verification/reports/tlc-machine-tts/states.dot"},
		},
	}
	for _, spec := range []string{"program", "session"} {
		for _, v := range []check.Verdict{check.Valid, check.Violation, check.Incomplete} {
			suffix := map[check.Verdict]string{check.Valid: "ok", check.Violation: "bad", check.Incomplete: "incomplete"}[v]
			cfg.Traces = append(cfg.Traces, cli.GateTraces{Name: spec + "-" + suffix, Spec: spec,
				Files: []string{"traces/" + spec + "/*-" + suffix + ".ndjson"}, Want: v})
		}
	}
	res, err := cli.RunGate(context.Background(), cfg, cli.GateOptions{Root: "..", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var figures []string
	for _, s := range res.Stages {
		figures = append(figures, s.Name+" "+s.Verdict+": "+s.Figures)
		if s.Verdict == "FAIL" {
			t.Errorf("stage %s failed:\n%s", s.Name, strings.Join(s.Failures, "\n"))
		}
	}
	text := strings.Join(figures, "\n")
	mutants := 0
	for _, s := range specs {
		mutants += len(s.Mutants)
	}
	for _, w := range []string{
		"explore PASS: program: ", fmt.Sprintf("%d/%d spec mutants caught", mutants, mutants),
		"conformance PASS: program: ", "equal to TLC's; session: ", "equal to FizzBee's; tts: ",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q:\n%s", w, text)
		}
	}
	for _, set := range cfg.Traces {
		files, err := filepath.Glob(filepath.Join("..", set.Files[0]))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v, %d files", set.Files[0], err, len(files))
		}
		w := fmt.Sprintf("%s: %d/%d files %s (", set.Name, len(files), len(files), strings.ToLower(set.Want.String()))
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q:\n%s", w, text)
		}
	}
}
