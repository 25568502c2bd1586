package session

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

// Mix selects RunDemo's workload.
type Mix int8

// The workloads.
const (
	// MixRealistic, the default, is a seeded mix of realistic
	// conversations (see RunDemo): barge-ins, speculative and preempted
	// responses, compaction overlapping responses, failing work, and
	// sessions that end by a hang-up, a dropped connection or a child's
	// panic in every state of the session. Its traces exercise every
	// transition of spec/session.fizz.
	MixRealistic Mix = iota
	// MixPlain is the plain workload: every turn is answered in full, every
	// second turn compacts the history, and every session closes when
	// idle. It exercises about a third of the spec's transitions.
	MixPlain
)

// String returns "realistic" or "plain".
func (m Mix) String() string { return enumName(m, "Mix", "realistic", "plain") }

// ParseMix returns the Mix named s.
func ParseMix(s string) (Mix, error) {
	for _, m := range []Mix{MixRealistic, MixPlain} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("%w: no mix %q (realistic or plain)", ErrConfig, s)
}

// DefaultDemoSeed seeds the realistic mix when DemoConfig.Seed is 0.
const DefaultDemoSeed = 1

// How a session of the mix ends.
type endKind int8

const (
	endHangUp endKind = iota // the client closes it (Close)
	endDrop                  // the connection drops (New's context is canceled)
	endCrash                 // a child's work panics
)

// The child whose work panics, for endCrash.
const (
	crashVAD  = iota // the turn detector
	crashTTS         // the response's pipeline (generator and TTS)
	crashComp        // the compactor
)

var crashNames = [...]string{crashVAD: "vad", crashTTS: "tts", crashComp: "compaction"}

// mixState is a live state of the spec as a script sees it.
type mixState struct{ vad, resp, comp bool }

// mixStates lists the spec's 8 live states.
func mixStateOf(i int) mixState { return mixState{i&1 != 0, i&2 != 0, i&4 != 0} }

func (st mixState) String() string {
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	return fmt.Sprintf("vad=%d resp=%d compaction=%d", b(st.vad), b(st.resp), b(st.comp))
}

// mixEnds is the cycle of ends the scripted sessions take, one state after
// the other: every 32 scripted sessions end in each of the 8 live states
// by each kind, hang-ups twice.
var mixEnds = [...]endKind{endHangUp, endDrop, endCrash, endHangUp}

// A frame of speech and one of near-silence (SyntheticFrame's tone has a
// whole number of periods per frame, so every frame is the same).
var mixSpeech, mixSilence = SyntheticFrame(true, 0), SyntheticFrame(false, 0)

const framesPerTick = 5 // the microphone's audio arrives 100 ms at a time

// mixSession drives one session of the realistic mix. A scripted session
// is driven by one goroutine that decides everything — when the user
// speaks, when a response or a compaction ends (its work waits on a hold
// until the script ends it) — and tracks the spec state it drove the
// session to, which it compares with Session.State after each step. A
// racing session is driven by a microphone goroutine and an agent
// goroutine, and its work ends on its own: its calls race each other and
// the work, and may be refused.
type mixSession struct {
	ctx   context.Context // RunDemo's
	name  string
	rng   *rand.Rand
	tick  time.Duration // 100 ms of audio, divided by the speed
	s     *Session
	drop  context.CancelFunc
	w     *mixWorkers
	timer *time.Timer
	quiet int // Config.SilenceFrames

	// The plan.
	racing  bool
	turns   int
	endTurn int // the turn in which (or after which) the session ends
	end     endKind
	target  mixState // the state in which the end comes (scripted)
	crash   int      // the child that panics, for endCrash
	// twoExits: the scripted session's end comes with one or both of
	// the other exit paths pending when the connection checks them
	// (finishTwice, variant exitVariant: M1's exits); every second
	// session of the plan's cycle. gate is the connection's context,
	// which holds the connection while the script fires them.
	twoExits    bool
	exitVariant int
	gate        *connGate
	// sink holds the session's tracer for finishTorn (nil without a
	// trace): the first of the cycle's two hang-ups in the states with
	// a response active and the VAD quiet (k 2 and 6) completes the
	// response after teardown began (the second hang-up in each, k 26
	// and 30, tears down from the state itself).
	sink *holdSink
	torn bool
	// tornStart: the cycle's first hang-ups in the states with no
	// response and the VAD quiet (k 0 and 4) start one that preempts
	// another after teardown began (finishTornStart); the second
	// hang-up in each (k 24 and 28) tears down from the state itself.
	tornStart bool

	// The scripted session's view of the spec state.
	vad    bool
	silent int // silent frames in a row during speech
	speech int // speech frames in the turn in progress
	barge  int // the speech frames that interrupt a response (barge-in)
	resp   *mixResp
	job    *mixJob
	nresp  int
	closed bool

	listeners sync.WaitGroup
	audio     atomic.Int64
	late      atomic.Int64
	outcomes  [5]atomic.Int64 // responses by how they ended (respOutcome)
	rep       DemoReport      // this session's figures
	err       error           // the first unexpected thing
}

