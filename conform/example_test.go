package conform_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
)

func ExampleParseTLAValue() {
	v, err := conform.ParseTLAValue(`[phase |-> "Ready", seen |-> {<<1, -2>>, <<3>>}, f |-> (0 :> TRUE), g |-> ("a" :> 1)]`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v) // printed as TLC prints it: ("a" :> 1) is the record [a |-> 1]
	_, err = conform.ParseTLAValue(`<<1, 2`)
	fmt.Println(err)
	// Output:
	// [f |-> (0 :> TRUE), g |-> [a |-> 1], phase |-> "Ready", seen |-> {<<3>>, <<1, -2>>}]
	// parse TLA+ value: malformed tool output: offset 6: want "," or ">>", found end of input
}

func ExampleCompare() {
	// TLC's dump of a graph with one state and one self-loop, against
	// the Go model of Program.tla: the diff names what differs.
	dot := `strict digraph DiskGraph {
subgraph cluster_graph {
1 [label="/\\ phase = \"Ready\"\n/\\ verified = FALSE\n/\\ published = FALSE",style = filled]
1 -> 1 [label="Wait"];
}
}`
	tool, err := conform.ParseTLCDot(strings.NewReader(dot))
	if err != nil {
		fmt.Println(err)
		return
	}
	sp := program.Spec()
	res, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	mg, err := conform.FromModel(sp, &res.Graph)
	if err != nil {
		fmt.Println(err)
		return
	}
	d := conform.Compare(mg, tool)
	fmt.Println(len(d.MissingStates), "states and", len(d.MissingEdges), "edges only in the Go model")
	fmt.Print("edges only in TLC: ", d.ExtraEdges[0])
	// Output:
	// 8 states and 15 edges only in the Go model
	// edges only in TLC: (/\ phase = "Ready" /\ published = FALSE /\ verified = FALSE)  --Wait-->  (/\ phase = "Ready" /\ published = FALSE /\ verified = FALSE)
}
