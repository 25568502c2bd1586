package sessioncheck

import (
	"errors"
	"fmt"

	"github.com/anishathalye/porcupine"

	"github.com/tracecheck/tracecheck/impl/session"
)

// OpKind is an externally visible operation of a session's coordinators.
type OpKind int8

// Operations, by coordinator: PushAudio (VAD, M2); StartResponse,
// CancelResponse, FinishResponse (response coordinator, M3); Trigger
// (compaction, M4); Close (the connection, M1, which every coordinator
// sees).
const (
	OpPush OpKind = iota
	OpStart
	OpCancel
	OpFinish
	OpTrigger
	OpClose
)

var opNames = [...]string{"Push", "Start", "Cancel", "Finish", "Trigger", "Close"}

// String returns the operation's name.
func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", int8(k))
}

// coordinator returns which coordinator's partition an operation belongs to
// (Close belongs to all three).
func (k OpKind) coordinator() int {
	switch k {
	case OpPush:
		return 0
	case OpStart, OpCancel, OpFinish:
		return 1
	case OpTrigger:
		return 2
	}
	return -1
}

// Op is one call: on which session, which operation, and its argument (a
// speech or silent frame for Push; the response for Cancel and Finish).
type Op struct {
	Session int
	Kind    OpKind
	Speech  bool
	ID      uint64
}

// ErrKind classifies a call's error.
type ErrKind int8

// Error kinds.
const (
	ErrNone ErrKind = iota
	ErrClosed
	ErrBusy
	ErrNoResponse
	ErrOther
)

var errNames = [...]string{"ok", "closed", "busy", "no-response", "other"}

// String returns the error kind's name.
func (e ErrKind) String() string { return errNames[e] }

// Classify maps an error returned by impl/session to its ErrKind.
func Classify(err error) ErrKind {
	switch {
	case err == nil:
		return ErrNone
	case errors.Is(err, session.ErrClosed):
		return ErrClosed
	case errors.Is(err, session.ErrBusy):
		return ErrBusy
	case errors.Is(err, session.ErrNoResponse):
		return ErrNoResponse
	}
	return ErrOther
}

// Result is what a call returned: its error kind, and for Push the turn
// event and frame number, for Start the response, for Trigger the job.
//
// For Push, BargeIn and Interrupted are the turn event's: the frame
// brought the turn's speech to the session's barge-in threshold, and the
// barge-in canceled the active response. A Push with BargeIn set belongs
// to the response coordinator's partition too.
type Result struct {
	Err         ErrKind
	Turn        session.TurnKind
	Frame       uint64
	ID          uint64
	BargeIn     bool
	Interrupted bool
}

// linState is the sequential model's state. Each partition uses only its
// coordinator's fields.
type linState struct {
	mayEnd  bool // responses may complete on their own (ModelOptions.ResponsesComplete)
	closed  bool
	vad     session.VADState // silent or speech (never terminated: closed says so)
	frames  uint64
	active  uint64 // the active response, 0 if none
	next    uint64 // last response handed out
	jobs    uint64 // last compaction job handed out
	running bool   // a compaction may be running
	barge   int    // ModelOptions.BargeInFrames
	speech  int    // speech frames in the turn in progress
}

// step is the sequential specification of the coordinators' operations,
// for a session with SilenceFrames 1, and a compactor that may finish at
// any time. Unless s.mayEnd, a response never completes on its own; with
// it, an active response may have completed at any point, which a
// no-response answer about it reveals.
func step(s linState, op Op, r Result) (bool, linState) {
	if op.Kind == OpClose {
		s.closed = true
		return r.Err == ErrNone, s
	}
	if r.Err == ErrClosed {
		return s.closed, s
	}
	if s.closed {
		return false, s
	}
	switch op.Kind {
	case OpPush:
		if r.Err != ErrNone || r.Frame != s.frames+1 {
			return false, s
		}
		s.frames++
		want := session.TurnNone
		switch {
		case op.Speech && s.vad == session.VADSilent:
			s.vad, want, s.speech = session.VADSpeech, session.TurnStarted, 0
		case !op.Speech && s.vad == session.VADSpeech:
			s.vad, want = session.VADSilent, session.TurnStopped
		}
		if s.barge > 0 {
			barge := false
			if op.Speech {
				s.speech++
				barge = s.speech == s.barge
			}
			if r.BargeIn != barge {
				return false, s
			}
		}
		return r.Turn == want, s
	case OpStart:
		if r.Err != ErrNone || r.ID != s.next+1 {
			return false, s
		}
		s.next, s.active = r.ID, r.ID
		return true, s
	case OpCancel, OpFinish:
		switch r.Err {
		case ErrNone:
			if s.active == 0 || s.active != op.ID {
				return false, s
			}
			s.active = 0
			return true, s
		case ErrNoResponse:
			if s.mayEnd && s.active != 0 && s.active == op.ID {
				s.active = 0 // it completed on its own meanwhile
				return true, s
			}
			return s.active == 0 || s.active != op.ID, s
		}
		return false, s
	case OpTrigger:
		switch r.Err {
		case ErrNone: // a running compaction may have finished meanwhile
			if r.ID != s.jobs+1 {
				return false, s
			}
			s.jobs, s.running = r.ID, true
			return true, s
		case ErrBusy:
			return s.running, s
		}
		return false, s
	}
	return false, s
}

