package monitor

import (
	"fmt"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/trace"
)

// Spec is a spec the monitor checks events against: the name that appears
// in the subjects (tracecheck.<name>.<partition>) and its Go transcription.
// Of builds one.
type Spec struct {
	// Name is the spec's name on the bus (CheckSpecName).
	Name string
	// newJudge returns a checker of one instance whose positions name
	// file.
	newJudge func(file string) (judge, error)
}

// Of returns the spec sp under name, as the monitor checks it: with the
// same checker as `tracecheck check` (package check).
func Of[S comparable](name string, sp *model.Spec[S]) Spec {
	return Spec{Name: name, newJudge: func(file string) (judge, error) {
		j := &checkerJudge[S]{}
		c, err := check.New(sp, check.Options{Name: file, OnViolation: func(check.InstanceResult) { j.violated = true }})
		if err != nil {
			return nil, err
		}
		j.c = c
		return j, nil
	}}
}

// validate reports whether s can be used: a good name, a usable model.
func (s Spec) validate() error {
	if err := CheckSpecName(s.Name); err != nil {
		return err
	}
	if s.newJudge == nil {
		return fmt.Errorf("monitor: spec %s has no model (build it with monitor.Of)", s.Name)
	}
	if _, err := s.newJudge("-"); err != nil {
		return fmt.Errorf("monitor: spec %s: %w", s.Name, err)
	}
	return nil
}

// judge checks the events of one instance, in order: the checker of
// `tracecheck check` over a stream that holds only that instance, so its
// verdict is the one `tracecheck check` gives on the instance's events.
type judge interface {
	// feed checks one event; an error is an input error (check.ErrInput).
	feed(r *trace.Raw) error
	// broken reports that the instance violated the spec: its verdict is
	// final.
	broken() bool
	// result ends the instance's stream and returns its verdict.
	result() check.InstanceResult
}

type checkerJudge[S comparable] struct {
	c        *check.Checker[S]
	violated bool
}

func (j *checkerJudge[S]) feed(r *trace.Raw) error { return j.c.Feed(r) }
func (j *checkerJudge[S]) broken() bool            { return j.violated }

func (j *checkerJudge[S]) result() check.InstanceResult {
	rep := j.c.Close()
	if len(rep.Instances) != 1 {
		// One instance was fed (the monitor keys its judges by instance):
		// anything else is a bug, said rather than hidden.
		return check.InstanceResult{Verdict: check.Incomplete, Reason: fmt.Sprintf("monitor: internal error: %d instances in one judge", len(rep.Instances))}
	}
	return rep.Instances[0]
}
