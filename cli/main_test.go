package cli_test

import (
	"testing"

	"go.uber.org/goleak"
)

// No command may leave a goroutine behind (run, session-demo and check
// --live start some).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
