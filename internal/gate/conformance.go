package gate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tracecheck/tracecheck/harness/tlccross"
	"github.com/tracecheck/tracecheck/internal/formal"
)

// conformanceStage checks that the transcriptions have the state graphs
// and counterexamples of the retained TLC and FizzBee reports (each
// report's spec hash guards against staleness), that TLC's own trace
// validation and tracecheck agree on every retained verdict, and, in full
// mode with TLA2TOOLS and FIZZ set, reruns the tools live (make formal).
func conformanceStage(ctx context.Context, r *run, s *stage) error {
	root := r.opt.Root
	results := formal.All(filepath.Join(root, "formal-verification", "reports"), root)
	agreed := 0
	var detail strings.Builder
	for _, res := range results {
		switch {
		case res.Absent:
			s.fail("%s: the retained report is absent (%v)", res.Name, res.Err)
		case res.Err != nil:
			s.fail("%v", res.Err)
		default:
			agreed++
			fmt.Fprintf(&detail, "%s: %s\n", res.Name, res.Summary)
		}
	}
	s.figure("%d/%d retained TLC/FizzBee reports equal to the transcriptions", agreed, len(results))

	n, err := tlcVerdicts(ctx, root)
	if err != nil {
		s.fail("TLC trace validation: %v", err)
	} else {
		s.figure("TLC's trace validation agrees on %d instances", n)
	}

	tla, fizz := r.opt.Getenv("TLA2TOOLS"), r.opt.Getenv("FIZZ")
	switch {
	case r.opt.Mode != Full:
		s.figure("tools not rerun (--full reruns them)")
	case tla == "" || fizz == "":
		s.figure("tools not rerun: TLA2TOOLS or FIZZ not set")
	default:
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "formal-verification", "run.sh"))
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		fmt.Fprintf(&detail, "\nmake formal:\n%s", out)
		if err != nil {
			s.fail("make formal (TLC and FizzBee live): %v; see the stage's output", err)
		} else {
			s.figure("TLC and FizzBee rerun live: equal")
		}
	}
	s.Detail = detail.String()
	return nil
}

// tlcVerdicts compares the retained verdicts of TLC's trace validation
// (formal-verification/tlc-traces/verdicts.tsv, spec/TraceProgram.tla)
// with tracecheck's on the same instances; a trace or spec changed since
// TLC ran is an error.
func tlcVerdicts(ctx context.Context, root string) (int, error) {
	path := filepath.Join(root, "formal-verification", "tlc-traces", "verdicts.tsv")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	rows, err := tlccross.ReadVerdicts(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		return 0, fmt.Errorf("%s has no verdicts", path)
	}
	hashes := map[string]string{}
	hash := func(rel string) (string, error) {
		if h, ok := hashes[rel]; ok {
			return h, nil
		}
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		hashes[rel] = hex.EncodeToString(sum[:])
		return hashes[rel], nil
	}
	var problems []string
	agreed := 0
	pieces := map[string]map[string][]byte{}
	for _, row := range rows {
		for rel, want := range map[string]string{"spec/TraceProgram.tla": row.SpecSHA256,
			"spec/TraceProgram.cfg": row.ConfigSHA256, "spec/Program.tla": row.ProgramSHA256, row.Trace: row.TraceSHA256} {
			got, err := hash(rel)
			if err != nil {
				return agreed, err
			}
			if got != want {
				return agreed, fmt.Errorf("%s changed since TLC produced the retained verdicts: regenerate them with make tlc-traces", rel)
			}
		}
		if pieces[row.Trace] == nil {
			data, err := os.ReadFile(filepath.Join(root, row.Trace))
			if err != nil {
				return agreed, err
			}
			_, pieces[row.Trace] = tlccross.SplitInstances(data)
		}
		piece, ok := pieces[row.Trace][row.Instance]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s [%s]: no such instance", row.Trace, row.Instance))
			continue
		}
		got, err := tlccross.Verdict(ctx, piece, row.Trace)
		if err != nil {
			return agreed, err
		}
		if got != row.Verdict {
			problems = append(problems, fmt.Sprintf("%s [%s]: tracecheck says %s, TLC said %s", row.Trace, row.Instance, got, row.Verdict))
			continue
		}
		agreed++
	}
	if len(problems) > 0 {
		return agreed, fmt.Errorf("%d disagreements:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	return agreed, nil
}

// readTSV returns the rows of a tab-separated file, '#' comments and blank
// lines skipped.
func readTSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		rows = append(rows, strings.Split(l, "\t"))
	}
	return rows, sc.Err()
}
