package check

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tracecheck/tracecheck/model"
)

// Coverage says which transitions of a spec's state graph a set of traces
// exercised.
type Coverage struct {
	Model string `json:"model"`
	// Total is the number of transitions of the spec's graph
	// (model.Explore's edges); Exercised how many of them the traces took.
	Total     int `json:"total"`
	Exercised int `json:"exercised"`
	// Edges lists every transition in the graph's order, with how often
	// the traces took it (0: never).
	Edges []Transition `json:"edges"`
	// Ambiguous counts the steps that several transitions fitted; they are
	// not counted as exercising any.
	Ambiguous int `json:"ambiguous_steps,omitempty"`
}

// CoverageOf explores sp and marks the transitions that the reports (from
// [Check] on the same spec) exercised.
func CoverageOf[S comparable](ctx context.Context, sp *model.Spec[S], reports ...*Report) (*Coverage, error) {
	res, err := model.Explore(ctx, sp, model.Options{})
	if err != nil {
		return nil, fmt.Errorf("coverage: %w", err)
	}
	type key struct{ from, action, to string }
	counts := make(map[key]int)
	cov := &Coverage{Model: sp.Name}
	for _, r := range reports {
		for _, t := range r.Exercised {
			counts[key{t.From, t.Action, t.To}] += t.Count
		}
		cov.Ambiguous += r.Ambiguous
	}
	g := &res.Graph
	for _, e := range g.Edges {
		t := Transition{From: sp.Format(g.States[e.From]), Action: e.Action, To: sp.Format(g.States[e.To])}
		t.Count = counts[key{t.From, t.Action, t.To}]
		if t.Count > 0 {
			cov.Exercised++
		}
		cov.Edges = append(cov.Edges, t)
	}
	cov.Total = len(cov.Edges)
	return cov, nil
}

// WriteText writes "exercised N/M transitions" and lists the ones not
// exercised.
func (c *Coverage) WriteText(w io.Writer) error {
	var b strings.Builder
	pct := 0.0
	if c.Total > 0 {
		pct = 100 * float64(c.Exercised) / float64(c.Total)
	}
	fmt.Fprintf(&b, "model %s: exercised %d/%d transitions (%.0f%%)\n", c.Model, c.Exercised, c.Total, pct)
	if c.Ambiguous > 0 {
		fmt.Fprintf(&b, "(%d ambiguous steps, fitted by several transitions, not counted)\n", c.Ambiguous)
	}
	if c.Exercised < c.Total {
		fmt.Fprintf(&b, "not exercised:\n")
		for _, t := range c.Edges {
			if t.Count == 0 {
				fmt.Fprintf(&b, "  %s\n    --%s--> %s\n", t.From, t.Action, t.To)
			}
		}
	}
	fmt.Fprintf(&b, "exercised:\n")
	for _, t := range c.Edges {
		if t.Count > 0 {
			fmt.Fprintf(&b, "  %6d  %s\n          --%s--> %s\n", t.Count, t.From, t.Action, t.To)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the coverage as indented JSON.
func (c *Coverage) WriteJSON(w io.Writer) error { return writeJSON(w, c) }
