package mutate

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteJSON writes the matrix as indented JSON.
func (m *Matrix) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("mutate: writing the matrix: %w", err)
	}
	return nil
}

// ScoreLine is the one-line summary: counts and the mutation score.
func (s Summary) ScoreLine() string {
	return fmt.Sprintf("%d mutants: %d killed, %d survived, %d not covered, %d equivalent, %d not applicable, %d not run; mutation score %.1f%% (killed / (total − equivalent − not applicable))",
		s.Total, s.Killed, s.Survived, s.NotCovered, s.Equivalent, s.NotApplicable, s.Errors, 100*s.Score)
}

// RunLine says how the campaign ran: wall time, parallelism, selection,
// runs and cache hits.
func (s Summary) RunLine() string {
	sel := "every test of the mutant's package"
	if s.Selection {
		sel = fmt.Sprintf("tests selected by per-test coverage (%d coverage runs, %s)", s.CoverageRuns, s.CoverageTime.Round(time.Second))
	}
	shard := ""
	if s.Shard != "" {
		shard = ", shard " + s.Shard
	}
	return fmt.Sprintf("wall %s with -j %d%s; %s; %d go test runs, %d results from the cache",
		s.Wall.Round(time.Second), s.Jobs, shard, sel, s.TestRuns, s.Cached)
}

// WriteMarkdown writes the matrix as Markdown: the summary, then a table
// of every mutant with its status, what killed it (or why it is
// equivalent), the tests run and the time.
func (m *Matrix) WriteMarkdown(w io.Writer, title string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "Produced by `tracecheck mutate`; do not edit by hand.\n\n")
	fmt.Fprintf(&b, "%s.\n\n%s.\n\n", m.Summary.ScoreLine(), m.Summary.RunLine())
	if len(m.Summary.FailingTests) > 0 {
		fmt.Fprintf(&b, "Tests failing without any mutant (never selected): %s.\n\n", strings.Join(m.Summary.FailingTests, ", "))
	}
	b.WriteString("| Mutant | Change | Status | Detector | Tests run | Time |\n|---|---|---|---|---|---|\n")
	for _, r := range m.Results {
		det := r.Detector
		switch r.Status {
		case StatusEquivalent:
			det = r.Reason
		case StatusNotApplicable, StatusError:
			det = firstLine(r.Error)
		}
		tests := ""
		switch n := len(r.Tests); {
		case n > 3:
			tests = fmt.Sprintf("%s, %s, %s +%d", r.Tests[0], r.Tests[1], r.Tests[2], n-3)
		case n > 0:
			tests = strings.Join(r.Tests, ", ")
		}
		t := formatSeconds(r.Duration)
		if r.Cached {
			t += " (cached)"
		}
		change := ""
		if r.Change != "" {
			change = "`" + strings.ReplaceAll(r.Change, "`", "'") + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", cell(r.Mutant), cell(change), r.Status, cell(det), cell(tests), t)
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("mutate: writing the matrix: %w", err)
	}
	return nil
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
