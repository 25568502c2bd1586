package conform

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracecheck/tracecheck/model"
)

// ErrNoActionLabels is returned for a TLC DOT dump written without
// `-dump dot,actionlabels`: its edges carry no action names.
var ErrNoActionLabels = fmt.Errorf("%w: DOT edge without an action label (run TLC with -dump dot,actionlabels)", ErrSyntax)

// maxLine bounds one line of tool output (TLC writes a whole state on one
// DOT line).
const maxLine = 16 << 20

// ParseTLCDot reads the state graph TLC writes with
// `-dump dot,actionlabels FILE` (the colorize option is accepted too). Node
// IDs are TLC fingerprints (stable across runs with `-fp N`); node labels
// are states as [ParseState] reads them, with DOT's escapes \\ \" and \n;
// initial states carry `style = filled`; every edge carries its action's
// name as its label. The result's Source is "TLC".
//
// Errors wrap [ErrSyntax] and name the line: a missing header, an
// unterminated graph, a node defined twice, an edge to an undefined node,
// a bad escape or a label that is not a state.
func ParseTLCDot(r io.Reader) (*Graph, error) {
	g := &Graph{Source: "TLC"}
	ids := make(map[int64]int)
	type rawEdge struct {
		from, to int64
		action   string
		line     int
	}
	var edges []rawEdge
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	lineNo, depth, header, done, legend := 0, 0, false, false, false
	fail := func(format string, args ...any) error {
		return fmt.Errorf("TLC dot line %d: %w: %s", lineNo, ErrSyntax, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if done {
			return nil, fail("text after the end of the graph")
		}
		if !header {
			if line != "strict digraph DiskGraph {" && line != "digraph DiskGraph {" {
				return nil, fail("want TLC's header %q, found %q", "strict digraph DiskGraph {", clip(line))
			}
			header, depth = true, 1
			continue
		}
		switch {
		case strings.Trim(line, "}") == "":
			depth -= len(line)
			legend = false
			if depth < 0 {
				return nil, fail("unbalanced '}'")
			}
			done = depth == 0
			continue
		case strings.HasPrefix(line, "subgraph cluster_legend"):
			legend = true
			depth += strings.Count(line, "{") - strings.Count(line, "}")
			continue
		case strings.HasPrefix(line, "subgraph cluster_graph"):
			if !strings.HasSuffix(line, "{") {
				return nil, fail("want '{' after subgraph")
			}
			depth++
			continue
		case legend:
			continue // the colorize legend: one node per action name
		case strings.HasPrefix(line, "node ["), strings.HasPrefix(line, "edge ["),
			strings.HasPrefix(line, "nodesep="), strings.HasPrefix(line, "color="):
			continue
		case strings.HasPrefix(line, "{rank = same;"):
			if !strings.HasSuffix(line, "}") {
				return nil, fail("unterminated rank statement")
			}
			continue
		}
		st, err := parseDotStmt(line)
		if err != nil {
			return nil, fail("%v", err)
		}
		if st.to != nil {
			action := st.attrs["label"]
			if action == "" { // TLC writes label="" without actionlabels
				return nil, fmt.Errorf("TLC dot line %d: %w", lineNo, ErrNoActionLabels)
			}
			edges = append(edges, rawEdge{st.from, *st.to, action, lineNo})
			continue
		}
		if _, dup := ids[st.from]; dup {
			return nil, fail("node %d defined twice", st.from)
		}
		label, ok := st.attrs["label"]
		if !ok {
			return nil, fail("node %d has no label", st.from)
		}
		state, err := ParseState(label)
		if err != nil {
			return nil, fail("node %d: %v", st.from, err)
		}
		ids[st.from] = len(g.States)
		if strings.TrimSpace(st.attrs["style"]) == "filled" {
			g.Init = append(g.Init, len(g.States))
		}
		g.States = append(g.States, state)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("TLC dot line %d: %w", lineNo+1, err)
	}
	if !header {
		return nil, fmt.Errorf("TLC dot: %w: empty input", ErrSyntax)
	}
	if !done {
		return nil, fmt.Errorf("TLC dot: %w: truncated: the graph is not closed", ErrSyntax)
	}
	for _, e := range edges {
		from, ok1 := ids[e.from]
		to, ok2 := ids[e.to]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("TLC dot line %d: %w: edge %d -> %d names an undefined node", e.line, ErrSyntax, e.from, e.to)
		}
		g.Edges = append(g.Edges, Edge{From: from, To: to, Action: e.action})
	}
	if len(g.Init) == 0 && len(g.States) > 0 {
		return nil, fmt.Errorf("TLC dot: %w: no initial state (style = filled)", ErrSyntax)
	}
	return g, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

type dotStmt struct {
	from  int64
	to    *int64
	attrs map[string]string
}

// parseDotStmt parses `ID [attrs]` or `ID -> ID [attrs]`, with an optional
// trailing semicolon, where IDs are TLC's (signed integer) fingerprints.
func parseDotStmt(line string) (dotStmt, error) {
	var st dotStmt
	rest := line
	id := func() (int64, error) {
		end := 0
		for end < len(rest) && (rest[end] == '-' && end == 0 || rest[end] >= '0' && rest[end] <= '9') {
			end++
		}
		n, err := strconv.ParseInt(rest[:end], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("want a node ID, found %q", clip(rest))
		}
		rest = strings.TrimSpace(rest[end:])
		return n, nil
	}
	var err error
	if st.from, err = id(); err != nil {
		return st, err
	}
	if strings.HasPrefix(rest, "->") {
		rest = strings.TrimSpace(rest[2:])
		to, err := id()
		if err != nil {
			return st, err
		}
		st.to = &to
	}
	rest = strings.TrimSuffix(rest, ";")
	if !strings.HasPrefix(rest, "[") || !strings.HasSuffix(rest, "]") {
		return st, fmt.Errorf("want an attribute list [...], found %q", clip(rest))
	}
	st.attrs, err = parseDotAttrs(rest[1 : len(rest)-1])
	return st, err
}

// parseDotAttrs parses `k=v, k = "quoted"` as TLC writes it.
func parseDotAttrs(s string) (map[string]string, error) {
	out := make(map[string]string)
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for {
		skip()
		if i == len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ',' && s[i] != ' ' {
			i++
		}
		key := s[start:i]
		skip()
		if key == "" || i == len(s) || s[i] != '=' {
			return nil, fmt.Errorf("want key=value in attributes, found %q", clip(s[start:]))
		}
		i++
		skip()
		var val string
		if i < len(s) && s[i] == '"' {
			var sb strings.Builder
			i++
			for {
				if i >= len(s) {
					return nil, fmt.Errorf("unterminated quoted attribute %s", key)
				}
				c := s[i]
				if c == '"' {
					i++
					break
				}
				if c == '\\' {
					if i+1 >= len(s) {
						return nil, fmt.Errorf("unterminated escape in attribute %s", key)
					}
					switch s[i+1] {
					case '\\':
						sb.WriteByte('\\')
					case '"':
						sb.WriteByte('"')
					case 'n':
						sb.WriteByte('\n')
					default:
						return nil, fmt.Errorf("bad escape \\%c in attribute %s", s[i+1], key)
					}
					i += 2
					continue
				}
				sb.WriteByte(c)
				i++
			}
			val = sb.String()
		} else {
			start := i
			for i < len(s) && s[i] != ',' && s[i] != ' ' {
				i++
			}
			val = s[start:i]
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("attribute %s given twice", key)
		}
		out[key] = val
		skip()
		if i < len(s) {
			if s[i] != ',' {
				return nil, fmt.Errorf("want ',' between attributes, found %q", clip(s[i:]))
			}
			i++
		}
	}
}

// TLCStep is one state of a behaviour TLC prints with an error.
type TLCStep struct {
	// Number is TLC's "State N" number.
	Number int
	// Action is the action's name ("Init" for <Initial predicate>).
	Action string
	// State is the state as a record from variable name to value.
	State model.Value
}

// TLCReport is what TLC printed on standard output, as read by
// [ParseTLCOutput].
type TLCReport struct {
	// Version is TLC's first line, e.g. "TLC2 Version 2026.11.29.154928 (rev: cc6b616)".
	Version string
	// Generated, Distinct and Left are the counts of TLC's last summary line
	// ("16 states generated, 9 distinct states found, 0 states left on queue.").
	Generated, Distinct, Left int
	// Depth is "the depth of the complete state graph search"; -1 if absent.
	Depth int
	// NoError is true when TLC printed "Model checking completed. No error
	// has been found."
	NoError bool
	// Errors are TLC's "Error: ..." lines, without the prefix.
	Errors []string
	// Trace is the behaviour printed with a violation, if any. A trailing
	// "Stuttering" or "Back to state N" step has Action "Stuttering" or
	// "Back to state N" and no State.
	Trace []TLCStep
}

var (
	reGenerated = regexp.MustCompile(`^(\d+) states generated, (\d+) distinct states found, (\d+) states left on queue\.$`)
	reDepth     = regexp.MustCompile(`^The depth of the complete state graph search is (\d+)\.$`)
	reStep      = regexp.MustCompile(`^State (\d+): (.*)$`)
	reStepAct   = regexp.MustCompile(`^<([A-Za-z0-9_!]+)(?: line \d+, col \d+ to line \d+, col \d+ of module \w+)?>$`)
)

// ParseTLCOutput reads TLC's standard output: its version line, the state
// counts, the verdict, error lines and the behaviour printed with a
// violation (each state parsed with [ParseState]). It returns an error
// wrapping [ErrSyntax] for output that has no version line or no summary,
// or whose trace states do not parse.
func ParseTLCOutput(r io.Reader) (*TLCReport, error) {
	rep := &TLCReport{Depth: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var (
		lineNo    int
		summary   bool
		cur       *TLCStep // the trace step whose state is being read
		stateText strings.Builder
		stateLine int
	)
	flush := func() error {
		if cur == nil {
			return nil
		}
		st, err := ParseState(stateText.String())
		if err != nil {
			return fmt.Errorf("TLC output line %d: state %d: %w", stateLine, cur.Number, err)
		}
		cur.State = st
		rep.Trace = append(rep.Trace, *cur)
		cur = nil
		stateText.Reset()
		return nil
	}
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if cur != nil {
			if strings.TrimSpace(line) != "" {
				stateText.WriteString(line + "\n")
				continue
			}
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		switch t := strings.TrimSpace(line); {
		case rep.Version == "" && strings.HasPrefix(t, "TLC2 Version "):
			rep.Version = t
		case t == "Model checking completed. No error has been found.":
			rep.NoError = true
		case strings.HasPrefix(t, "Error: "):
			rep.Errors = append(rep.Errors, strings.TrimPrefix(t, "Error: "))
		case reGenerated.MatchString(t):
			m := reGenerated.FindStringSubmatch(t)
			var err error
			if rep.Generated, err = strconv.Atoi(m[1]); err == nil {
				if rep.Distinct, err = strconv.Atoi(m[2]); err == nil {
					rep.Left, err = strconv.Atoi(m[3])
				}
			}
			if err != nil {
				return nil, fmt.Errorf("TLC output line %d: %w: %v", lineNo, ErrSyntax, err)
			}
			summary = true
		case reDepth.MatchString(t):
			d, err := strconv.Atoi(reDepth.FindStringSubmatch(t)[1])
			if err != nil {
				return nil, fmt.Errorf("TLC output line %d: %w: %v", lineNo, ErrSyntax, err)
			}
			rep.Depth = d
		case reStep.MatchString(t):
			m := reStep.FindStringSubmatch(t)
			n, err := strconv.Atoi(m[1])
			if err != nil {
				return nil, fmt.Errorf("TLC output line %d: %w: %v", lineNo, ErrSyntax, err)
			}
			step := TLCStep{Number: n}
			switch {
			case m[2] == "<Initial predicate>":
				step.Action = "Init"
			case m[2] == "Stuttering":
				step.Action = "Stuttering"
				rep.Trace = append(rep.Trace, step)
				continue
			case reStepAct.MatchString(m[2]):
				step.Action = reStepAct.FindStringSubmatch(m[2])[1]
			default:
				return nil, fmt.Errorf("TLC output line %d: %w: cannot read the action of %q", lineNo, ErrSyntax, clip(t))
			}
			cur, stateLine = &step, lineNo+1
		case strings.HasPrefix(t, "Back to state "):
			rep.Trace = append(rep.Trace, TLCStep{Action: strings.TrimSuffix(strings.SplitN(t, ":", 2)[0], ":")})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("TLC output line %d: %w", lineNo+1, err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if rep.Version == "" {
		return nil, fmt.Errorf("TLC output: %w: no \"TLC2 Version\" line", ErrSyntax)
	}
	if !summary {
		return nil, fmt.Errorf("TLC output: %w: no \"states generated\" summary (truncated?)", ErrSyntax)
	}
	return rep, nil
}
