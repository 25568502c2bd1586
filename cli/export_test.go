package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/trace"
)

func TestExportUsageAndInputErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ndjson")
	write(t, good, `{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":"Ready"}}`+"\n")
	bad := filepath.Join(dir, "bad.ndjson")
	write(t, bad, `{"v":1,"instance":"r","seq":0,"action":"Init","state":{}`+"\n")
	empty := filepath.Join(dir, "empty.ndjson")
	write(t, empty, "")
	badITF := filepath.Join(dir, "bad.itf.json")
	write(t, badITF, `{"vars":["x"],"states":[{"x":1.5}]}`)
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"help", []string{"export", "-h"}, exitOK, "--itf"},
		{"no format", []string{"export", good}, exitUsage, "choose one output format"},
		{"two formats", []string{"export", "--itf", "--ndjson", good}, exitUsage, "choose one output format"},
		{"no file", []string{"export", "--itf"}, exitUsage, "want one trace"},
		{"two files", []string{"export", "--itf", good, good}, exitUsage, "want one trace"},
		{"out not a dir", []string{"export", "--itf", "--out", good, good}, exitUsage, "not a directory"},
		{"instance with ndjson", []string{"export", "--ndjson", "--instance", "r", good}, exitUsage, "--itf only"},
		{"bad flag", []string{"export", "--yaml", good}, exitUsage, ""},
		{"missing file", []string{"export", "--itf", filepath.Join(dir, "nope")}, exitInput, "no such file"},
		{"malformed", []string{"export", "--itf", bad}, exitInput, "bad.ndjson:1"},
		{"empty", []string{"export", "--itf", empty}, exitInput, "empty"},
		{"no such instance", []string{"export", "--itf", "--instance", "zz", good}, exitInput, `no instance "zz"`},
		{"bad ITF value", []string{"export", "--ndjson", badITF}, exitInput, "malformed ITF value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(errs, c.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, c.code, c.msg)
			}
			if strings.Count(strings.TrimSpace(errs), "\n") > 0 && c.code == exitInput {
				t.Errorf("input error takes more than one line:\n%s", errs)
			}
		})
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// corpus returns the NDJSON traces of traces/.
func corpus(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "traces", "*", "*.ndjson"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus under traces/: %v", err)
	}
	return files
}

// TestExportCorpusRoundTrip exports every corpus trace to ITF, one file per
// instance, and checks that reading each back gives the instance's events
// unchanged, and that checking it gives the instance's verdict.
func TestExportCorpusRoundTrip(t *testing.T) {
	for _, file := range corpus(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			events, cut, err := readEvents(bytes.NewReader(data), file)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := lookup(infer(data))
			orig, err := m.Check(context.Background(), bytes.NewReader(data), file, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			verdict := map[string]check.Verdict{}
			for _, in := range orig.Instances {
				verdict[in.Instance] = in.Verdict
			}

			dir := t.TempDir()
			out, errs, code := runCLI(t, "export", "--itf", "--out", dir, file)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if (cut != nil) != strings.Contains(errs, "cut off") {
				t.Errorf("truncation %v, stderr %q", cut, errs)
			}
			names, byInstance := trace.SplitInstances(events)
			paths := strings.Fields(out)
			if len(paths) != len(names) {
				t.Fatalf("wrote %v for instances %v", paths, names)
			}
			for i, path := range paths {
				inst := names[i]
				back := readITFFile(t, path)
				if diff := cmp.Diff(byInstance[inst], back); diff != "" {
					t.Errorf("%s: NDJSON -> ITF -> events changed: -want +got\n%s", inst, diff)
				}
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				nd, itf, err := trace.AsNDJSON(f, "unused") // reads f as nd is read
				if err != nil || !itf {
					f.Close()
					t.Fatalf("AsNDJSON: itf %v, %v", itf, err)
				}
				rep, err := m.Check(context.Background(), nd, path, check.Options{})
				f.Close()
				if err != nil {
					t.Fatalf("checking the ITF of %s: %v", inst, err)
				}
				if len(rep.Instances) != 1 || rep.Instances[0].Instance != inst {
					t.Fatalf("ITF of %s checked as %+v", inst, rep.Instances)
				}
				if got, want := rep.Verdict(), verdict[inst]; got != want {
					t.Errorf("%s: verdict %v from ITF, %v from NDJSON", inst, got, want)
				}
			}
		})
	}
}

