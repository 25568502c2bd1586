package tlccross

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// root is the repository root, from this package's directory.
const root = "../.."

const regenerate = "regenerate them with real TLC: TLA2TOOLS=/path/to/tla2tools.jar make tlc-traces"

func fileSHA(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// retainedVerdicts reads the retained TLC verdicts (make tlc-traces),
// skipping the test loudly, saying what was not checked, when there are
// none.
func retainedVerdicts(t *testing.T, unchecked string) (string, []Row) {
	t.Helper()
	path := filepath.Join(root, "formal-verification", "tlc-traces", "verdicts.tsv")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("SKIPPED: no retained TLC verdicts at %s, %s; %s", path, unchecked, regenerate)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ReadVerdicts(f)
	if err != nil {
		t.Fatal(err)
	}
	return path, rows
}

// TestTLCVerdicts asserts that TLC's retained verdicts (make tlc-traces)
// agree with tracecheck's on every instance of every Program trace in
// traces/program/ and testdata/, and that they were computed from the current specs and
// traces.
func TestTLCVerdicts(t *testing.T) {
	path, rows := retainedVerdicts(t, "so TLC and tracecheck were NOT cross-checked")
	if len(rows) == 0 {
		t.Fatalf("%s has no verdicts; %s", path, regenerate)
	}

	specs := map[string]string{
		"spec/TraceProgram.tla": fileSHA(t, "spec/TraceProgram.tla"),
		"spec/TraceProgram.cfg": fileSHA(t, "spec/TraceProgram.cfg"),
		"spec/Program.tla":      fileSHA(t, "spec/Program.tla"),
	}
	type key struct{ trace, instance string }
	retained := map[key]Row{}
	stale := map[string]bool{}
	for _, r := range rows {
		retained[key{r.Trace, r.Instance}] = r
		for spec, got := range map[string]string{"spec/TraceProgram.tla": r.SpecSHA256,
			"spec/TraceProgram.cfg": r.ConfigSHA256, "spec/Program.tla": r.ProgramSHA256} {
			if got != specs[spec] && !stale[spec] {
				stale[spec] = true
				t.Errorf("%s changed since TLC produced the retained verdicts (sha256 %s, now %s); %s", spec, got, specs[spec], regenerate)
			}
		}
	}

	traces := programTraces(t)
	seen := map[key]bool{}
	agreed := 0
	for _, file := range traces {
		rel := strings.TrimPrefix(filepath.ToSlash(file), root+"/")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		order, pieces := SplitInstances(data)
		for _, inst := range order {
			k := key{rel, inst}
			seen[k] = true
			row, ok := retained[k]
			if !ok {
				t.Errorf("%s [%s]: no retained TLC verdict; %s", rel, inst, regenerate)
				continue
			}
			if sum := fileSHA(t, rel); row.TraceSHA256 != sum {
				t.Errorf("%s changed since TLC checked it (sha256 %s, now %s); %s", rel, row.TraceSHA256, sum, regenerate)
				continue
			}
			got, err := Verdict(context.Background(), pieces[inst], rel)
			if err != nil {
				t.Fatal(err)
			}
			if got != row.Verdict {
				t.Errorf("%s [%s]: tracecheck says %s, TLC said %s (exit %d, %s)", rel, inst, got, row.Verdict, row.TLCExit, row.TLCVersion)
				continue
			}
			agreed++
		}
	}
	for k := range retained {
		if !seen[k] {
			t.Errorf("%s [%s]: retained TLC verdict for a trace or instance that no longer exists; %s", k.trace, k.instance, regenerate)
		}
	}
	t.Logf("TLC and tracecheck agree on %d instances of %d Program traces (TLC: %s)", agreed, len(traces), rows[0].TLCVersion)
}

// TestSplitDoesNotChangeVerdicts: checking an instance on its own gives
// the verdict it has in the whole trace, so comparing per-instance pieces
// with TLC compares the verdicts tracecheck gives the corpus files.
func TestSplitDoesNotChangeVerdicts(t *testing.T) {
	for _, file := range programTraces(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := Verdict(context.Background(), data, file)
		if err != nil {
			t.Fatal(err)
		}
		order, pieces := SplitInstances(data)
		worst := ""
		for _, inst := range order {
			v, err := Verdict(context.Background(), pieces[inst], file)
			if err != nil {
				t.Fatal(err)
			}
			if rank(v) > rank(worst) {
				worst = v
			}
		}
		if worst != whole {
			t.Errorf("%s: whole trace %s, worst instance %s", file, whole, worst)
		}
	}
}

// programTraces returns the traces TLC validates: the Program corpus under
// traces/program (subdirectories too) and this package's edge cases in
// testdata.
func programTraces(t *testing.T) []string {
	t.Helper()
	var corpus []string
	err := filepath.WalkDir(filepath.Join(root, "traces", "program"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".ndjson") {
			corpus = append(corpus, path)
		}
		return err
	})
	if err != nil || len(corpus) == 0 {
		t.Fatalf("no Program traces in traces/program: %v", err)
	}
	edges, err := filepath.Glob(filepath.Join(root, "harness", "tlccross", "testdata", "*.ndjson"))
	if err != nil || len(edges) == 0 {
		t.Fatalf("no traces in harness/tlccross/testdata: %v", err)
	}
	return append(corpus, edges...)
}

