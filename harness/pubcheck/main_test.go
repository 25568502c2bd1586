package pubcheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(crashChild())
	}
	goleak.VerifyTestMain(m)
}

var (
	pyOnce sync.Once
	pyArgv []string
)

// python returns the argv prefix that runs the examples: the real
// interpreter behind python3 (or $TRACECHECK_PYTHON), with -I -S so that
// start-up skips site-packages (the examples use the standard library
// only). It skips the test, loudly, without python3.
func python(t testing.TB) []string {
	t.Helper()
	pyOnce.Do(func() {
		py := os.Getenv("TRACECHECK_PYTHON")
		if py == "" {
			py = "python3"
		}
		out, err := exec.Command(py, "-I", "-S", "-c", "import sys; print(sys.executable)").Output()
		if err != nil {
			return
		}
		exe := strings.TrimSpace(string(out))
		if exe == "" {
			exe = py
		}
		pyArgv = []string{exe, "-I", "-S"}
	})
	if pyArgv == nil {
		t.Skip("SKIP: python3 not found (set TRACECHECK_PYTHON); real-run tests need it")
	}
	return pyArgv
}

// example returns the path of an examples/ script.
func example(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", name)
}

// cmd returns python + script + args.
func cmd(t testing.TB, script string, args ...string) []string {
	return append(append(append([]string(nil), python(t)...), example(script)), args...)
}
