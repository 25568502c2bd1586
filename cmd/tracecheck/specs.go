package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

// traceModel is a bundled spec as the trace commands use it. Generics rule
// out a map of *model.Spec[S] of different S, so each spec is wrapped in a
// specModel[S] behind this interface.
type traceModel interface {
	name() string
	check(ctx context.Context, r io.Reader, file string, opt check.Options) (*check.Report, error)
	coverage(ctx context.Context, reports []*check.Report) (*check.Coverage, error)
	hasAction(name string) bool
}

type specModel[S comparable] struct {
	label string
	sp    *model.Spec[S]
}

func (m specModel[S]) name() string { return m.label }

func (m specModel[S]) check(ctx context.Context, r io.Reader, file string, opt check.Options) (*check.Report, error) {
	rep, err := check.Check(ctx, m.sp, r, file, opt)
	if rep != nil {
		rep.Model = m.label // the name the user gave, e.g. the mutant's
	}
	return rep, err
}

func (m specModel[S]) coverage(ctx context.Context, reports []*check.Report) (*check.Coverage, error) {
	return check.CoverageOf(ctx, m.sp, reports...)
}

func (m specModel[S]) hasAction(name string) bool {
	_, err := m.sp.Action(name)
	return err == nil
}

// traceModelNames lists the models the trace commands accept, the default
// (inferred) first.
// A session mutant is "session-mutant-" plus a name explore's --mutant
// takes (see mutants in explore.go).
var traceModelNames = []string{"program", "session", "session-mutant-no-compaction-teardown",
	"session-mutant-no-vad-teardown", "session-mutant-no-resp-teardown"}

// traceModelFor returns the named model.
func traceModelFor(name string) (traceModel, bool) {
	switch name {
	case "program":
		return specModel[program.State]{name, program.Spec()}, true
	case "session":
		return specModel[session.State]{name, session.Spec(session.Options{})}, true
	}
	if opt, ok := mutants[strings.TrimPrefix(name, "session-mutant-")]; ok && strings.HasPrefix(name, "session-mutant-") {
		return specModel[session.State]{name, session.Spec(opt)}, true
	}
	return nil, false
}

var actionField = regexp.MustCompile(`"action"\s*:\s*"([A-Za-z0-9_]+)"`)

var varField = regexp.MustCompile(`"(phase|verified|published|conn|vad|resp|compaction)"\s*:`)

// inferModel guesses the model from the head of a trace: the first action
// that only one of program and session has decides, else the first
// variable name only one has (so the Init line alone suffices). It falls
// back to program.
func inferModel(head []byte) string {
	prog, _ := traceModelFor("program")
	sess, _ := traceModelFor("session")
	if m := inferFromActions(head, prog, sess); m != "" {
		return m
	}
	if m := varField.FindSubmatch(head); m != nil {
		switch string(m[1]) {
		case "conn", "vad", "resp", "compaction":
			return "session"
		}
	}
	return "program"
}

func inferFromActions(head []byte, prog, sess traceModel) string {
	for _, line := range bytes.Split(head, []byte("\n")) {
		if bytes.Contains(line, []byte(`"stutter":true`)) {
			continue
		}
		for _, m := range actionField.FindAllSubmatch(line, -1) {
			a := string(m[1])
			p, s := prog.hasAction(a), sess.hasAction(a)
			switch {
			case p && !s:
				return "program"
			case s && !p:
				return "session"
			}
		}
	}
	return ""
}

func modelList() string { return strings.Join(traceModelNames, ", ") }
