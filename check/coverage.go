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
	// Required counts the transitions traces are expected to exercise:
	// all but the NotRequired ones; RequiredExercised how many of them the
	// traces took. Coverage percentages are over them.
	Required          int `json:"required"`
	RequiredExercised int `json:"required_exercised"`
	// Edges lists every transition in the graph's order, with how often
	// the traces took it (0: never).
	Edges []Transition `json:"edges"`
	// NotRequired lists the transitions of Edges that traces need not
	// record, with the reason ([NotRequiredReason]): the stutter self-loops
	// of final states, such as Program's Terminated, which the publisher's
	// journals never record. They are listed apart, with their counts.
	NotRequired []NotRequired `json:"not_required,omitempty"`
	// Ambiguous counts the steps that several transitions fitted; they are
	// not counted as exercising any.
	Ambiguous int `json:"ambiguous_steps,omitempty"`
}

// NotRequired is a transition of a spec's graph that traces need not
// exercise, and why.
type NotRequired struct {
	Transition
	Reason string `json:"reason"`
}

// NotRequiredReason is why a final state's stutter is not required: the
// one rule by which coverage (the coverage command's, the gate's, the HTML
// report's) sets transitions apart. It is derived from the graph, so every
// registered spec gets it without declaring anything.
const NotRequiredReason = "final-state stutter: a self-loop of a state with no other way out (Program's Terminated); a finished run's trace ends in that state and need not record it (the publisher's journals never do)"

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
	// The one rule that sets transitions apart, derived from the graph so
	// that every registered spec gets it without declaring it: a
	// self-loop of a state whose every outgoing edge is a self-loop.
	final := map[string]bool{} // states with a way out: not final
	for _, e := range cov.Edges {
		if e.From != e.To {
			final[e.From] = false
		} else if _, seen := final[e.From]; !seen {
			final[e.From] = true
		}
	}
	for _, e := range cov.Edges {
		if e.From == e.To && final[e.From] {
			cov.NotRequired = append(cov.NotRequired, NotRequired{Transition: e, Reason: NotRequiredReason})
			continue
		}
		cov.Required++
		if e.Count > 0 {
			cov.RequiredExercised++
		}
	}
	return cov, nil
}

// WriteText writes "exercised N/M transitions" and lists the ones not
// exercised.
func (c *Coverage) WriteText(w io.Writer) error {
	var b strings.Builder
	pct := 0.0
	if c.Required > 0 {
		pct = 100 * float64(c.RequiredExercised) / float64(c.Required)
	}
	fmt.Fprintf(&b, "model %s: exercised %d/%d transitions (%.0f%%)", c.Model, c.RequiredExercised, c.Required, pct)
	if n := len(c.NotRequired); n > 0 {
		fmt.Fprintf(&b, "; %d final-state stutters not required, listed apart (%d/%d counting them)", n, c.Exercised, c.Total)
	}
	b.WriteString("\n")
	if c.Ambiguous > 0 {
		fmt.Fprintf(&b, "(%d ambiguous steps, fitted by several transitions, not counted)\n", c.Ambiguous)
	}
	apart := map[Transition]bool{}
	for _, u := range c.NotRequired {
		t := u.Transition
		t.Count = 0
		apart[t] = true
	}
	if c.RequiredExercised < c.Required {
		fmt.Fprintf(&b, "not exercised:\n")
		for _, t := range c.Edges {
			if t.Count == 0 && !apart[t] {
				fmt.Fprintf(&b, "  %s\n    --%s--> %s\n", t.From, t.Action, t.To)
			}
		}
	}
	if len(c.NotRequired) > 0 {
		fmt.Fprintf(&b, "not required (%s):\n", NotRequiredReason)
		for _, u := range c.NotRequired {
			fmt.Fprintf(&b, "  %6d  %s\n          --%s--> %s\n", u.Count, u.From, u.Action, u.To)
		}
	}
	fmt.Fprintf(&b, "exercised:\n")
	for _, t := range c.Edges {
		k := t
		k.Count = 0
		if t.Count > 0 && !apart[k] {
			fmt.Fprintf(&b, "  %6d  %s\n          --%s--> %s\n", t.Count, t.From, t.Action, t.To)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the coverage as indented JSON.
func (c *Coverage) WriteJSON(w io.Writer) error { return writeJSON(w, c) }
