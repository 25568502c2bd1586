package main

import (
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/cli"
)

// helpFlags reads the flags out of a command's -h text (flag.PrintDefaults'
// layout): each name and the first line of its description.
func helpFlags(help string) map[string]string {
	flags := map[string]string{}
	_, list, ok := strings.Cut(help, "\nFlags:\n")
	if !ok {
		return flags
	}
	last := ""
	for _, line := range strings.Split(list, "\n") {
		switch {
		case strings.HasPrefix(line, "  -"):
			head, text, _ := strings.Cut(line[2:], "\t")
			name, _, _ := strings.Cut(head, " ")
			last = strings.TrimPrefix(name, "-")
			flags[last] = stripDefault(text)
		case strings.HasPrefix(line, "    \t") && last != "" && flags[last] == "":
			flags[last] = stripDefault(strings.TrimPrefix(line, "    \t"))
		}
	}
	return flags
}

// Every command of the bundled binary: -h prints its usage and exits 0, a
// flag it does not have is a usage error (2), and the flags several
// commands have mean the same and say it in the same words. An option has
// one name: the old spellings are not offered.
func TestEveryCommandsFlags(t *testing.T) {
	commands := []string{"chart", "check", "completion", "coverage", "explore", "export", "inspect", "monitor",
		"mutate", "recover", "replay", "run", "session-demo", "verify", "version"}
	// The commands the usage text lists are exactly these.
	out, _, code := runCLI(t, "help")
	if code != exitOK {
		t.Fatalf("help: exit %d", code)
	}
	_, list, _ := strings.Cut(out, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	var listed []string
	for _, l := range strings.Split(list, "\n") {
		listed = append(listed, strings.Fields(l)[0])
	}
	if strings.Join(listed, " ") != strings.Join(commands, " ") {
		t.Fatalf("help lists %v, the test knows %v: add the new command to the test", listed, commands)
	}

	// The shared flags: their text on every command that has them, and
	// the commands that must have them.
	shared := []struct {
		name, text string // text "": any, but the same everywhere
		on         []string
	}{
		{"json", cli.UsageJSON, []string{"chart", "check", "coverage", "explore", "inspect", "monitor", "recover", "mutate", "replay", "run", "verify", "version"}},
		{"mutant", "", []string{"chart", "check", "coverage", "explore", "replay"}},
		{"model", "", []string{"check", "coverage", "replay"}},
		{"graph", "", []string{"check", "coverage", "replay"}},
		{"instance", cli.UsageInstance, []string{"export", "replay"}},
		{"max-line", cli.UsageMaxLine, []string{"check", "coverage", "monitor", "replay"}},
		{"max-itf", cli.UsageMaxITF, []string{"check", "coverage", "export", "replay"}},
		{"root", cli.UsageRoot, []string{"mutate", "verify"}},
		{"seed", cli.UsageSeed, []string{"session-demo", "verify"}},
		{"trace-nats", cli.UsageTraceNATS, []string{"run", "session-demo"}},
	}
	// No known exceptions.
	except := map[string]string{}
	// Spellings that are gone from usage texts (still accepted, with a
	// notice): explore's --format (--json), session-demo's --nats
	// (--trace-nats).
	gone := map[string][]string{"explore": {"format"}, "session-demo": {"nats"}}

	flags := map[string]map[string]string{}
	for _, c := range commands {
		t.Run(c, func(t *testing.T) {
			out, help, code := runCLI(t, c, "-h")
			if code != exitOK || out != "" || !strings.HasPrefix(help, "Usage: tracecheck "+c) {
				t.Fatalf("%s -h: exit %d, stdout %q, stderr:\n%.300s", c, code, out, help)
			}
			flags[c] = helpFlags(help)
			if _, errs, code := runCLI(t, c, "--no-such-flag"); code != exitUsage || !strings.Contains(errs, "flag provided but not defined: -no-such-flag") {
				t.Errorf("%s --no-such-flag: exit %d, want %d; stderr:\n%.300s", c, code, exitUsage, errs)
			}
			// help COMMAND is COMMAND -h.
			if _, h, code := runCLI(t, "help", c); code != exitOK || h != help {
				t.Errorf("help %s: exit %d, or not %s -h's text", c, code, c)
			}
			for _, g := range gone[c] {
				if _, ok := flags[c][g]; ok {
					t.Errorf("%s -h still offers --%s", c, g)
				}
			}
		})
	}
	for _, s := range shared {
		// As -h prints it: without the backquotes around the value's name.
		text := strings.ReplaceAll(s.text, "`", "")
		for _, c := range s.on {
			got, ok := flags[c][s.name]
			if !ok {
				t.Errorf("%s has no --%s", c, s.name)
				continue
			}
			if text == "" {
				text = got
			}
			if got != text {
				t.Errorf("%s --%s says %q, want %q as everywhere", c, s.name, got, text)
			}
		}
		for _, c := range commands {
			if _, ok := flags[c][s.name]; ok && !contains(s.on, c) && !contains(strings.Fields(except[c]), s.name) {
				t.Errorf("%s has --%s too: add it to the table, with the shared text", c, s.name)
			}
		}
	}
	// Unknown commands, for help too, are usage errors.
	for _, args := range [][]string{{"help", "nosuch"}, {"nosuch"}, {}} {
		if _, _, code := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// stripDefault removes the " (default X)" flag.PrintDefaults appends.
func stripDefault(text string) string {
	if i := strings.LastIndex(text, " (default "); i >= 0 && strings.HasSuffix(text, ")") {
		return text[:i]
	}
	return text
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
