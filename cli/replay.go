package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tracecheck/tracecheck/check"
)

const replaySynopsis = `[--model SPEC] [--mutant NAME] [--instance ID] [--json] FILE|-

Replays a trace against a registered spec and prints every accepted event
with the candidate spec state(s) after it and the actions enabled there,
then the verdict report (as tracecheck check prints it). Use it to read
a trace the way the spec sees it, or to see the road to a divergence.
--instance ID prints the steps of that instance only. --model and
--mutant are check's. --json writes NDJSON instead: one object a step ({"file", "line",
"instance", "seq", "action", "args"?: [text], "part"?, "stutter"?,
"states": [state], "enabled": [[action]]}, each argument and state in
TLA+ syntax), then one {"report": ...} as check --json has it.

Exit codes are check's: 0 valid, 1 violation, 4 incomplete, 3 input
error, 2 usage.`

func (a *app) runReplay(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("replay", replaySynopsis, stderr)
	tf := a.addTraceFlags(fs)
	only := fs.String("instance", "", UsageInstance)
	asJSON := fs.Bool("json", false, UsageJSON)
	files, code := a.traceArgs(fs, tf, args, stderr, "want exactly one trace", func(n int) bool { return n == 1 })
	if code >= 0 {
		return code
	}
	r, name, m, closeFile, err := a.openTrace(files[0], *tf.model, *tf.maxLine, *tf.maxITF)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck replay: %v\n", err)
		return ExitInput
	}
	for _, w := range m.warnings {
		fmt.Fprintf(stderr, "tracecheck replay: warning: %s\n", w)
	}
	defer closeFile()
	if !*asJSON {
		fmt.Fprintf(stdout, "replaying %s against model %s\n", name, m.name)
	}
	enc := json.NewEncoder(stdout)
	opt := check.Options{MaxLine: *tf.maxLine, OnStep: func(st check.Step) {
		if *only != "" && st.Instance != *only {
			return
		}
		if *asJSON {
			enc.Encode(jsonStep{st.Pos.File, st.Pos.Line, st.Instance, st.Seq, st.Action, st.Args, st.Part, st.Stutter, st.States, st.Enabled})
			return
		}
		what := st.Action
		if st.Args != nil {
			what += "(" + strings.Join(st.Args, ", ") + ")"
		}
		switch {
		case st.Stutter:
			what += " (stutter)"
		case st.Part != "":
			what += " (" + st.Part + ")"
		}
		fmt.Fprintf(stdout, "%s:%d  %s  seq %d  %s\n", st.Pos.File, st.Pos.Line, st.Instance, st.Seq, what)
		if st.Part == "begin" || st.Part == "step" {
			fmt.Fprintf(stdout, "    (inside the composite: the state below is the one before it)\n")
		}
		for i, s := range st.States {
			fmt.Fprintf(stdout, "    state: %s\n", s)
			en := strings.Join(st.Enabled[i], ", ")
			if en == "" {
				en = "(none)"
			}
			fmt.Fprintf(stdout, "    enabled: %s\n", en)
		}
	}}
	rep, err := m.check(context.Background(), r, name, opt)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck replay: %v\n", m.inputHint(err))
		return ExitInput
	}
	if *asJSON {
		enc.Encode(struct {
			Report *check.Report `json:"report"`
		}{rep})
	} else {
		fmt.Fprintln(stdout)
		rep.WriteText(stdout)
	}
	return verdictCode(rep.Verdict())
}

// jsonStep is one line of replay --json.
type jsonStep struct {
	File     string     `json:"file"`
	Line     int        `json:"line"`
	Instance string     `json:"instance"`
	Seq      uint64     `json:"seq"`
	Action   string     `json:"action"`
	Args     []string   `json:"args,omitempty"`
	Part     string     `json:"part,omitempty"`
	Stutter  bool       `json:"stutter,omitempty"`
	States   []string   `json:"states"`
	Enabled  [][]string `json:"enabled"`
}