type mixResp struct {
	r           *Response
	h           *hold
	speculative bool // started before the user's turn ended
}

type mixJob struct {
	j       *CompactionJob
	h       *hold
	overlap bool // a response was active while it ran
}

// Response outcomes, as a listener sees them.
const (
	respCompleted = iota // completed or finished
	respCanceled
	respPreempted
	respClosed // torn down with the session
	respFailed // an error or a panic in its pipeline
)

func respOutcome(err error) int {
	switch {
	case err == nil:
		return respCompleted
	case errors.Is(err, ErrCanceled):
		return respCanceled
	case errors.Is(err, ErrPreempted):
		return respPreempted
	case errors.Is(err, ErrClosed):
		return respClosed
	}
	return respFailed
}

// cornerCycles is how many cycles of 32 scripted sessions play the
// corner-case ends.
const cornerCycles = 3

// mixDemo runs session i of the realistic mix.
func mixDemo(ctx context.Context, dc DemoConfig, i int) (DemoReport, error) {
	seed := uint64(dc.Seed)
	// The plan's cycle starts at a seeded offset, so that seeds vary
	// which session ends how.
	off := int(rand.New(rand.NewPCG(seed, 0x5e551011)).Uint64() % 32)
	m := &mixSession{ctx: ctx, rng: rand.New(rand.NewPCG(seed, uint64(i)+1)),
		tick: time.Duration(float64(framesPerTick*20*time.Millisecond) / dc.Speed), w: newMixWorkers(dc.Speed)}
	m.racing = dc.Sessions >= 5 && i%5 == 4
	m.name = fmt.Sprintf("demo-%d", i)
	if m.racing {
		m.name += "-racing"
	}
	m.turns = 1 + m.rng.IntN(2*dc.Turns-1)
	j := i - (i+1)/5 // the scripted sessions' own index
	if dc.Sessions < 5 {
		j = i
	}
	k := (j + off) % 32
	m.target, m.end = mixStateOf(k%8), mixEnds[k/8]
	// The corner-case ends (exit paths pending, a response ending or
	// starting after teardown began) hold coordinators and look for
	// goroutines by their stacks, which stops the world: the first
	// cornerCycles cycles of scripted sessions play them (enough for every
	// corner), the sessions after those end plainly, so that thousands of
	// sessions do not starve the scheduler.
	corner := !m.racing && j < cornerCycles*32
	m.twoExits, m.exitVariant = corner && k%2 == 1, k/2
	m.torn = corner && m.end == endHangUp && (k == 2 || k == 6)
	m.tornStart = corner && m.end == endHangUp && (k == 0 || k == 4)
	if m.racing {
		m.end = mixEnds[m.rng.IntN(len(mixEnds))]
	}
	m.endTurn = m.turns
	if m.end != endHangUp {
		m.endTurn = 1 + m.rng.IntN(m.turns)
	}
	if m.end == endCrash {
		can := []int{crashVAD}
		if m.target.resp {
			can = append(can, crashTTS)
		}
		if m.target.comp {
			can = append(can, crashComp)
		}
		m.crash = can[m.rng.IntN(len(can))]
	}
	sctx, drop := context.WithCancel(ctx)
	defer drop()
	m.drop, m.gate = drop, newConnGate(sctx)
	sink := dc.Sink
	if sink != nil && sink != trace.Discard {
		m.sink = newHoldSink(sink)
		sink = m.sink
	}
	s, err := New(m.gate, Config{Instance: m.name, Sink: sink, Detector: m.w, Generator: m.w,
		Synthesizer: m.w, Compactor: &m.w.compaction,
		// A generous deadline: thousands of sessions share two cores.
		JoinTimeout: 10 * time.Second, BargeInMinSpeech: dc.BargeInMinSpeech})
	if err != nil {
		return DemoReport{}, err
	}
	m.s, m.quiet = s, s.cfg.SilenceFrames
	frame := time.Duration(int64(len(mixSpeech)) * int64(time.Second) / int64(s.cfg.SampleRate))
	m.barge = int((s.cfg.BargeInMinSpeech + frame - 1) / frame)
	if m.racing {
		m.rep.Racing = 1
		m.runRacing()
	} else {
		m.rep.Scripted = 1
		m.runScripted()
	}
	if !m.closed { // stopped early by an unexpected error, or RunDemo's ctx
		m.s.Close()
	}
	// Work the teardown abandoned is not canceled: let it end, so that
	// its audio stream closes.
	m.w.releaseAll()
	heard := make(chan struct{})
	go func() {
		m.listeners.Wait()
		close(heard)
	}()
	m.wait(heard, "the responses' audio streams to close")
	if m.timer != nil {
		m.timer.Stop()
	}
	rep := m.rep
	rep.Sessions = 1
	rep.AudioBytes, rep.LateAudio, rep.SentAfterCancel = m.audio.Load(), m.late.Load(), m.w.sentLate.Load()
	rep.Completed = int(m.outcomes[respCompleted].Load())
	rep.Canceled = int(m.outcomes[respCanceled].Load())
	rep.Preempted = int(m.outcomes[respPreempted].Load())
	rep.ClosedResponses = int(m.outcomes[respClosed].Load())
	rep.FailedResponses = int(m.outcomes[respFailed].Load())
	if m.err == nil && ctx.Err() != nil {
		m.err = fmt.Errorf("%s: %w", m.name, ctx.Err())
	}
	return rep, m.err
}

