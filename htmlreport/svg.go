package htmlreport

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Edge is one transition of a spec's state graph, and how often the
// traces took it.
type Edge struct {
	From, Action, To string
	Count            int
}

// Chart is a spec's state graph with its transition coverage: what
// [WriteSVG] draws.
type Chart struct {
	// Spec names the spec.
	Spec string
	// Init lists the initial states, as the edges name them.
	Init []string
	// Edges lists every transition (the graph's edges, self-loops
	// included), with its count.
	Edges []Edge
	// Required and RequiredExercised, when Required > 0, say how many of
	// the transitions a gate requires to be exercised and how many of
	// those were (for instance, all but terminal self-loops).
	Required, RequiredExercised int
	// RequiredRule says which transitions are required, in a few words.
	RequiredRule string
	// NotRequired lists the transitions of Edges that are not required
	// (RequiredRule says why), with their counts: the report lists them
	// apart, and its percentage is over the required ones.
	NotRequired []Edge
}

// Exercised returns how many of the chart's transitions were taken at
// least once.
func (c *Chart) Exercised() int {
	n := 0
	for _, e := range c.Edges {
		if e.Count > 0 {
			n++
		}
	}
	return n
}

// Layout constants, in SVG user units (pixels at 100%).
const (
	fontSize  = 11
	lineH     = 14
	charW     = 6.7 // width of one character of the monospace font
	nodePad   = 8
	colGap    = 190 // horizontal room between columns, for edge labels
	rowGap    = 46
	margin    = 30
	loopStep  = 16 // extra radius for each further self-loop on a node
	labelSize = 10
)

type node struct {
	id      string
	lines   []string
	layer   int
	x, y    float64 // top-left corner
	w, h    float64
	initial bool
	loops   int // self-loops drawn so far
}

func (n *node) cx() float64 { return n.x + n.w/2 }
func (n *node) cy() float64 { return n.y + n.h/2 }

// stateLines splits a state "a = 1 /\ b = 2" (TLA+ conjunction of
// variable values, as tracecheck formats states) into one line per
// variable.
func stateLines(s string) []string {
	parts := strings.Split(s, ` /\ `)
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// layout places the chart's states in columns by breadth-first distance
// from the initial states; states no initial state reaches go last.
func layout(c *Chart) ([]*node, map[string]*node) {
	byID := map[string]*node{}
	var order []*node
	add := func(id string) *node {
		if n, ok := byID[id]; ok {
			return n
		}
		n := &node{id: id, lines: stateLines(id), layer: -1}
		byID[id] = n
		order = append(order, n)
		return n
	}
	for _, s := range c.Init {
		add(s).initial = true
	}
	out := map[string][]string{}
	for _, e := range c.Edges {
		add(e.From)
		add(e.To)
		out[e.From] = append(out[e.From], e.To)
	}
	var queue []*node
	for _, s := range c.Init {
		n := byID[s]
		if n.layer < 0 {
			n.layer = 0
			queue = append(queue, n)
		}
	}
	maxLayer := 0
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, t := range out[n.id] {
			if m := byID[t]; m.layer < 0 {
				m.layer = n.layer + 1
				maxLayer = max(maxLayer, m.layer)
				queue = append(queue, m)
			}
		}
	}
	for _, n := range order {
		if n.layer < 0 {
			n.layer = maxLayer + 1
		}
	}
	// Column widths, then positions.
	layers := map[int][]*node{}
	colW := map[int]float64{}
	top := 0
	for _, n := range order {
		w := 0
		for _, l := range n.lines {
			w = max(w, len(l))
		}
		n.w = float64(w)*charW + 2*nodePad
		n.h = float64(len(n.lines))*lineH + 2*nodePad - 4
		layers[n.layer] = append(layers[n.layer], n)
		colW[n.layer] = math.Max(colW[n.layer], n.w)
		top = max(top, n.layer)
	}
	x := float64(margin)
	for l := 0; l <= top; l++ {
		y := float64(margin) + 3*loopStep // room for self-loops above
		for _, n := range layers[l] {
			n.x = x + (colW[l]-n.w)/2
			n.y = y
			y += n.h + rowGap + 2*loopStep
		}
		x += colW[l] + colGap
	}
	return order, byID
}

// edgeColour maps a transition's count to a stroke: never taken is red
// and dashed; taken is green, wider the more often (log scale).
func edgeStyle(count int) (colour string, width float64, dash string) {
	if count == 0 {
		return "#c0392b", 1.2, "5 4"
	}
	return "#1e8449", 1.2 + math.Min(3.5, math.Log10(float64(count)+1)), ""
}

