package main

import (
	"bytes"
	"testing"

	"go.uber.org/goleak"
)

// No command may leave a goroutine behind (run and session-demo start
// some).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}
