// Command tracecheck keeps an implementation honest against its formal
// design: it explores the Go transcriptions of TLA+ and FizzBee specs,
// checks recorded traces against them, and runs the bundled systems under
// test. Run `tracecheck help` for the commands.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit codes shared by every command. Commands document any others.
const (
	exitOK        = 0 // success: no violation
	exitViolation = 1 // a property or trace was violated
	exitUsage     = 2 // bad flags or arguments
	exitInput     = 3 // unreadable or malformed input
)

// command is one subcommand. run gets the arguments after the command name.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is filled by each command's file, one file a command.
var commands = map[string]command{}

func register(name string, c command) {
	if _, dup := commands[name]; dup {
		panic("tracecheck: command registered twice: " + name) // programming error, caught by any test
	}
	commands[name] = c
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole CLI, testable without a process.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"-h"}, stdout, stderr)
			}
		}
		usage(stdout)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "tracecheck: unknown command %q\n\n", name)
		usage(stderr)
		return exitUsage
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `tracecheck keeps an implementation honest against its TLA+ and FizzBee specs.

Usage:
  tracecheck <command> [flags] [arguments]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-13s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run "tracecheck <command> -h" for a command's flags.

Exit codes: 0 ok, 1 violation, 2 usage error, 3 input error; commands
document any others.
`)
}

// newFlags returns a FlagSet that prints usage text to stderr and reports
// errors instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: tracecheck %s %s\n\nFlags:\n", name, strings.TrimSpace(synopsis))
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, returning the exit code to use when parsing
// stopped (help asked for, or bad flags), or -1 to go on.
func parseFlags(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	return -1
}

// parseArgs parses args allowing flags after positional arguments
// (`explore session --mutant x`), the way people type them. It returns the
// positional arguments, and an exit code >= 0 when parsing stopped. A lone
// "--" ends flag parsing.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, int) {
	var pos []string
	for {
		if code := parseFlags(fs, args); code >= 0 {
			return nil, code
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, -1
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), -1
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