// WriteSVG draws the chart as a standalone SVG element: states as boxes
// (initial ones with a double border) in columns by distance from the
// initial states, each transition as an arrow labelled with its action and
// coloured by how often the traces took it. Every transition is one
// <g class="edge"> with data-count and data-action attributes and a
// <title> tooltip, so tools (and tests) can read the figures back.
func WriteSVG(w io.Writer, c *Chart) error {
	order, byID := layout(c)
	width, height := 0.0, 0.0
	for _, n := range order {
		width = math.Max(width, n.x+n.w)
		height = math.Max(height, n.y+n.h)
	}
	width += margin + colGap/2
	height += margin + 3*loopStep
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" font-family="ui-monospace, Menlo, Consolas, monospace" font-size="%d">`+"\n",
		width, height, width, height, fontSize)
	fmt.Fprintf(&b, "<title>%s: %d/%d transitions exercised</title>\n", esc(c.Spec), c.Exercised(), len(c.Edges))
	b.WriteString(`<defs>` +
		`<marker id="ah-g" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#1e8449"/></marker>` +
		`<marker id="ah-r" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#c0392b"/></marker>` +
		"</defs>\n")
	// Parallel edges between the same two states bend apart.
	type pair struct{ a, b string }
	seen := map[pair]int{}
	for _, e := range c.Edges {
		from, to := byID[e.From], byID[e.To]
		colour, sw, dash := edgeStyle(e.Count)
		marker := "ah-g"
		if e.Count == 0 {
			marker = "ah-r"
		}
		fmt.Fprintf(&b, `<g class="edge" data-count="%d" data-action="%s"><title>%s: %s → %s, taken %d time%s</title>`,
			e.Count, esc(e.Action), esc(e.Action), esc(oneLine(e.From)), esc(oneLine(e.To)), e.Count, plural(e.Count))
		var d string
		var lx, ly float64
		if from == to {
			r := 14 + float64(from.loops)*loopStep
			from.loops++
			cx, top := from.cx(), from.y
			d = fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", cx-8, top, cx-8-r, top-2*r, cx+8+r, top-2*r, cx+8, top)
			lx, ly = cx+r+10, top-1.5*r
		} else {
			k := seen[pair{e.From, e.To}] + seen[pair{e.To, e.From}]
			seen[pair{e.From, e.To}]++
			x1, y1 := anchor(from, to)
			x2, y2 := anchor(to, from)
			// Bend: alternate sides, growing with each parallel edge;
			// edges going back to an earlier column bend further.
			bend := 18.0 * float64((k+1)/2)
			if k%2 == 1 {
				bend = -bend
			}
			if to.layer <= from.layer {
				bend += 40
			}
			mx, my := (x1+x2)/2, (y1+y2)/2
			dx, dy := x2-x1, y2-y1
			l := math.Hypot(dx, dy)
			if l == 0 {
				l = 1
			}
			nx, ny := -dy/l, dx/l
			qx, qy := mx+nx*bend*2, my+ny*bend*2
			d = fmt.Sprintf("M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f", x1, y1, qx, qy, x2, y2)
			lx, ly = mx+nx*bend, my+ny*bend // the curve's midpoint
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="%.1f"`, d, colour, sw)
		if dash != "" {
			fmt.Fprintf(&b, ` stroke-dasharray="%s"`, dash)
		}
		fmt.Fprintf(&b, ` marker-end="url(#%s)"/>`, marker)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%d" fill="%s" text-anchor="middle" paint-order="stroke" stroke="#fff" stroke-width="3">%s %s</text></g>`+"\n",
			lx, ly, labelSize, colour, esc(e.Action), countLabel(e.Count))
	}
	for _, n := range order {
		fmt.Fprintf(&b, `<g class="state" data-state="%s"><title>%s</title>`, esc(n.id), esc(oneLine(n.id)))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="6" fill="#f4f6f7" stroke="#34495e" stroke-width="1.2"/>`, n.x, n.y, n.w, n.h)
		if n.initial {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="8" fill="none" stroke="#34495e" stroke-width="1"/>`, n.x-3, n.y-3, n.w+6, n.h+6)
		}
		for i, l := range n.lines {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#17202a">%s</text>`, n.x+nodePad, n.y+nodePad+float64(i)*lineH+fontSize-2, esc(l))
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// anchor is where an edge from n towards m leaves n's box: the middle of
// the side facing m.
func anchor(n, m *node) (float64, float64) {
	dx, dy := m.cx()-n.cx(), m.cy()-n.cy()
	if math.Abs(dx)*n.h >= math.Abs(dy)*n.w {
		if dx >= 0 {
			return n.x + n.w, n.cy()
		}
		return n.x, n.cy()
	}
	if dy >= 0 {
		return n.cx(), n.y + n.h
	}
	return n.cx(), n.y
}

func countLabel(n int) string {
	if n == 0 {
		return "(never)"
	}
	return fmt.Sprintf("×%d", n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func oneLine(state string) string { return strings.Join(stateLines(state), ", ") }

func esc(s string) string { return html.EscapeString(s) }
