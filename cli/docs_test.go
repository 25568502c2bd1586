package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/internal/bundled"
)

// docLine returns the names in backquotes on the line of doc that starts
// with prefix.
func docLine(t *testing.T, doc, prefix string) []string {
	t.Helper()
	for _, l := range strings.Split(doc, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			var names []string
			for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(rest, -1) {
				names = append(names, m[1])
			}
			return names
		}
	}
	t.Fatalf("no line %q", prefix)
	return nil
}

// docs/trace-format.md lists the bundled specs and mutants that check
// accepts, the same as check -h: the registered ones, in their order.
func TestTraceFormatDocListsTheModels(t *testing.T) {
	b, err := os.ReadFile("../docs/trace-format.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var specs, mutants []string
	for _, s := range bundled.Specs() {
		specs = append(specs, s.Name)
		for _, m := range s.Mutants {
			mutants = append(mutants, m.Name)
		}
	}
	gotMutants := docLine(t, doc, "Mutants (`--mutant`): ")
	// The mutants' line names each spec after its mutants: "(of `program`)".
	gotMutants = slices.DeleteFunc(gotMutants, func(n string) bool { return slices.Contains(specs, n) })
	if got := docLine(t, doc, "Specs (`--model`): "); !slices.Equal(got, specs) {
		t.Errorf("docs/trace-format.md lists the specs %v, the binary has %v: update the doc", got, specs)
	}
	if !slices.Equal(gotMutants, mutants) {
		t.Errorf("docs/trace-format.md lists the mutants %v, the binary has %v: update the doc", gotMutants, mutants)
	}
	// check -h says the same.
	_, help, _ := runCLI(t, "check", "-h")
	if !strings.Contains(help, "Specs: "+strings.Join(specs, ", ")+".") || !strings.Contains(help, "("+strings.Join(mutants, ", ")+")") {
		t.Errorf("check -h does not list %v and %v:\n%s", specs, mutants, help)
	}
}

// A document that uses the project's own words links the glossary that
// explains them.
func TestDocsLinkTheGlossary(t *testing.T) {
	jargon := regexp.MustCompile(`(?i)seed 00[0-9]|\bM[1-5]\b`)
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	glossary, err := os.ReadFile("../docs/glossary.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range docs {
		// The glossary itself; architecture.md is the maintainers'.
		if base := filepath.Base(p); base == "glossary.md" || base == "architecture.md" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if w := jargon.FindString(string(b)); w != "" && !strings.Contains(string(b), "(glossary.md)") {
			t.Errorf("%s says %q but does not link glossary.md", p, w)
		}
	}
	for _, w := range []string{"**seed 000**", "**seed 001**", "**M1–M5**", "**the M4 gap**", "**mutant**", "**instance**", "**domain**"} {
		if !strings.Contains(string(glossary), w) {
			t.Errorf("the glossary does not explain %s", w)
		}
	}
}