func readITFFile(t *testing.T, path string) []trace.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, err := trace.ReadITF(f, "")
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// TestExportStdout writes several instances' documents to standard output
// one after another, or just the --instance one.
func TestExportStdout(t *testing.T) {
	file := filepath.Join("..", "traces", "program", "interleaved-ok.ndjson")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"export", "--itf", file}, []string{"r1", "r2", "r3"}},
		{[]string{"export", "--instance", "r2", "--itf", file}, []string{"r2"}},
	} {
		out, errs, code := runCLI(t, c.args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		dec := json.NewDecoder(strings.NewReader(out))
		var got []string
		for {
			var doc trace.ITF
			if err := dec.Decode(&doc); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			got = append(got, doc.Meta["instance"].(string))
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%v: instances -want +got\n%s", c.args, diff)
		}
	}
}

// quintTrace is an ITF trace of Program as `quint run --mbt` writes it:
// #bigint integers, Quint's "init" action name, nondet picks, no instance.
const quintTrace = `{"#meta":{"format":"ITF","source":"program.qnt","status":"ok"},
"vars":["phase","verified","published","attempts","mbt::actionTaken","mbt::nondetPicks"],
"states":[
{"#meta":{"index":0},"phase":"Ready","verified":false,"published":false,"attempts":{"#bigint":"0"},"mbt::actionTaken":"init","mbt::nondetPicks":{}},
{"#meta":{"index":1},"phase":"Running","verified":false,"published":false,"attempts":{"#bigint":"1"},"mbt::actionTaken":"ExecutePython","mbt::nondetPicks":{"pid":{"tag":"Some","value":{"#bigint":"99999999999999999999"}}}}]}`

// TestExportITFRoundTrip converts a Quint ITF trace to NDJSON and back and
// gets the same states, actions and picks.
func TestExportITFRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "run-9.itf.json")
	write(t, src, quintTrace)
	ndjson, errs, code := runCLI(t, "export", "--ndjson", src)
	if code != exitOK {
		t.Fatalf("--ndjson: exit %d: %s", code, errs)
	}
	if !strings.Contains(ndjson, `"instance":"run-9"`) {
		t.Errorf("instance is not the file's base name:\n%s", ndjson)
	}
	mid := filepath.Join(dir, "mid.ndjson")
	write(t, mid, ndjson)
	itf, errs, code := runCLI(t, "export", "--itf", mid)
	if code != exitOK {
		t.Fatalf("--itf: exit %d: %s", code, errs)
	}
	want, err := trace.ParseITF(strings.NewReader(quintTrace))
	if err != nil {
		t.Fatal(err)
	}
	got, err := trace.ParseITF(strings.NewReader(itf))
	if err != nil {
		t.Fatal(err)
	}
	strip := cmp.Transformer("noStateMeta", func(m map[string]any) map[string]any {
		if _, ok := m["mbt::actionTaken"]; !ok {
			return m
		}
		out := map[string]any{}
		for k, v := range m {
			if k != "#meta" {
				out[k] = v
			}
		}
		return out
	})
	if diff := cmp.Diff(want.States, got.States, strip); diff != "" {
		t.Errorf("ITF -> NDJSON -> ITF: states -want +got\n%s", diff)
	}
	if diff := cmp.Diff(len(want.Vars), len(got.Vars)); diff != "" {
		t.Errorf("vars %v, want %v", got.Vars, want.Vars)
	}
}

