package cli_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckJUnit: check --junit writes JUnit XML that encoding/xml reads
// back, with one test case per instance of the corpus, the same verdicts
// as the text output, a violation's divergence report as its failure, and
// a file's input error as an error.
func TestCheckJUnit(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "check.xml")
	bad := filepath.Join(dir, "broken.ndjson")
	// An escape character in the trace must not break the XML.
	if err := os.WriteFile(bad, []byte("{\"v\":1,\"instance\":\"x\\u001b\",\"seq\":0,\"action\":\"Init\",\"state\":{\"phase\":\"Ready\",\"verified\":false,\"published\":false}}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.ndjson")
	out, _, code := runCLI(t, "check", "--junit", junit, corpusDir+"program", corpusDir+"session", bad, missing)
	if code != exitInput {
		t.Fatalf("exit %d, want %d (input errors)\n%s", code, exitInput, out)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
					Text string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	// The text output's verdicts, instance by instance.
	text, _, _ := runCLI(t, "check", corpusDir+"program", corpusDir+"session")
	verdicts := map[string]string{} // "file instance" -> verdict
	pending := map[string]string{}  // the instances listed before their file's summary line
	for _, line := range strings.Split(text, "\n") {
		if id, rest, ok := strings.Cut(strings.TrimPrefix(line, "  "), ": "); ok && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			if v, _, ok := strings.Cut(rest, ","); ok && (v == "valid" || v == "violation" || v == "incomplete") {
				pending[id] = v
			}
			continue
		}
		if file, _, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, " ") {
			for id, v := range pending {
				verdicts[file+" "+id] = v
			}
			pending = map[string]string{}
		}
	}
	tests, failures, errors, seen := 0, 0, 0, 0
	for _, s := range doc.Suites {
		tests += len(s.Cases)
		for _, c := range s.Cases {
			switch {
			case c.Error != nil:
				errors++
				if !strings.Contains(c.Error.Message, "broken.ndjson") && !strings.Contains(c.Error.Message, "missing.ndjson") {
					t.Errorf("error %q names neither bad file", c.Error.Message)
				}
			case c.Failure != nil:
				failures++
				if c.Failure.Type == "violation" && !strings.Contains(c.Failure.Text, "replay: tracecheck replay") {
					t.Errorf("%s %s: the failure lacks the divergence report:\n%s", s.Name, c.Name, c.Failure.Text)
				}
			}
			want := "valid"
			if c.Failure != nil {
				want = c.Failure.Type
			}
			if v, ok := verdicts[s.Name+" "+c.Name]; ok {
				seen++
				if v != want && c.Error == nil {
					t.Errorf("%s %s: junit %s, text %s", s.Name, c.Name, want, v)
				}
			}
		}
	}
	if tests != doc.Tests || failures != doc.Failures || errors != doc.Errors || errors != 2 || failures == 0 || seen == 0 {
		t.Errorf("counts: %d tests, %d failures, %d errors; the document says %d, %d, %d; %d matched the text output",
			tests, failures, errors, doc.Tests, doc.Failures, doc.Errors, seen)
	}
}

// TestCheckSaysHowAJournalEnds: a file of one instance (a publisher's
// journal) is VALID whatever the run's outcome; check says how it ended,
// with the checkpoint the journal's Init receipt names, in the text output,
// with -q, and in --json.
func TestCheckSaysHowAJournalEnds(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "journal.ndjson")
	lines := []string{
		`{"tracecheck":1,"spec":"program"}`,
		`{"v":1,"instance":"run-9","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false},"detail":{"name":"linreg\u001b[2J"}}`,
		`{"v":1,"instance":"run-9","seq":1,"action":"ExecutePython","state":{"phase":"Running","verified":false,"published":false}}`,
		`{"v":1,"instance":"run-9","seq":2,"action":"ExecutionFails","state":{"phase":"Failed","verified":false,"published":false}}`,
	}
	if err := os.WriteFile(journal, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `  run-9 (checkpoint "linreg\x1b[2J"): ends in phase = "Failed" /\ verified = FALSE /\ published = FALSE` + "\n"
	for _, flags := range [][]string{nil, {"-q"}} {
		out, errs, code := runCLI(t, append(append([]string{"check"}, flags...), journal)...)
		if code != exitOK || !strings.Contains(out, want) || !strings.Contains(out, "VALID") || strings.Contains(out, "\x1b") {
			t.Errorf("check %v: exit %d\n%s%s", flags, code, out, errs)
		}
	}
	out, _, code := runCLI(t, "check", "-q", "--json", journal)
	var j struct {
		Reports []struct {
			Ends struct {
				Instance, About string
				Final           []string
			}
		}
	}
	if code != exitOK || json.Unmarshal([]byte(out), &j) != nil || len(j.Reports) != 1 || j.Reports[0].Ends.Instance != "run-9" ||
		j.Reports[0].Ends.About != `checkpoint "linreg\x1b[2J"` || len(j.Reports[0].Ends.Final) != 1 || !strings.HasPrefix(j.Reports[0].Ends.Final[0], `phase = "Failed"`) {
		t.Errorf("check -q --json: exit %d\n%s", code, out)
	}
	// A file of several instances has no such line.
	out, _, _ = runCLI(t, "check", corpusDir+"program/interleaved-ok.ndjson")
	if strings.Contains(out, "ends in") {
		t.Errorf("several instances, but:\n%s", out)
	}
}
