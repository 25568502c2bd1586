package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"

	"github.com/tracecheck/tracecheck/chart"
	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model"
)

// Model is a spec's Go transcription with its state type erased, as the
// commands use it. [Of] builds one.
type Model interface {
	// Name is the transcription's name (model.Spec.Name).
	Name() string
	// Vars and Actions are the spec's variables and actions, in the
	// transcription's order.
	Vars() []string
	Actions() []string
	// Check validates a trace against the model, as check.Check does.
	Check(ctx context.Context, r io.Reader, file string, opt check.Options) (*check.Report, error)
	// Coverage says which of the model's transitions the reports
	// exercised, as check.CoverageOf does.
	Coverage(ctx context.Context, reports []*check.Report) (*check.Coverage, error)

	// explore and chart are the commands of the same name on this model.
	explore(label, files, format string, stdout, stderr io.Writer) int
	chart(format string, stdout, stderr io.Writer) int
}

// Of wraps the transcription sp for the command line. A style, if given,
// is how chart draws its states and edges (the default prints every
// variable and the action names).
func Of[S comparable](sp *model.Spec[S], style ...chart.Style[S]) Model {
	m := &transcription[S]{sp: sp}
	if len(style) > 0 {
		m.style = style[0]
	}
	return m
}

// transcription is a Model over a *model.Spec[S].
type transcription[S comparable] struct {
	sp    *model.Spec[S]
	style chart.Style[S]
}

func (m *transcription[S]) Name() string { return m.sp.Name }

func (m *transcription[S]) Vars() []string { return slices.Clone(m.sp.Vars) }

func (m *transcription[S]) Actions() []string {
	out := make([]string, len(m.sp.Actions))
	for i, a := range m.sp.Actions {
		out[i] = a.Name
	}
	return out
}

func (m *transcription[S]) Check(ctx context.Context, r io.Reader, file string, opt check.Options) (*check.Report, error) {
	return check.Check(ctx, m.sp, r, file, opt)
}

func (m *transcription[S]) Coverage(ctx context.Context, reports []*check.Report) (*check.Coverage, error) {
	return check.CoverageOf(ctx, m.sp, reports...)
}

func (m *transcription[S]) explore(label, files, format string, stdout, stderr io.Writer) int {
	return explore(m.sp, label, files, format, stdout, stderr)
}

func (m *transcription[S]) chart(format string, stdout, stderr io.Writer) int {
	return drawChart(m.sp, m.style, format, stdout, stderr)
}

// check checks r against the model, naming it in the report as the
// command line does.
func (n namedModel) check(ctx context.Context, r io.Reader, file string, opt check.Options) (*check.Report, error) {
	rep, err := n.model.Check(ctx, r, file, opt)
	if rep != nil {
		rep.Model = n.name // the name the user gave, e.g. the mutant's
	}
	return rep, err
}

// headEvent is what inference reads of a trace event: its action, whether
// it is a stutter, and its variables' names. Each line is parsed as JSON,
// whatever its spacing and the order of its fields; "detail" is never
// looked at.
type headEvent struct {
	Action  string                     `json:"action"`
	Stutter bool                       `json:"stutter"`
	State   map[string]json.RawMessage `json:"state"`
}

// infer picks the spec of a trace from its head (its first lines): the
// first event that is not a stutter and whose action only one registered
// spec has decides; else the first whose variables only one spec has all
// of. With nothing to decide by it falls back to the first spec.
func (a *app) infer(head []byte) namedModel {
	for _, line := range bytes.Split(head, []byte("\n")) {
		var e headEvent
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &e) != nil || e.Stutter {
			continue
		}
		if s := a.only(func(m Model) bool { return slices.Contains(m.Actions(), e.Action) }); s != nil {
			return namedModel{name: s.Name, spec: s, model: s.Model}
		}
		if len(e.State) == 0 {
			continue
		}
		if s := a.only(func(m Model) bool {
			vars := m.Vars()
			for v := range e.State {
				if !slices.Contains(vars, v) {
					return false
				}
			}
			return true
		}); s != nil {
			return namedModel{name: s.Name, spec: s, model: s.Model}
		}
	}
	if len(a.specs) == 0 {
		return namedModel{}
	}
	return namedModel{name: a.specs[0].Name, spec: &a.specs[0], model: a.specs[0].Model}
}

// only returns the one spec whose model has the property, or nil if none or
// several do.
func (a *app) only(has func(Model) bool) *Spec {
	var found *Spec
	for i := range a.specs {
		if has(a.specs[i].Model) {
			if found != nil {
				return nil
			}
			found = &a.specs[i]
		}
	}
	return found
}

// Infer returns the name of the spec among specs that check infers from
// head, the first lines of a trace (see the check command).
func Infer(specs []Spec, head []byte) string {
	a, err := newApp(Config{Specs: specs})
	if err != nil {
		return ""
	}
	return a.infer(head).name
}
