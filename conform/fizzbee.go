package conform

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tracecheck/tracecheck/model"
)

// FizzStutter is the name of the link FizzBee adds from every node without
// successors to itself (modelchecker/graph.go). [ParseFizzGraph] maps it to
// terminal stuttering, never to an edge.
const FizzStutter = "end"

// fizzNode is the part of a FizzBee node's JSON that the graph needs.
type fizzNode struct {
	Name  string                     `json:"name"`
	State map[string]json.RawMessage `json:"state"`
	Roles []struct {
		Name      string                     `json:"name"`
		RefString string                     `json:"ref_string"`
		Fields    map[string]json.RawMessage `json:"fields"`
	} `json:"roles"`
	Threads []json.RawMessage `json:"threads"`
}

// fizzState converts one node's JSON into a variable assignment and returns
// the role references ("Session#0") it knows, for action names.
func fizzState(raw []byte) (model.Value, []string, error) {
	var n fizzNode
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return model.Value{}, nil, fmt.Errorf("%w: node JSON: %v", ErrSyntax, err)
	}
	if dec.More() {
		return model.Value{}, nil, fmt.Errorf("%w: node JSON: text after the object", ErrSyntax)
	}
	if n.Name != "yield" {
		return model.Value{}, nil, fmt.Errorf("%w: internal node %q (not a yield point): only atomic actions are compared", ErrUnsupported, n.Name)
	}
	if len(n.Threads) > 0 {
		return model.Value{}, nil, fmt.Errorf("%w: node with %d live threads", ErrUnsupported, len(n.Threads))
	}
	var fields []model.Field
	var refs []string
	seenRole := make(map[string]bool)
	for _, r := range n.Roles {
		if r.Name == "" || r.RefString == "" {
			return model.Value{}, nil, fmt.Errorf("%w: role without a name or ref_string", ErrSyntax)
		}
		if seenRole[r.Name] {
			return model.Value{}, nil, fmt.Errorf("%w: several instances of role %s", ErrUnsupported, r.Name)
		}
		seenRole[r.Name] = true
		refs = append(refs, r.RefString)
		for name, v := range r.Fields {
			val, err := jsonValue(v, 0)
			if err != nil {
				return model.Value{}, nil, fmt.Errorf("role %s field %s: %w", r.RefString, name, err)
			}
			fields = append(fields, model.Field{Name: name, Value: val})
		}
	}
	for name, v := range n.State {
		var s string
		if json.Unmarshal(v, &s) == nil && strings.HasPrefix(s, "role ") && slices.Contains(refs, s[len("role "):]) {
			continue // a global holding a role reference, such as `s = Session()`
		}
		val, err := jsonValue(v, 0)
		if err != nil {
			return model.Value{}, nil, fmt.Errorf("global %s: %w", name, err)
		}
		fields = append(fields, model.Field{Name: name, Value: val})
	}
	names := make([]string, len(fields))
	vals := make([]model.Value, len(fields))
	for i, f := range fields {
		names[i], vals[i] = f.Name, f.Value
	}
	st, err := State(names, vals)
	if err != nil {
		return model.Value{}, nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return st, refs, nil
}

// jsonValue converts a JSON value to a model value: integers, strings,
// booleans, arrays (as sequences) and objects (as records).
func jsonValue(raw json.RawMessage, depth int) (model.Value, error) {
	if depth > maxDepth {
		return model.Value{}, fmt.Errorf("%w: JSON nested deeper than %d", ErrSyntax, maxDepth)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return model.Value{}, fmt.Errorf("%w: empty JSON value", ErrSyntax)
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return model.Value{}, fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		return model.Str(s), nil
	case 't', 'f':
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return model.Value{}, fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		return model.Bool(b), nil
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return model.Value{}, fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		vals := make([]model.Value, len(elems))
		for i, e := range elems {
			v, err := jsonValue(e, depth+1)
			if err != nil {
				return model.Value{}, err
			}
			vals[i] = v
		}
		return model.Seq(vals...), nil
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return model.Value{}, fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		var fields []model.Field
		for k, e := range obj {
			v, err := jsonValue(e, depth+1)
			if err != nil {
				return model.Value{}, err
			}
			fields = append(fields, model.Field{Name: k, Value: v})
		}
		return model.Record(fields...), nil
	case 'n':
		return model.Value{}, fmt.Errorf("%w: JSON null", ErrUnsupported)
	}
	i, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return model.Value{}, fmt.Errorf("%w: JSON value %.20q is not an integer, string, boolean, array or object", ErrUnsupported, raw)
	}
	return model.Int(i), nil
}

