package checkpoint

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A program's descendants may leave its process group (setsid, a double
// fork) and keep running after it exits, holding descriptors on its
// checkpoint. Before the publisher stages, and again before its final
// verification, none of them may be alive: processes.go finds and kills
// them in two ways.
//
//   - By environment: every process whose environment carries the run's
//     $TRACECHECK_RUN_ID (any process on the machine that we may signal).
//     This is what recovery does for a dead publisher's run, and it catches
//     an escaped child unless it cleared its environment.
//   - As a child subreaper ([ExecRunner.Subreaper]): the publisher's process
//     adopts every orphan among its descendants (PR_SET_CHILD_SUBREAPER), so
//     an escaped process, whatever its environment, becomes a child of the
//     publisher once its parent dies; the sweep kills every child the runner
//     did not start itself, round after round, since each killed process's
//     own children are adopted in turn.

// procs is the registry the subreaper sweep consults.
var procs = struct {
	mu sync.Mutex
	// tracked are the children ExecRunner started and os/exec has not yet
	// waited for: their exit status belongs to os/exec.
	tracked map[int]bool
	// runs counts the active Run calls of each run ID in this process: a
	// sweep spares an orphan that carries another active run's ID.
	runs map[string]int
	once sync.Once
	err  error
}{tracked: map[int]bool{}, runs: map[string]int{}}

// becomeSubreaper makes this process a child subreaper, once.
func becomeSubreaper() error {
	procs.once.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			procs.err = fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
		}
	})
	return procs.err
}

// maxEnvironBytes bounds the read of a process's environment.
const maxEnvironBytes = 4 << 20

// runOf returns the $TRACECHECK_RUN_ID in process pid's environment, and
// whether its environment could be read.
func runOf(pid int) (string, bool) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	env, err := io.ReadAll(io.LimitReader(f, maxEnvironBytes))
	if err != nil {
		return "", false
	}
	key := []byte(EnvRunID + "=")
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.HasPrefix(kv, key) {
			return string(kv[len(key):]), true
		}
	}
	return "", true
}

// pids lists the processes of the machine, with their parents.
func pids() map[int]int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make(map[int]int, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(b[i+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(string(fields[1]))
		if err != nil {
			continue
		}
		out[pid] = ppid
	}
	return out
}

// sweepBudget bounds how long a sweep keeps killing processes that keep
// forking.
const sweepBudget = 10 * time.Second

// killRunProcesses SIGKILLs every process whose environment carries run's
// TRACECHECK_RUN_ID and, with subreaper, every child of this process that
// the runner did not start and that does not carry another active run's
// ID; it repeats until a round finds none, and reaps the children it
// killed. It returns the PIDs killed, and an error wrapping [ErrEscaped] if
// processes were still appearing after the budget.
func killRunProcesses(run string, subreaper bool, clock Clock) ([]int, error) {
	self := os.Getpid()
	deadline := clock.Now().Add(sweepBudget)
	var killed []int
	for {
		var round []int
		var mine []int // children of ours among them: to reap
		procs.mu.Lock()
		for pid, ppid := range pids() {
			if pid == self {
				continue
			}
			r, readable := runOf(pid)
			switch {
			case r == run && run != "":
			case subreaper && ppid == self && !procs.tracked[pid] && (!readable || r == "" || procs.runs[r] == 0):
			default:
				continue
			}
			if procs.tracked[pid] {
				continue // a live child of an active Run: its runner kills it
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil || ppid == self {
				round = append(round, pid)
				if ppid == self {
					mine = append(mine, pid)
				}
			}
		}
		procs.mu.Unlock()
		reap(mine, deadline, clock)
		killed = append(killed, round...)
		if len(round) == 0 {
			break
		}
		if clock.Now().After(deadline) {
			sort.Ints(killed)
			return killed, fmt.Errorf("%w: still forking after %v of killing (%d processes killed)", ErrEscaped, sweepBudget, len(killed))
		}
	}
	sort.Ints(killed)
	return dedupe(killed), nil
}

// reap waits for the children pids, which were sent SIGKILL.
func reap(pids []int, deadline time.Time, clock Clock) {
	for _, pid := range pids {
		for {
			var ws unix.WaitStatus
			got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			if got == pid || (err != nil && err != unix.EINTR) || clock.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

func dedupe(s []int) []int {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