func (m *mixSession) failf(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf("%s: %s", m.name, fmt.Sprintf(format, args...))
	}
}

// ok says the script may go on.
func (m *mixSession) ok() bool { return m.err == nil && !m.closed && m.ctx.Err() == nil }

// sleep lets ticks of audio time pass.
func (m *mixSession) sleep(ticks int) {
	d := time.Duration(ticks) * m.tick
	if m.timer == nil {
		m.timer = time.NewTimer(d)
	} else {
		m.timer.Reset(d)
	}
	select {
	case <-m.timer.C:
	case <-m.ctx.Done():
	}
}

// wait waits for c, for at most a minute (a stuck session is a failure,
// not a hang).
func (m *mixSession) wait(c <-chan struct{}, what string) bool {
	select {
	case <-c:
		return true
	case <-time.After(time.Minute):
		m.failf("gave up waiting for %s", what)
		return false
	}
}

// listen plays r's audio (the client reads it until the stream closes,
// and acknowledges each chunk as played, so that a response cut short
// leaves in the history what the user heard), and counts the chunks that
// arrive after r was canceled, preempted or torn down: a chunk read by a
// receive that began after r's Done was closed.
func (m *mixSession) listen(r *Response) {
	m.listeners.Add(1)
	go func() {
		defer m.listeners.Done()
		for {
			ended := false
			select {
			case <-r.Done():
				ended = true
			default:
			}
			chunk, ok := <-r.Audio()
			if !ok {
				break
			}
			m.audio.Add(int64(len(chunk)))
			r.Played(len(chunk))
			if ended {
				if o := respOutcome(r.Err()); o == respCanceled || o == respPreempted || o == respClosed {
					m.late.Add(1)
				}
			}
		}
		select {
		case <-r.Done():
		case <-m.s.Done():
		}
		o := respClosed // a response a teardown abandoned is never ended
		select {
		case <-r.Done():
			o = respOutcome(r.Err())
		default:
		}
		m.outcomes[o].Add(1)
	}()
}