// TestCheckITF checks ITF input end to end: the ITF form of a corpus trace
// gets the NDJSON's verdict, and an #unserializable or out-of-range value
// never makes a wrong trace look right.
func TestCheckITF(t *testing.T) {
	m, _ := lookup("program")
	for _, c := range []struct {
		name string
		doc  string
		want check.Verdict
		err  error
	}{
		{"valid", `{"vars":[],"states":[{"phase":"Ready","verified":false,"published":false},` +
			`{"phase":"Running","mbt::actionTaken":"ExecutePython"},{"phase":"Failed","mbt::actionTaken":"ExecutionFails"}]}`, check.Valid, nil},
		{"violation", `{"vars":[],"states":[{"phase":"Ready"},{"phase":"Published","mbt::actionTaken":"AtomicPublication"}]}`, check.Violation, nil},
		{"incomplete", `{"vars":[],"states":[{"phase":"Ready"},{"phase":"Running","mbt::actionTaken":"ExecutePython"}]}`, check.Incomplete, nil},
		{"bigint beyond int64", `{"vars":[],"states":[{"phase":"Ready","verified":{"#bigint":"99999999999999999999"}}]}`, 0, check.ErrInput},
		{"unknown action", `{"vars":[],"states":[{"phase":"Ready"},{"phase":"Running","mbt::actionTaken":"Run"}]}`, 0, check.ErrUnknownAction},
	} {
		t.Run(c.name, func(t *testing.T) {
			nd, itf, err := trace.AsNDJSON(strings.NewReader(c.doc), "i")
			if err != nil || !itf {
				t.Fatalf("AsNDJSON: itf %v, %v", itf, err)
			}
			rep, err := m.Check(context.Background(), nd, "t.itf.json", check.Options{})
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("got %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict() != c.want {
				t.Errorf("verdict %v, want %v", rep.Verdict(), c.want)
			}
		})
	}
}

// TestExportStdoutChecks: the documents export writes to standard output
// for a trace of several instances are checked as the NDJSON was.
func TestExportStdoutChecks(t *testing.T) {
	for _, file := range corpus(t) {
		out, errs, code := runCLI(t, "export", "--itf", file)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", file, code, errs)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := lookup(infer(data))
		want, err := m.Check(context.Background(), bytes.NewReader(data), file, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		nd, itf, err := trace.AsNDJSON(strings.NewReader(out), "stdin")
		if err != nil || !itf {
			t.Fatalf("%s: AsNDJSON: itf %v, %v", file, itf, err)
		}
		got, err := m.Check(context.Background(), nd, "stdin", check.Options{})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		verdicts := func(r *check.Report) map[string]check.Verdict {
			v := map[string]check.Verdict{}
			for _, in := range r.Instances {
				v[in.Instance] = in.Verdict
			}
			return v
		}
		if diff := cmp.Diff(verdicts(want), verdicts(got)); diff != "" {
			t.Errorf("%s: verdicts -NDJSON +ITF stream\n%s", file, diff)
		}
	}
}

func TestExportOutFileNames(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "t.ndjson")
	write(t, src, `{"v":1,"instance":"a/b","seq":0,"action":"Init","state":{}}`+"\n"+
		`{"v":1,"instance":"a_b","seq":0,"action":"Init","state":{}}`+"\n"+
		`{"v":1,"instance":".hidden","seq":0,"action":"Init","state":{}}`+"\n")
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, errs, code := runCLI(t, "export", "--itf", "--out", out, src)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := []string{filepath.Join(out, "a_b.itf.json"), filepath.Join(out, "a_b-2.itf.json"), filepath.Join(out, "_.hidden.itf.json")}
	if diff := cmp.Diff(want, strings.Fields(stdout)); diff != "" {
		t.Fatalf("paths -want +got\n%s", diff)
	}
	for i, inst := range []string{"a/b", "a_b", ".hidden"} {
		if events := readITFFile(t, want[i]); events[0].Instance != inst {
			t.Errorf("%s holds %s, want %s", want[i], events[0].Instance, inst)
		}
	}
}

