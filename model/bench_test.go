package model_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
)

// maxK is the largest composition the benchmark builds.
const maxK = 6

// composed is K independent Program instances; entries past K stay zero.
type composed [maxK]program.State

// compose returns the interleaving product of k copies of Program: each
// action of instance i is named "i.Action", so the product has 9^k states.
func compose(k int) *model.Spec[composed] {
	p := program.Spec()
	sp := &model.Spec[composed]{
		Name:          "program^" + strconv.Itoa(k),
		Init:          func() []composed { return []composed{{}} },
		CheckDeadlock: true,
	}
	for i := 0; i < k; i++ {
		for _, v := range p.Vars {
			sp.Vars = append(sp.Vars, strconv.Itoa(i)+"."+v)
		}
		for _, a := range p.Actions {
			sp.Actions = append(sp.Actions, model.Action[composed]{
				Name:  strconv.Itoa(i) + "." + a.Name,
				Guard: func(s composed) string { return a.Guard(s[i]) },
				Next: func(s composed, emit func(composed)) {
					a.Next(s[i], func(t program.State) { s[i] = t; emit(s) })
				},
			})
		}
		for _, inv := range p.Invariants {
			sp.Invariants = append(sp.Invariants, model.Invariant[composed]{
				Name: strconv.Itoa(i) + "." + inv.Name, Holds: func(s composed) bool { return inv.Holds(s[i]) }})
		}
		for _, pr := range p.Properties {
			sp.Properties = append(sp.Properties, model.Property[composed]{
				Name:  strconv.Itoa(i) + "." + pr.Name,
				Holds: func(f composed, a string, t composed) bool { return pr.Holds(f[i], a, t[i]) }})
		}
	}
	sp.Valuation = func(s composed) []model.Value {
		var out []model.Value
		for i := 0; i < k; i++ {
			out = append(out, p.Valuation(s[i])...)
		}
		return out
	}
	return sp
}

func TestComposeCounts(t *testing.T) {
	for k := 1; k <= 3; k++ {
		r, err := model.Explore(context.Background(), compose(k), model.Options{})
		if err != nil {
			t.Fatal(err)
		}
		states, edges := 1, 0
		for i := 0; i < k; i++ {
			states *= 9
		}
		edges = k * 15 * states / 9 // each instance's 15 edges, times the other instances' states
		if r.States() != states || r.Transitions() != edges || !r.OK() {
			t.Errorf("k=%d: %d states %d transitions ok=%v, want %d and %d", k, r.States(), r.Transitions(), r.OK(), states, edges)
		}
	}
}

// BenchmarkExplore explores K independent Program instances (9^K states)
// and reports states/s, transitions/s and the heap the result holds.
func BenchmarkExplore(b *testing.B) {
	for k := 1; k <= maxK; k++ {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			sp := compose(k)
			var r *model.Result[composed]
			var peak uint64
			for b.Loop() {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				var err error
				r, err = model.Explore(context.Background(), sp, model.Options{})
				if err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				if d := after.HeapAlloc - before.HeapAlloc; d > peak && after.HeapAlloc > before.HeapAlloc {
					peak = d
				}
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(r.States())/sec, "states/s")
			b.ReportMetric(float64(r.Transitions())/sec, "transitions/s")
			b.ReportMetric(float64(r.States()), "states")
			b.ReportMetric(float64(peak)/(1<<20), "heap-MB")
		})
	}
}