// actionName maps a FizzBee link name to the spec's action name: a role
// action "Session#0.VadStart" becomes "VadStart" (there is one instance of
// each role); a top-level action keeps its name.
func actionName(link string, refs []string) string {
	for _, r := range refs {
		if rest, ok := strings.CutPrefix(link, r+"."); ok {
			return rest
		}
	}
	return link
}

// ParseFizzGraph reads the state graph FizzBee writes after a PASSED run:
// nodes_000000_of_000000.pb (a Nodes message, one JSON object per node)
// and adjacency_lists_000000_of_000000.pb (a Links message). The mapping
// onto the spec's vocabulary:
//
//   - a state is the fields of the spec's role instances plus its globals,
//     by bare name (conn, vad, ...); a global holding a role reference
//     (`s = Session()`) is not a variable;
//   - node 0 is the root: the state after Init, the only initial state;
//   - a link named "Session#0.VadStart" is the edge VadStart;
//   - the "end" link FizzBee adds from a node without successors to itself
//     is terminal stuttering (Graph.Stutters), not an edge;
//   - anything else, such as an internal (non-yield) node of a non-atomic
//     action, two instances of one role, or a link of a type other than
//     "action", is refused with an error wrapping [ErrUnsupported].
//
// The result's Source is "FizzBee". Malformed files give errors wrapping
// [ErrSyntax].
func ParseFizzGraph(nodesPB, linksPB []byte) (*Graph, error) {
	jsons, err := decodeFizzNodes(nodesPB)
	if err != nil {
		return nil, fmt.Errorf("FizzBee nodes: %w", err)
	}
	if len(jsons) == 0 {
		return nil, fmt.Errorf("FizzBee nodes: %w: no nodes", ErrSyntax)
	}
	total, links, err := decodeFizzLinks(linksPB)
	if err != nil {
		return nil, fmt.Errorf("FizzBee links: %w", err)
	}
	if total != int64(len(jsons)) {
		return nil, fmt.Errorf("FizzBee links: %w: total_nodes %d but %d nodes", ErrSyntax, total, len(jsons))
	}
	g := &Graph{Source: "FizzBee", Init: []int{0}}
	var refs []string
	for i, j := range jsons {
		st, r, err := fizzState([]byte(j))
		if err != nil {
			return nil, fmt.Errorf("FizzBee node %d: %w", i, err)
		}
		for _, ref := range r {
			if !slices.Contains(refs, ref) {
				refs = append(refs, ref)
			}
		}
		g.States = append(g.States, st)
	}
	n := int64(len(jsons))
	for i, l := range links {
		if l.Src < 0 || l.Src >= n || l.Dest < 0 || l.Dest >= n {
			return nil, fmt.Errorf("FizzBee link %d: %w: %d -> %d outside the %d nodes", i, ErrSyntax, l.Src, l.Dest, n)
		}
		if l.Type != "action" && l.Type != "" {
			return nil, fmt.Errorf("FizzBee link %d: %w: link type %q", i, ErrUnsupported, l.Type)
		}
		if l.Name == "" {
			return nil, fmt.Errorf("FizzBee link %d: %w: link without a name", i, ErrSyntax)
		}
		if l.Name == FizzStutter {
			if l.Src != l.Dest {
				return nil, fmt.Errorf("FizzBee link %d: %w: %q link %d -> %d is not a self-loop", i, ErrSyntax, FizzStutter, l.Src, l.Dest)
			}
			g.Stutters = append(g.Stutters, int(l.Src))
			continue
		}
		g.Edges = append(g.Edges, Edge{From: int(l.Src), To: int(l.Dest), Action: actionName(l.Name, refs)})
	}
	return g, nil
}

// FizzStep is one step of a behaviour FizzBee prints with a failure.
type FizzStep struct {
	// Action is the spec's action name ("Init" for the first step).
	Action string
	// State is the variable assignment after the step.
	State model.Value
}

