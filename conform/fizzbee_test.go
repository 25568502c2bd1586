package conform

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/model"
)

// A tiny protobuf writer for test input.
func pbVarint(b []byte, num int, v uint64) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3)
	return binary.AppendUvarint(b, v)
}

func pbBytes(b []byte, num int, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func pbNodes(jsons ...string) []byte {
	var b []byte
	for _, j := range jsons {
		b = pbBytes(b, 1, []byte(j))
	}
	return b
}

func pbLink(src, dest int64, name string) []byte {
	var l []byte
	if src != 0 {
		l = pbVarint(l, 1, uint64(src))
	}
	if dest != 0 {
		l = pbVarint(l, 2, uint64(dest))
	}
	l = pbBytes(l, 3, []byte(name))
	l = binary.AppendUvarint(l, 5<<3|1) // weight, a double
	l = binary.LittleEndian.AppendUint64(l, math.Float64bits(0.5))
	return pbBytes(l, 9, []byte("action"))
}

func pbLinks(total int64, links ...[]byte) []byte {
	b := pbVarint(nil, 1, uint64(total))
	for _, l := range links {
		b = pbBytes(b, 2, l)
	}
	return b
}

func fizzNodeJSON(conn, vad int) string {
	return fmt.Sprintf(`{"name":"yield","roles":[{"name":"Session","ref":0,"ref_string":"Session#0","params":{},`+
		`"fields":{"conn":%d,"vad":%d}}],"state":{"s":"role Session#0"},"threads":[]}`, conn, vad)
}

func cv(conn, vad int64) model.Value {
	return model.Record(model.Field{Name: "conn", Value: model.Int(conn)}, model.Field{Name: "vad", Value: model.Int(vad)})
}

func validFizz() (nodes, links []byte) {
	nodes = pbNodes(fizzNodeJSON(0, 0), fizzNodeJSON(0, 1), fizzNodeJSON(1, 2))
	links = pbLinks(3,
		pbLink(0, 1, "Session#0.VadStart"),
		pbLink(0, 2, "Session#0.Teardown"),
		pbLink(1, 0, "Session#0.VadStop"),
		pbLink(1, 1, "Session#0.Poke"),
		pbLink(1, 2, "Session#0.Teardown"),
		pbLink(2, 2, "end"))
	return nodes, links
}

func TestParseFizzGraph(t *testing.T) {
	g, err := ParseFizzGraph(validFizz())
	if err != nil {
		t.Fatal(err)
	}
	want := &Graph{Source: "want",
		States:   []model.Value{cv(0, 0), cv(0, 1), cv(1, 2)},
		Init:     []int{0},
		Edges:    []Edge{{0, 1, "VadStart"}, {0, 2, "Teardown"}, {1, 0, "VadStop"}, {1, 1, "Poke"}, {1, 2, "Teardown"}},
		Stutters: []int{2},
	}
	if d := Compare(want, g); !d.Empty() {
		t.Errorf("graph:\n%s", d)
	}
	if len(g.Edges) != 5 {
		t.Errorf("the end link became an edge: %v", g.Edges)
	}
}

func TestParseFizzGraphMalformed(t *testing.T) {
	nodes, links := validFizz()
	withNode := func(j string) []byte { return pbNodes(fizzNodeJSON(0, 0), j, fizzNodeJSON(1, 2)) }
	tests := []struct {
		name         string
		nodes, links []byte
		want         error
	}{
		{"empty nodes", nil, links, ErrSyntax},
		{"empty links", nodes, nil, ErrSyntax},
		{"garbage nodes", []byte("garbage!"), links, ErrSyntax},
		{"truncated nodes", nodes[:len(nodes)-5], links, ErrSyntax},
		{"truncated links", nodes, links[:len(links)-3], ErrSyntax},
		{"truncated varint", nodes, append(pbVarint(nil, 1, 3), 0x08, 0x80), ErrSyntax},
		{"length past end", append([]byte{0x0a, 0x7f}, "short"...), links, ErrSyntax},
		{"group wire type", []byte{0x0b}, links, ErrSyntax},
		{"field zero", []byte{0x00, 0x01}, links, ErrSyntax},
		{"invalid UTF-8", pbNodes("\xff"), links, ErrSyntax},
		{"node not JSON", withNode(`{"name":`), links, ErrSyntax},
		{"node JSON with trailer", withNode(fizzNodeJSON(0, 1) + "{}"), links, ErrSyntax},
		{"total mismatch", nodes, pbLinks(4, pbLink(0, 1, "Session#0.VadStart")), ErrSyntax},
		{"link out of range", nodes, pbLinks(3, pbLink(0, 7, "Session#0.VadStart")), ErrSyntax},
		{"negative link", nodes, pbLinks(3, pbLink(-1, 0, "Session#0.VadStart")), ErrSyntax},
		{"link without name", nodes, pbLinks(3, pbLink(0, 1, "")), ErrSyntax},
		{"end link not a self-loop", nodes, pbLinks(3, pbLink(1, 2, "end")), ErrSyntax},
		{"link name not a string", nodes, pbLinks(3, pbVarint(nil, 3, 7)), ErrSyntax},
		{"role without ref", withNode(`{"name":"yield","roles":[{"name":"Session","fields":{}}]}`), links, ErrSyntax},
		{"internal node", withNode(strings.Replace(fizzNodeJSON(0, 1), `"yield"`, `"action"`, 1)), links, ErrUnsupported},
		{"live thread", withNode(strings.Replace(fizzNodeJSON(0, 1), `"threads":[]`, `"threads":[{}]`, 1)), links, ErrUnsupported},
		{"two instances", withNode(`{"name":"yield","roles":[{"name":"S","ref_string":"S#0","fields":{}},{"name":"S","ref_string":"S#1","fields":{}}]}`), links, ErrUnsupported},
		{"null field", withNode(strings.Replace(fizzNodeJSON(0, 1), `"vad":1`, `"vad":null`, 1)), links, ErrUnsupported},
		{"float field", withNode(strings.Replace(fizzNodeJSON(0, 1), `"vad":1`, `"vad":1.5`, 1)), links, ErrUnsupported},
		{"global clashes with field", withNode(strings.Replace(fizzNodeJSON(0, 1), `"s":"role Session#0"`, `"s":"role Session#0","vad":3`, 1)), links, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseFizzGraph(tt.nodes, tt.links)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ParseFizzGraph = %v, %v; want an error wrapping %v", g, err, tt.want)
			}
		})
	}
}

