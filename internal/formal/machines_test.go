package formal

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/model/machines"
)

const root = "../.."

func retained(t *testing.T, name string) *conform.Report {
	t.Helper()
	r, err := Load(filepath.Join(root, "formal-verification", "reports", name), root)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The machine checks accept the retained reports, and refuse them against
// another transcription or another counterexample.
func TestMachineChecks(t *testing.T) {
	for _, c := range machineChecks {
		t.Run(c.Name, func(t *testing.T) {
			summary, err := c.Verify(retained(t, c.Name))
			if err != nil {
				t.Fatal(err)
			}
			t.Log(summary)
		})
	}
	for _, c := range []struct {
		report string
		check  func(*conform.Report) (string, error)
		want   string
	}{
		{"tlc-machine-tts", tlcMachine(machines.TTS(machines.TTSCancelKeepsAudio), 33, 81, 7), "does not have TLC's state graph"},
		{"tlc-machine-tts", tlcMachine(machines.TTS(machines.Written), 33, 80, 7), "want 33, 80, 80, 1"},
		{"tlc-machine-compaction", tlcMachine(machines.TTS(machines.Written), 5, 9, 3), "does not have TLC's state graph"},
		{"tlc-machine-tts-cancel-keeps-audio", tlcMachineMutant(machines.TTS(machines.TTSCancelKeepsAudio), machines.TTSCancelKeepsAudio,
			machines.TTSSend, machines.TTSFinish, machines.TTSPlay), "TLC's counterexample [Init Send Cancel Play], want [Init Send Finish Play]"},
		{"tlc-machine-tts-close-twice", tlcMachineMutant(machines.TTS(machines.TTSCloseTwice), machines.TTSCancelKeepsAudio,
			machines.TTSCancel, machines.TTSClose), "want Invariant NoAudioAfterEnd is violated."},
		{"tlc-machine-compaction-fire-and-forget", tlcMachineMutant(machines.Compaction(machines.Written), machines.CompactionFireAndForget,
			machines.CompactionTrigger, machines.CompactionConnTorn, machines.CompactionShutdown), "NoneAfterTeardown holds"},
	} {
		t.Run("refuses/"+c.report, func(t *testing.T) {
			_, err := c.check(retained(t, c.report))
			if !errors.Is(err, ErrDisagrees) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v; want ErrDisagrees saying %q", err, c.want)
			}
		})
	}
}