// The scripted session.

// state is the spec state the script drove the session to.
func (m *mixSession) state() mixState { return mixState{m.vad, m.resp != nil, m.job != nil} }

// check compares the session's published state with the script's.
func (m *mixSession) check(after string) {
	if m.err != nil {
		return
	}
	st := m.state()
	want := State{Conn: ConnLive}
	if st.vad {
		want.VAD = VADSpeech
	}
	if st.resp {
		want.Resp = RespActive
	}
	if st.comp {
		want.Compaction = CompRunning
	}
	if got := m.s.State(); got != want {
		m.failf("after %s the session is in %+v; the script drove it to %+v", after, got, want)
	}
}

// push streams n frames of speech or silence from the microphone: the
// first speech frame of a turn is VadStart (a barge-in if a response is
// active), the speech frame that brings the turn to BargeInMinSpeech
// interrupts the active response (the session cancels it), the
// SilenceFrames-th silent frame in a row ends the turn (VadStop).
func (m *mixSession) push(speech bool, n int) {
	frame := mixSilence
	if speech {
		frame = mixSpeech
	}
	for k := 0; k < n && m.err == nil; k++ {
		ev, err := m.s.PushAudio(frame)
		if err != nil {
			m.failf("PushAudio: %v", err)
			return
		}
		want := TurnNone
		switch {
		case speech && !m.vad:
			want, m.vad, m.silent, m.speech = TurnStarted, true, 0, 0
			if m.resp != nil {
				m.rep.BargeIns++
			}
		case speech:
			m.silent = 0
		case m.vad:
			if m.silent++; m.silent == m.quiet {
				want, m.vad, m.silent = TurnStopped, false, 0
			}
		}
		if ev.Kind != want {
			m.failf("frame %d: %v, the script expected %v", ev.Frame, ev.Kind, want)
		}
		barge := false
		if speech {
			m.speech++
			barge = m.speech == m.barge
		}
		switch {
		case ev.BargeIn != barge:
			m.failf("frame %d: barge-in %v, the script expected %v", ev.Frame, ev.BargeIn, barge)
		case ev.Interrupted != (barge && m.resp != nil):
			m.failf("frame %d: interrupted %v, the script expected %v", ev.Frame, ev.Interrupted, barge && m.resp != nil)
		case ev.Interrupted:
			// The response was canceled, its audio stopped, before
			// PushAudio returned.
			select {
			case <-m.resp.r.Done():
			default:
				m.failf("frame %d: response %d interrupted but not ended", ev.Frame, m.resp.r.ID())
			}
			if !errors.Is(m.resp.r.Err(), ErrCanceled) {
				m.failf("response %d interrupted: Err %v, want ErrCanceled", m.resp.r.ID(), m.resp.r.Err())
			}
			m.resp = nil
			m.rep.Interrupted++
		}
	}
	m.check("PushAudio")
}

// startResp starts a response (preempting the active one, if any).
func (m *mixSession) startResp(why string) {
	m.nresp++
	prompt := fmt.Sprintf("%s: response %d (%s)", m.name, m.nresp, why)
	h := m.w.hold(0)
	h.words = replyWords(m.rng.IntN(len(mixReplies)), 4+m.rng.IntN(10))
	m.w.expect(prompt, h)
	r, err := m.s.StartResponse(prompt)
	if err != nil {
		m.failf("StartResponse: %v", err)
		return
	}
	m.rep.Responses++
	m.resp = &mixResp{r: r, h: h, speculative: m.vad}
	m.listen(r)
	m.overlapped()
	m.check("StartResponse")
}

// overlapped notes a compaction overlapping a response.
func (m *mixSession) overlapped() {
	if m.job != nil && m.resp != nil && !m.job.overlap {
		m.job.overlap = true
		m.rep.Overlaps++
	}
}

