package session

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

// This file holds the realistic mix's scripted ends by two or three exit
// paths at once (M1's exits): the connection goroutine acts on one and
// finds the others pending when it checks them. The connection goroutine
// checks them the instant it wakes, so the script holds it there with a
// gate of its own: the context it gives New (the connection), whose Err
// and Value (context.Cause's) wait, once armed, until the script has fired
// the other paths. The session's code is the production code; the hook is
// the workload's context.

// connGate is the context a scripted session gives New: the session's
// own, whose Err and Value hold their caller once armed (the connection
// goroutine, checking the drop after a close or a failure woke it, or
// reading the drop's cause), until released.
type connGate struct {
	context.Context
	armed   atomic.Bool
	held    chan struct{} // receives when a call is held
	release chan struct{} // closed to let it go on
}

func newConnGate(ctx context.Context) *connGate {
	return &connGate{Context: ctx, held: make(chan struct{}, 1), release: make(chan struct{})}
}

func (g *connGate) hold() {
	if g.armed.CompareAndSwap(true, false) {
		g.held <- struct{}{}
		<-g.release
	}
}

// Err implements context.Context, held once armed.
func (g *connGate) Err() error {
	g.hold()
	return g.Context.Err()
}

// Value implements context.Context, held once armed (context.Cause reads
// the drop's cause through it).
func (g *connGate) Value(key any) any {
	g.hold()
	return g.Context.Value(key)
}

// parkMu serializes the scripted ends that need a Close waiting on the
// connection (closePending), so that at most one goroutine of the mix is
// blocked in Close's send at a time: parked finds it by its stack.
var parkMu sync.Mutex

// closePending calls Close, which blocks on its send to the connection
// goroutine until that goroutine checks for a waiting Close.
func (m *mixSession) closePending(done chan<- struct{}) {
	defer close(done)
	m.s.Close() // its error is checked by the script's own Close
}

// parked waits until the goroutine running closePending is blocked in
// Close's select (its send to the connection), for at most a minute.
func parked() bool {
	return stackShows("[select", func(g string) bool {
		return strings.Contains(g, "(*mixSession).closePending") && strings.Contains(g, "(*Session).Close(")
	})
}

// finishTwice ends the session by its planned exit path (a hang-up, a
// drop, or a child's panic) with one or both of the others pending when
// the connection goroutine checks them (variant v: the first other, the
// second, both; the others in the order close, drop, panic). The panic
// fired as a pending path is the VAD's. Teardown acts on the planned path
// once; Close reports its error (nil for a hang-up), nothing else.
//
// A close cannot be pending when a failure woke the connection: the
// goroutine checks for a waiting Close before anything the workload
// supplies runs (docs/machines.md), so a panic's others are the drop.
func (m *mixSession) finishTwice(g *connGate, v int) {
	exit := map[endKind]string{endHangUp: "close", endDrop: "drop", endCrash: "panic"}[m.end]
	var others []string
	for _, p := range []string{"close", "drop", "panic"} {
		if p != exit && !(exit == "panic" && p == "close") {
			others = append(others, p)
		}
	}
	pending := others
	if len(others) == 2 && v%3 < 2 {
		pending = others[v%3 : v%3+1]
	}
	var want error
	closing := make(chan struct{})
	hangUp := func() { go m.closePending(closing) }
	needPark := exit != "close" && pending[0] == "close"
	if needPark {
		parkMu.Lock()
		defer parkMu.Unlock()
	}
	if m.vad && m.silent == 0 && m.quiet > 1 && v%2 == 0 {
		// The user pauses mid-turn as the session ends (M2's Abort in a
		// pause).
		m.push(false, 1)
	}
	g.armed.Store(true)
	switch exit {
	case "close":
		hangUp()
	case "drop":
		want = ErrConnectionDropped
		m.drop()
	case "panic":
		want = ErrChildPanic
		m.crashChild()
	}
	if !m.wait(g.held, "the connection to check its exit paths") {
		close(g.release)
		return
	}
	for _, p := range pending {
		switch p {
		case "close":
			hangUp()
			if !parked() {
				m.failf("the hang-up did not reach the connection")
			}
		case "drop":
			m.drop()
		case "panic":
			m.w.crashVAD.Store(true)
			if _, err := m.s.PushAudio(mixSpeech); !errors.Is(err, ErrChildPanic) {
				m.failf("PushAudio to a crashing VAD: %v", err)
			}
		}
	}
	close(g.release)
	m.wait(m.s.Done(), "the session to tear itself down")
	if exit == "close" || needPark {
		m.wait(closing, "the hang-up to return")
	}
	m.closeAndCount(want)
}

