package check

import (
	"slices"

	"github.com/tracecheck/tracecheck/model"
)

// constraint is an event's (partial) state: the values of the variables
// it names.
type constraint struct {
	idx  []int
	vals []model.Value // indexed by variable
	set  []bool
}

func newConstraint(vars int) constraint {
	return constraint{vals: make([]model.Value, vars), set: make([]bool, vars)}
}

func (c *constraint) reset() {
	for _, i := range c.idx {
		c.set[i] = false
	}
	c.idx = c.idx[:0]
}

func (c *constraint) put(i int, v model.Value) {
	if !c.set[i] {
		c.set[i] = true
		c.idx = append(c.idx, i)
	}
	c.vals[i] = v
}

func (c *constraint) clone() constraint {
	return constraint{idx: slices.Clone(c.idx), vals: slices.Clone(c.vals), set: slices.Clone(c.set)}
}

// matches reports whether a full valuation agrees with the constraint.
func (c *constraint) matches(vals []model.Value) bool {
	for _, i := range c.idx {
		if !vals[i].Equal(c.vals[i]) {
			return false
		}
	}
	return true
}

// countDiffs counts the variables where a full valuation and the
// constraint disagree.
func (c *constraint) countDiffs(vals []model.Value) int {
	n := 0
	for _, i := range c.idx {
		if !vals[i].Equal(c.vals[i]) {
			n++
		}
	}
	return n
}