// endResp ends the active response: its generation completes (o endOK),
// fails (endFail), or the client finishes or cancels it.
func (m *mixSession) endResp(how string) {
	mr := m.resp
	var err error
	switch how {
	case "complete", "fail":
		o := endOK
		if how == "fail" {
			o = endFail
			m.rep.Failures++
		}
		mr.h.end(o)
		if !m.wait(mr.r.Done(), "the response to end") {
			return
		}
	case "finish":
		err = m.s.FinishResponse(mr.r.ID())
		m.rep.Finished++
	case "cancel":
		err = m.s.CancelResponse(mr.r.ID())
	}
	if err != nil {
		m.failf("%s response %d: %v", how, mr.r.ID(), err)
		return
	}
	m.resp = nil
	m.check(how + " response")
}

// trigger starts compacting the history.
func (m *mixSession) trigger() {
	h := m.w.hold(0)
	m.w.next.Store(h)
	j, err := m.s.TriggerCompaction()
	if err != nil {
		m.failf("TriggerCompaction: %v", err)
		return
	}
	m.rep.Compactions++
	m.job = &mixJob{j: j, h: h}
	m.overlapped()
	m.check("TriggerCompaction")
}

// endJob lets the running compaction end as o.
func (m *mixSession) endJob(o outcome) {
	m.job.h.end(o)
	if !m.wait(m.job.j.Done(), "the compaction to end") {
		return
	}
	if o == endFail {
		m.rep.Failures++
	}
	m.job = nil
	m.check("the compaction's end")
}

func (m *mixSession) jobOutcome() outcome {
	if m.rng.IntN(12) == 0 {
		return endFail
	}
	return endOK
}

func (m *mixSession) appendHistory(items ...string) {
	for _, it := range items {
		if err := m.s.AppendHistory(it); err != nil {
			m.failf("AppendHistory: %v", err)
		}
	}
}

// runScripted runs the scripted conversation: its turns, then (if the end
// did not come during the last turn) a walk to the target state and the
// end.
func (m *mixSession) runScripted() {
	for t := 1; t <= m.turns && m.ok(); t++ {
		m.rep.Turns++
		if m.turn(t, t == m.endTurn) {
			return
		}
	}
	if m.ok() {
		m.goTo(m.target)
		m.finish()
	}
}

// turn runs user turn t: the user speaks, then pauses until the VAD ends
// the turn, while a response of the last turn may still be speaking
// (barge-in) and compaction may be running; then the agent answers and the
// user listens. In the last turn the session ends as soon as it is in
// the target state at a tick, with probability 1/3; turn reports whether
// it did.
func (m *mixSession) turn(t int, last bool) bool {
	ended := func() bool {
		if last && m.ok() && m.state() == m.target && m.rng.IntN(3) == 0 {
			m.finish()
			return true
		}
		return false
	}
	rnd := m.rng.Float64
	speak := 3 + m.rng.IntN(10) // 0.3 to 1.2 s of speech
	for k := 0; k < speak && m.ok(); k++ {
		if k == 1 && t%2 == 1 && m.quiet > 1 {
			m.push(false, 1) // a breath: the turn goes on (the VAD's silence counts, then resets)
		}
		m.push(true, framesPerTick)
		m.whileSpeaking(k == 0)
		if ended() {
			return true
		}
		m.sleep(1)
	}
	for quiet := m.quiet; quiet > 0 && m.ok(); quiet -= framesPerTick { // the pause that ends the turn
		m.push(false, min(quiet, framesPerTick))
		if m.vad {
			m.whileSpeaking(false)
		}
		if ended() {
			return true
		}
		m.sleep(1)
	}
	if !m.ok() {
		return false
	}
	// The agent answers (preempting a response still speaking, unless it
	// is a draft that answered what the user said), and the history grows; compaction, when it starts now, overlaps the answer.
	switch {
	case m.resp != nil && m.resp.speculative && rnd() < 0.5:
		// The draft answered what the user said: it goes on speaking.
	case rnd() < 0.93:
		m.startResp(fmt.Sprintf("turn %d", t))
	}
	m.appendHistory(fmt.Sprintf("user: turn %d", t)) // the answer's item is the response's own
	if m.job == nil && rnd() < 0.4 {
		m.trigger()
	}
	listen := 1 + m.rng.IntN(8) // the user listens 0.1 to 0.8 s before speaking again
	for k := 0; k < listen && m.ok(); k++ {
		m.push(false, framesPerTick)
		m.whileListening()
		if ended() {
			return true
		}
		m.sleep(1)
	}
	return false
}

