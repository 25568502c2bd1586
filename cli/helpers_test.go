package cli_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
)

// The exit codes, as the tests spell them.
const (
	exitOK         = cli.ExitOK
	exitViolation  = cli.ExitViolation
	exitUsage      = cli.ExitUsage
	exitInput      = cli.ExitInput
	exitIncomplete = cli.ExitIncomplete
)

// stdin is what "-" reads in run; a test may replace it.
var stdin io.Reader = bytes.NewReader(nil)

// run is the bundled tracecheck's command line (the bundled specs, without
// the bundled systems' own commands).
func run(args []string, stdout, stderr io.Writer) int {
	return cli.Run(cli.Config{Specs: bundled.Specs(), Stdin: stdin}, args, stdout, stderr)
}

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// lookup returns the bundled model check --model name selects.
func lookup(name string) (cli.Model, bool) { return cli.Lookup(bundled.Specs(), name) }

// infer returns the bundled model check infers from a trace's head.
func infer(head []byte) string { return cli.Infer(bundled.Specs(), head) }
