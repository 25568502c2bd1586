// The repository's layering, checked: spec → model → impl → trace →
// harness → verdict (docs/architecture.md).
package tracecheck_test

import (
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const mod = "github.com/tracecheck/tracecheck/"

// TestLayering loads every package with its transitive imports and refuses
// the imports that would make the checks circular or impure: impl/ and
// trace/ must not reach model/ (the implementation is checked against the
// model, not derived from it), and model/ must not reach impl/, harness/,
// trace/ or any I/O package.
func TestLayering(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 5 {
		t.Fatalf("loaded only %d packages", len(pkgs))
	}
	rules := []struct {
		from      string   // package prefix
		forbidden []string // import prefixes it must not reach
	}{
		{mod + "impl/", []string{mod + "model", mod + "harness", mod + "check", mod + "conform", mod + "chart"}},
		{mod + "trace", []string{mod + "model", mod + "impl", mod + "harness", mod + "check", mod + "conform", mod + "chart"}},
		{mod + "model", []string{mod + "impl", mod + "harness", mod + "trace", mod + "cmd", mod + "check", mod + "conform", mod + "chart"}},
		// The library (checker, conformance, charts) knows nothing of the
		// bundled systems: another team's spec uses exactly what ours do.
		{mod + "check", []string{mod + "impl", mod + "harness", mod + "model/program", mod + "model/session", mod + "model/machines", mod + "cmd"}},
		{mod + "conform", []string{mod + "impl", mod + "harness", mod + "model/program", mod + "model/session", mod + "model/machines", mod + "cmd"}},
		{mod + "chart", []string{mod + "impl", mod + "harness", mod + "model/program", mod + "model/session", mod + "model/machines", mod + "cmd"}},
		{mod + "htmlreport", []string{mod + "impl", mod + "harness", mod + "model/program", mod + "model/session", mod + "model/machines", mod + "cmd", mod + "internal"}},
		// The command line as a library: a team's own binary registers its
		// specs with it, and gets no bundled system along.
		{mod + "cli", []string{mod + "impl", mod + "harness", mod + "model/program", mod + "model/session", mod + "model/machines", mod + "cmd", mod + "internal"}},
		// The live monitor is product too; and only it knows NATS and
		// Prometheus: the format, the checker and the command line do not.
		{mod + "monitor", []string{mod + "impl", mod + "harness", mod + "model/program", mod + "model/session", mod + "model/machines", mod + "cmd", mod + "internal"}},
		// Mutation experiments run any module's code: they know none of ours.
		{mod + "mutate", []string{mod + "impl", mod + "harness", mod + "model", mod + "cmd", mod + "internal", mod + "check", mod + "cli"}},
		{mod + "trace", []string{"github.com/nats-io", "github.com/prometheus"}},
		{mod + "check", []string{"github.com/nats-io", "github.com/prometheus"}},
		{mod + "model", []string{"github.com/nats-io", "github.com/prometheus"}},
		{mod + "cli", []string{"github.com/nats-io", "github.com/prometheus"}},
	}
	// model/ is pure: no I/O, clock or randomness of its own (fmt and strconv
	// reach os internally, so this rule looks at direct imports only).
	impure := []string{"os", "net", "io/fs", "syscall", "os/exec", "math/rand", "math/rand/v2", "time", "io/ioutil"}
	checked := 0
	for _, p := range pkgs {
		if strings.HasPrefix(p.PkgPath, mod+"model") {
			for path := range p.Imports {
				for _, f := range impure {
					if path == f || strings.HasPrefix(path, f+"/") {
						t.Errorf("%s imports %s: model/ must stay free of I/O, clocks and randomness", p.PkgPath, path)
					}
				}
			}
		}
		for _, r := range rules {
			if !strings.HasPrefix(p.PkgPath, r.from) {
				continue
			}
			checked++
			deps := map[string]bool{}
			var walk func(*packages.Package)
			walk = func(q *packages.Package) {
				for path, imp := range q.Imports {
					if !deps[path] {
						deps[path] = true
						walk(imp)
					}
				}
			}
			walk(p)
			for dep := range deps {
				for _, f := range r.forbidden {
					if dep == f || strings.HasPrefix(dep, f+"/") {
						t.Errorf("%s imports %s (directly or not): forbidden by docs/architecture.md", p.PkgPath, dep)
					}
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("rules matched only %d packages", checked)
	}
}