// whileSpeaking is what may happen at a tick while the user speaks: at the
// turn's first tick (100 ms of speech, before the session's own barge-in
// at 200 ms), an eager client cancels the response that is speaking; the response
// completes anyway, compaction ends or starts (the history is over its
// budget), or the agent starts a response speculatively, before the turn
// ends (preempting one still speaking), and revises it as the user goes
// on (a new draft preempts the old).
func (m *mixSession) whileSpeaking(bargeTick bool) {
	rnd := m.rng.Float64
	if m.resp != nil && bargeTick && rnd() < 0.3 {
		m.endResp("cancel")
	}
	if m.resp != nil && m.ok() && rnd() < 0.06 {
		m.endResp("complete")
	}
	if m.job != nil && m.ok() && rnd() < 0.08 {
		m.endJob(m.jobOutcome())
	}
	if m.job == nil && m.ok() && rnd() < 0.07 {
		m.trigger()
	}
	switch {
	case !m.ok():
	case m.resp != nil && m.resp.speculative && rnd() < 0.2:
		m.startResp("speculative, revised") // the transcript grew: a new draft preempts the old
	case rnd() < 0.04:
		m.startResp("speculative")
	}
}

// whileListening is what may happen at a tick while the user listens: the
// response completes, is finished by the client (its audio played out),
// fails, or is replaced by the answer it was a holding phrase for (a
// tool's result came in); compaction ends or starts.
func (m *mixSession) whileListening() {
	rnd := m.rng.Float64
	if m.resp != nil {
		switch x := rnd(); {
		case x < 0.22:
			m.endResp("complete")
		case x < 0.27:
			m.endResp("finish")
		case x < 0.285:
			m.endResp("fail")
		case x < 0.345:
			m.startResp("tool result") // the answer replaces its holding phrase
		}
	}
	if m.job != nil && m.ok() && rnd() < 0.12 {
		m.endJob(m.jobOutcome())
	}
	if m.job == nil && m.ok() && rnd() < 0.03 {
		m.trigger()
	}
}

// goTo drives the session to st, one coordinator at a time in a random
// order.
func (m *mixSession) goTo(st mixState) {
	for _, v := range m.rng.Perm(3) {
		if !m.ok() {
			return
		}
		switch {
		case v == 0 && st.vad && !m.vad:
			m.push(true, framesPerTick)
		case v == 0 && !st.vad && m.vad:
			m.push(false, m.quiet-m.silent)
		case v == 1 && st.resp && m.resp == nil:
			m.startResp("late")
		case v == 1 && !st.resp && m.resp != nil:
			m.endResp([]string{"complete", "finish", "cancel"}[m.rng.IntN(3)])
		case v == 2 && st.comp && m.job == nil:
			m.trigger()
		case v == 2 && !st.comp && m.job != nil:
			m.endJob(endOK)
		}
	}
}

// finish ends the session as planned: the client hangs up, the connection
// drops, or a child's work panics; then the client closes it, and Close
// must report what happened and nothing else (nothing abandoned).
func (m *mixSession) finish() {
	if m.twoExits {
		m.finishTwice(m.gate, m.exitVariant)
		return
	}
	if m.tornStart && m.sink != nil {
		m.finishTornStart(m.sink, m.exitVariant == 0) // k 0: the first of its window
		return
	}
	if m.torn && m.sink != nil && m.resp != nil {
		m.finishTorn(m.sink, m.exitVariant%4 == 1) // k%8 2: the first of its window
		return
	}
	var want error
	switch m.end {
	case endDrop:
		want = ErrConnectionDropped
		m.drop()
	case endCrash:
		want = ErrChildPanic
		m.crashChild()
	}
	if want != nil {
		m.wait(m.s.Done(), "the session to tear itself down")
	}
	m.closeAndCount(want)
}

