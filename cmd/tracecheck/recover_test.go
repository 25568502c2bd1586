package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// pubChildEnv makes TestPublisherChild a publisher process that stops at a
// transition boundary until TestRecoverCompletesJournal kills it.
const pubChildEnv = "TRACECHECK_TEST_PUBLISHER_CHILD"

type pubChildJob struct {
	PublishDir string   `json:"publish_dir"`
	Name       string   `json:"name"`
	Command    []string `json:"command"`
	StopAt     string   `json:"stop_at"` // the action whose boundary stops the publisher
	After      bool     `json:"after"`   // after its receipt (true) or before its work
	Marker     string   `json:"marker"`  // written when stopped
}

// TestPublisherChild is the publisher process of
// TestRecoverCompletesJournal: it runs checkpoint.Publish as tracecheck run
// does, and at the job's boundary writes the marker and waits to be killed.
func TestPublisherChild(t *testing.T) {
	spec := os.Getenv(pubChildEnv)
	if spec == "" {
		t.Skip("the publisher process of TestRecoverCompletesJournal, run by it")
	}
	var job pubChildJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		t.Fatal(err)
	}
	_, err := checkpoint.Publish(context.Background(), checkpoint.Config{
		PublishDir: job.PublishDir, Name: job.Name, Command: job.Command, SkipRecovery: true,
		Runner: checkpoint.ExecRunner{Subreaper: true},
		Boundary: func(action string, after bool) {
			if action == job.StopAt && after == job.After {
				_ = os.WriteFile(job.Marker, nil, 0o644)
				time.Sleep(time.Hour) // until SIGKILL
			}
		},
	})
	t.Fatalf("the publisher was not stopped at %s (after=%v): %v", job.StopAt, job.After, err)
}

// killPublisherAt runs a publisher process, waits until it stops at the
// boundary, and SIGKILLs it.
func killPublisherAt(t *testing.T, job pubChildJob) {
	t.Helper()
	job.Marker = filepath.Join(t.TempDir(), "stopped")
	b, _ := json.Marshal(job)
	c := exec.Command(os.Args[0], "-test.run=^TestPublisherChild$")
	c.Env = append(os.Environ(), pubChildEnv+"="+string(b))
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	deadline := time.After(60 * time.Second)
	for {
		if _, err := os.Stat(job.Marker); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the publisher ended before its boundary %s: %v\n%s", job.StopAt, err, out.String())
		case <-deadline:
			_ = c.Process.Kill()
			<-done
			t.Fatalf("the publisher did not reach its boundary %s in 60s", job.StopAt)
		case <-time.After(5 * time.Millisecond):
		}
	}
	_ = c.Process.Signal(syscall.SIGKILL)
	<-done
}

// TestRecoverCompletesJournal kills real publisher processes (running
// examples/train.py) at each nonterminal phase, recovers, and checks the
// runs directory with tracecheck check: every journal is VALID, ending in
// the phase of the outcome recovery found, with receipts that say they were
// recovered; a second recover appends nothing.
func TestRecoverCompletesJournal(t *testing.T) {
	py := pubPython(t)
	pub := filepath.Join(t.TempDir(), "pub")
	cases := []struct {
		name     string
		stopAt   string
		after    bool
		appended []string
		final    string
	}{
		{"ready", checkpoint.ActionExecutePython, false, []string{"ExecutePython", "Interrupt"}, "Interrupted"},
		{"running", checkpoint.ActionExecutePython, true, []string{"Interrupt"}, "Interrupted"},
		{"staging", checkpoint.ActionProgramSucceeds, true, []string{"Interrupt"}, "Interrupted"},
		{"verified", checkpoint.ActionReloadAndVerify, true, []string{"InterruptBeforePublication"}, "Interrupted"},
	}
	for _, tc := range cases {
		killPublisherAt(t, pubChildJob{PublishDir: pub, Name: tc.name, StopAt: tc.stopAt, After: tc.after,
			Command: append(append([]string(nil), py...), pubExample("train.py"))})
	}
	runs := filepath.Join(pub, checkpoint.MetaDir, "runs")
	// Before recovery the journals are incomplete.
	if code, out, _ := pubCLI("check", runs); code != cli.ExitIncomplete || !strings.Contains(out, "INCOMPLETE") {
		t.Fatalf("check before recover: code %d\n%s", code, out)
	}
	code, out, errs := pubCLI("recover", "--publish-dir", pub, "--json")
	if code != exitOK {
		t.Fatalf("recover: code %d\n%s%s", code, out, errs)
	}
	var reps []checkpoint.RunReport
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatal(err)
	}
	if len(reps) != len(cases) {
		t.Fatalf("%d reports, want %d:\n%s", len(reps), len(cases), out)
	}
	journals := map[string][]byte{}
	for _, rep := range reps {
		var tc = cases[0]
		for _, c := range cases {
			if c.name == rep.Name {
				tc = c
			}
		}
		if rep.Name != tc.name || rep.Outcome != checkpoint.OutcomeNotPublished || rep.JournalTerminal ||
			strings.Join(rep.Appended, ",") != strings.Join(tc.appended, ",") {
			t.Errorf("%s: report %+v; want not-published, appended %v", tc.name, rep, tc.appended)
		}
		journal := filepath.Join(runs, rep.Run, "journal.ndjson")
		b, err := os.ReadFile(journal)
		if err != nil {
			t.Fatal(err)
		}
		journals[journal] = b
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		var last struct {
			Action string         `json:"action"`
			State  map[string]any `json:"state"`
			Detail map[string]any `json:"detail"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
			t.Fatal(err)
		}
		reason, _ := last.Detail["reason"].(string)
		if last.State["phase"] != tc.final || last.Detail["recovered"] != true || last.Detail["outcome"] != "not-published" || !strings.Contains(reason, "publisher died") && !strings.Contains(reason, "publisher's death") {
			t.Errorf("%s: last receipt %+v", tc.name, last)
		}
		// Each journal alone: VALID, and the verdict says how the run ended.
		code, cout, _ := pubCLI("check", journal)
		ends := fmt.Sprintf("  %s (checkpoint %s): ends in phase = %q", rep.Run, tc.name, tc.final)
		if code != exitOK || !strings.Contains(cout, "VALID") || !strings.Contains(cout, ends) {
			t.Errorf("%s: check %s: code %d\n%s", tc.name, journal, code, cout)
		}
	}
	// The runs directory as a CI gate sees it: VALID, nothing incomplete.
	code, out, _ = pubCLI("check", runs)
	if code != exitOK || !strings.Contains(out, "VALID") || strings.Contains(out, "incomplete, ") && !strings.Contains(out, "0 incomplete") {
		t.Errorf("check runs after recover: code %d\n%s", code, out)
	}
	// Recovering again appends nothing.
	code, out, errs = pubCLI("recover", "--publish-dir", pub, "--json")
	if code != exitOK {
		t.Fatalf("second recover: code %d\n%s%s", code, out, errs)
	}
	reps = nil
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatal(err)
	}
	for _, rep := range reps {
		if len(rep.Appended) != 0 || !rep.JournalTerminal {
			t.Errorf("second recover of %s: %+v", rep.Name, rep)
		}
	}
	for journal, before := range journals {
		if after, _ := os.ReadFile(journal); !bytes.Equal(after, before) {
			t.Errorf("the second recover changed %s:\n%s\n---\n%s", journal, before, after)
		}
	}
}
