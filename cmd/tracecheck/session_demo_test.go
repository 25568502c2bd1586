package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/spec"
)

func TestSessionDemo(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "demo.ndjson")
	cases := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"valid run", []string{"session-demo", "-sessions", "3", "-turns", "2", "-speed", "200", "-o", trace}, exitOK, "check against spec/session.fizz: valid (3 valid"},
		// The default: the realistic mix on 40 sessions covers the whole graph.
		{"default mix", []string{"session-demo", "-speed", "200", "-o", trace}, exitOK, "exercised 36/36 transitions"},
		{"barge-ins", []string{"session-demo", "-speed", "200", "-seed", "9", "-o", trace}, exitOK, "barge-ins"},
		{"plain mix", []string{"session-demo", "-mix", "plain", "-sessions", "2", "-turns", "1", "-speed", "200", "-o", trace}, exitOK, "valid (2 valid"},
		{"help", []string{"session-demo", "-h"}, exitOK, ""},
		{"zero sessions", []string{"session-demo", "-sessions", "0"}, exitUsage, ""},
		{"bad mix", []string{"session-demo", "-mix", "chaos"}, exitUsage, ""},
		{"bad seed", []string{"session-demo", "-seed", "0"}, exitUsage, ""},
		{"bad turns", []string{"session-demo", "-turns", "-1"}, exitUsage, ""},
		{"bad speed", []string{"session-demo", "-speed", "-1"}, exitUsage, ""},
		{"bad barge-in", []string{"session-demo", "-barge-in", "-1ms"}, exitUsage, ""},
		{"NaN speed", []string{"session-demo", "-speed", "NaN"}, exitUsage, ""},
		{"extra argument", []string{"session-demo", "x"}, exitUsage, ""},
		{"unwritable", []string{"session-demo", "-sessions", "1", "-turns", "1", "-speed", "500", "-o", filepath.Join(dir, "no", "such", "f")}, exitInput, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(out, c.contains) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errs)
			}
		})
	}
	// The default run also covers each machine spec, projected, at least
	// as far as the realistic mix's floor (docs/machines.md): connection
	// and turn whole but for the declared race-only transitions.
	out, errs, code := runCLI(t, "session-demo", "-speed", "200", "-o", trace)
	if code != exitOK {
		t.Fatalf("default session-demo: exit %d\n%s\n%s", code, out, errs)
	}
	for _, f := range bundled.MachineCoverageFloors() {
		i := strings.Index(out, "projected onto "+f.Spec+": ")
		j := strings.Index(out[max(i, 0):], "coverage ")
		var got, required int
		if i < 0 || j < 0 {
			t.Fatalf("no coverage of %s in:\n%s", f.Spec, out)
		}
		if _, err := fmt.Sscanf(out[i+j:], "coverage %d/%d", &got, &required); err != nil || got < f.Min {
			t.Errorf("%s: coverage %d/%d (%v), below the floor %d:\n%s", f.Spec, got, required, err, f.Min, out)
		}
	}
	// Barge-in is on by default: the realistic mix's users interrupt
	// responses; -barge-in 0 disables it, and no response is interrupted
	// by speech (the same seed).
	interrupted := func(args ...string) int {
		t.Helper()
		out, errs, code := runCLI(t, append([]string{"session-demo", "-speed", "200", "-seed", "9", "-o", trace}, args...)...)
		var n int
		i := strings.Index(out, "barge-in: ")
		if code != exitOK || i < 0 {
			t.Fatalf("session-demo %q: exit %d\n%s\n%s", args, code, out, errs)
		}
		if _, err := fmt.Sscanf(out[i:], "barge-in: %d responses interrupted", &n); err != nil {
			t.Fatalf("session-demo %q: %v in %q", args, err, out[i:])
		}
		return n
	}
	if on, off := interrupted(), interrupted("-barge-in", "0"); on == 0 || off != 0 {
		t.Errorf("responses interrupted by speech: %d by default (want > 0), %d with -barge-in 0 (want 0)", on, off)
	}
	// The demo's trace of several concurrent sessions checks with `tracecheck check`.
	demo, _, _ := runCLI(t, "session-demo", "-sessions", "5", "-turns", "2", "-speed", "200", "-o", trace)
	if out, errs, code := runCLI(t, "check", "--model", "session", trace); code != exitOK || !strings.Contains(out, "5 valid") {
		t.Fatalf("check of the demo trace: exit %d\n%s\n%s", code, out, errs)
	}
	// One trace, every spec: the demo reports each machine spec's
	// verdict and coverage, and the timing; check --projections agrees.
	for _, want := range []string{"projected onto connection: valid (5 valid", "projected onto turn: valid (5 valid",
		"projected onto response: valid (", "projected onto compaction: valid (5 valid", "projected onto tts: valid (",
		"timing: valid (5 sessions timed)", "teardown: 5, p99 ", "audio after a response's end: 0 of "} {
		if !strings.Contains(demo, want) {
			t.Errorf("session-demo's summary does not say %q:\n%s", want, demo)
		}
	}
	out, errs, code = runCLI(t, "check", "-q", "--projections", trace)
	if code != exitOK || strings.Count(out, ": VALID (") != 7 {
		t.Fatalf("check --projections of the demo trace: exit %d, want 7 valid reports (session, 5 machines, timing)\n%s\n%s", code, out, errs)
	}
	data, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(data), `"action":"Teardown"`) {
		t.Fatalf("trace file: %v %.200s", err, data)
	}
	// The trace says what it is: its header names session.fizz by the
	// hash of the spec this binary was built with, so check needs no
	// --model and warns of nothing.
	want, _ := spec.SHA256(spec.SessionFiles...)
	if first, _, _ := strings.Cut(string(data), "\n"); !strings.Contains(first, `"tracecheck":1,"spec":"session","spec_sha256":"`+want+`"`) {
		t.Fatalf("first line %q is not the header", first)
	}
	if out, errs, code := runCLI(t, "check", trace); code != exitOK || !strings.Contains(out, "model session") || errs != "" {
		t.Fatalf("check without --model: exit %d\n%s\n%s", code, out, errs)
	}
}

