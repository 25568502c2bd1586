package check_test

import (
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/check"
)

// A value no reachable state gives its variable (a misspelled phase, a
// counter out of range) is reported as outside the variable's domain, with
// the values it takes; a value in the domain that does not fit the step
// stays a state divergence.
func TestValueOutsideDomain(t *testing.T) {
	const (
		initProg = `{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}`
		execProg = `{"v":1,"instance":"r","seq":1,"action":"ExecutePython","state":{"phase":"Running"}}`
	)
	cases := []struct {
		name, model, trace string
		kind               check.DivergenceKind
		reason             string // "" with KindState: not about the domain
	}{
		{"misspelled phase", "program", initProg + "\n" + execProg + "\n" +
			`{"v":1,"instance":"r","seq":2,"action":"ProgramSucceeds","state":{"phase":"Stageing"}}`,
			check.KindDomain, `phase = "Stageing" is outside the variable's domain: no reachable state of the spec has it; phase is one of "Ready", "Running", "Staging", "Failed", "Interrupted", "Verified", "Published"`},
		{"a phase of the domain, the wrong one", "program", initProg + "\n" + execProg + "\n" +
			`{"v":1,"instance":"r","seq":2,"action":"ProgramSucceeds","state":{"phase":"Verified"}}`,
			check.KindState, ""},
		{"out of range in Init", "session",
			`{"v":1,"instance":"s","seq":0,"action":"Init","state":{"conn":0,"vad":7,"resp":0,"compaction":0}}`,
			check.KindDomain, "vad = 7 is outside the variable's domain: no reachable state of the spec has it; vad is one of 0, 1, 2"},
		{"in range, not initial", "session",
			`{"v":1,"instance":"s","seq":0,"action":"Init","state":{"conn":0,"vad":1,"resp":0,"compaction":0}}`,
			check.KindInit, ""},
		// A boolean is always in its domain when the spec's states take
		// both values; published = TRUE is reachable.
		{"wrong type is an input error, not a domain", "program",
			`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":"no"}}`,
			0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := checkWith(c.model, strings.NewReader(c.trace+"\n"), "t.ndjson", check.Options{})
			if c.kind == 0 {
				if err == nil {
					t.Fatalf("no input error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Instances) != 1 || rep.Instances[0].Divergence == nil {
				t.Fatalf("want one violation: %+v", rep.Instances)
			}
			d := rep.Instances[0].Divergence
			if d.Kind != c.kind {
				t.Errorf("kind %v, want %v (%s)", d.Kind, c.kind, d.Reason)
			}
			if c.reason != "" && d.Reason != c.reason {
				t.Errorf("reason\n %s\nwant\n %s", d.Reason, c.reason)
			}
			if c.kind != check.KindDomain && strings.Contains(d.Reason, "domain") {
				t.Errorf("reason speaks of the domain: %s", d.Reason)
			}
			// The report keeps the rest: the candidates and the diff.
			if len(d.Candidates) == 0 || d.Diff == "" {
				t.Errorf("report without candidates or diff: %+v", d)
			}
		})
	}
}
