package model_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tracecheck/tracecheck/model"
)

// The state bound: a spec of exactly n states explores with MaxStates n
// and fails with ErrTooManyStates (and no result) under n − 1, whether the
// state past the bound is a successor or an initial state.
func TestMaxStates(t *testing.T) {
	inits := func(k int) *model.Spec[int] { // k initial states, no actions
		sp := counter(1, 10, true)
		sp.Init = func() []int {
			out := make([]int, k)
			for i := range out {
				out[i] = i
			}
			return out
		}
		sp.CheckDeadlock = false
		return sp
	}
	cases := []struct {
		name   string
		sp     *model.Spec[int]
		max    int
		states int // 0: want ErrTooManyStates
	}{
		{"successors at the bound", counter(5, 10, false), 5, 5},
		{"successors past the bound", counter(5, 10, false), 4, 0},
		{"a bound above the states", counter(5, 10, false), 6, 5},
		{"initial states at the bound", inits(3), 3, 3},
		{"initial states past the bound", inits(3), 2, 0},
		{"no bound", counter(5, 10, false), 0, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := model.Explore(context.Background(), c.sp, model.Options{MaxStates: c.max})
			if c.states == 0 {
				if !errors.Is(err, model.ErrTooManyStates) || r != nil {
					t.Fatalf("got %v, %v; want ErrTooManyStates and no result", r, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.States() != c.states {
				t.Errorf("%d states, want %d", r.States(), c.states)
			}
		})
	}
}

// A cancelled context stops exploration before the first state is
// expanded, even for a spec of one state.
func TestExploreCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := model.Explore(ctx, counter(1, 10, true), model.Options{})
	if !errors.Is(err, context.Canceled) || r != nil {
		t.Fatalf("got %v, %v; want context.Canceled and no result", r, err)
	}
}

// Checked names the invariants, the properties and, only when the spec
// asks for it, deadlock freedom.
func TestChecked(t *testing.T) {
	for _, deadlock := range []bool{true, false} {
		sp := counter(3, 10, false)
		sp.CheckDeadlock = deadlock
		r, err := model.Explore(context.Background(), sp, model.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"Bounded", "StepByOne"}
		if deadlock {
			want = append(want, "Deadlock")
		}
		if !slices.Equal(r.Checked, want) {
			t.Errorf("CheckDeadlock %v: Checked %q, want %q", deadlock, r.Checked, want)
		}
	}
}

// Spec.Check names the first invariant a state breaks; Action.Successors
// emits only from a state where the action is enabled.
func TestCheckAndSuccessors(t *testing.T) {
	sp := counter(3, 2, false)
	sp.Invariants = append(sp.Invariants, model.Invariant[int]{Name: "Small", Holds: func(x int) bool { return x < 1 }})
	for x, want := range []string{"", "Small", "Bounded"} {
		if got := sp.Check(x); got != want {
			t.Errorf("Check(%d) = %q, want %q", x, got, want)
		}
	}
	inc, err := sp.Action("Inc")
	if err != nil {
		t.Fatal(err)
	}
	for x, want := range [][]int{{1}, {2}, nil} { // Inc is disabled at x = 2 (n = 3)
		var got []int
		inc.Successors(x, func(y int) { got = append(got, y) })
		if !slices.Equal(got, want) {
			t.Errorf("Inc.Successors(%d) = %v, want %v", x, got, want)
		}
	}
}

// The accessors of Value answer for their own kind only, and a kind past
// the last prints as Kind(n).
func TestValueAccessors(t *testing.T) {
	f, err := model.Func([]model.Value{model.Int(7), model.Int(3)}, []model.Value{model.Str("a"), model.Str("b")})
	if err != nil {
		t.Fatal(err)
	}
	rec := model.Record(model.Field{Name: "y", Value: model.Int(2)}, model.Field{Name: "x", Value: model.Int(1)})
	vals := map[string]model.Value{
		"bool": model.Bool(true), "int": model.Int(5), "string": model.Str("s"),
		"seq": model.Seq(model.Int(1), model.Int(2)), "set": model.Set(model.Int(3)),
		"record": rec, "func": f,
	}
	for kind, v := range vals {
		if v.Kind().String() != kind {
			t.Errorf("%v: kind %s, want %s", v, v.Kind(), kind)
		}
		if b, ok := v.AsBool(); ok != (kind == "bool") || (ok && !b) {
			t.Errorf("%v: AsBool = %v, %v", v, b, ok)
		}
		if i, ok := v.AsInt(); ok != (kind == "int") || (ok && i != 5) {
			t.Errorf("%v: AsInt = %v, %v", v, i, ok)
		}
		if s, ok := v.AsString(); ok != (kind == "string") || (ok && s != "s") {
			t.Errorf("%v: AsString = %q, %v", v, s, ok)
		}
		if e := v.Elems(); (e != nil) != (kind == "seq" || kind == "set") {
			t.Errorf("%v: Elems = %v", v, e)
		}
		if fs := v.Fields(); (fs != nil) != (kind == "record" || kind == "func") {
			t.Errorf("%v: Fields = %v", v, fs)
		}
	}
	if got := rec.Fields(); len(got) != 2 || got[0].Name != "x" || got[1].Name != "y" {
		t.Errorf("record fields %v, want x then y", got)
	}
	if got := f.Fields(); len(got) != 2 || got[0].Name != "3" || got[1].Name != "7" || !got[0].Value.Equal(model.Str("b")) {
		t.Errorf("function fields %v, want 3 :> \"b\" then 7 :> \"a\"", got)
	}
	for k, want := range map[model.Kind]string{model.KindFunc: "func", model.KindFunc + 1: "Kind(8)", 200: "Kind(200)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}