// holdSink is the trace Sink a scripted session gives New: the demo's,
// which holds the session's tracer (its caller, the coordinator emitting)
// once armed on an event, until released. The workload uses it to hold
// the response coordinator between the stutter of a pipeline's end
// (TTSClosed) and the response's end (RespFinish), while teardown begins.
type holdSink struct {
	inner   trace.Sink
	armed   atomic.Pointer[holdOn]
	held    chan struct{}
	release chan struct{}

	mu     sync.Mutex
	closed map[string]bool // the responses whose pipeline's end (TTSClosed) was emitted
}

// holdOn is the event a holdSink waits for: an action and its detail's
// number (key: "response", "job").
type holdOn struct {
	action, key string
	id          uint64
}

func newHoldSink(inner trace.Sink) *holdSink {
	return &holdSink{inner: inner, held: make(chan struct{}, 1), release: make(chan struct{}), closed: map[string]bool{}}
}

// pipelinesEnded waits until the end of the pipelines of responses 1 to
// n has been emitted, for at most a minute: while the sink holds the
// tracer, a pipeline ending late would hold its coordinator too.
func (h *holdSink) pipelinesEnded(n uint64) bool {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		all := true
		for id := uint64(1); id <= n && all; id++ {
			all = h.closed[fmt.Sprint(id)]
		}
		h.mu.Unlock()
		if all {
			return true
		}
		time.Sleep(100 * time.Microsecond)
	}
	return false
}

// Emit implements trace.Sink.
func (h *holdSink) Emit(ev trace.Event) error {
	if ev.Action == ActTTSClosed {
		h.mu.Lock()
		h.closed[fmt.Sprint(ev.Detail["response"])] = true
		h.mu.Unlock()
	}
	if on := h.armed.Load(); on != nil && ev.Action == on.action && fmt.Sprint(ev.Detail[on.key]) == fmt.Sprint(on.id) &&
		h.armed.CompareAndSwap(on, nil) {
		h.held <- struct{}{}
		<-h.release
	}
	return h.inner.Emit(ev)
}

// finishTorn hangs up while the response coordinator is between a
// response's pipeline returning and the response's completion: the
// completion is committed after teardown began (M3's End from conn torn),
// as the first response of Response.tla's window of two (odd number) or
// the second, as first says: a response is started first when the active
// one's number has the other parity.
func (m *mixSession) finishTorn(sink *holdSink, first bool) {
	if r := m.resp.r; (r.ID()%2 == 1) != first {
		m.startResp("revised")
	}
	mr := m.resp
	sink.armed.Store(&holdOn{action: ActTTSClosed, key: "response", id: mr.r.ID()})
	mr.h.end(endOK)
	if !m.wait(sink.held, "the response's pipeline to return") {
		close(sink.release)
		return
	}
	closing := make(chan struct{})
	go func() {
		defer close(closing)
		m.s.Close() // checked below
	}()
	deadline := time.Now().Add(time.Minute)
	for m.s.State().Conn != ConnTorn && time.Now().Before(deadline) {
		time.Sleep(50 * time.Microsecond)
	}
	close(sink.release)
	m.wait(closing, "the hang-up to return")
	if err := m.s.Close(); err != nil {
		m.failf("Close after a hang-up: %v", err)
	}
	m.closed = true
	m.count(m.end, m.crash)
}