// A violation is named in the spec's words: the recorded trace of the M4
// gap (a teardown that leaves compaction running) is what spec mutant
// no-compaction-teardown does, which breaks ChildrenDieWithParent; a trace
// that breaks the spec otherwise is explained by no mutant.
func TestExplainingMutant(t *testing.T) {
	cases := []struct {
		file   string
		mutant string // "": none
		breaks string
	}{
		{"../../traces/session/recorded/m4-mutant-compaction-outlives-bad.ndjson", "no-compaction-teardown", "ChildrenDieWithParent"},
		{"../../traces/session/compaction-outlives-session-bad.ndjson", "no-compaction-teardown", "ChildrenDieWithParent"},
		{"../../traces/session/stutter-changes-state-bad.ndjson", "", ""},
		{"../../traces/session/atomic-teardown-ok.ndjson", "", ""},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			data, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			m, ok := explainingMutant(context.Background(), data, c.file)
			if ok != (c.mutant != "") || m.Name != c.mutant || m.Breaks != c.breaks {
				t.Errorf("explained by %q (breaks %q, ok %v), want %q (%q)", m.Name, m.Breaks, ok, c.mutant, c.breaks)
			}
		})
	}
}

// Without -o the trace goes to a new temporary file, which the summary
// names; nothing is written in the working directory.
func TestSessionDemoTempFile(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	t.Setenv("TMPDIR", t.TempDir())
	out, errs, code := runCLI(t, "session-demo", "-sessions", "2", "-turns", "1", "-speed", "500")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var path string
	for _, l := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(l, "trace: "); ok {
			path = p
		}
	}
	if !strings.HasPrefix(path, os.Getenv("TMPDIR")) || !strings.HasSuffix(path, ".ndjson") {
		t.Fatalf("summary names trace %q, not a temporary file:\n%s", path, out)
	}
	if o, e, c := runCLI(t, "check", path); c != exitOK || !strings.Contains(o, "2 valid") {
		t.Fatalf("check %s: exit %d\n%s\n%s", path, c, o, e)
	}
	if entries, _ := os.ReadDir(wd); len(entries) != 0 {
		t.Errorf("the working directory got %v", entries)
	}
	// --nats is the deprecated spelling of --trace-nats: it says so as it
	// is parsed (here the run then stops at a bad -sessions).
	_, errs, code = runCLI(t, "session-demo", "-nats", "nats://127.0.0.1:1", "-sessions", "0")
	if code != exitUsage || !strings.Contains(errs, "tracecheck session-demo: --nats nats://127.0.0.1:1 is deprecated: use --trace-nats") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
}