func TestFizzJSONValues(t *testing.T) {
	st, _, err := fizzState([]byte(`{"name":"yield","state":{"g":[1,"a",true,{"k":-2}]},"roles":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Record(model.Field{Name: "g", Value: model.Seq(model.Int(1), model.Str("a"), model.Bool(true),
		model.Record(model.Field{Name: "k", Value: model.Int(-2)}))})
	if !st.Equal(want) {
		t.Errorf("got %s", FormatState(st))
	}
}

const fizzFailed = `Model checking session_no_compaction_teardown.json
Nodes: 5, queued: 21, elapsed: 3.780413ms
FAILED: Model checker failed. Invariant:  ChildrenDieWithParent
------
Init
--
state: {"s":"role Session#0"}
Session#0: fields(compaction = 0, conn = 0, name = "a\"b", ok = True, xs = [1, -2])
------
Session#0.Teardown
--
state: {"s":"role Session#0"}
Session#0: fields(compaction = 0, conn = 1, name = "", ok = False, xs = [])
------
Writen graph json: out/run_2026-11-29_15-54-08/error-graph.json
`

const fizzPassed = `Model checking session.json
Nodes: 9, queued: 0, elapsed: 18.37541ms
Valid Nodes: 9 Unique states: 9
IsLive: true
PASSED: Model checker completed successfully
`

func TestParseFizzOutput(t *testing.T) {
	r, err := ParseFizzOutput(strings.NewReader(fizzPassed))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != "PASSED" || r.Nodes != 9 || r.ValidNodes != 9 || r.UniqueStates != 9 || len(r.Trace) != 0 {
		t.Errorf("passed: %+v", r)
	}
	r, err = ParseFizzOutput(strings.NewReader(fizzFailed))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != "FAILED" || r.FailedInvariant != "ChildrenDieWithParent" || r.UniqueStates != -1 || r.Nodes != 5 {
		t.Errorf("failed: %+v", r)
	}
	if len(r.Trace) != 2 || r.Trace[0].Action != "Init" || r.Trace[1].Action != "Teardown" {
		t.Fatalf("trace: %+v", r.Trace)
	}
	first := model.Record(
		model.Field{Name: "compaction", Value: model.Int(0)}, model.Field{Name: "conn", Value: model.Int(0)},
		model.Field{Name: "name", Value: model.Str(`a"b`)}, model.Field{Name: "ok", Value: model.Bool(true)},
		model.Field{Name: "xs", Value: model.Seq(model.Int(1), model.Int(-2))})
	if !r.Trace[0].State.Equal(first) {
		t.Errorf("first state %s", FormatState(r.Trace[0].State))
	}
}

func TestParseFizzOutputMalformed(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty", "", ErrSyntax},
		{"garbage", "\x00garbage\n", ErrSyntax},
		{"truncated before verdict", fizzPassed[:strings.Index(fizzPassed, "PASSED")], ErrSyntax},
		{"step without fields", strings.Replace(fizzFailed, "Session#0: fields(compaction = 0, conn = 1", "Session#0: oops(", 1), ErrSyntax},
		{"unbalanced list", strings.Replace(fizzFailed, "xs = []", "xs = [1", 1), ErrSyntax},
		{"bad string escape", strings.Replace(fizzFailed, `name = ""`, `name = "\q"`, 1), ErrSyntax},
		{"unterminated string", strings.Replace(fizzFailed, `name = ""`, `name = "`, 1), ErrSyntax},
		{"field twice", strings.Replace(fizzFailed, "conn = 1", "compaction = 1", 1), ErrSyntax},
		{"missing equals", strings.Replace(fizzFailed, "conn = 1", "conn 1", 1), ErrSyntax},
		{"unknown value", strings.Replace(fizzFailed, "conn = 1", "conn = None", 1), ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r, err := ParseFizzOutput(strings.NewReader(tt.in)); !errors.Is(err, tt.want) {
				t.Fatalf("ParseFizzOutput = %+v, %v; want an error wrapping %v", r, err, tt.want)
			}
		})
	}
}

