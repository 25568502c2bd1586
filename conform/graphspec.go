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
// (`Request("a")`, see [ParseLabel]), belongs to the action named before
// the parenthesis: an event naming the action alone may take any of its
// edges, and one that gives arguments only the edges labelled with
// exactly those (the action's model.Action.Args lists the arguments of
// the edges from s to t). An action none of whose labels has arguments
// takes none. The graph's stuttering states (FizzBee's "end" links) are
// terminal. The spec checks no invariant: the graph holds only the states
// the tool reached, and a trace that leaves them is a violation at the
// event that does.
//
// It is an error (wrapping ErrGraph) if a label's arguments do not parse
// as TLA+ values ([ParseTLAValue]).
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
	// next[action][state] lists the action's edges' targets from state;
	// args[action][{from, to}] the argument lists of its edges from one to
	// the other, for an action with arguments.
	next := map[string]map[int][]int{}
	args := map[string]map[[2]int][][]model.Value{}
	for _, e := range g.Edges {
		a, as, err := ParseLabel(e.Action)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrGraph, name, err)
		}
		if next[a] == nil {
			next[a] = map[int][]int{}
		}
		if !slices.Contains(next[a][e.From], e.To) {
			next[a][e.From] = append(next[a][e.From], e.To)
		}
		if as != nil {
			if args[a] == nil {
				args[a] = map[[2]int][][]model.Value{}
			}
			k := [2]int{e.From, e.To}
			if !slices.ContainsFunc(args[a][k], func(l []model.Value) bool { return slices.EqualFunc(l, as, model.Value.Equal) }) {
				args[a][k] = append(args[a][k], as)
			}
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
		var withArgs func(s, t int) [][]model.Value
		if byEdge := args[a]; byEdge != nil {
			withArgs = func(s, t int) [][]model.Value { return byEdge[[2]int{s, t}] }
		}
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
			Args: withArgs,
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

// ParseLabel splits an edge label into the action and its arguments, as
// TLC labels a step of a parameterised action in a DOT dump with
// actionlabels: `RMPrepare("r1")` is the action RMPrepare with the one
// argument "r1", `Send(1, <<"a", TRUE>>)` Send with two, each argument a
// TLA+ value as [ParseTLAValue] reads it (the list is split at its
// top-level commas). A label without a parenthesis (TLC's for an action
// without parameters, FizzBee's, the Go model's) is the action alone, with
// nil arguments. The action is always [ActionOf] the label. Errors wrap
// [ErrSyntax] ([ErrUnsupported] for a TLC model value).
func ParseLabel(label string) (action string, args []model.Value, err error) {
	i := strings.IndexByte(label, '(')
	if i <= 0 {
		return label, nil, nil
	}
	action = strings.TrimSpace(label[:i])
	list := strings.TrimSpace(label[i:])
	if action == "" || !strings.HasSuffix(list, ")") || strings.TrimSpace(list[1:len(list)-1]) == "" {
		return "", nil, fmt.Errorf("edge label %q: %w: want Action(argument, ...)", clip(label), ErrSyntax)
	}
	// The arguments are the elements of the tuple <<a1, a2>>: the value
	// parser splits them at their top-level commas.
	tuple, err := ParseTLAValue("<<" + list[1:len(list)-1] + ">>")
	if err != nil {
		return "", nil, fmt.Errorf("edge label %q: the arguments do not parse: %w", clip(label), err)
	}
	if tuple.Kind() != model.KindSeq { // cannot be: a tuple parses to a sequence
		return "", nil, fmt.Errorf("edge label %q: %w: the arguments are not a list", clip(label), ErrSyntax)
	}
	return action, tuple.Elems(), nil
}

// FormatLabel is the label of a step of action with the arguments args,
// as TLC writes it: the action alone when args is empty, else
// `Action(a1, a2)` with each argument in TLA+ syntax ([model.Value.String]).
// ParseLabel reads it back.
func FormatLabel(action string, args []model.Value) string {
	if len(args) == 0 {
		return action
	}
	var b strings.Builder
	b.WriteString(action)
	b.WriteByte('(')
	for i, v := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.String())
	}
	b.WriteByte(')')
	return b.String()
}

// FromModelWithArgs is [FromModel] with the edges of each action that has
// arguments (model.Action.Args) labelled as TLC labels them: an edge from
// s to t becomes one edge per argument list the action's Args gives for
// it, labelled [FormatLabel]. Compared with TLC's graph (its labels put in
// the same form with ParseLabel and FormatLabel), it proves that the
// transcription's Args are TLC's labels, edge for edge.
func FromModelWithArgs[S comparable](sp *model.Spec[S], g *model.Graph[S]) (*Graph, error) {
	out, err := FromModel(sp, g)
	if err != nil {
		return nil, err
	}
	edges := out.Edges[:0:0]
	for _, e := range out.Edges {
		a, err := sp.Action(e.Action)
		if err != nil {
			return nil, fmt.Errorf("conform: %w", err)
		}
		if a.Args == nil {
			edges = append(edges, e)
			continue
		}
		for _, as := range a.Args(g.States[e.From], g.States[e.To]) {
			edges = append(edges, Edge{From: e.From, To: e.To, Action: FormatLabel(e.Action, as)})
		}
	}
	out.Edges = edges
	return out, nil
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
