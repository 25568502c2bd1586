package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
)

const completionSynopsis = `[--name NAME] bash|zsh|fish

Prints a completion script for the shell: commands, each command's flags
(with their descriptions, where the shell shows them), spec names, mutant
names and formats. The script is generated from the commands and specs
registered with this program, so it lists exactly what this build has.
Install it with:

  bash:  tracecheck completion bash > ~/.local/share/bash-completion/completions/tracecheck
  zsh:   tracecheck completion zsh > "${fpath[1]}/_tracecheck"   (then compinit)
  fish:  tracecheck completion fish > ~/.config/fish/completions/tracecheck.fish

--name NAME writes the script for the command NAME instead: a team's own
binary built with package cli (light-check completion bash --name
light-check).`

// shells are the shells completion writes scripts for.
var shells = map[string]func(*app, io.Writer, string, []cmdFlags) error{
	"bash": (*app).bashCompletion,
	"zsh":  (*app).zshCompletion,
	"fish": (*app).fishCompletion,
}

func (a *app) runCompletion(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("completion", completionSynopsis, stderr)
	name := fs.String("name", "tracecheck", "the `command` the script completes")
	pos, code := Parse(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 || shells[pos[0]] == nil {
		fmt.Fprintln(stderr, "tracecheck completion: name one shell: bash, zsh or fish")
		fs.Usage()
		return ExitUsage
	}
	if !commandName.MatchString(*name) {
		fmt.Fprintf(stderr, "tracecheck completion: --name %q: a command name is letters, digits, '.', '_' and '-'\n", *name)
		return ExitUsage
	}
	var b bytes.Buffer
	if err := shells[pos[0]](a, &b, *name, a.commandFlags()); err != nil {
		fmt.Fprintf(stderr, "tracecheck completion: %v\n", err)
		return ExitInput
	}
	if _, err := stdout.Write(b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "tracecheck completion: %v\n", err)
		return ExitInput
	}
	return ExitOK
}

// commandName is what --name accepts: a word no shell reads as syntax.
var commandName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// funcName is the shell function that completes the command prog.
func funcName(prog string) string {
	return "_" + strings.NewReplacer(".", "_", "-", "_").Replace(prog)
}

// flagDoc is one flag as a command's usage text lists it.
type flagDoc struct {
	name  string
	value bool   // takes a value
	usage string // the first line of its text
}

// cmdFlags is a command with its flags.
type cmdFlags struct {
	name, summary string
	flags         []flagDoc
}

// commandFlags lists every command, sorted, with the flags its -h lists:
// what a completion script completes. It reads the usage texts rather than
// the commands' flag sets so that it sees any command, a program's own
// ones too, as its user does.
func (a *app) commandFlags() []cmdFlags {
	var out []cmdFlags
	for _, n := range a.commandNames() {
		c := a.cmds[n]
		var help bytes.Buffer
		c.Run([]string{"-h"}, io.Discard, &help)
		out = append(out, cmdFlags{name: n, summary: c.Summary, flags: parseUsage(help.String())})
	}
	return out
}

// parseUsage reads the flags out of a usage text as flag.PrintDefaults
// writes them (after the line "Flags:"): each flag's name, whether it takes
// a value, and the first line of its description.
func parseUsage(usage string) []flagDoc {
	var out []flagDoc
	sc := bufio.NewScanner(strings.NewReader(usage))
	in := false
	for sc.Scan() {
		line := sc.Text()
		if line == "Flags:" {
			in = true
			continue
		}
		if !in {
			continue
		}
		switch {
		case strings.HasPrefix(line, "  -"):
			head, text, _ := strings.Cut(line[2:], "\t")
			name, typ, _ := strings.Cut(head, " ")
			out = append(out, flagDoc{name: strings.TrimPrefix(name, "-"), value: typ != "", usage: text})
		case strings.HasPrefix(line, "    \t") && len(out) > 0 && out[len(out)-1].usage == "":
			out[len(out)-1].usage = strings.TrimPrefix(line, "    \t")
		}
	}
	return out
}

// values are the words a flag's value or a command's arguments complete
// to, or nil for file names.
func (a *app) values(cmd, flag string) []string {
	switch {
	case flag == "mutant":
		var out []string
		for _, s := range a.specs {
			for _, m := range s.Mutants {
				out = append(out, m.Name)
			}
		}
		return out
	case flag == "model":
		return strings.Split(a.specNames(), "|")
	case flag == "format" && cmd == "chart":
		return []string{"mermaid", "dot"}
	case flag != "":
		return nil
	case cmd == "explore" || cmd == "chart":
		return strings.Split(a.specNames(), "|")
	case cmd == "completion":
		return []string{"bash", "fish", "zsh"}
	case cmd == "help":
		return a.commandNames()
	}
	return nil
}

