package formal

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/machines"
)

// machineChecks are the per-machine specs' reports (spec/machines, seed
// 001's M1-M5): for each spec, TLC's graph against its transcription in
// model/machines, and for each mutant, TLC's counterexample against the
// transcription's.
var machineChecks = []Check{
	{"tlc-machine-tts", tlcMachine(machines.TTS(machines.Written), 33, 81, 7)},
	{"tlc-machine-tts-cancel-keeps-audio", tlcMachineMutant(machines.TTS(machines.TTSCancelKeepsAudio), machines.TTSCancelKeepsAudio,
		machines.TTSSend, machines.TTSCancel, machines.TTSPlay)},
	{"tlc-machine-tts-close-twice", tlcMachineMutant(machines.TTS(machines.TTSCloseTwice), machines.TTSCloseTwice,
		machines.TTSCancel, machines.TTSClose)},
	{"tlc-machine-compaction", tlcMachine(machines.Compaction(machines.Written), 5, 9, 3)},
	{"tlc-machine-compaction-fire-and-forget", tlcMachineMutant(machines.Compaction(machines.CompactionFireAndForget), machines.CompactionFireAndForget,
		machines.CompactionTrigger, machines.CompactionConnTorn, machines.CompactionShutdown)},
	{"tlc-machine-response", tlcMachine(machines.Response(machines.Written), 13, 23, 5)},
	{"tlc-machine-response-supersede-keeps-old", tlcMachineMutant(machines.Response(machines.ResponseSupersedeKeepsOld), machines.ResponseSupersedeKeepsOld,
		machines.ResponseStart, machines.ResponseStart)},
	{"tlc-machine-response-shutdown-leaves-response", tlcMachineMutant(machines.Response(machines.ResponseShutdownLeavesResponse),
		machines.ResponseShutdownLeavesResponse, machines.ResponseStart, machines.ResponseConnTorn, machines.ResponseShutdown)},
	{"tlc-machine-connection", tlcMachine(machines.Connection(machines.Written), 20, 36, 5)},
	{"tlc-machine-connection-teardown-per-exit", tlcMachineMutant(machines.Connection(machines.ConnectionTeardownPerExit),
		machines.ConnectionTeardownPerExit, machines.ConnectionClose, machines.ConnectionDrop,
		machines.ConnectionTeardownOnClose, machines.ConnectionTeardownOnDrop)},
	{"tlc-machine-turn", tlcMachine(machines.Turn(machines.Written), 4, 10, 3)},
	{"tlc-machine-turn-abort-keeps-turn", tlcMachineMutant(machines.Turn(machines.TurnAbortKeepsTurn), machines.TurnAbortKeepsTurn,
		machines.TurnSpeechFrame, machines.TurnAbort)},
}

// tlcMachine checks TLC's report of a machine spec as written: no error,
// the given numbers of distinct states, graph edges and depth, and a state
// graph equal, edge for edge, to the transcription's.
func tlcMachine[S comparable](sp *model.Spec[S], states, edges, depth int) func(*conform.Report) (string, error) {
	return func(r *conform.Report) (string, error) {
		var e errs
		out, err := tlcOutput(r, &e, false)
		if err != nil {
			return "", err
		}
		if out.Version != r.Manifest.ToolVersion || !strings.HasPrefix(out.Version, "TLC2 Version ") {
			e.add("TLC version %q, manifest says %q", out.Version, r.Manifest.ToolVersion)
		}
		if !out.NoError || len(out.Errors) > 0 || r.Manifest.Verdict != "Model checking completed. No error has been found." {
			e.add("TLC did not print \"No error has been found\" (errors: %q, manifest verdict %q)", out.Errors, r.Manifest.Verdict)
		}
		if out.Distinct != states || out.Left != 0 || out.Depth != depth {
			e.add("TLC: %d distinct states, %d left on queue, depth %d; want %d, 0, %d", out.Distinct, out.Left, out.Depth, states, depth)
		}
		tool, err := TLCGraph(r)
		if err != nil {
			return "", err
		}
		ts, te := tool.Counts()
		if ts != states || te != edges || len(tool.Edges) != edges || len(tool.Init) != 1 {
			e.add("TLC dot: %d states, %d distinct edges (%d lines), %d initial; want %d, %d, %d, 1",
				ts, te, len(tool.Edges), len(tool.Init), states, edges, edges)
		}
		res, mg, err := explore(sp)
		if err != nil {
			return "", err
		}
		if d := conform.Compare(mg, tool); !d.Empty() {
			e.add("model/machines %s does not have TLC's state graph:\n%s", sp.Name, d)
		}
		if res.States() != out.Distinct || res.Transitions() != te || res.Depth != out.Depth || !res.OK() {
			e.add("model/machines %s: %d states, %d transitions, depth %d, ok %v; TLC: %d distinct, %d edges, depth %d, no error",
				sp.Name, res.States(), res.Transitions(), res.Depth, res.OK(), out.Distinct, te, out.Depth)
		}
		return fmt.Sprintf("TLC %s: %d distinct states, %d edges, depth %d: equal to model/machines %s",
			out.Version, ts, te, out.Depth, sp.Name), e.err(r.Manifest.Report)
	}
}

// tlcMachineMutant checks TLC's report of a machine spec's mutant: TLC
// finds the mutant's invariant violated along the given actions (after
// Init), and its counterexample is the transcription's, state for state.
func tlcMachineMutant[S comparable](sp *model.Spec[S], m machines.Mutant, trace ...string) func(*conform.Report) (string, error) {
	trace = append([]string{"Init"}, trace...)
	return func(r *conform.Report) (string, error) {
		var e errs
		out, err := tlcOutput(r, &e, true)
		if err != nil {
			return "", err
		}
		want := "Invariant " + m.Breaks + " is violated."
		if len(out.Errors) == 0 || out.Errors[0] != want || "Error: "+want != r.Manifest.Verdict {
			e.add("TLC errors %q (manifest %q), want %s", out.Errors, r.Manifest.Verdict, want)
		}
		res, _, err := explore(sp)
		if err != nil {
			return "", err
		}
		i := slices.IndexFunc(res.Violations, func(v model.Violation[S]) bool { return v.Name == m.Breaks })
		if i < 0 {
			e.add("model/machines %s: %s holds", sp.Name, m.Breaks)
			return "", e.err(r.Manifest.Report)
		}
		v := res.Violations[i]
		var steps []conform.TLCStep
		for _, s := range out.Trace {
			if s.Action != "Stuttering" && !strings.HasPrefix(s.Action, "Back to state") {
				steps = append(steps, s)
			}
		}
		var names []string
		for _, s := range steps {
			names = append(names, s.Action)
		}
		if !slices.Equal(names, trace) {
			e.add("TLC's counterexample %v, want %v", names, trace)
		}
		if len(steps) != len(v.Trace) {
			e.add("TLC's counterexample has %d states, model/machines %s's %d", len(steps), sp.Name, len(v.Trace))
			return "", e.err(r.Manifest.Report)
		}
		for j, s := range v.Trace {
			st, err := conform.State(sp.Vars, sp.Valuation(s.State))
			if err != nil {
				return "", err
			}
			if steps[j].Action != s.Action || !steps[j].State.Equal(st) {
				e.add("step %d: TLC %s %s, model/machines %s %s", j+1, steps[j].Action, conform.FormatState(steps[j].State),
					s.Action, conform.FormatState(st))
			}
		}
		return fmt.Sprintf("TLC: %s along %v, equal to model/machines %s's counterexample", want, names, sp.Name),
			e.err(r.Manifest.Report)
	}
}
