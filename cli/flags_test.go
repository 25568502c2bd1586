package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/cli"
)

// A mutant has one name on every command, --mutant NAME; the spec may be
// left out where the mutant's name says whose it is; the old spellings
// still work, with one line on stderr saying what to type instead.
func TestMutantFlag(t *testing.T) {
	bad := corpusDir + "session/compaction-outlives-session-bad.ndjson"
	const deprecation = "is deprecated: use"
	cases := []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		stderr   []string // "" : stderr must be empty
		noStdout []string
	}{
		{"explore with spec", []string{"explore", "session", "--mutant", "no-compaction-teardown"}, exitViolation,
			[]string{"Invariant ChildrenDieWithParent is violated"}, []string{""}, nil},
		{"explore without spec", []string{"explore", "--mutant", "no-compaction-teardown"}, exitViolation,
			[]string{"tracecheck explore session", "Invariant ChildrenDieWithParent is violated"}, []string{""}, nil},
		{"explore of another spec's mutant", []string{"explore", "program", "--mutant", "no-compaction-teardown"}, exitUsage,
			nil, []string{`unknown mutant "no-compaction-teardown" of program`}, nil},
		{"chart without spec", []string{"chart", "--mutant", "publish-from-staging"}, exitOK,
			[]string{"Staging --> Published: Atomic publication", "%% Atomic publication: AtomicPublication"}, []string{""}, nil},
		{"check --mutant alone", []string{"check", "--mutant", "no-compaction-teardown", bad}, exitViolation,
			[]string{"model session-mutant-no-compaction-teardown", "ChildrenDieWithParent",
				"replay: tracecheck replay --model session --mutant no-compaction-teardown --instance s4 "},
			[]string{""}, nil},
		{"check --model --mutant", []string{"check", "--model", "session", "--mutant", "no-compaction-teardown", bad}, exitViolation,
			[]string{"model session-mutant-no-compaction-teardown", "ChildrenDieWithParent"}, []string{""}, nil},
		{"check old spelling", []string{"check", "--model", "session-mutant-no-compaction-teardown", bad}, exitViolation,
			[]string{"model session-mutant-no-compaction-teardown", "ChildrenDieWithParent"},
			[]string{"tracecheck check: --model session-mutant-no-compaction-teardown " + deprecation + " --model session --mutant no-compaction-teardown"}, nil},
		{"check unknown mutant", []string{"check", "--mutant", "nosuch", bad}, exitUsage, nil, []string{`unknown mutant "nosuch"`}, nil},
		{"check mutant of the wrong spec", []string{"check", "--model", "program", "--mutant", "no-compaction-teardown", bad}, exitUsage,
			nil, []string{`unknown mutant "no-compaction-teardown" of program`}, nil},
		{"replay --mutant", []string{"replay", "--mutant", "no-compaction-teardown", bad}, exitViolation,
			[]string{"against model session-mutant-no-compaction-teardown"}, []string{""}, nil},
		{"coverage --mutant", []string{"coverage", "--mutant", "no-compaction-teardown", bad}, exitOK,
			[]string{"no-compaction-teardown", "exercised 2/"}, []string{""}, nil},
		{"check --mutant with --graph", []string{"check", "--mutant", "no-compaction-teardown", "--graph", "x", bad}, exitUsage,
			nil, []string{"--mutant and --graph do not go together"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errs)
			}
			for _, w := range c.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.stderr {
				if w == "" && errs != "" {
					t.Errorf("stderr not empty:\n%s", errs)
				}
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if strings.Count(errs, deprecation) > 1 {
				t.Errorf("more than one deprecation line:\n%s", errs)
			}
		})
	}
}