func rank(v string) int {
	return map[string]int{Valid: 1, Incomplete: 2, Violation: 3, InputError: 4}[v]
}

func TestSplitInstances(t *testing.T) {
	a0 := `{"v":1,"instance":"a","seq":0,"action":"Init","state":{}}` + "\n"
	b0 := `{"v":1,"instance":"b","seq":0,"action":"Init","state":{}}` + "\n"
	a1 := `{"v":1,"instance":"a","seq":1,"action":"ExecutePython","state":{}}` + "\n"
	for _, c := range []struct {
		name  string
		in    string
		order []string
		want  map[string]string
	}{
		{"one", a0 + a1, []string{"a"}, map[string]string{"a": a0 + a1}},
		{"two interleaved", a0 + b0 + "\n" + a1, []string{"a", "b"}, map[string]string{"a": a0 + a1, "b": b0}},
		{"partial names b", a0 + b0 + `{"v":1,"instance":"b","se`, []string{"a", "b"},
			map[string]string{"a": a0, "b": b0 + `{"v":1,"instance":"b","se`}},
		{"partial names none", a0 + b0 + `{"v":1,"ins`, []string{"a", "b"},
			map[string]string{"a": a0 + `{"v":1,"ins`, "b": b0 + `{"v":1,"ins`}},
		{"malformed line", a0 + "{oops\n", []string{"-"}, map[string]string{"-": a0 + "{oops\n"}},
		{"no instance", `{"v":1}` + "\n", []string{"-"}, map[string]string{"-": `{"v":1}` + "\n"}},
		{"instance not a string", `{"instance":3}` + "\n", []string{"-"}, map[string]string{"-": `{"instance":3}` + "\n"}},
		{"empty", "", []string{"-"}, map[string]string{"-": ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			order, pieces := SplitInstances([]byte(c.in))
			got := map[string]string{}
			for k, v := range pieces {
				got[k] = string(v)
			}
			if diff := cmp.Diff(c.order, order); diff != "" {
				t.Errorf("order -want +got\n%s", diff)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("pieces -want +got\n%s", diff)
			}
		})
	}
}

