package cli

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"strings"

	"github.com/tracecheck/tracecheck/check"
)

// junitSuites is check --junit's document: one test suite per file, one
// test case per instance (JUnit XML as CI systems read it).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitFile collects the test cases of one file's check.
type junitFile struct {
	suite junitSuite
	file  string
	model string
	// noReplay: the file is no trace replay reads (a projection's, a
	// monitor's suite).
	noReplay bool
}

func newJUnitFile(file, model string) *junitFile {
	return &junitFile{file: file, model: model, suite: junitSuite{Name: file,
		Properties: []junitProperty{{Name: "model", Value: model}}}}
}

// result adds one instance: a violation or an incomplete instance is a
// failure whose text is the report check prints for it (the divergence
// report, the replay command).
func (j *junitFile) result(res check.InstanceResult) {
	tc := junitCase{Name: res.Instance, Classname: j.file}
	out := fmt.Sprintf("%s, %d events (lines %d-%d)", res.Verdict, res.Events, res.FirstLine, res.LastLine)
	if len(res.Final) > 0 {
		out += "; ends in " + strings.Join(res.Final, " or ")
	}
	tc.SystemOut = out
	if res.Verdict != check.Valid {
		var b bytes.Buffer
		ts := check.NewTextStream(&b, j.file, j.model)
		ts.NoReplay = j.noReplay
		ts.Result(res)
		_ = ts.Flush()
		tc.Failure = &junitProblem{Message: res.Verdict.String() + ": " + res.Reason, Type: res.Verdict.String(), Text: b.String()}
		j.suite.Failures++
	}
	j.suite.Tests++
	j.suite.Cases = append(j.suite.Cases, tc)
}

// inputError records the error that stopped the file's check.
func (j *junitFile) inputError(err error) {
	j.suite.Cases = append(j.suite.Cases, junitCase{Name: "(input)", Classname: j.file,
		Error: &junitProblem{Message: err.Error(), Type: "input error", Text: err.Error()}})
	j.suite.Tests++
	j.suite.Errors++
}

// writeJUnit writes the suites to path.
func writeJUnit(path string, files []*junitFile, errs []string) error {
	doc := junitSuites{Name: "tracecheck check"}
	for _, f := range files {
		doc.Suites = append(doc.Suites, f.suite)
	}
	// A file that could not be opened has no suite of its own.
	for _, e := range errs {
		opened := false
		for _, f := range files {
			for _, c := range f.suite.Cases {
				if c.Error != nil && c.Error.Message == e {
					opened = true
				}
			}
		}
		if !opened {
			doc.Suites = append(doc.Suites, junitSuite{Name: "(input)", Tests: 1, Errors: 1,
				Cases: []junitCase{{Name: "(input)", Classname: "tracecheck check", Error: &junitProblem{Message: e, Type: "input error", Text: e}}}})
		}
	}
	for _, s := range doc.Suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	b = append([]byte(xml.Header), append(b, '\n')...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	return nil
}
