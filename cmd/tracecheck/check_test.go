package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

const corpusDir = "../../traces/"

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckCommand(t *testing.T) {
	bad := writeTemp(t, "bad.ndjson", `{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":3}}`+"\n")
	garbage := writeTemp(t, "garbage.bin", "\x89PNG\r\n\x1a\n\x00\x00")
	init0 := `{"v":1,"instance":"r","seq":3,"action":"Init","state":{"phase":"Ready"}}` + "\n"
	unknownAction := writeTemp(t, "ua.ndjson", init0+`{"v":1,"instance":"r","seq":4,"action":"Publish","state":{}}`+"\n")
	unknownVar := writeTemp(t, "uv.ndjson", init0+`{"v":1,"instance":"r","seq":4,"action":"ExecutePython","state":{"fase":"Running"}}`+"\n")
	seqBack := writeTemp(t, "sb.ndjson", init0+`{"v":1,"instance":"r","seq":2,"action":"ExecutePython","state":{}}`+"\n")
	malformed := writeTemp(t, "mj.ndjson", init0+`{"v":1,"instance":"r","seq":4,"action":"ExecutePython","state":{}`+"\n")
	empty := writeTemp(t, "empty.ndjson", "")
	long := writeTemp(t, "long.ndjson", `{"v":1,"instance":"r","seq":0,"action":"Init","state":{}}`+"\n"+
		`{"v":1,"instance":"`+strings.Repeat("x", 2<<20)+`"}`+"\n")
	cases := []struct {
		args     []string
		code     int
		stdout   []string
		stderr   []string
		notInOut []string
	}{
		{[]string{"check", corpusDir + "program/published-ok.ndjson"}, exitOK, []string{"published-ok.ndjson: VALID (model program"}, nil, nil},
		{[]string{"check", corpusDir + "session/composite-teardown-ok.ndjson"}, exitOK, []string{"model session"}, nil, nil},
		{[]string{"check", corpusDir + "program/publish-unverified-bad.ndjson"}, exitViolation,
			[]string{"VIOLATION", "publish-unverified-bad.ndjson:4: instance run-5, seq 3, action AtomicPublication",
				"enabled: ReloadAndVerify, SaveOrVerificationFails, Interrupt", "-want +got", "last 3 matched events"}, nil, nil},
		{[]string{"check", "--last", "1", corpusDir + "program/publish-unverified-bad.ndjson"}, exitViolation, []string{"last 1 matched events"}, nil, nil},
		{[]string{"check", "-q", corpusDir + "program/interleaved-one-bad.ndjson"}, exitViolation, []string{"1 valid, 0 incomplete, 1 violation", "run-b: violation"}, nil, []string{"run-a: valid"}},
		{[]string{"check", corpusDir + "program/interleaved-one-bad.ndjson"}, exitViolation, []string{"run-a: valid", "run-b: violation"}, nil, nil},
		{[]string{"check", corpusDir + "program/killed-in-staging-incomplete.ndjson"}, exitIncomplete, []string{"INCOMPLETE", "does not stop"}, nil, nil},
		{[]string{"check", corpusDir + "program/journal-truncated-incomplete.ndjson"}, exitIncomplete, []string{"truncated", "instance run-7 is incomplete"}, nil, nil},
		{[]string{"check", "--model", "session-mutant-no-compaction-teardown", corpusDir + "session/compaction-outlives-session-bad.ndjson"}, exitViolation,
			[]string{"model session-mutant-no-compaction-teardown", "ChildrenDieWithParent"}, nil, nil},
		// Worst verdict wins: violation over incomplete over valid.
		{[]string{"check", corpusDir + "program/published-ok.ndjson", corpusDir + "program/killed-in-staging-incomplete.ndjson"}, exitIncomplete, nil, nil, nil},
		{[]string{"check", corpusDir + "program/killed-in-staging-incomplete.ndjson", corpusDir + "program/interleaved-one-bad.ndjson"}, exitViolation, nil, nil, nil},
		{[]string{"check", bad}, exitInput, nil, []string{"bad.ndjson:1: bad value: state.phase is int 3"}, nil},
		{[]string{"check", garbage}, exitInput, nil, []string{"garbage.bin:1: binary data"}, nil},
		{[]string{"check", unknownAction}, exitInput, nil, []string{`ua.ndjson:2: unknown action "Publish"`}, nil},
		{[]string{"check", unknownVar}, exitInput, nil, []string{`uv.ndjson:2: unknown variable "fase"`}, nil},
		{[]string{"check", seqBack}, exitInput, nil, []string{`sb.ndjson:2: sequence number does not increase: instance r: seq 2 goes backwards`}, nil},
		{[]string{"check", malformed}, exitInput, nil, []string{`mj.ndjson:2: malformed JSON`}, nil},
		{[]string{"check", empty}, exitInput, nil, []string{"empty.ndjson:1: empty trace"}, nil},
		{[]string{"check", long}, exitInput, nil, []string{"long.ndjson:2: line too long: more than 1048576 bytes"}, nil},
		{[]string{"check", "--max-line", "20", corpusDir + "program/published-ok.ndjson"}, exitInput, nil, []string{"published-ok.ndjson:1: line too long: more than 20 bytes"}, nil},
		{[]string{"check", "/nonexistent/trace.ndjson"}, exitInput, nil, []string{"no such file"}, nil},
		{[]string{"check", bad, corpusDir + "program/publish-unverified-bad.ndjson"}, exitInput, []string{"VIOLATION"}, nil, nil},
		{[]string{"check"}, exitUsage, nil, []string{"no trace given"}, nil},
		{[]string{"check", "--model", "nosuch", "x"}, exitUsage, nil, []string{`unknown model "nosuch"`}, nil},
		{[]string{"check", "--last", "-1", "x"}, exitUsage, nil, nil, nil},
		{[]string{"check", "--live", "--json", "x"}, exitUsage, nil, []string{"do not go together"}, nil},
		{[]string{"check", "-h"}, exitOK, nil, []string{"Exit codes: 0 every instance valid; 1 a violation; 4 incomplete"}, nil},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errs)
			}
			for _, w := range c.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.notInOut {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q:\n%s", w, out)
				}
			}
			for _, w := range c.stderr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if c.code == exitInput && strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("input error is not one line:\n%s", errs)
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	out, errs, code := runCLI(t, "check", "--json", corpusDir+"session/interleaved-one-bad.ndjson", corpusDir+"session/atomic-teardown-ok.ndjson")
	if code != exitViolation {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var got struct {
		Verdict string `json:"verdict"`
		Reports []struct {
			Verdict   string `json:"verdict"`
			Model     string `json:"model"`
			Instances []struct {
				Instance   string `json:"instance"`
				Verdict    string `json:"verdict"`
				Divergence *struct {
					Line int    `json:"line"`
					Kind string `json:"kind"`
				} `json:"divergence"`
			} `json:"instances"`
		} `json:"reports"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Verdict != "violation" || len(got.Reports) != 2 || got.Reports[0].Model != "session" || got.Reports[1].Verdict != "valid" {
		t.Fatalf("%+v", got)
	}
	in := got.Reports[0].Instances
	if len(in) != 2 || in[0].Verdict != "valid" || in[1].Verdict != "violation" || in[1].Divergence.Line != 8 || in[1].Divergence.Kind != "guard" {
		t.Errorf("instances %+v", in)
	}
}

func TestCheckStdinLive(t *testing.T) {
	data, err := os.ReadFile(corpusDir + "session/child-after-teardown-bad.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	old := stdin
	stdin = strings.NewReader(string(data))
	defer func() { stdin = old }()
	out, _, code := runCLI(t, "check", "--live", "-")
	if code != exitViolation {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, "stdin: VIOLATION (live)") || !strings.Contains(out, "stdin:4: instance s3") || !strings.Contains(out, "model session") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestInferModel(t *testing.T) {
	cases := map[string]string{
		`{"action":"Init"}` + "\n" + `{"action":"VadStart"}`:                                                    "session",
		`{"action":"Init"}` + "\n" + `{"action":"ExecutePython"}`:                                               "program",
		`{"action":"Init"}` + "\n" + `{"action":"RespStart","stutter":true}`:                                    "program",
		`{"action":"Init"}` + "\n" + `{"action":"tts.chunk","stutter":true}` + "\n" + `{"action" : "Teardown"}`: "session",
		``: "program",
	}
	for in, want := range cases {
		if got := inferModel([]byte(in)); got != want {
			t.Errorf("inferModel(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestReplayCommand(t *testing.T) {
	out, errs, code := runCLI(t, "replay", corpusDir+"program/published-ok.ndjson")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, w := range []string{
		"published-ok.ndjson:3  run-1  seq 2  ProgramSucceeds",
		`state: phase = "Staging" /\ verified = FALSE /\ published = FALSE`,
		"enabled: ReloadAndVerify, SaveOrVerificationFails, Interrupt",
		"enabled: Terminated",
		"VALID",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("replay output lacks %q:\n%s", w, out)
		}
	}
	out, _, code = runCLI(t, "replay", "--instance", "run-a", corpusDir+"program/interleaved-one-bad.ndjson")
	if code != exitViolation || strings.Contains(out, "  run-b  seq") || !strings.Contains(out, "  run-a  seq 4  AtomicPublication") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
	out, _, code = runCLI(t, "replay", "--json", corpusDir+"session/composite-teardown-ok.ndjson")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 14 {
		t.Fatalf("exit %d, %d lines:\n%s", code, len(lines), out)
	}
	var step struct {
		Line    int
		Action  string
		Part    string
		States  []string
		Enabled [][]string
	}
	if err := json.Unmarshal([]byte(lines[12]), &step); err != nil || step.Line != 13 || step.Part != "end" ||
		step.States[0] != `conn = 1 /\ vad = 2 /\ resp = 2 /\ compaction = 2` || len(step.Enabled[0]) != 0 {
		t.Errorf("step 13: %+v (%v)", step, err)
	}
	if !strings.HasPrefix(lines[13], `{"report":{"verdict":"valid"`) {
		t.Errorf("last line: %s", lines[13])
	}
	if _, _, code := runCLI(t, "replay", "a", "b"); code != exitUsage {
		t.Errorf("two files: exit %d", code)
	}
	if _, _, code := runCLI(t, "replay", "-h"); code != exitOK {
		t.Errorf("-h: exit %d", code)
	}
}

func TestCoverageCommand(t *testing.T) {
	out, errs, code := runCLI(t, "coverage", corpusDir+"program/published-ok.ndjson", corpusDir+"program/execution-fails-partial-ok.ndjson")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(out, "model program: exercised 5/15 transitions") || !strings.Contains(out, "--PublicationFails-->") {
		t.Errorf("coverage output:\n%s", out)
	}
	out, _, code = runCLI(t, "coverage", "--json", corpusDir+"session/composite-teardown-ok.ndjson")
	var cov struct {
		Model            string
		Total, Exercised int
	}
	if code != exitOK || json.Unmarshal([]byte(out), &cov) != nil || cov.Model != "session" || cov.Total != 36 || cov.Exercised != 7 {
		t.Errorf("exit %d, %+v\n%s", code, cov, out)
	}
	out, _, code = runCLI(t, "coverage", corpusDir+"program")
	if code != exitOK || !strings.Contains(out, "model program: exercised ") {
		t.Errorf("coverage of a directory: exit %d\n%s", code, out)
	}
	if _, _, code := runCLI(t, "coverage"); code != exitUsage {
		t.Errorf("no files: exit %d", code)
	}
	bad := writeTemp(t, "bad.ndjson", "{\n")
	if _, errs, code := runCLI(t, "coverage", bad); code != exitInput || !strings.Contains(errs, "bad.ndjson:1:") {
		t.Errorf("bad input: exit %d, %s", code, errs)
	}
}

// itfOf converts an NDJSON corpus trace (one instance) to an ITF document.
func itfOf(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := trace.NewDecoder(f, path)
	var evs []trace.Event
	for {
		e, err := d.Decode()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	var b bytes.Buffer
	if err := trace.WriteITF(&b, evs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// ITF input, from a file and from standard input, gets the same verdict
// and line (line N is state N-1) as the NDJSON it came from.
func TestCheckCommandITF(t *testing.T) {
	doc := itfOf(t, corpusDir+"program/publish-unverified-bad.ndjson")
	p := writeTemp(t, "run.itf.json", doc)
	out, errs, code := runCLI(t, "check", p)
	if code != exitViolation || !strings.Contains(out, "run.itf.json:4: instance run-5, seq 3, action AtomicPublication") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	old := stdin
	defer func() { stdin = old }()
	stdin = strings.NewReader(itfOf(t, corpusDir+"session/composite-teardown-ok.ndjson"))
	out, errs, code = runCLI(t, "check", "-")
	if code != exitOK || !strings.Contains(out, "stdin: VALID (model session") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	bad := writeTemp(t, "bad.itf.json", `{"vars":["phase"],"states":[{"phase":null}]}`)
	if _, errs, code := runCLI(t, "check", bad); code != exitInput || !strings.Contains(errs, "bad.itf.json: ITF:") {
		t.Errorf("bad ITF: exit %d, %s", code, errs)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one poller.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// On a pipe, check --live reports a violation while the writer is still
// writing: it waits for the first line only, not for 64 KiB or EOF.
func TestCheckLivePipe(t *testing.T) {
	pr, pw := io.Pipe()
	old := stdin
	stdin = pr
	defer func() { stdin = old }()
	var out, errb syncBuffer
	done := make(chan int)
	go func() { done <- run([]string{"check", "--live", "-"}, &out, &errb) }()
	fmt.Fprintln(pw, `{"v":1,"instance":"s","seq":0,"action":"Init","state":{"conn":0,"vad":0,"resp":0,"compaction":0}}`)
	fmt.Fprintln(pw, `{"v":1,"instance":"s","seq":1,"action":"CompFinish","state":{"compaction":0}}`)
	// The live report is written in several pieces: wait for the whole of
	// it (its header and the offending event), still with the pipe open.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "VIOLATION (live)") ||
		!strings.Contains(out.String(), "stdin:2: instance s, seq 1, action CompFinish") {
		if time.Now().After(deadline) {
			pw.Close()
			<-done
			t.Fatalf("no live report while the pipe is open; stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "stdin:2: instance s, seq 1, action CompFinish") {
		t.Errorf("live report:\n%s", out.String())
	}
	pw.Close()
	if code := <-done; code != exitViolation {
		t.Errorf("exit %d", code)
	}
}

// A directory stands for the traces under it.
func TestCheckDirectory(t *testing.T) {
	out, errs, code := runCLI(t, "check", "--json", corpusDir+"program")
	if code != exitViolation {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var got struct {
		Reports []struct{ File string } `json:"reports"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Glob(corpusDir + "program/*.ndjson")
	more, _ := filepath.Glob(corpusDir + "program/*/*.ndjson")
	if len(got.Reports) != len(want)+len(more) || len(want) < 9 {
		t.Errorf("%d reports for %d traces", len(got.Reports), len(want)+len(more))
	}
	if _, errs, code := runCLI(t, "check", t.TempDir()); code != exitInput || !strings.Contains(errs, "no traces") {
		t.Errorf("empty directory: exit %d, %s", code, errs)
	}
}