// closeAndCount closes the session, checks that Close reports want (nil
// after a hang-up, else the error that tore the session down) and never
// an abandoned child, and counts the session's end.
func (m *mixSession) closeAndCount(want error) {
	err := m.s.Close()
	m.closed = true
	switch {
	case errors.Is(err, ErrAbandoned):
		m.failf("Close: %v", err)
	case want == nil && err != nil:
		m.failf("Close after a hang-up: %v", err)
	case want != nil && !errors.Is(err, want):
		m.failf("Close: %v, want an error wrapping %v", err, want)
	}
	m.count(m.end, m.crash)
}

// crashChild makes the planned child's work panic (m.crash).
func (m *mixSession) crashChild() {
	switch m.crash {
	case crashVAD:
		m.w.crashVAD.Store(true)
		if _, err := m.s.PushAudio(mixSpeech); !errors.Is(err, ErrChildPanic) {
			m.failf("PushAudio to a crashing VAD: %v", err)
		}
	case crashTTS:
		m.resp.h.end(endPanic)
	case crashComp:
		m.job.h.end(endPanic)
	}
}

func (m *mixSession) count(end endKind, crash int) {
	switch end {
	case endHangUp:
		m.rep.HangUps++
	case endDrop:
		m.rep.Drops++
	case endCrash:
		m.rep.Panics++
		if m.rep.PanicsBy == nil {
			m.rep.PanicsBy = map[string]int{}
		}
		m.rep.PanicsBy[crashNames[crash]]++
	}
}

// The racing session.

