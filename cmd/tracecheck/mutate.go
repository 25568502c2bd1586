package main

import (
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/mutants"
	"github.com/tracecheck/tracecheck/mutate"
)

// The bundled systems' named code mutants (internal/mutants); the gate is
// tracecheck verify --quick, built with the mutant.
func init() {
	register(cli.MutateCommand(cli.MutateConfig{
		Mutants:     mutants.Named(),
		Gate:        &mutate.Test{Package: "./cmd/tracecheck", Command: []string{"verify", "--quick", "--dir", "{dir}"}},
		What:        "the bundled systems'",
		Classifiers: mutants.Classifiers(),
	}))
}