// finishTornStart hangs up while the response coordinator serves a start
// that preempts a response the user heard part of: the coordinator
// appends what was heard to the history, a call to the compaction
// coordinator, which the mix's trace Sink holds as it emits a job's end
// (CompFinish). The script waits until the start is blocked there, hangs
// up, waits until the session publishes the connection torn, and lets it
// go on: the start is committed after teardown began (M3's Start from
// conn torn), as the first response of Response.tla's window (an odd
// number) or the second, as first says.
func (m *mixSession) finishTornStart(sink *holdSink, first bool) {
	if m.job == nil {
		m.trigger()
	}
	if m.resp == nil {
		m.startResp("late")
	}
	if !m.ok() {
		return
	}
	if ((m.resp.r.ID()+1)%2 == 1) != first {
		m.startResp("revised")
	}
	deadline := time.Now().Add(time.Minute)
	for m.resp.r.Heard() == "" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}
	// The response coordinator must have nothing left to emit but the
	// start: the pipelines of the responses before the active one have
	// ended.
	if !sink.pipelinesEnded(m.resp.r.ID() - 1) {
		m.failf("the earlier responses' pipelines did not end")
	}
	sink.armed.Store(&holdOn{action: ActCompFinish, key: "job", id: m.job.j.ID()})
	m.job.h.end(endOK)
	if !m.wait(sink.held, "the compaction's end") {
		close(sink.release)
		return
	}
	m.nresp++
	prompt := fmt.Sprintf("%s: response %d (%s)", m.name, m.nresp, "revised as the user hangs up")
	h := m.w.hold(0)
	h.words = replyWords(m.rng.IntN(len(mixReplies)), 4)
	m.w.expect(prompt, h)
	started := make(chan *Response, 1)
	go func() {
		r, err := m.s.StartResponse(prompt)
		if err != nil {
			r = nil
		}
		started <- r
	}()
	// The coordinator blocks appending the preempted response's heard
	// text to the history (Session.record, whose frame, or the
	// response's halt below it when record is inlined, names this
	// session).
	self := fmt.Sprintf("%p", m.s)
	if !stackShows("[select", func(g string) bool {
		if !strings.Contains(g, "(*Session).record(") {
			return false
		}
		for _, frame := range []string{"(*Session).record(", "(*Response).halt("} {
			if _, rest, ok := strings.Cut(g, frame); ok {
				if line, _, _ := strings.Cut(rest, "\n"); strings.Contains(line, self) {
					return true
				}
			}
		}
		return false
	}) {
		m.failf("the preempting start did not reach the history")
	}
	closing := make(chan struct{})
	go func() {
		defer close(closing)
		m.s.Close() // checked below
	}()
	for m.s.State().Conn != ConnTorn && time.Now().Before(deadline) {
		time.Sleep(50 * time.Microsecond)
	}
	close(sink.release)
	if r := <-started; r != nil {
		m.rep.Responses++
		m.listen(r)
	} else {
		m.failf("StartResponse as the user hangs up: refused")
	}
	m.wait(closing, "the hang-up to return")
	if err := m.s.Close(); err != nil {
		m.failf("Close after a hang-up: %v", err)
	}
	m.closed = true
	m.count(m.end, m.crash)
}

// stackShows waits until some goroutine's state is state and its stack
// matches, for at most a minute.
func stackShows(state string, match func(stack string) bool) bool {
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		n := runtime.Stack(buf, true)
		if n == len(buf) { // thousands of sessions: the dump was cut
			buf = make([]byte, 2*len(buf))
			continue
		}
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if head, _, _ := strings.Cut(g, "\n"); strings.Contains(head, state) && match(g) {
				return true
			}
		}
		time.Sleep(50 * time.Microsecond)
	}
	return false
}
