package mutate

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
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

// WriteMarkdown writes the matrix as Markdown: the summary, the count of
// kills by kind of detector, then a table of every mutant with its
// status, what killed it (or why it is equivalent), the kind of detector
// and its evidence, the tests run and the time.
func (m *Matrix) WriteMarkdown(w io.Writer, title string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "Produced by `tracecheck mutate`; do not edit by hand.\n\n")
	fmt.Fprintf(&b, "%s.\n\n%s.\n\n", m.Summary.ScoreLine(), m.Summary.RunLine())
	if len(m.Summary.FailingTests) > 0 {
		fmt.Fprintf(&b, "Tests failing without any mutant (never selected): %s.\n\n", strings.Join(m.Summary.FailingTests, ", "))
	}
	if kinds := m.Kinds(); len(kinds) > 0 {
		b.WriteString("Kills by kind of detector: ")
		for i, k := range kinds {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %d", k.Kind, k.Count)
		}
		b.WriteString(".\n\n")
	}
	b.WriteString("| Mutant | Change | Status | Detector | Kind | Evidence | Tests run | Time |\n|---|---|---|---|---|---|---|---|\n")
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
		ev := ""
		if r.Evidence != "" {
			ev = "`" + strings.ReplaceAll(clip(r.Evidence, 160), "`", "'") + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(r.Mutant), cell(change), r.Status, cell(det), r.Kind, cell(ev), cell(tests), t)
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("mutate: writing the matrix: %w", err)
	}
	return nil
}

// KindCount is how many mutants one kind of detector killed.
type KindCount struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Kinds counts the killed mutants by kind of detector, most kills first
// (then by name).
func (m *Matrix) Kinds() []KindCount {
	n := map[string]int{}
	for _, r := range m.Results {
		if r.Status == StatusKilled && r.Kind != "" {
			n[r.Kind]++
		}
	}
	out := make([]KindCount, 0, len(n))
	for k, c := range n {
		out = append(out, KindCount{k, c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
