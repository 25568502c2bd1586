// Command tracecheck keeps an implementation honest against its formal
// design: it explores the Go transcriptions of TLA+ and FizzBee specs,
// checks recorded traces against them, and runs the bundled systems under
// test. Run `tracecheck help` for the commands.
//
// It is built the way a team builds its own tracecheck for its own specs
// (package cli): the bundled specs registered with cli.Run, plus the
// commands of the bundled systems (run, recover, inspect, session-demo).
package main

import (
	"errors"
	"flag"
	"io"
	"os"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
)

// commands are the bundled systems' own commands, one file a command.
var commands []cli.Command

func register(c cli.Command) { commands = append(commands, c) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole CLI, testable without a process.
func run(args []string, stdout, stderr io.Writer) int {
	return cli.Run(cli.Config{Specs: bundled.Specs(), Commands: commands}, args, stdout, stderr)
}

// Exit codes shared by every command.
const (
	exitOK        = cli.ExitOK
	exitViolation = cli.ExitViolation
	exitUsage     = cli.ExitUsage
	exitInput     = cli.ExitInput
)

var (
	newFlags  = cli.NewFlagSet
	parseArgs = cli.Parse
)

// parseFlags parses args, returning the exit code to use when parsing
// stopped (help asked for, or bad flags), or -1 to go on. Positional
// arguments stay in fs.Args().
func parseFlags(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	return -1
}