// runRacing runs a session as a voice server would, with no script to
// hold the work: a microphone goroutine (this one) streams the user's
// turns and cancels a speaking response when the user barges in; an agent
// goroutine answers each turn (preempting a response still speaking) and
// compacts the history; responses and compactions end on their own after
// a random time. Calls race each other and the work, and may be refused
// (a cancel of a response that has just completed, a compaction already
// running); those refusals are counted, not errors. The session ends in
// whatever state it is in.
func (m *mixSession) runRacing() {
	var ending atomic.Bool // from now on, the session may refuse calls with ErrClosed
	var cur atomic.Pointer[mixResp]
	var job atomic.Pointer[mixJob]
	turns, stop, agentDone := make(chan int), make(chan struct{}), make(chan struct{})
	arng := rand.New(rand.NewPCG(m.rng.Uint64(), m.rng.Uint64()))
	var agent DemoReport // the agent's figures, merged when it has returned
	var agentErr error
	span := func(rng *rand.Rand, lo, hi float64) time.Duration { // lo..hi ticks of audio time
		return time.Duration((lo + (hi-lo)*rng.Float64()) * float64(m.tick))
	}
	closed := func(err error) bool { return errors.Is(err, ErrClosed) && ending.Load() }
	go func() {
		defer close(agentDone)
		for {
			var t int
			select {
			case <-stop:
				return
			case t = <-turns:
			}
			h := m.w.hold(span(arng, 5, 40))
			h.words = replyWords(arng.IntN(len(mixReplies)), 4+arng.IntN(10))
			prompt := fmt.Sprintf("%s: turn %d", m.name, t)
			m.w.expect(prompt, h)
			r, err := m.s.StartResponse(prompt)
			if err != nil {
				if !closed(err) {
					agentErr = fmt.Errorf("StartResponse: %w", err)
				}
				return
			}
			agent.Responses++
			cur.Store(&mixResp{r: r, h: h})
			m.listen(r)
			for _, it := range []string{fmt.Sprintf("user: turn %d", t)} { // the answer's item is the response's own
				if err := m.s.AppendHistory(it); err != nil && !closed(err) {
					agentErr = fmt.Errorf("AppendHistory: %w", err)
					return
				}
			}
			if arng.Float64() < 0.5 {
				jh := m.w.hold(span(arng, 3, 30))
				m.w.next.Store(jh)
				j, err := m.s.TriggerCompaction()
				switch {
				case err == nil:
					agent.Compactions++
					job.Store(&mixJob{j: j, h: jh})
					select {
					case <-r.Done():
					default:
						agent.Overlaps++ // the answer just started is still speaking
					}
				case errors.Is(err, ErrBusy):
					agent.Refused++
				case !closed(err):
					agentErr = fmt.Errorf("TriggerCompaction: %w", err)
					return
				}
			}
		}
	}()
	speaking := func() *mixResp {
		if r := cur.Load(); r != nil {
			select {
			case <-r.r.Done():
			default:
				return r
			}
		}
		return nil
	}
	// push streams n frames; it reports false when the session refused
	// them (it is ending), and notes a barge-in at a turn's start.
	push := func(speech bool, n int) (TurnKind, bool) {
		frame := mixSilence
		if speech {
			frame = mixSpeech
		}
		kind := TurnNone
		for k := 0; k < n; k++ {
			ev, err := m.s.PushAudio(frame)
			if err != nil {
				if !closed(err) && !(errors.Is(err, ErrChildPanic) && ending.Load()) {
					m.failf("PushAudio: %v", err)
				}
				return kind, false
			}
			if ev.Kind != TurnNone {
				kind = ev.Kind
			}
			if ev.Interrupted {
				m.rep.Interrupted++
			}
			if ev.Kind == TurnStarted {
				if r := speaking(); r != nil {
					m.rep.BargeIns++
					if m.rng.Float64() < 0.3 { // an eager client; else the session's barge-in
						if err := m.s.CancelResponse(r.r.ID()); errors.Is(err, ErrNoResponse) {
							m.rep.Refused++ // it completed, or was preempted, meanwhile
						} else if err != nil && !closed(err) {
							m.failf("CancelResponse: %v", err)
						}
					}
				}
			}
		}
		return kind, true
	}
mic:
	for t := 1; t <= m.turns && m.err == nil && m.ctx.Err() == nil; t++ {
		m.rep.Turns++
		for k := 1 + m.rng.IntN(6); k > 0; k-- { // the user listens
			if _, ok := push(false, framesPerTick); !ok {
				break mic
			}
			m.sleep(1)
		}
		for k := 3 + m.rng.IntN(10); k > 0; k-- { // speaks
			if _, ok := push(true, framesPerTick); !ok {
				break mic
			}
			m.sleep(1)
		}
		for { // and pauses until the VAD ends the turn
			kind, ok := push(false, framesPerTick)
			if !ok {
				break mic
			}
			m.sleep(1)
			if kind == TurnStopped {
				break
			}
		}
		select {
		case turns <- t:
		case <-agentDone:
			break mic
		}
		if t == m.endTurn {
			m.sleep(m.rng.IntN(6)) // 0: the end races the agent's answer
			break
		}
	}
	// The end, in whatever state the session is in.
	ending.Store(true)
	var want error
	crash := crashVAD
	switch m.end {
	case endDrop:
		want = ErrConnectionDropped
		m.drop()
	case endCrash:
		want = ErrChildPanic
		crash = m.rng.IntN(3)
		var h *hold
		if r := speaking(); crash == crashTTS && r != nil {
			h = r.h
		} else if j := job.Load(); crash == crashComp && j != nil && j.h != nil {
			h = j.h
		}
		if h != nil {
			h.end(endPanic)
			select { // the work may have ended already: then the VAD crashes
			case <-m.s.Done():
			case <-time.After(20*m.tick + 100*time.Millisecond):
				h = nil
			}
		}
		if h == nil {
			crash = crashVAD
			m.w.crashVAD.Store(true)
			m.s.PushAudio(mixSpeech)
		}
	}
	if want != nil { // a Close now would race the drop or the panic
		m.wait(m.s.Done(), "the session to tear itself down")
	}
	close(stop)
	<-agentDone
	err := m.s.Close()
	m.closed = true
	cause := m.s.Report().Cause
	switch {
	case errors.Is(err, ErrAbandoned):
		m.failf("Close: %v", err)
	case want == nil && err != nil:
		m.failf("Close after a hang-up: %v", err)
	case want != nil && !errors.Is(cause, want):
		m.failf("Close: %v, want an error wrapping %v", err, want)
	}
	if agentErr != nil {
		m.failf("agent: %v", agentErr)
	}
	m.count(m.end, crash)
	m.rep.Responses += agent.Responses
	m.rep.Compactions += agent.Compactions
	m.rep.Overlaps += agent.Overlaps
	m.rep.Refused += agent.Refused
}