// JSON output is --json on every command that has it; explore's and
// chart's --format json still work, with a deprecation line, and give the
// same output.
func TestJSONFlag(t *testing.T) {
	cases := []struct {
		name      string
		args, old []string
		code      int
		field     string // a field the JSON has
	}{
		{"explore", []string{"explore", "--json", "session"}, []string{"explore", "--format", "json", "session"}, exitOK, "transitions"},
		{"explore mutant", []string{"explore", "session", "--mutant", "no-vad-teardown", "--json"}, []string{"explore", "session", "--mutant", "no-vad-teardown", "--format", "json"}, exitViolation, "violations"},
		{"chart", []string{"chart", "--json", "program"}, []string{"chart", "--format", "json", "program"}, exitOK, "edges"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			if code != c.code || errs != "" {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, errs)
			}
			var obj map[string]any
			if err := json.Unmarshal([]byte(out), &obj); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			if _, ok := obj[c.field]; !ok {
				t.Errorf("no %q in %s", c.field, out)
			}
			oldOut, oldErrs, oldCode := runCLI(t, c.old...)
			if oldCode != c.code {
				t.Fatalf("%v: exit %d, want %d", c.old, oldCode, c.code)
			}
			if !strings.Contains(oldErrs, "--format json is deprecated: use --json") || strings.Count(oldErrs, "\n") != 1 {
				t.Errorf("%v: want one deprecation line, stderr:\n%s", c.old, oldErrs)
			}
			// explore's JSON has its run time in it; the rest must agree.
			var oldObj map[string]any
			if err := json.Unmarshal([]byte(oldOut), &oldObj); err != nil {
				t.Fatal(err)
			}
			delete(obj, "millis")
			delete(oldObj, "millis")
			a, _ := json.Marshal(obj)
			b, _ := json.Marshal(oldObj)
			if string(a) != string(b) {
				t.Errorf("%v and %v differ:\n%s\n%s", c.args, c.old, a, b)
			}
		})
	}
	// The deprecated spelling is not offered in -h; --json is.
	_, help, _ := runCLI(t, "explore", "-h")
	if strings.Contains(help, "  -format") || !strings.Contains(help, "  -json") {
		t.Errorf("explore -h:\n%s", help)
	}
	if _, errs, code := runCLI(t, "explore", "--format", "yaml", "program"); code != exitUsage || !strings.Contains(errs, `unknown format "yaml"`) {
		t.Errorf("explore --format yaml: exit %d, stderr:\n%s", code, errs)
	}
	if _, errs, code := runCLI(t, "chart", "--format", "svg", "program"); code != exitUsage || !strings.Contains(errs, "want mermaid or dot, or --json") {
		t.Errorf("chart --format svg: exit %d, stderr:\n%s", code, errs)
	}
}

// help: 0 with the usage text, or a command's -h; 2 for a command that
// does not exist, like any other usage error.
func TestHelp(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"help"}, exitOK, "Commands:", ""},
		{[]string{"--help"}, exitOK, "Commands:", ""},
		{[]string{"help", "check"}, exitOK, "", "Usage: tracecheck check"},
		{[]string{"help", "nosuch"}, exitUsage, "", `tracecheck help: unknown command "nosuch" (want one of chart, check, completion,`},
		{[]string{"nosuch"}, exitUsage, "", `unknown command "nosuch"`},
		{nil, exitUsage, "", "Commands:"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.stderr) {
				t.Errorf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errs)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errs, code := runCLI(t, args...)
		// A test binary records the module and Go version, but no VCS
		// revision.
		if code != exitOK || errs != "" || !strings.HasPrefix(out, "tracecheck ") || !strings.Contains(out, "built with go") ||
			strings.Count(out, "\n") != 1 {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errs)
		}
	}
	out, _, code := runCLI(t, "version", "--json")
	var b struct{ Module, Version, Go, Platform string }
	if code != exitOK || json.Unmarshal([]byte(out), &b) != nil || b.Version == "" || !strings.HasPrefix(b.Go, "go") || !strings.Contains(b.Platform, "/") {
		t.Errorf("version --json: exit %d: %s", code, out)
	}
	if _, _, code := runCLI(t, "version", "extra"); code != exitUsage {
		t.Errorf("version extra: exit %d, want %d", code, exitUsage)
	}
}

