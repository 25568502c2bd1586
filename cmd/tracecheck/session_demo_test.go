package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	// The demo's trace of several concurrent sessions checks with `tracecheck check`.
	runCLI(t, "session-demo", "-sessions", "5", "-turns", "2", "-speed", "200", "-o", trace)
	if out, errs, code := runCLI(t, "check", "--model", "session", trace); code != exitOK || !strings.Contains(out, "5 valid") {
		t.Fatalf("check of the demo trace: exit %d\n%s\n%s", code, out, errs)
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