func TestParseFizzErrorGraph(t *testing.T) {
	in := `[{"Node":` + fizzNodeJSON(0, 0) + `,"Name":"Init"},{"Node":` + fizzNodeJSON(1, 2) + `,"Name":"Session#0.Teardown"}]`
	steps, err := ParseFizzErrorGraph(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].Action != "Init" || steps[1].Action != "Teardown" ||
		!steps[0].State.Equal(cv(0, 0)) || !steps[1].State.Equal(cv(1, 2)) {
		t.Errorf("steps %+v", steps)
	}
	for _, bad := range []string{"", "garbage", "[]", `[{"Name":"Init"}]`, `[{"Node":{},"Name":""}]`, in[:len(in)-10],
		`[{"Node":{"name":"yield","roles":[{"name":"S","fields":{}}]},"Name":"Init"}]`} {
		if s, err := ParseFizzErrorGraph(strings.NewReader(bad)); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseFizzErrorGraph(%q) = %v, %v; want ErrSyntax", bad, s, err)
		}
	}
}

// FuzzParseFizzGraph checks that ParseFizzGraph never panics on arbitrary
// protobuf bytes, and returns only ErrSyntax or ErrUnsupported errors.
func FuzzParseFizzGraph(f *testing.F) {
	n, l := validFizz()
	f.Add(n, l)
	f.Add(n[:len(n)/2], l)
	f.Add(n, l[:len(l)/2])
	f.Fuzz(func(t *testing.T, nodes, links []byte) {
		g, err := ParseFizzGraph(nodes, links)
		if err != nil && !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("error %v wraps neither ErrSyntax nor ErrUnsupported", err)
		}
		if err == nil {
			for _, e := range g.Edges {
				if e.From < 0 || e.From >= len(g.States) || e.To < 0 || e.To >= len(g.States) {
					t.Fatalf("edge %v outside %d states", e, len(g.States))
				}
			}
		}
	})
}
