package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/trace"
)

const corpusDir = "../traces/"

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
	// Streamed: the violation when it was seen, the valid instance at the
	// end of the trace.
	in := got.Reports[0].Instances
	if len(in) != 2 || in[0].Instance != "b" || in[0].Verdict != "violation" || in[0].Divergence.Line != 8 || in[0].Divergence.Kind != "guard" ||
		in[1].Instance != "a" || in[1].Verdict != "valid" {
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
		if got := infer([]byte(in)); got != want {
			t.Errorf("infer(%q) = %s, want %s", in, got, want)
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
	// Program's 5 Terminated self-loops are final-state stutters: listed
	// apart, not counted.
	for _, want := range []string{"model program: exercised 5/10 transitions (50%); 5 final-state stutters not required, listed apart (5/15 counting them)",
		"--PublicationFails-->", "not required (final-state stutter: ", "--Terminated-->"} {
		if !strings.Contains(out, want) {
			t.Errorf("coverage output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = runCLI(t, "coverage", "--json", corpusDir+"program/published-ok.ndjson")
	var cov struct {
		Model             string
		Total, Exercised  int
		Required          int                               `json:"required"`
		RequiredExercised int                               `json:"required_exercised"`
		NotRequired       []struct{ Action, Reason string } `json:"not_required"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &cov) != nil || cov.Model != "program" || cov.Total != 15 || cov.Exercised != 4 ||
		cov.Required != 10 || cov.RequiredExercised != 4 || len(cov.NotRequired) != 5 || cov.NotRequired[0].Action != "Terminated" || cov.NotRequired[0].Reason == "" {
		t.Errorf("exit %d, %+v\n%s", code, cov, out)
	}
	out, _, code = runCLI(t, "coverage", "--json", corpusDir+"session/composite-teardown-ok.ndjson")
	cov.NotRequired = nil
	if code != exitOK || json.Unmarshal([]byte(out), &cov) != nil || cov.Model != "session" || cov.Total != 36 || cov.Exercised != 7 || cov.Required != 36 || len(cov.NotRequired) != 0 {
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
	if code != exitViolation || !strings.Contains(out, "run.itf.json:45: instance run-5, seq 3, action AtomicPublication") { // the ITF's line (docs/itf.md, "Positions")
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

// progInit is an Init event of the program spec for instance inst.
func progInit(inst string) string {
	return fmt.Sprintf(`{"v":1,"instance":%q,"seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}`, inst)
}

// progRun is a whole valid run of the program spec.
func progRun(inst string) []string {
	s := func(seq int, action, phase string, verified, published bool) string {
		return fmt.Sprintf(`{"v":1,"instance":%q,"seq":%d,"action":%q,"state":{"phase":%q,"verified":%v,"published":%v}}`,
			inst, seq, action, phase, verified, published)
	}
	return []string{progInit(inst), s(1, "ExecutePython", "Running", false, false), s(2, "ProgramSucceeds", "Staging", false, false),
		s(3, "ReloadAndVerify", "Verified", true, false), s(4, "AtomicPublication", "Published", true, true)}
}

// progBad is an instance whose first event is not Init: a violation.
func progBad(inst string) string {
	return fmt.Sprintf(`{"v":1,"instance":%q,"seq":0,"action":"ExecutePython","state":{"phase":"Running"}}`, inst)
}

// A trace of 3 valid, 25 incomplete and 4 violating instances: -q lists no
// valid instance and only the first 10 others, then how many more there
// were, and the summary counts them all, in text and in JSON.
func TestCheckQuiet(t *testing.T) {
	var lines []string
	for i := range 3 {
		lines = append(lines, progRun(fmt.Sprint("ok", i))...)
	}
	for i := range 25 {
		lines = append(lines, progInit(fmt.Sprint("inc", i)))
		if i%7 == 0 {
			lines = append(lines, progBad(fmt.Sprint("bad", i)))
		}
	}
	p := writeTemp(t, "many.ndjson", strings.Join(lines, "\n")+"\n")
	summary := p + ": VIOLATION (model program, 44 events, 32 instances: 3 valid, 25 incomplete, 4 violation)\n"

	out, errs, code := runCLI(t, "check", "-q", p)
	if code != exitViolation || errs != "" {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	if !strings.HasSuffix(out, "  ... 19 more not listed (0 violation, 19 incomplete)\n"+summary) {
		t.Errorf("-q does not end with the count of the rest and the summary:\n%s", out)
	}
	listed := regexp.MustCompile(`(?m)^  (\S+): (valid|incomplete|violation), `).FindAllStringSubmatch(out, -1)
	var got []string
	for _, m := range listed {
		got = append(got, m[1])
	}
	// The violations as they were seen, then the incomplete instances at
	// the end of the trace, in order of first appearance, up to 10.
	want := []string{"bad0", "bad7", "bad14", "bad21", "inc0", "inc1", "inc2", "inc3", "inc4", "inc5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-q listed -want +got\n%s", diff)
	}

	out, _, code = runCLI(t, "check", p)
	if code != exitViolation || !strings.HasSuffix(out, summary) || strings.Count(out, ": valid, 5 events") != 3 || strings.Contains(out, "not listed") {
		t.Errorf("without -q: exit %d\n%s", code, out)
	}

	out, _, code = runCLI(t, "check", "--json", "-q", p)
	var js struct {
		Verdict string
		Reports []struct {
			Verdict                      string
			Events                       int
			Valid, Incomplete, Violation int
			NotListed                    int `json:"not_listed"`
			Instances                    []struct{ Instance, Verdict string }
		}
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil || code != exitViolation {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	r := js.Reports[0]
	if js.Verdict != "violation" || r.Verdict != "violation" || r.Events != 44 || r.Valid != 3 || r.Incomplete != 25 || r.Violation != 4 ||
		len(r.Instances) != 10 || r.NotListed != 22 || r.Instances[0].Instance != "bad0" || r.Instances[9].Instance != "inc5" {
		t.Errorf("--json -q: %+v", js)
	}
}

// Default mode streams: a violation is printed while the trace is still
// being written, without --live.
func TestCheckStreamsViolation(t *testing.T) {
	pr, pw := io.Pipe()
	old := stdin
	stdin = pr
	defer func() { stdin = old }()
	var out, errb syncBuffer
	done := make(chan int)
	go func() { done <- run([]string{"check", "-"}, &out, &errb) }()
	fmt.Fprintln(pw, progInit("a"))
	fmt.Fprintln(pw, progBad("b"))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "stdin:2: instance b, seq 0, action ExecutePython") {
		if time.Now().After(deadline) {
			pw.Close()
			<-done
			t.Fatalf("no violation while the pipe is open; stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Not a timing bet: the pipe is still open, so no amount of waiting
	// could let the command know the trace's end yet.
	if strings.Contains(out.String(), "a: incomplete") || strings.Contains(out.String(), "stdin: VIOLATION") {
		t.Errorf("printed before the end of the trace:\n%s", out.String())
	}
	pw.Close()
	if code := <-done; code != exitViolation || !strings.HasSuffix(out.String(), "  a: incomplete, 1 events (lines 1-1): the trace ends in a state where the spec does not stop: "+
		`phase = "Ready" /\ verified = FALSE /\ published = FALSE (enabled: ExecutePython)`+"\n"+
		"stdin: VIOLATION (model program, 2 events, 2 instances: 0 valid, 1 incomplete, 1 violation)\n") {
		t.Errorf("exit %d\n%s", code, out.String())
	}
}

// An instance that finished valid is printed, and dropped, 10,000 events
// later: before the instances still open at the end, and an event of it
// after that is a new instance's.
func TestCheckDropsFinished(t *testing.T) {
	lines := progRun("done")
	for i := range 10_000 {
		lines = append(lines, progInit(fmt.Sprintf("r%05d", i)))
	}
	late := `{"v":1,"instance":"done","seq":5,"action":"Terminated","state":{}}`
	p := writeTemp(t, "drop.ndjson", strings.Join(append(lines, late), "\n")+"\n")
	out, _, code := runCLI(t, "check", p)
	if code != exitViolation {
		t.Fatalf("exit %d", code)
	}
	first := strings.SplitN(out, "\n", 2)[0]
	if first != "  done: valid, 5 events (lines 1-5)" {
		t.Errorf("first line %q, want done's", first)
	}
	if !strings.Contains(out, "  done: violation, 1 events (lines 10006-10006)\n") ||
		!strings.Contains(out, "instance done, seq 5, action Terminated: the instance's first event is Terminated, want Init") {
		t.Errorf("the late event is not a new instance's:\n%s", out[:min(len(out), 2000)])
	}
	// Within the 10,000 events, the same late event is the instance's.
	near := append(progRun("done"), progInit("other"), late)
	p = writeTemp(t, "near.ndjson", strings.Join(near, "\n")+"\n")
	if out, _, code := runCLI(t, "check", p); code != exitIncomplete || !strings.Contains(out, "  done: valid, 6 events (lines 1-7)") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// --json stays one valid JSON object when an input error cuts a file's
// check short: the report holds what was streamed, its error and the
// verdict "input error".
func TestCheckJSONInputError(t *testing.T) {
	bad := writeTemp(t, "cut.ndjson", strings.Join([]string{progInit("a"), progBad("b"), `{"v":1,"instance":"a"`, progInit("c")}, "\n")+"\n")
	out, errs, code := runCLI(t, "check", "--json", bad, corpusDir+"program/published-ok.ndjson", "/nonexistent.ndjson")
	if code != exitInput || strings.Count(errs, "\n") != 2 {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	var got struct {
		Verdict string
		Errors  []string
		Reports []struct {
			File, Verdict, Error string
			Events               int
			Instances            []struct{ Instance, Verdict string }
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Verdict != "input error" || len(got.Errors) != 2 || len(got.Reports) != 2 {
		t.Fatalf("%+v", got)
	}
	r := got.Reports[0]
	if r.Verdict != "input error" || !strings.Contains(r.Error, "cut.ndjson:3: malformed JSON") || r.Events != 2 ||
		len(r.Instances) != 1 || r.Instances[0].Instance != "b" || got.Reports[1].Verdict != "valid" {
		t.Errorf("cut report %+v", got.Reports)
	}
}

// A trace argument that is not a regular file is refused at once: a named
// pipe without a writer would otherwise block the open (or the read)
// forever.
func TestTraceCommandsRefuseNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.ndjson")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", fifo}, "not a regular file (a named pipe)"},
		{[]string{"check", "--json", fifo}, "not a regular file (a named pipe)"},
		{[]string{"replay", fifo}, "not a regular file (a named pipe)"},
		{[]string{"coverage", fifo}, "not a regular file (a named pipe)"},
		{[]string{"export", "--itf", fifo}, "not a regular file (a named pipe)"},
		{[]string{"export", "--ndjson", fifo}, "not a regular file (a named pipe)"},
		{[]string{"check", "/dev/null"}, "not a regular file (a device)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			type result struct {
				errs string
				code int
			}
			done := make(chan result, 1)
			go func() {
				var out, errb bytes.Buffer
				code := run(tc.args, &out, &errb)
				done <- result{errb.String(), code}
			}()
			select {
			case r := <-done:
				if r.code != exitInput || !strings.Contains(r.errs, tc.want) || !strings.Contains(r.errs, "standard input with -") ||
					strings.Count(strings.TrimSpace(r.errs), "\n") != 0 {
					t.Errorf("exit %d, stderr %q", r.code, r.errs)
				}
			case <-time.After(10 * time.Second):
				// Unblock the command (open the pipe's other end) so the
				// test ends, then fail.
				if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
					f.Close()
				}
				<-done
				t.Fatal("the command blocked on the named pipe")
			}
		})
	}
}

// An ITF document larger than --max-itf is an input error naming the
// bound, for check and export alike; export --itf also bounds the
// NDJSON it holds whole.
func TestMaxITF(t *testing.T) {
	doc := itfOf(t, corpusDir+"program/published-ok.ndjson")
	p := writeTemp(t, "run.itf.json", doc)
	nd := corpusDir + "program/published-ok.ndjson"
	size := len(strings.TrimSpace(doc)) // the document, without the newline after it
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", "--max-itf", fmt.Sprint(size - 1), p}, exitInput, fmt.Sprintf("input too large: an ITF document is larger than the bound of %d bytes", size-1)},
		{[]string{"check", "--max-itf", fmt.Sprint(size), p}, exitOK, ""},
		{[]string{"replay", "--max-itf", "100", p}, exitInput, "larger than the bound of 100 bytes"},
		{[]string{"coverage", "--max-itf", "100", p}, exitInput, "larger than the bound of 100 bytes"},
		{[]string{"export", "--ndjson", "--max-itf", "100", p}, exitInput, "larger than the bound of 100 bytes"},
		{[]string{"export", "--itf", "--max-itf", "100", p}, exitInput, "larger than the bound of 100 bytes"},
		{[]string{"export", "--itf", "--max-itf", "100", nd}, exitInput, "the trace (export --itf holds it whole; --max-itf) is larger than the bound of 100 bytes"},
		{[]string{"export", "--itf", nd}, exitOK, ""},
		{[]string{"check", "--max-itf", "0", p}, exitUsage, "--max-itf must be positive"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errs, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, tc.code, tc.want)
			}
		})
	}
	old := stdin
	defer func() { stdin = old }()
	stdin = strings.NewReader(doc)
	if _, errs, code := runCLI(t, "check", "--max-itf", "100", "-"); code != exitInput || !strings.Contains(errs, "stdin: ITF: document 1: input too large") {
		t.Errorf("stdin: exit %d, %s", code, errs)
	}
}

// A trace's header chooses its model, and says when the trace was written
// against another version of the spec; without one, the model is inferred
// from parsed events however they are spaced and ordered, and an input
// error then says the model was guessed.
func TestTraceHeaderAndInference(t *testing.T) {
	progHash := bundled.Program().SHA256
	if len(progHash) != 64 {
		t.Fatalf("bundled program spec hash %q", progHash)
	}
	initProg := `{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}`
	execProg := `{"v":1,"instance":"r","seq":1,"action":"ExecutePython","state":{"phase":"Running","verified":false,"published":false}}`
	failProg := `{"v":1,"instance":"r","seq":2,"action":"ExecutionFails","state":{"phase":"Failed","verified":false,"published":false}}`
	header := func(spec, hash string) string {
		h := `{"tracecheck":1,"spec":"` + spec + `"`
		if hash != "" {
			h += `,"spec_sha256":"` + hash + `"`
		}
		return h + `,"emitter":"test"}`
	}
	long := strings.Repeat("x", 200<<10) // an instance name longer than the 64 KiB head
	for _, c := range []struct {
		name   string
		trace  string
		args   []string
		code   int
		out    []string // in stdout
		errs   []string // in stderr
		noErrs []string // not in stderr
		file   bool     // only as a file (standard input is inferred from its first line alone)
	}{
		{"header chooses the model", header("program", progHash) + "\n" + initProg + "\n" + execProg + "\n" + failProg + "\n", nil,
			exitOK, []string{"VALID (model program"}, nil, []string{"warning"}, false},
		{"header of another version warns", header("program", strings.Repeat("0", 64)) + "\n" + initProg + "\n" + execProg + "\n" + failProg + "\n", nil,
			exitOK, []string{"VALID (model program"}, []string{"written against another version of spec program", "000000000000"}, nil, false},
		{"header naming a spec that is not registered", header("twophase", "") + "\n" + initProg + "\n", nil,
			exitInput, nil, []string{`header names spec "twophase", which is not registered`, "--model"}, nil, false},
		{"header disagreeing with --model warns", header("session", "") + "\n" + initProg + "\n" + execProg + "\n" + failProg + "\n", []string{"--model", "program"},
			exitOK, []string{"VALID (model program"}, []string{`header names spec "session"; checking against program as --model says`}, nil, false},
		{"header names session, events are program's", header("session", "") + "\n" + initProg + "\n" + execProg + "\n", nil,
			exitInput, nil, nil, []string{"inferred"}, false},
		{"python json.dumps spacing, detail before action",
			`{"v": 1, "instance": "r", "seq": 0, "detail": {"action": "VadStart"}, "action": "Init", "state": {"phase": "Ready", "verified": false, "published": false}}` + "\n" +
				`{"v": 1, "instance": "r", "seq": 1, "detail": {"note": "x"}, "action": "ExecutePython", "state": {"phase": "Running"}}` + "\n" +
				`{"v": 1, "instance": "r", "seq": 2, "action": "ExecutionFails", "state": {"phase": "Failed"}}` + "\n", nil,
			exitOK, []string{"VALID (model program"}, nil, nil, false},
		{"stutter skipped whatever its spacing",
			`{"v":1,"instance":"s","seq":0,"action":"Init","state":{}}` + "\n" +
				`{"v":1,"instance":"s","seq":1,"action":"ExecutePython","stutter" : true,"state":{}}` + "\n" +
				`{"v":1,"instance":"s","seq":2,"action":"VadStart","state":{"vad":1}}` + "\n", nil,
			exitIncomplete, []string{"model session"}, nil, nil, true},
		{"an instance name longer than the head",
			strings.ReplaceAll(initProg, `"r"`, `"`+long+`"`) + "\n" + strings.ReplaceAll(execProg, `"r"`, `"`+long+`"`) + "\n" + strings.ReplaceAll(failProg, `"r"`, `"`+long+`"`) + "\n", nil,
			exitOK, []string{"VALID (model program"}, nil, nil, false},
		{"a guessed model says so on an input error",
			`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":"Ready"}}` + "\n" + `{"v":1,"instance":"r","seq":1,"action":"Frobnicate","state":{}}` + "\n", nil,
			exitInput, nil, []string{"the model program was inferred from the trace's events", "--model"}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, where := range []string{"file", "stdin"} {
				if where == "stdin" && c.file {
					continue
				}
				var args []string
				if where == "file" {
					p := filepath.Join(t.TempDir(), "t.ndjson")
					if err := os.WriteFile(p, []byte(c.trace), 0o644); err != nil {
						t.Fatal(err)
					}
					args = append(append([]string{"check"}, c.args...), p)
				} else {
					old := stdin
					stdin = strings.NewReader(c.trace)
					defer func() { stdin = old }()
					args = append(append([]string{"check"}, c.args...), "-")
				}
				out, errs, code := runCLI(t, args...)
				if code != c.code {
					t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", where, code, c.code, clip(out), clip(errs))
				}
				for _, w := range c.out {
					if !strings.Contains(out, w) {
						t.Errorf("%s: stdout lacks %q:\n%s", where, w, clip(out))
					}
				}
				for _, w := range c.errs {
					if !strings.Contains(errs, w) {
						t.Errorf("%s: stderr lacks %q:\n%s", where, w, clip(errs))
					}
				}
				for _, w := range c.noErrs {
					if strings.Contains(errs, w) {
						t.Errorf("%s: stderr has %q:\n%s", where, w, clip(errs))
					}
				}
			}
		})
	}
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

// A trace's strings never reach the terminal as control characters:
// reports print them as \uXXXX (TLA+ values print strings raw, as TLC
// does), and JSON output stays valid with the same values.
func TestOutputEscapesControlCharacters(t *testing.T) {
	evil := "Ready\u001b[2J\u001b]0;pwned\u0007\u0085\u202e"
	tr := `{"v":1,"instance":"r\u001b[31m","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}` + "\n" +
		`{"v":1,"instance":"r\u001b[31m","seq":1,"action":"ExecutePython","state":{"phase":"` + strings.ReplaceAll(strings.ReplaceAll(evil, "\u001b", `\u001b`), "\u0007", `\u0007`) + `"}}` + "\n"
	p := writeTemp(t, "evil.ndjson", tr)
	for _, args := range [][]string{{"check", p}, {"replay", p}, {"check", "--json", p}, {"export", "--itf", p}} {
		out, errs, _ := runCLI(t, args...)
		for _, s := range []string{out, errs} {
			for _, r := range s {
				if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x202e) {
					t.Fatalf("%v printed the control character %U:\n%q", args, r, s)
				}
			}
		}
		if args[1] == "--json" {
			var v struct {
				Reports []struct {
					Instances []struct {
						Instance string `json:"instance"`
					} `json:"instances"`
				} `json:"reports"`
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Reports) != 1 || v.Reports[0].Instances[0].Instance != "r\u001b[31m" {
				t.Fatalf("JSON output %v: %+v\n%s", err, v, out)
			}
		}
		if args[0] == "check" && args[1] != "--json" && !strings.Contains(out, `\u001b[2J`) {
			t.Errorf("the escape is not shown as \\u001b:\n%s", out)
		}
	}
}

// check --graph validates traces against the graph the real tool dumped,
// with the verdicts and violation lines the transcription gives.
func TestCheckGraph(t *testing.T) {
	tlc := filepath.Join("..", "formal-verification", "reports", "tlc-program", "states.dot")
	fizz := filepath.Join("..", "formal-verification", "reports", "fizzbee-session")
	for _, c := range []struct {
		args []string
		code int
		out  []string
		errs []string
	}{
		{[]string{"check", "--graph", tlc, corpusDir + "program/published-ok.ndjson"}, exitOK, []string{"VALID (model graph:states.dot"}, nil},
		{[]string{"check", "--graph", tlc, corpusDir + "program/publish-unverified-bad.ndjson"}, exitViolation,
			[]string{"VIOLATION (model graph:states.dot", "no AtomicPublication edge leaves this state in the TLC graph"}, nil},
		{[]string{"check", "--graph", fizz, corpusDir + "session/compaction-outlives-session-bad.ndjson"}, exitViolation,
			[]string{"compaction-outlives-session-bad.ndjson:4:", "model graph:fizzbee-session"}, nil},
		{[]string{"check", "--graph", fizz, corpusDir + "session/atomic-teardown-ok.ndjson"}, exitOK, []string{"VALID"}, nil},
		{[]string{"replay", "--graph", tlc, corpusDir + "program/published-ok.ndjson"}, exitOK, []string{"against model graph:states.dot"}, nil},
		{[]string{"coverage", "--graph", tlc, corpusDir + "program/published-ok.ndjson"}, exitOK, []string{"transitions"}, nil},
		{[]string{"check", "--graph", tlc, "--model", "program", corpusDir + "program/published-ok.ndjson"}, exitUsage, nil, []string{"do not go together"}},
		{[]string{"check", "--graph", "/nonexistent.dot", corpusDir + "program/published-ok.ndjson"}, exitInput, nil, []string{"--graph"}},
	} {
		out, errs, code := runCLI(t, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d\n%s\n%s", c.args, code, c.code, out, errs)
			continue
		}
		for _, w := range c.out {
			if !strings.Contains(out, w) {
				t.Errorf("%v: stdout lacks %q:\n%s", c.args, w, out)
			}
		}
		for _, w := range c.errs {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, errs)
			}
		}
	}
}
