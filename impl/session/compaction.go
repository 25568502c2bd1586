package session

import (
	"context"
	"fmt"
)

// CompactionState is the state of the compaction coordinator (M4), with the
// spec's values.
type CompactionState int8

// Compaction states.
const (
	CompIdle       CompactionState = 0 // no compaction running
	CompRunning    CompactionState = 1 // a compaction is running
	CompTerminated CompactionState = 2 // canceled and joined at teardown
)

// String returns the state's name.
func (s CompactionState) String() string {
	return enumName(s, "CompactionState", "idle", "running", "terminated")
}

// CompactionJob is one compaction of the history.
type CompactionJob struct{ worker }

// ID is the job's number within its session (from 1).
func (j *CompactionJob) ID() uint64 { return j.id }

// Done is closed when the job has ended and its result (if any) has been
// installed in the history.
func (j *CompactionJob) Done() <-chan struct{} { return j.done }

// Err reports, once Done is closed, how the job ended: nil when its result
// was installed, ErrClosed if teardown canceled it, or the compactor's
// error (possibly wrapping ErrChildPanic).
func (j *CompactionJob) Err() error { return j.result() }

type compOp int8

const (
	opTrigger compOp = iota // TriggerCompaction
	opAppend                // AppendHistory
	opHistory               // History
)

// compIn is a request to the compaction coordinator.
type compIn struct {
	op   compOp
	item string // the item to append
}

// compReply is the compaction coordinator's reply: the job started, or
// the history.
type compReply struct {
	job     *CompactionJob
	history []string
}

// compCore is M4's pure state, with the conversation history it compacts.
// A step may share the history's backing array with the state it steps
// from (as append does): a state is stepped once, then replaced.
type compCore struct {
	state   CompactionState
	job     uint64 // the running job, 0 if none
	next    uint64 // last job number handed out
	history []string
	cutoff  int // the history items the running job compacts
}

// step is the transition for a caller's request: append to the history,
// read it, or trigger a compaction job.
func (c compCore) step(in compIn) (compCore, out[compReply]) {
	if c.state == CompTerminated {
		return c, out[compReply]{err: ErrClosed}
	}
	switch in.op {
	case opAppend:
		c.history = append(c.history, in.item)
		return c, out[compReply]{}
	case opHistory:
		return c, out[compReply]{reply: compReply{history: append([]string(nil), c.history...)}}
	case opTrigger:
		if c.state == CompRunning {
			return c, out[compReply]{err: ErrBusy}
		}
		c.next++
		c.job, c.state, c.cutoff = c.next, CompRunning, len(c.history)
		return c, out[compReply]{start: c.job, ev: event{action: ActCompTrigger, key: "job", id: c.job}}
	}
	return c, out[compReply]{err: fmt.Errorf("session: unknown compaction op %d", in.op)}
}

// exited is the step taken when job ex.id has returned: its result, if it
// has one, replaces the items it compacted.
func (c compCore) exited(ex exit) (compCore, out[compReply]) {
	if c.state != CompRunning || c.job != ex.id {
		return c, out[compReply]{}
	}
	if ex.err == nil {
		c.history = append(ex.result, c.history[c.cutoff:]...)
	}
	c.job, c.state, c.cutoff = 0, CompIdle, 0
	return c, out[compReply]{end: ex.id, endErr: ex.err, ev: event{action: ActCompFinish, key: "job", id: ex.id, err: ex.err}}
}

// terminate is the step taken once no job is running.
func (c compCore) terminate() compCore {
	c.state, c.job = CompTerminated, 0
	return c
}

func (c compCore) published() int8 { return int8(c.state) }

// compCoord is the compaction coordinator (M4): the coordinator shape over
// compCore, whose workers are compaction jobs running the Compactor.
type compCoord struct {
	*coord[compCore, compIn, compReply]
}

func newComp(s *Session) compCoord {
	c := compCoord{newCoord[compCore, compIn, compReply](s, VarCompaction, compCore{})}
	c.withWorkers(c.spawn, compCore.exited, nil)
	return c
}

// spawn makes job id, which compacts the history as it is when the job
// starts.
func (c compCoord) spawn(id uint64, _ compIn, next compCore) (compReply, *worker) {
	history := append([]string(nil), next.history...)
	j := &CompactionJob{newWorker(id, taskFunc(func(ctx context.Context) ([]string, error) {
		return c.compact(ctx, history)
	}))}
	return compReply{job: j}, &j.worker
}

func (c compCoord) compact(ctx context.Context, history []string) (result []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: compactor: %v", ErrChildPanic, r)
		}
	}()
	return c.s.cfg.Compactor.Compact(ctx, history)
}