// TestExportITFToITF: ITF input (as Quint writes it) is accepted by
// --itf too, and comes out in tracecheck's ITF with the same states.
func TestExportITFToITF(t *testing.T) {
	src := filepath.Join(t.TempDir(), "q.itf.json")
	write(t, src, quintTrace)
	out, errs, code := runCLI(t, "export", "--itf", src)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	events, err := trace.ReadITF(strings.NewReader(out), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Instance != "q" || events[1].Action != "ExecutePython" ||
		!cmp.Equal(events[1].State["attempts"], map[string]any{"#bigint": "1"}) {
		t.Errorf("got %+v", events)
	}
}

// export --out never writes through a symbolic link planted in DIR, nor
// over anything else that is not a regular file: it refuses with an
// error naming the file, and what the link points to (a file outside
// DIR, or a name where a file would be created) stays as it was. A
// regular file already there is replaced.
func TestExportOutRefusesLinks(t *testing.T) {
	src := filepath.Join(t.TempDir(), "t.ndjson")
	write(t, src, `{"v":1,"instance":"s1","seq":0,"action":"Init","state":{}}`+"\n")
	const sentinel = "sentinel: must not change\n"
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, out, outside string) // at out/s1.itf.json
		code  int
		msg   string
	}{
		{"link to a file outside", func(t *testing.T, out, outside string) {
			if err := os.Symlink(outside, filepath.Join(out, "s1.itf.json")); err != nil {
				t.Fatal(err)
			}
		}, exitInput, "s1.itf.json: not a regular file: it is a symbolic link"},
		{"dangling link to outside", func(t *testing.T, out, outside string) {
			if err := os.Symlink(outside+".new", filepath.Join(out, "s1.itf.json")); err != nil {
				t.Fatal(err)
			}
		}, exitInput, "it is a symbolic link"},
		{"relative link", func(t *testing.T, out, outside string) {
			if err := os.Symlink(filepath.Join("..", filepath.Base(outside)), filepath.Join(out, "s1.itf.json")); err != nil {
				t.Fatal(err)
			}
		}, exitInput, "it is a symbolic link"},
		{"directory", func(t *testing.T, out, outside string) {
			if err := os.Mkdir(filepath.Join(out, "s1.itf.json"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, exitInput, "it is a directory"},
		{"regular file is replaced", func(t *testing.T, out, outside string) {
			write(t, filepath.Join(out, "s1.itf.json"), "old export\n")
		}, exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			outside := filepath.Join(dir, "outside.txt")
			write(t, outside, sentinel)
			out := filepath.Join(dir, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.plant(t, out, outside)
			before, _ := os.Lstat(filepath.Join(out, "s1.itf.json"))
			_, errs, code := runCLI(t, "export", "--itf", "--out", out, src)
			if code != tc.code || !strings.Contains(errs, tc.msg) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errs, tc.code, tc.msg)
			}
			if got, err := os.ReadFile(outside); err != nil || string(got) != sentinel {
				t.Errorf("the file outside changed: %q, %v", got, err)
			}
			if _, err := os.Lstat(outside + ".new"); !os.IsNotExist(err) {
				t.Errorf("a file was created outside through the link: %v", err)
			}
			entries, _ := os.ReadDir(out)
			if len(entries) != 1 {
				t.Errorf("DIR holds %d entries (temporary files left?): %v", len(entries), entries)
			}
			after, err := os.Lstat(filepath.Join(out, "s1.itf.json"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.code != exitOK {
				if after.Mode() != before.Mode() || (after.Mode()&os.ModeSymlink != 0 && !os.SameFile(before, after)) {
					t.Errorf("the planted %s was replaced by %v", tc.name, after.Mode())
				}
				return
			}
			if !after.Mode().IsRegular() {
				t.Fatalf("not replaced by a regular file: %v", after.Mode())
			}
			if events := readITFFile(t, filepath.Join(out, "s1.itf.json")); len(events) != 1 || events[0].Instance != "s1" {
				t.Errorf("replaced file holds %+v", events)
			}
		})
	}
}

// readEvents decodes a whole NDJSON trace, as export does: a partial last
// line is not an event; cut says whether there was one.
func readEvents(r io.Reader, name string) (events []trace.Event, cut *trace.Pos, err error) {
	dec := trace.NewDecoder(r, name)
	for {
		raw, err := dec.Next()
		if err == io.EOF {
			return events, nil, nil
		}
		if errors.Is(err, trace.ErrTruncated) {
			return events, &raw.Pos, nil
		}
		if err != nil {
			return nil, nil, err
		}
		e, err := raw.Event()
		if err != nil {
			return nil, nil, err
		}
		events = append(events, e)
	}
}