// FizzReport is what FizzBee printed on standard output, as read by
// [ParseFizzOutput].
type FizzReport struct {
	// Verdict is "PASSED" or "FAILED": FizzBee exits 0 either way.
	Verdict string
	// VerdictLine is the whole line the verdict came from.
	VerdictLine string
	// FailedInvariant names the assertion of a "FAILED: ... Invariant: X".
	FailedInvariant string
	// Nodes is the last "Nodes: N" progress count; -1 if absent.
	Nodes int
	// ValidNodes and UniqueStates come from "Valid Nodes: N Unique states:
	// M", printed on runs that finish exploring; -1 if absent.
	ValidNodes, UniqueStates int
	// Trace is the behaviour printed with a failure.
	Trace []FizzStep
}

var (
	reFizzNodes  = regexp.MustCompile(`^Nodes: (\d+), queued: \d+`)
	reFizzUnique = regexp.MustCompile(`^Valid Nodes: (\d+) Unique states: (\d+)$`)
	reFizzFailed = regexp.MustCompile(`^FAILED: .*Invariant:\s+(\S+)\s*$`)
	reFizzFields = regexp.MustCompile(`^(\w+#\d+): fields\((.*)\)$`)
)

// ParseFizzOutput reads FizzBee's standard output: the verdict line
// (PASSED or FAILED, which scripts must read because FizzBee exits 0 on
// FAILED), the failed invariant, the node counts, and the failure trace.
// Each trace step is a block
//
//	------
//	Session#0.Teardown
//	--
//	state: {"s":"role Session#0"}
//	Session#0: fields(compaction = 0, conn = 1, resp = 2, vad = 2)
//
// whose role fields become the state (Starlark integers, strings, booleans
// and lists). Output without a verdict line is an error wrapping
// [ErrSyntax].
func ParseFizzOutput(r io.Reader) (*FizzReport, error) {
	rep := &FizzReport{Nodes: -1, ValidNodes: -1, UniqueStates: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var (
		lineNo  int
		inTrace bool
		step    *FizzStep
		fields  []model.Field
		refs    []string
	)
	flush := func() error {
		if step == nil {
			return nil
		}
		if len(fields) == 0 {
			return fmt.Errorf("FizzBee output line %d: %w: trace step %s has no fields line", lineNo, ErrSyntax, step.Action)
		}
		step.State = model.Record(fields...)
		rep.Trace = append(rep.Trace, *step)
		step, fields = nil, nil
		return nil
	}
	expectName := false
	for sc.Scan() {
		lineNo++
		t := strings.TrimSpace(sc.Text())
		switch {
		case rep.Verdict == "" && (strings.HasPrefix(t, "PASSED:") || strings.HasPrefix(t, "FAILED:")):
			rep.Verdict, rep.VerdictLine = t[:6], t
			if m := reFizzFailed.FindStringSubmatch(t); m != nil {
				rep.FailedInvariant = m[1]
				inTrace = true
			}
		case reFizzNodes.MatchString(t):
			rep.Nodes, _ = strconv.Atoi(reFizzNodes.FindStringSubmatch(t)[1]) // \d+ always converts unless huge
		case reFizzUnique.MatchString(t):
			m := reFizzUnique.FindStringSubmatch(t)
			rep.ValidNodes, _ = strconv.Atoi(m[1])
			rep.UniqueStates, _ = strconv.Atoi(m[2])
		case rep.Verdict == "FAILED" && rep.FailedInvariant == "" && strings.HasPrefix(t, "Invariant: "):
			rep.FailedInvariant = strings.TrimSpace(strings.TrimPrefix(t, "Invariant: "))
			inTrace = true
		case !inTrace:
		case t == "------":
			if err := flush(); err != nil {
				return nil, err
			}
			expectName = true
		case expectName:
			expectName = false
			if t == "" || strings.ContainsAny(t, " \t") {
				inTrace = false // the closing "------": what follows is not a step
				continue
			}
			step = &FizzStep{Action: t}
		case step != nil && reFizzFields.MatchString(t):
			m := reFizzFields.FindStringSubmatch(t)
			if !slices.Contains(refs, m[1]) {
				refs = append(refs, m[1])
			}
			fs, err := parseStarlarkFields(m[2])
			if err != nil {
				return nil, fmt.Errorf("FizzBee output line %d: %w", lineNo, err)
			}
			fields = append(fields, fs...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("FizzBee output line %d: %w", lineNo+1, err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if rep.Verdict == "" {
		return nil, fmt.Errorf("FizzBee output: %w: no PASSED/FAILED verdict line (truncated?)", ErrSyntax)
	}
	for i := range rep.Trace {
		rep.Trace[i].Action = actionName(rep.Trace[i].Action, refs)
	}
	return rep, nil
}

// parseStarlarkFields parses `a = 1, b = "x"`: the inside of FizzBee's
// `fields(...)`.
func parseStarlarkFields(s string) ([]model.Field, error) {
	p := &parser{src: s}
	var out []model.Field
	seen := make(map[string]bool)
	p.space()
	if p.pos == len(s) {
		return nil, nil
	}
	for {
		p.space()
		name := p.ident()
		if name == "" {
			return nil, fmt.Errorf("FizzBee fields: %w", p.errf("want a field name, found %s", p.near()))
		}
		if seen[name] {
			return nil, fmt.Errorf("FizzBee fields: %w", p.errf("field %s given twice", name))
		}
		seen[name] = true
		if err := p.expect("="); err != nil {
			return nil, fmt.Errorf("FizzBee fields: %w", err)
		}
		v, err := p.starlark(0)
		if err != nil {
			return nil, fmt.Errorf("FizzBee fields: %w", err)
		}
		out = append(out, model.Field{Name: name, Value: v})
		p.space()
		if p.pos == len(s) {
			return out, nil
		}
		if err := p.expect(","); err != nil {
			return nil, fmt.Errorf("FizzBee fields: %w", err)
		}
	}
}

// starlark parses a Starlark value as FizzBee prints it: integers,
// double-quoted strings (Go-style escapes), True, False and lists.
func (p *parser) starlark(depth int) (model.Value, error) {
	if depth > maxDepth {
		return model.Value{}, p.errf("values nested deeper than %d", maxDepth)
	}
	p.space()
	if p.pos == len(p.src) {
		return model.Value{}, p.errf("want a value, found end of input")
	}
	switch c := p.src[p.pos]; {
	case c == '"':
		end := p.pos + 1
		for end < len(p.src) && p.src[end] != '"' {
			if p.src[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.src) {
			return model.Value{}, p.errf("unterminated string")
		}
		s, err := strconv.Unquote(p.src[p.pos : end+1])
		if err != nil {
			return model.Value{}, p.errf("bad string: %v", err)
		}
		p.pos = end + 1
		return model.Str(s), nil
	case c == '-' || c >= '0' && c <= '9':
		return p.integer()
	case c == '[':
		p.pos++
		var elems []model.Value
		if p.eat("]") {
			return model.Seq(), nil
		}
		for {
			v, err := p.starlark(depth + 1)
			if err != nil {
				return model.Value{}, err
			}
			elems = append(elems, v)
			if p.eat("]") {
				return model.Seq(elems...), nil
			}
			if err := p.expect(","); err != nil {
				return model.Value{}, err
			}
		}
	}
	switch id := p.ident(); id {
	case "True":
		return model.Bool(true), nil
	case "False":
		return model.Bool(false), nil
	case "":
		return model.Value{}, p.errf("want a value, found %s", p.near())
	default:
		return model.Value{}, fmt.Errorf("%w: Starlark value %s", ErrUnsupported, id)
	}
}

// ParseFizzErrorGraph reads the error-graph.json FizzBee writes with a
// failure: the failing behaviour as a list of links, each with the node it
// reaches. It returns the behaviour in the spec's vocabulary (see
// [ParseFizzGraph] for the mapping).
func ParseFizzErrorGraph(r io.Reader) ([]FizzStep, error) {
	var links []struct {
		Node json.RawMessage `json:"Node"`
		Name string          `json:"Name"`
	}
	dec := json.NewDecoder(r)
	if err := dec.Decode(&links); err != nil {
		return nil, fmt.Errorf("FizzBee error graph: %w: %v", ErrSyntax, err)
	}
	if len(links) == 0 {
		return nil, fmt.Errorf("FizzBee error graph: %w: empty behaviour", ErrSyntax)
	}
	out := make([]FizzStep, len(links))
	for i, l := range links {
		if len(l.Node) == 0 || l.Name == "" {
			return nil, fmt.Errorf("FizzBee error graph step %d: %w: missing Node or Name", i, ErrSyntax)
		}
		st, refs, err := fizzState(l.Node)
		if err != nil {
			return nil, fmt.Errorf("FizzBee error graph step %d: %w", i, err)
		}
		out[i] = FizzStep{Action: actionName(l.Name, refs), State: st}
	}
	return out, nil
}
