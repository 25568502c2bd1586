package conform

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tracecheck/tracecheck/model"
)

// ErrGraph reports a graph that cannot serve as a spec (no states, states
// with different variables).
var ErrGraph = errors.New("graph is not a spec")

// Spec turns a state graph computed by TLC or FizzBee into a spec that
// check.Check validates traces against, with no Go transcription: its
// states are exactly the graph's, its transitions exactly the graph's
// labelled edges. A state is the index of a graph state; its variables are
// the graph states' record fields. An action is enabled in a state when an
// edge of that action leaves it, and leads to the edges' targets. An edge
// label with arguments, as TLC writes a parameterised action
// (`Request("a")`), belongs to the action named before the parenthesis: an
// event naming the action alone may take any of its edges. The graph's
// stuttering states (FizzBee's "end" links) are terminal. The spec checks
// no invariant: the graph holds only the states the tool reached, and a
// trace that leaves them is a violation at the event that does.
//
// Reports against such a spec cannot quote guards in the spec's words:
// they say that no edge of the action leaves the candidate states.
func Spec(g *Graph, name string) (*model.Spec[int], error) {
	if len(g.States) == 0 || len(g.Init) == 0 {
		return nil, fmt.Errorf("%w: %s: no states or no initial state", ErrGraph, name)
	}
	var vars []string
	for _, f := range g.States[0].Fields() {
		vars = append(vars, f.Name)
	}
	vals := make([][]model.Value, len(g.States))
	for i, st := range g.States {
		fs := st.Fields()
		if len(fs) != len(vars) {
			return nil, fmt.Errorf("%w: %s: state %d has %d variables, state 0 has %d", ErrGraph, name, i, len(fs), len(vars))
		}
		vals[i] = make([]model.Value, len(vars))
		for j, f := range fs {
			if f.Name != vars[j] {
				return nil, fmt.Errorf("%w: %s: state %d has variable %s where state 0 has %s", ErrGraph, name, i, f.Name, vars[j])
			}
			vals[i][j] = f.Value
		}
	}
	// next[action][state] lists the action's edges' targets from state.
	next := map[string]map[int][]int{}
	for _, e := range g.Edges {
		a := ActionOf(e.Action)
		if next[a] == nil {
			next[a] = map[int][]int{}
		}
		if !slices.Contains(next[a][e.From], e.To) {
			next[a][e.From] = append(next[a][e.From], e.To)
		}
	}
	names := make([]string, 0, len(next))
	for a := range next {
		names = append(names, a)
	}
	sort.Strings(names)
	stutters := map[int]bool{}
	for _, s := range g.Stutters {
		stutters[s] = true
	}
	sp := &model.Spec[int]{
		Name:      name,
		Vars:      vars,
		Valuation: func(s int) []model.Value { return vals[s] },
		Init:      func() []int { return slices.Clone(g.Init) },
		Terminal:  func(s int) bool { return stutters[s] },
	}
	for _, a := range names {
		edges := next[a]
		sp.Actions = append(sp.Actions, model.Action[int]{
			Name: a,
			Guard: func(s int) string {
				if len(edges[s]) == 0 {
					return "no " + a + " edge leaves this state in the " + g.Source + " graph"
				}
				return ""
			},
			Next: func(s int, emit func(int)) {
				for _, t := range edges[s] {
					emit(t)
				}
			},
		})
	}
	return sp, nil
}

// ActionOf returns the action an edge label names: the label without the
// arguments TLC appends to a parameterised action (`Request("a")` is
// Request).
func ActionOf(label string) string {
	if i := strings.IndexByte(label, '('); i > 0 {
		return strings.TrimSpace(label[:i])
	}
	return label
}

// maxGraphBytes bounds what LoadGraph reads of a dump.
const maxGraphBytes = 1 << 30

// LoadGraph reads the state graph a tool dumped: a TLC DOT dump (a file,
// as `tlc -dump dot,actionlabels FILE` writes it) or a FizzBee dump (a
// directory holding one nodes_*.pb and one adjacency_lists_*.pb).
func LoadGraph(path string) (*Graph, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (a TLC DOT dump) nor a directory (a FizzBee dump)", path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		g, err := ParseTLCDot(io.LimitReader(f, maxGraphBytes))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return g, nil
	}
	one := func(pattern string) ([]byte, error) {
		m, _ := filepath.Glob(filepath.Join(path, pattern))
		if len(m) != 1 {
			return nil, fmt.Errorf("%s: want one %s file of a FizzBee dump, found %d", path, pattern, len(m))
		}
		fi, err := os.Lstat(m[0])
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() || fi.Size() > maxGraphBytes {
			return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", m[0], int64(maxGraphBytes))
		}
		return os.ReadFile(m[0])
	}
	nodes, err := one("nodes_*.pb")
	if err != nil {
		return nil, err
	}
	links, err := one("adjacency_lists_*.pb")
	if err != nil {
		return nil, err
	}
	g, err := ParseFizzGraph(nodes, links)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}