// bargeIn is the response coordinator's side of a Push that reached the
// barge-in threshold: it canceled the active response (Interrupted), or
// none was active (or, if responses may complete, the active one had
// completed).
func bargeIn(s linState, r Result) (bool, linState) {
	if s.closed { // the response coordinator had stopped: nothing to interrupt
		return !r.Interrupted, s
	}
	if r.Interrupted {
		if s.active == 0 {
			return false, s
		}
		s.active = 0
		return true, s
	}
	if s.active != 0 && !s.mayEnd {
		return false, s
	}
	s.active = 0
	return true, s
}

// ModelOptions describe the sessions a history was taken from.
type ModelOptions struct {
	// ResponsesComplete: responses may complete on their own (the
	// generator returns), not only when finished, canceled or preempted.
	ResponsesComplete bool
	// BargeInFrames is the number of speech frames of a turn that reach
	// the sessions' Config.BargeInMinSpeech: the model then checks each
	// Push's BargeIn, and a Push with BargeIn set is also an operation of
	// the response coordinator (it cancels the active response). 0: the
	// model does not check barge-in (with ResponsesComplete, a response a
	// barge-in canceled looks to it like one that completed).
	BargeInFrames int
}

// Model is the porcupine model of a session's coordinators, for sessions
// whose responses never complete on their own. Histories are partitioned
// per session and per coordinator; a Close is part of each of its
// session's three partitions.
func Model() porcupine.Model { return ModelWith(ModelOptions{}) }

// ModelWith is Model for sessions described by opt.
func ModelWith(opt ModelOptions) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return linState{mayEnd: opt.ResponsesComplete, barge: opt.BargeInFrames} },
		Step: func(state, input, output any) (bool, any) {
			if _, ok := input.(bargeOp); ok {
				return bargeIn(state.(linState), output.(Result))
			}
			return step(state.(linState), input.(Op), output.(Result))
		},
		Equal:     func(a, b any) bool { return a.(linState) == b.(linState) },
		Partition: partition,
		DescribeOperation: func(input, output any) string {
			if b, ok := input.(bargeOp); ok {
				input = b.Op
			}
			op, r := input.(Op), output.(Result)
			arg := ""
			switch op.Kind {
			case OpPush:
				arg = "silence"
				if op.Speech {
					arg = "speech"
				}
			case OpCancel, OpFinish:
				arg = fmt.Sprint(op.ID)
			}
			res := r.Err.String()
			switch {
			case r.Err != ErrNone:
			case op.Kind == OpPush && r.Interrupted:
				res = fmt.Sprintf("%v frame %d, barge-in interrupted the response", r.Turn, r.Frame)
			case op.Kind == OpPush && r.BargeIn:
				res = fmt.Sprintf("%v frame %d, barge-in (no response)", r.Turn, r.Frame)
			case op.Kind == OpPush:
				res = fmt.Sprintf("%v frame %d", r.Turn, r.Frame)
			case op.Kind == OpStart || op.Kind == OpTrigger:
				res = fmt.Sprint(r.ID)
			}
			return fmt.Sprintf("s%d %v(%s) -> %s", op.Session, op.Kind, arg, res)
		},
		DescribeState: func(state any) string {
			s := state.(linState)
			return fmt.Sprintf("closed=%v vad=%v frames=%d active=%d next=%d jobs=%d", s.closed, s.vad, s.frames, s.active, s.next, s.jobs)
		},
	}
}

func partition(h []porcupine.Operation) [][]porcupine.Operation {
	type key struct{ session, coord int }
	groups := map[key][]porcupine.Operation{}
	var order []key
	add := func(k key, o porcupine.Operation) {
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], o)
	}
	for _, o := range h {
		op := o.Input.(Op)
		if c := op.Kind.coordinator(); c >= 0 {
			add(key{op.Session, c}, o)
			if m := partOf(op, o.Output.(Result)); m != c { // a barge-in: M3's too
				o.Input = bargeOp{op}
				add(key{op.Session, m}, o)
			}
			continue
		}
		for c := 0; c < 3; c++ {
			add(key{op.Session, c}, o)
		}
	}
	out := make([][]porcupine.Operation, 0, len(order))
	for _, k := range order {
		out = append(out, groups[k])
	}
	return out
}

// bargeOp is a Push that reached the barge-in threshold, as an operation
// of the response coordinator's partition.
type bargeOp struct{ Op }

// partOf is the coordinator of a Push's barge-in: the response
// coordinator's (1) when the push reached the threshold (and was not
// refused), else the operation's own.
func partOf(op Op, r Result) int {
	if op.Kind == OpPush && r.BargeIn && r.Err == ErrNone {
		return 1
	}
	return op.Kind.coordinator()
}

// Race runs a and b at once, the first on the caller's goroutine and the
// second on a goroutine released just before it, with their order swapped
// on odd rounds, and returns when both have: the finish/start races of the
// tests and the gate.
func Race(round int, a, b func()) {
	if round%2 == 1 {
		a, b = b, a
	}
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		<-ready
		b()
	}()
	close(ready)
	a()
	<-done
}
