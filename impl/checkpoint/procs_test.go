package checkpoint_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// A program's descendant that leaves its process group (setsid, a double
// fork) and keeps writing is dead when Run returns: found by the run ID in
// its environment, or, with Subreaper, as an adopted orphan even when it
// cleared its environment. Without Subreaper, one that cleared its
// environment survives: that is what Subreaper is for (and why `tracecheck
// run` sets it).
func TestExecRunnerKillsEscapedDescendants(t *testing.T) {
	for _, tc := range []struct {
		name      string
		clearEnv  bool
		subreaper bool
		survives  bool
	}{
		{"environment kept", false, false, false},
		{"environment cleared, subreaper", true, true, false},
		{"environment kept, subreaper", false, true, false},
		{"environment cleared, no subreaper", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mark, pidf := filepath.Join(dir, "mark"), filepath.Join(dir, "pid")
			run := "test-" + strconv.Itoa(os.Getpid()) + "-" + strings.ReplaceAll(tc.name, " ", "-")
			envPrefix := ""
			if tc.clearEnv {
				envPrefix = "env -i PATH=/usr/bin:/bin "
			}
			// The escaped writer records its PID, then appends to mark
			// every 10 ms for 20 s; the program exits at once.
			writer := `echo $$ > ` + pidf + `; i=0; while [ $i -lt 2000 ]; do echo x >> ` + mark + `; sleep 0.01; i=$((i+1)); done`
			script := `(setsid ` + envPrefix + `sh -c '` + writer + `' &); while [ ! -s ` + pidf + ` ]; do sleep 0.01; done; exit 0`
			env := append(os.Environ(), checkpoint.EnvRunID+"="+run)
			r := checkpoint.ExecRunner{Subreaper: tc.subreaper}
			ex, err := r.Run(context.Background(), checkpoint.Process{Argv: []string{"sh", "-c", script}, Env: env, Grace: time.Second, Run: run}, nil)
			if err != nil || ex.Code != 0 {
				t.Fatalf("Run = %+v, %v", ex, err)
			}
			b, err := os.ReadFile(pidf)
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			alive := func() bool {
				st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
				return err == nil && !strings.Contains(string(st), ") Z ")
			}
			if tc.survives {
				if !alive() {
					t.Fatalf("the escaped writer %d is dead: this case shows nothing", pid)
				}
				return
			}
			if alive() {
				t.Fatalf("the escaped writer %d is alive after Run returned (orphans killed: %v)", pid, ex.Orphans)
			}
			found := false
			for _, o := range ex.Orphans {
				found = found || o == pid
			}
			if !found {
				t.Errorf("Exit.Orphans = %v, want it to hold %d", ex.Orphans, pid)
			}
			st1, _ := os.Stat(mark)
			time.Sleep(100 * time.Millisecond)
			st2, _ := os.Stat(mark)
			if st1 != nil && st2 != nil && st1.Size() != st2.Size() {
				t.Fatalf("the mark file still grows: %d then %d bytes", st1.Size(), st2.Size())
			}
		})
	}
}
