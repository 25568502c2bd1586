package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/model"
)

// light is a small spec: a light turned on once and off once, which then
// stays off (state 0 off, 1 on, 2 used).
func light() *model.Spec[int] {
	guard := func(want int, text string) func(int) string {
		return func(s int) string {
			if s != want {
				return text
			}
			return ""
		}
	}
	return &model.Spec[int]{
		Name: "light",
		Vars: []string{"on", "used"},
		Valuation: func(s int) []model.Value {
			return []model.Value{model.Bool(s == 1), model.Bool(s == 2)}
		},
		Init: func() []int { return []int{0} },
		Actions: []model.Action[int]{
			{Name: "TurnOn", Guard: guard(0, `~on /\ ~used`), Next: func(_ int, emit func(int)) { emit(1) }},
			{Name: "TurnOff", Guard: guard(1, "on"), Next: func(_ int, emit func(int)) { emit(2) }},
		},
		Invariants: []model.Invariant[int]{
			{Name: "TypeOK", Holds: func(s int) bool { return 0 <= s && s <= 2 }},
		},
		Terminal:      func(s int) bool { return s == 2 },
		CheckDeadlock: true,
	}
}

// A team's own command line, with one registered spec, explores it as TLC
// would.
func ExampleRun() {
	cfg := cli.Config{Specs: []cli.Spec{{Name: "light", Doc: "a light switched once", Model: cli.Of(light())}}}
	var out bytes.Buffer
	code := cli.Run(cfg, []string{"explore", "light"}, &out, os.Stderr)
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(line, "Verdict:") { // it gives the time taken
			fmt.Println(line)
		}
	}
	fmt.Println("exit", code)
	// Output:
	// tracecheck explore light (light)
	// Checking 2 properties: TypeOK, Deadlock
	// Model checking completed. No error has been found.
	// 3 distinct states found, 2 transitions, 1 initial.
	// The depth of the complete state graph search is 3.
	// 1 terminal state(s) stutter by declaration (not counted as transitions).
	// exit 0
}

// The same command line checks a trace from standard input against the
// registered spec.
func ExampleRun_check() {
	trace := `{"v":1,"instance":"l1","seq":0,"action":"Init","state":{"on":false,"used":false}}
{"v":1,"instance":"l1","seq":1,"action":"TurnOn","state":{"on":true,"used":false}}
{"v":1,"instance":"l1","seq":2,"action":"TurnOff","state":{"on":false,"used":true}}
`
	cfg := cli.Config{Specs: []cli.Spec{{Name: "light", Model: cli.Of(light())}}, Stdin: strings.NewReader(trace)}
	code := cli.Run(cfg, []string{"check", "-"}, os.Stdout, os.Stderr)
	fmt.Println("exit", code)
	// Output:
	//   l1: valid, 3 events (lines 1-3)
	//   l1: ends in on = FALSE /\ used = TRUE
	// stdin: VALID (model light, 3 events, 1 instance: 1 valid, 0 incomplete, 0 violation)
	// exit 0
}