func TestReadVerdicts(t *testing.T) {
	good := "# comment\n\ntraces/program/x.ndjson\tr1\t10\tviolation\tTLC2 Version X\ta\tb\tc\td\n"
	rows, err := ReadVerdicts(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{{Trace: "traces/program/x.ndjson", Instance: "r1", TLCExit: 10, Verdict: Violation,
		TLCVersion: "TLC2 Version X", SpecSHA256: "a", ConfigSHA256: "b", ProgramSHA256: "c", TraceSHA256: "d"}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("-want +got\n%s", diff)
	}
	for _, bad := range []string{
		"x\tr1\t0\tvalid\n",
		"x\tr1\tzero\tvalid\tv\ta\tb\tc\td\n",
		"x\tr1\t0\tperhaps\tv\ta\tb\tc\td\n",
	} {
		if _, err := ReadVerdicts(strings.NewReader(bad)); !errors.Is(err, ErrVerdicts) {
			t.Errorf("%q: got %v, want ErrVerdicts", bad, err)
		}
	}
}

func TestVerdict(t *testing.T) {
	init := `{"v":1,"instance":"a","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}` + "\n"
	for _, c := range []struct {
		name, in, want string
	}{
		{"valid", init + `{"v":1,"instance":"a","seq":1,"action":"ExecutePython","state":{"phase":"Running"}}` + "\n" +
			`{"v":1,"instance":"a","seq":2,"action":"ExecutionFails","state":{"phase":"Failed"}}` + "\n", Valid},
		{"incomplete", init, Incomplete},
		{"violation", init + `{"v":1,"instance":"a","seq":1,"action":"AtomicPublication","state":{}}` + "\n", Violation},
		{"unknown action", init + `{"v":1,"instance":"a","seq":1,"action":"Fly","state":{}}` + "\n", InputError},
		{"empty", "", InputError},
	} {
		got, err := Verdict(context.Background(), []byte(c.in), c.name)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// TestEdgeCaseNames: each testdata trace's name ends with the verdict
// tracecheck must give it (valid, violation, incomplete, input-error), so
// the edge cases are checked even where TLC has not run.
func TestEdgeCaseNames(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.ndjson"))
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".ndjson")
		want := ""
		for _, v := range []string{Valid, Violation, Incomplete, InputError} {
			if strings.HasSuffix(name, "-"+v) {
				want = v
			}
		}
		if want == "" {
			t.Errorf("%s: the name does not end with the expected verdict", file)
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Verdict(context.Background(), data, file)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: tracecheck says %s", file, got)
		}
	}
}

// TestTLCVerdictMapping: TLCVerdict maps every retained TLC log to the
// verdict tlc-traces.sh retained (the script's mapping in bash and this
// one in Go are the same), and refuses what is not a verdict.
func TestTLCVerdictMapping(t *testing.T) {
	_, rows := retainedVerdicts(t, "so the verdict mapping was NOT checked")
	unsafe := regexp.MustCompile(`[^A-Za-z0-9._-]`)
	for _, r := range rows {
		log := filepath.Join(root, "formal-verification", "tlc-traces", "logs",
			filepath.Base(filepath.Dir(r.Trace))+"--"+strings.TrimSuffix(filepath.Base(r.Trace), ".ndjson")+"--"+unsafe.ReplaceAllString(r.Instance, "_")+".txt")
		out, err := os.ReadFile(log)
		if err != nil {
			t.Errorf("%s [%s]: %v", r.Trace, r.Instance, err)
			continue
		}
		got, ok := TLCVerdict(r.TLCExit, string(out))
		if !ok {
			t.Errorf("%s [%s]: exit %d is not a verdict", r.Trace, r.Instance, r.TLCExit)
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, r.Trace))
		if err != nil {
			t.Fatal(err)
		}
		_, pieces := SplitInstances(data)
		if piece := pieces[r.Instance]; got == Valid && len(piece) > 0 && !bytes.HasSuffix(piece, []byte("\n")) {
			got = Incomplete // the script dropped this instance's partial last line: at best incomplete
		}
		if got != r.Verdict {
			t.Errorf("%s [%s]: TLCVerdict says %s, the script retained %s", r.Trace, r.Instance, got, r.Verdict)
		}
	}
	for _, c := range []struct {
		exit int
		out  string
	}{
		{10, "Error: something else"},
		{12, "Error: Deadlock reached."},
		{75, "Error: The behavior up to this point is:"},
		{150, "***Parse Error***"},
	} {
		if v, ok := TLCVerdict(c.exit, c.out); ok {
			t.Errorf("TLCVerdict(%d, %q) = %s, want no verdict", c.exit, c.out, v)
		}
	}
}
