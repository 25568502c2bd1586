package monitor

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests, then fails if any goroutine outlived them: the
// monitors, sinks and embedded servers the tests start must all be gone.
// In a subprocess started by the kill tests it is a monitor instead.
func TestMain(m *testing.M) {
	if helperMonitor() {
		return
	}
	goleak.VerifyTestMain(m)
}