func (a *app) bashCompletion(w io.Writer, prog string, cmds []cmdFlags) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %s (%s completion bash)\n%s() {", prog, prog, funcName(prog))
	b.WriteString(`
    local cur prev words
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [[ $COMP_CWORD -eq 1 ]]; then
`)
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.name
	}
	fmt.Fprintf(&b, "        mapfile -t COMPREPLY < <(compgen -W %s -- \"$cur\")\n        return\n    fi\n", shq(strings.Join(append(names, "--version", "help"), " ")))
	b.WriteString("    case \"${COMP_WORDS[1]}\" in\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "    %s)\n        case \"$prev\" in\n", shq(c.name))
		var flags []string
		for _, f := range c.flags {
			flags = append(flags, "--"+f.name)
			if !f.value {
				continue
			}
			if v := a.values(c.name, f.name); v != nil {
				fmt.Fprintf(&b, "        %s) mapfile -t COMPREPLY < <(compgen -W %s -- \"$cur\"); return ;;\n", shq("-"+f.name)+"|"+shq("--"+f.name), shq(strings.Join(v, " ")))
			} else {
				fmt.Fprintf(&b, "        %s) mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return ;;\n", shq("-"+f.name)+"|"+shq("--"+f.name))
			}
		}
		b.WriteString("        esac\n")
		fmt.Fprintf(&b, "        if [[ $cur == -* ]]; then\n            mapfile -t COMPREPLY < <(compgen -W %s -- \"$cur\")\n            return\n        fi\n", shq(strings.Join(flags, " ")))
		if v := a.values(c.name, ""); v != nil {
			fmt.Fprintf(&b, "        mapfile -t COMPREPLY < <(compgen -W %s -- \"$cur\")\n", shq(strings.Join(v, " ")))
		} else {
			b.WriteString("        mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n")
		}
		b.WriteString("        ;;\n")
	}
	b.WriteString(`    esac
}
`)
	fmt.Fprintf(&b, "complete -o filenames -F %s %s\n", funcName(prog), prog)
	_, err := io.WriteString(w, b.String())
	return err
}

func (a *app) zshCompletion(w io.Writer, prog string, cmds []cmdFlags) error {
	var b strings.Builder
	fn := funcName(prog)
	fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s (%s completion zsh)\n%s() {", prog, prog, prog, fn)
	b.WriteString(`
    local -a commands
    commands=(
`)
	for _, c := range cmds {
		fmt.Fprintf(&b, "        %s\n", shq(zshEscape(c.name)+":"+c.summary))
	}
	b.WriteString(`    )
    if (( CURRENT == 2 )); then
        _describe 'command' commands
        return
    fi
    local cmd=$words[2]
    shift words
    (( CURRENT-- ))
    case $cmd in
`)
	for _, c := range cmds {
		fmt.Fprintf(&b, "    %s)\n        _arguments -s", shq(c.name))
		for _, f := range c.flags {
			spec := "--" + f.name + "[" + zshEscape(f.usage) + "]"
			if f.value {
				if v := a.values(c.name, f.name); v != nil {
					spec += ":" + f.name + ":(" + strings.Join(v, " ") + ")"
				} else {
					spec += ":" + f.name + ":_files"
				}
			}
			fmt.Fprintf(&b, " \\\n            %s", shq(spec))
		}
		if v := a.values(c.name, ""); v != nil {
			fmt.Fprintf(&b, " \\\n            %s", shq("1:argument:("+strings.Join(v, " ")+")"))
		} else {
			fmt.Fprintf(&b, " \\\n            %s", shq("*:file:_files"))
		}
		b.WriteString("\n        ;;\n")
	}
	fmt.Fprintf(&b, `    esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    %s "$@"
else
    compdef %s %s
fi
`, fn, fn, prog)
	_, err := io.WriteString(w, b.String())
	return err
}

func (a *app) fishCompletion(w io.Writer, prog string, cmds []cmdFlags) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %s (%s completion fish)\ncomplete -c %s -f\n", prog, prog, prog)
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c %s -n __fish_use_subcommand -a %s -d %s\n", prog, shq(c.name), fishq(c.summary))
	}
	for _, c := range cmds {
		cond := shq("__fish_seen_subcommand_from " + c.name)
		for _, f := range c.flags {
			opt := "-l " + shq(f.name)
			if len(f.name) == 1 {
				opt = "-o " + shq(f.name)
			}
			fmt.Fprintf(&b, "complete -c %s -n %s %s -d %s", prog, cond, opt, fishq(f.usage))
			if f.value {
				if v := a.values(c.name, f.name); v != nil {
					fmt.Fprintf(&b, " -x -a %s", shq(strings.Join(v, " ")))
				} else {
					b.WriteString(" -r -F")
				}
			}
			b.WriteString("\n")
		}
		if v := a.values(c.name, ""); v != nil {
			fmt.Fprintf(&b, "complete -c %s -n %s -a %s\n", prog, cond, shq(strings.Join(v, " ")))
		} else {
			fmt.Fprintf(&b, "complete -c %s -n %s -F\n", prog, cond)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shq quotes s for a POSIX shell (and fish, zsh): in single quotes.
func shq(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fishq quotes s for fish, in whose single quotes a backslash escapes a
// backslash or a quote.
func fishq(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// zshEscape escapes what _arguments and _describe read as syntax.
func zshEscape(s string) string {
	return strings.NewReplacer(`[`, `\[`, `]`, `\]`, `:`, `\:`).Replace(s)
}
