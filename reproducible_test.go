// Retained tool output is reproducible elsewhere: it names no path of the
// machine that made it, and says which tool (version and hash) and which
// command, with $TLA2TOOLS/$FIZZ for the tools' paths.
package tracecheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// machinePath matches an absolute path that is not a temporary one: a
// checkout, a home directory or a tool install of one machine.
var machinePath = regexp.MustCompile(`(^|[\s(='":])/(home|root|Users|work|opt|srv|usr/local|mnt|workspace)/[^\s]*`)

func TestRetainedOutputNamesNoMachinePath(t *testing.T) {
	abs, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir("formal-verification", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, ".pb") || strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		s := string(b)
		if strings.Contains(s, abs) {
			t.Errorf("%s names this checkout (%s)", p, abs)
		}
		if m := machinePath.FindString(s); m != "" {
			t.Errorf("%s names a path of the machine that made it: %q", p, strings.TrimSpace(m))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 40 {
		t.Fatalf("only %d retained files under formal-verification/", files)
	}
}

func TestManifestsSayToolAndCommand(t *testing.T) {
	manifests, err := filepath.Glob("formal-verification/reports/*/manifest.json")
	if err != nil || len(manifests) < 10 {
		t.Fatalf("manifests: %v, %d found", err, len(manifests))
	}
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, p := range manifests {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Tool, ToolVersion, ToolSHA, Command string
		}
		var raw map[string]any
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		m.Tool, _ = raw["tool"].(string)
		m.ToolVersion, _ = raw["tool_version"].(string)
		m.ToolSHA, _ = raw["tool_binary_sha256"].(string)
		m.Command, _ = raw["command"].(string)
		placeholder := map[string]string{"TLC": "$TLA2TOOLS", "FizzBee": "$FIZZ"}[m.Tool]
		if placeholder == "" || m.ToolVersion == "" || !hex64.MatchString(m.ToolSHA) || !strings.Contains(m.Command, placeholder) {
			t.Errorf("%s: tool %q version %q sha256 %q command %q: want the tool, its version and hash, and %s in the command",
				p, m.Tool, m.ToolVersion, m.ToolSHA, m.Command, placeholder)
		}
	}
	b, err := os.ReadFile("formal-verification/tlc-traces/verdicts.tsv")
	if err != nil {
		t.Fatal(err)
	}
	head := string(b[:min(len(b), 2000)])
	for _, want := range []string{"# TLC: TLC2 Version", "tla2tools.jar sha256 ", "$TLA2TOOLS:$COMMUNITY_MODULES"} {
		if !strings.Contains(head, want) {
			t.Errorf("tlc-traces/verdicts.tsv's header lacks %q", want)
		}
	}
}