// The completion scripts are generated from the registered commands: each
// lists every command and its flags, the bash one parses and completes.
func TestCompletion(t *testing.T) {
	usage, _, _ := runCLI(t, "help")
	var commands []string
	in := false
	for _, l := range strings.Split(usage, "\n") {
		switch {
		case l == "Commands:":
			in = true
		case in && l == "":
			in = false
		case in:
			commands = append(commands, strings.Fields(l)[0])
		}
	}
	if len(commands) < 8 {
		t.Fatalf("commands from help: %v", commands)
	}
	dir := t.TempDir()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, errs, code := runCLI(t, "completion", shell)
		if code != exitOK || errs != "" {
			t.Fatalf("completion %s: exit %d: %s", shell, code, errs)
		}
		for _, c := range commands {
			if !strings.Contains(out, "'"+c+"'") {
				t.Errorf("%s script lacks the command %s", shell, c)
			}
		}
		for _, f := range []string{"mutant", "json", "max-line", "model", "instance"} {
			if !strings.Contains(out, f) {
				t.Errorf("%s script lacks the flag %s", shell, f)
			}
		}
		file := filepath.Join(dir, "tracecheck."+shell)
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		// Each shell parses its script, where it is installed (bash is).
		if _, err := exec.LookPath(shell); err != nil {
			if shell == "bash" {
				t.Fatal("bash not found")
			}
			continue
		}
		if b, err := exec.Command(shell, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", shell, err, b)
		}
	}
	if _, _, code := runCLI(t, "completion", "tcsh"); code != exitUsage {
		t.Errorf("completion tcsh: exit %d, want %d", code, exitUsage)
	}
	if _, _, code := runCLI(t, "completion"); code != exitUsage {
		t.Errorf("completion: exit %d, want %d", code, exitUsage)
	}
	if _, _, code := runCLI(t, "completion", "--name", "a b;rm", "bash"); code != exitUsage {
		t.Errorf("completion --name 'a b;rm': exit %d, want %d", code, exitUsage)
	}
	// For a team's own binary: the script completes the name it is given,
	// and nothing else.
	for shell, want := range map[string]string{"bash": "complete -o filenames -F _light_check light-check\n",
		"zsh": "#compdef light-check\n", "fish": "complete -c light-check -f\n"} {
		out, _, code := runCLI(t, "completion", shell, "--name", "light-check")
		if code != exitOK || !strings.Contains(out, want) || strings.Contains(out, "_tracecheck") || strings.Contains(out, "-c tracecheck") {
			t.Errorf("completion %s --name light-check: exit %d, lacks %q or names tracecheck:\n%.400s", shell, code, want, out)
		}
		if _, err := exec.LookPath(shell); err == nil {
			file := filepath.Join(dir, "light."+shell)
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command(shell, "-n", file).CombinedOutput(); err != nil {
				t.Errorf("%s -n on the light-check script: %v\n%s", shell, err, b)
			}
		}
	}

	// The bash function completes commands, flags, and flag values.
	script := filepath.Join(dir, "tracecheck.bash")
	cases := []struct {
		line string // the words typed, the last one being completed
		want []string
		not  []string
	}{
		{"tracecheck ex", []string{"explore", "export"}, []string{"check"}},
		{"tracecheck explore --", []string{"--json", "--mutant"}, []string{"--format"}},
		{"tracecheck explore --mutant no-", []string{"no-compaction-teardown", "no-vad-teardown", "no-resp-teardown"}, []string{"publish-from-staging"}},
		{"tracecheck explore se", []string{"session"}, []string{"program"}},
		{"tracecheck check --model ", []string{"program", "session"}, []string{"session-mutant-no-vad-teardown"}},
		{"tracecheck chart --format ", []string{"mermaid", "dot"}, []string{"json"}},
		{"tracecheck completion ", []string{"bash", "fish", "zsh"}, nil},
	}
	for _, c := range cases {
		words := strings.Split(c.line, " ")
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
			string(rune('0'+len(words)-1)) + "\n_tracecheck\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command("bash", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.line, err, out)
		}
		got := strings.Fields(string(out))
		for _, w := range c.want {
			if !contains(got, w) {
				t.Errorf("%q completes to %v, lacking %s", c.line, got, w)
			}
		}
		for _, w := range c.not {
			if contains(got, w) {
				t.Errorf("%q completes to %v, with %s", c.line, got, w)
			}
		}
	}
}

// Where fish is installed, its script completes as bash's does.
func TestFishCompletion(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed")
	}
	out, _, code := runCLI(t, "completion", "fish")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	script := filepath.Join(t.TempDir(), "tracecheck.fish")
	if err := os.WriteFile(script, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		line      string
		want, not []string
	}{
		{"tracecheck ex", []string{"explore", "export"}, []string{"check"}},
		{"tracecheck explore --", []string{"--json", "--mutant"}, []string{"--format"}},
		{"tracecheck check --mutant no-", []string{"no-compaction-teardown", "no-vad-teardown"}, []string{"publish-from-staging"}},
		{"tracecheck chart ", []string{"program", "session"}, nil},
	}
	for _, c := range cases {
		b, err := exec.Command("fish", "-c", "source "+script+"; complete -C '"+c.line+"'").CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.line, err, b)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			word, _, _ := strings.Cut(l, "\t")
			got = append(got, word)
		}
		for _, w := range c.want {
			if !contains(got, w) {
				t.Errorf("%q completes to %v, lacking %s", c.line, got, w)
			}
		}
		for _, w := range c.not {
			if contains(got, w) {
				t.Errorf("%q completes to %v, with %s", c.line, got, w)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// version's line says what the build recorded, and says so when it
// recorded no revision.
func TestBuildString(t *testing.T) {
	cases := []struct {
		b    cli.Build
		want string
	}{
		{cli.Build{Path: "example.com/x", Version: "v1.2.3", Revision: "abc123", Time: "2026-01-02T03:04:05Z", Go: "go1.26.8", Platform: "linux/amd64"},
			"tracecheck v1.2.3 (example.com/x), revision abc123 of 2026-01-02T03:04:05Z, built with go1.26.8 for linux/amd64"},
		{cli.Build{Path: "example.com/x", Version: "(devel)", Revision: "abc123", Modified: true, Go: "go1.26.8", Platform: "linux/arm64"},
			"tracecheck (devel) (example.com/x), revision abc123 with uncommitted changes, built with go1.26.8 for linux/arm64"},
		{cli.Build{Version: "unknown", Go: "go1.26.8", Platform: "linux/amd64"},
			"tracecheck unknown, no VCS revision recorded, built with go1.26.8 for linux/amd64"},
	}
	for _, c := range cases {
		if got := c.b.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
