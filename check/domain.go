package check

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/tracecheck/tracecheck/model"
)

// domainMaxStates bounds the exploration that finds the variables'
// domains: a larger spec's reports do without them.
const domainMaxStates = 200_000

// domainShown bounds the values a report lists.
const domainShown = 24

// domains are the values each variable of a spec takes in its reachable
// states, in the order a breadth-first exploration finds them: what a
// trace's value can be compared with to tell a misspelling ("Stageing")
// or an out-of-range number from a wrong step.
type domains struct {
	once sync.Once
	vals [][]string        // per variable, its values as the spec prints them
	has  []map[string]bool // per variable, the same as a set
}

// domain returns the values each variable takes in the spec's reachable
// states, or nil if the spec could not be explored within
// domainMaxStates. It explores the spec once, when first asked: only a
// divergence report asks.
func (q *specMemo[S]) domain() *domains {
	d := &q.domains
	d.once.Do(func() {
		r, err := model.Explore(context.Background(), q.Spec, model.Options{MaxStates: domainMaxStates})
		if err != nil {
			return
		}
		d.vals = make([][]string, len(q.Vars))
		d.has = make([]map[string]bool, len(q.Vars))
		for i := range d.has {
			d.has[i] = map[string]bool{}
		}
		for _, s := range r.Graph.States {
			for i, v := range q.valuation(s) {
				if t := v.String(); !d.has[i][t] {
					d.has[i][t] = true
					d.vals[i] = append(d.vals[i], t)
				}
			}
		}
	})
	if d.has == nil {
		return nil
	}
	return d
}

// outsideDomain says which value of the event's state cons no reachable
// state of the spec gives its variable, with the values it does take; ""
// if every value is one the spec's states have (or the spec is too large
// to tell).
func (c *Checker[S]) outsideDomain(cons *constraint) string {
	d := c.spec.domain()
	if d == nil {
		return ""
	}
	for _, i := range cons.idx {
		got := cons.vals[i].String()
		if d.has[i][got] {
			continue
		}
		name, vals := c.spec.Vars[i], d.vals[i]
		more := ""
		if len(vals) > domainShown {
			more = fmt.Sprintf(" (and %d more)", len(vals)-domainShown)
			vals = vals[:domainShown]
		}
		shown := make([]string, len(vals))
		for j, v := range vals {
			shown[j] = clipValue(v)
		}
		return fmt.Sprintf("%s = %s is outside the variable's domain: no reachable state of the spec has it; %s is one of %s%s",
			name, clipValue(got), name, strings.Join(shown, ", "), more)
	}
	return ""
}

// domainKind turns a divergence about the event's state into one about a
// value outside its variable's domain, if the event's state has one.
func (c *Checker[S]) domainKind(d *Divergence, cons *constraint) {
	if why := c.outsideDomain(cons); why != "" {
		d.Kind = KindDomain
		d.Reason = why
	}
}
