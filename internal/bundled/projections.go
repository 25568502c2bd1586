package bundled

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/model/machines"
	"github.com/tracecheck/tracecheck/trace"
)

// This file projects a session trace (spec/session.fizz's vocabulary, as
// impl/session writes it) onto each machine spec M1–M5: which events
// belong to each, and how the machine's state is read from them
// (docs/trace-format.md, "One trace, every spec"). Each projector reads
// the session's events, their state and their detail (never checked
// against session.fizz, so that a detail the composition does not see
// cannot change its verdict), and writes events in the machine spec's
// vocabulary, carrying only what the source event tells: the machine
// spec's replay decides the rest.

// The session.fizz names the projections read (impl/session's).
const (
	actVadStart    = "VadStart"
	actVadStop     = "VadStop"
	actRespStart   = "RespStart"
	actRespFinish  = "RespFinish"
	actCompTrigger = "CompTrigger"
	actCompFinish  = "CompFinish"
	actTeardown    = "Teardown"
	actTTSClosed   = "TTSClosed"
)

// SessionProjections returns the projections of session.fizz's traces
// onto the five machine specs.
func SessionProjections() []cli.Projection {
	return []cli.Projection{
		{Spec: "connection", Doc: "Init; Teardown as its exit path firing (detail exit, else its cause) and the teardown on it",
			New: func() cli.Projector { return newProjector(connectionEvents) }},
		{Spec: "turn", Doc: "Init; VadStart and VadStop as the frames that led to them (detail quiet, held, resumed); Teardown as Abort",
			New: func() cli.Projector { return newProjector(turnEvents) }},
		{Spec: "response", Doc: "Init; RespStart as Start, RespFinish as End, Teardown as ConnTorn and Shutdown; a window of two responses per instance",
			New: func() cli.Projector { return newProjector(responseEvents) }},
		{Spec: "compaction", Doc: "Init; CompTrigger as Trigger, CompFinish as JobEnds, Teardown as ConnTorn and Shutdown",
			New: func() cli.Projector { return newProjector(compactionEvents) }},
		{Spec: "tts", Doc: "one instance per response (SESSION/rN): RespStart as Init, its end (detail audio) as Cancel, Finish or Complete, TTSClosed as Return and Reap, teardown as Close",
			New: func() cli.Projector { return newProjector(ttsEvents) }},
	}
}

// projector is a cli.Projector over one session trace: per session
// instance, the projection's own state and the Teardown composite in
// progress, and the sequence numbers of the instances it writes.
type projector struct {
	events func(p *projector, s *sess, src cli.Source) []step
	sess   map[string]*sess
	seq    map[string]uint64
	closed map[string]bool
}

// sess is what a projection keeps of one session instance.
type sess struct {
	name     string
	teardown map[string]any // the merged state of a Teardown composite in progress
	// response's window: its number, responses started in it, whether a
	// response is active; tts's responses by number.
	window, started int
	active          bool
	resp            map[int64]*ttsResp
	// torn: the projection has taken the machine's ConnTorn (a child's
	// commit after teardown began, detail torn, or Teardown itself).
	torn bool
	// tts: the last response number, the active response, and whether
	// the trace has said that a pipeline stopped (TTSClosed).
	lastResp, activeResp int64
	ttsClosed            bool
}

// step is one projected event before its instance and sequence number.
type step struct {
	instance, action string
	state            map[string]any
}

func newProjector(events func(*projector, *sess, cli.Source) []step) *projector {
	return &projector{events: events, sess: map[string]*sess{}, seq: map[string]uint64{}, closed: map[string]bool{}}
}

// Project implements cli.Projector.
func (p *projector) Project(src cli.Source) []trace.Event {
	e := src.Event
	s := p.sess[e.Instance]
	if e.Action == trace.InitAction {
		s = &sess{name: e.Instance, resp: map[int64]*ttsResp{}}
		p.sess[e.Instance] = s
	}
	if s == nil {
		return nil // the session's own check reports an instance that does not start with Init
	}
	if e.Action == actTeardown && e.Part != "" {
		// A composite Teardown: the projections see its begin (the
		// connection torn) and its end (the children's final values).
		if e.Part == trace.PartBegin {
			s.teardown = map[string]any{}
		}
		if s.teardown == nil {
			return nil
		}
		for k, v := range e.State {
			s.teardown[k] = v
		}
	}
	var out []trace.Event
	for _, st := range p.events(p, s, src) {
		inst := st.instance
		if inst == "" {
			inst = e.Instance
		}
		seq := p.seq[inst]
		p.seq[inst] = seq + 1
		out = append(out, trace.Event{V: trace.Version, Instance: inst, Seq: seq, Action: st.action, State: st.state,
			Detail: map[string]any{"source": src.Pos.String()}})
	}
	if e.Action == actTeardown && e.Part == trace.PartEnd {
		s.teardown = nil
	}
	return out
}

// Closed implements cli.Projector.
func (p *projector) Closed(instance string) bool { return p.closed[instance] }

// teardownEnd says whether e ends a Teardown (atomic, or its composite's
// end), and the session variables it leaves (merged over a composite).
func teardownEnd(s *sess, e trace.Event) (map[string]any, bool) {
	if e.Action != actTeardown {
		return nil, false
	}
	switch e.Part {
	case "":
		return e.State, true
	case trace.PartEnd:
		return s.teardown, s.teardown != nil
	}
	return nil, false
}

// teardownBegins says whether e begins a Teardown (atomic, or its
// composite's begin).
func teardownBegins(e trace.Event) bool {
	return e.Action == actTeardown && (e.Part == "" || e.Part == trace.PartBegin)
}

// intOf reads an integer from a decoded JSON value (0, false if it is
// none).
func intOf(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), n == float64(int64(n))
	case int:
		return int64(n), true
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// detailInt is e's detail key as an integer.
func detailInt(d map[string]any, key string) (int64, bool) {
	if d == nil {
		return 0, false
	}
	return intOf(d[key])
}

func emptySet() map[string]any { return map[string]any{"#set": []any{}} }

// --- M1, connection ---

// exitPath is the exit path a Teardown event says fired: its detail
// "exit" (impl/session writes it), else read from its cause (none: a
// close; a dropped connection; anything else reached the connection
// through Session.fail: a panic or the detector's failure).
func exitPath(e trace.Event) string {
	if x, ok := e.Detail["exit"].(string); ok && (x == "close" || x == "drop" || x == "panic") {
		return x
	}
	cause, _ := e.Detail["cause"].(string)
	switch {
	case cause == "":
		return "close"
	case strings.Contains(cause, "connection dropped"):
		return "drop"
	}
	return "panic"
}

var connectionFire = map[string][2]string{
	"close": {machines.ConnectionClose, machines.ConnectionTeardownOnClose},
	"drop":  {machines.ConnectionDrop, machines.ConnectionTeardownOnDrop},
	"panic": {machines.ConnectionChildPanics, machines.ConnectionTeardownOnPanic},
}

// exitCycle is the order in which the connection projection fires the
// exit paths pending with the one acted on, from it.
var exitCycle = [...]string{"close", "panic", "drop"}

func connectionEvents(_ *projector, _ *sess, src cli.Source) []step {
	e := src.Event
	switch {
	case e.Action == trace.InitAction:
		return []step{{action: trace.InitAction, state: map[string]any{"conn": "live", "exits": emptySet(), "handled": emptySet(), "teardowns": 0}}}
	case teardownBegins(e):
		// Every exit path that fired before teardown began (detail
		// exits, impl/session's), then the teardown on the one it acted
		// on. The order in which they fired is not observable: the one
		// acted on first, then the others in the cycle's order after it
		// (close, panic, drop, close), so that the ends with two others
		// pending fire them in an order that depends on the one acted on.
		exit := exitPath(e)
		var out []step
		pending := map[string]bool{exit: true}
		if xs, ok := e.Detail["exits"].([]any); ok {
			for _, x := range xs {
				if s, ok := x.(string); ok && connectionFire[s] != [2]string{} {
					pending[s] = true
				}
			}
		}
		at := slices.Index(exitCycle[:], exit)
		for i := range exitCycle {
			if p := exitCycle[(at+i)%len(exitCycle)]; pending[p] {
				out = append(out, step{action: connectionFire[p][0], state: map[string]any{}})
			}
		}
		return append(out, step{action: connectionFire[exit][1], state: map[string]any{"conn": "torn"}})
	}
	return nil
}

// connTorn returns the machine's ConnTorn step (instance inst), once per
// session: at the first event committed after teardown began (detail
// torn), else at Teardown.
func connTorn(s *sess, e trace.Event, inst string) []step {
	torn, _ := e.Detail["torn"].(bool)
	if s.torn || !(torn || teardownBegins(e)) {
		return nil
	}
	s.torn = true
	return []step{{instance: inst, action: machines.ResponseConnTorn, state: map[string]any{"conn": "torn"}}}
}

// --- M2, turn detection ---

func turnEvents(_ *projector, s *sess, src cli.Source) []step {
	e := src.Event
	speech := func(silence int) step {
		return step{action: machines.TurnSpeechFrame, state: map[string]any{"vad": "speech", "silence": silence, "turn": true}}
	}
	quiet := func(silence int) step {
		return step{action: machines.TurnQuietFrame, state: map[string]any{"vad": "speech", "silence": silence, "turn": true}}
	}
	switch e.Action {
	case trace.InitAction:
		return []step{{action: trace.InitAction, state: map[string]any{"vad": "silent", "silence": 0, "turn": false}}}
	case actVadStart:
		var out []step
		if n, _ := detailInt(e.Detail, "quiet"); n > 0 { // quiet frames before the turn
			out = append(out, step{action: machines.TurnQuietFrame, state: map[string]any{"vad": "silent", "silence": 0, "turn": false}})
		}
		return append(out, speech(0))
	case actVadStop:
		var out []step
		if n, _ := detailInt(e.Detail, "held"); n > 0 { // speech went on
			out = append(out, speech(0))
		}
		if n, _ := detailInt(e.Detail, "resumed"); n > 0 { // a pause, then speech again
			out = append(out, quiet(1), speech(0))
		}
		// The turn ends on quiet frames: the spec's silence 1 stands for
		// the first SilenceFrames-1 of them.
		return append(out, quiet(1), step{action: machines.TurnQuietFrame, state: map[string]any{"vad": "silent", "silence": 0, "turn": false}})
	}
	if st, ok := teardownEnd(s, e); ok {
		if v, _ := intOf(st["vad"]); v == 2 {
			var out []step
			if n, _ := detailInt(e.Detail, "vad_silence"); n > 0 { // stopped in a pause
				out = append(out, quiet(1))
			}
			return append(out, step{action: machines.TurnAbort, state: map[string]any{"vad": "terminated", "silence": 0, "turn": false}})
		}
	}
	return nil
}

// --- M3, response ---

// responseEvents projects onto Response.tla, which bounds a coordinator
// at two responses: each instance SESSION#k is a window of at most two
// responses, from the coordinator idle (the first from Init); a third
// start opens the next window, and the projection closes the last (valid
// if nothing in it broke the spec).
func responseEvents(p *projector, s *sess, src cli.Source) []step {
	e := src.Event
	inst := func() string { return s.name + "#" + strconv.Itoa(s.window) }
	initial := func() step {
		return step{instance: inst(), action: trace.InitAction,
			state: map[string]any{"conn": "live", "coord": "idle", "r": []any{"none", "none"}, "next": 0}}
	}
	if e.Action == trace.InitAction {
		s.window, s.started = 1, 0
		return []step{initial()}
	}
	out := connTorn(s, e, "")
	for i := range out {
		out[i].instance = inst()
	}
	switch e.Action {
	case actRespStart:
		if s.started == 2 {
			p.closed[inst()] = true
			s.window++
			s.started = 0
			out = append(out, initial())
			if s.torn { // the new window starts where the last was: torn
				out = append(out, step{instance: inst(), action: machines.ResponseConnTorn, state: map[string]any{"conn": "torn"}})
			}
		}
		s.started++
		s.active = true
		return append(out, step{instance: inst(), action: machines.ResponseStart, state: map[string]any{"coord": "active"}})
	case actRespFinish:
		s.active = false
		return append(out, step{instance: inst(), action: machines.ResponseEnd, state: map[string]any{"coord": "idle"}})
	}
	if st, ok := teardownEnd(s, e); ok {
		if v, _ := intOf(st["resp"]); v == 2 {
			out = append(out, step{instance: inst(), action: machines.ResponseShutdown, state: map[string]any{"coord": "terminated"}})
		}
	}
	return out
}

// --- M4, compaction ---

func compactionEvents(_ *projector, s *sess, src cli.Source) []step {
	e := src.Event
	if e.Action == trace.InitAction {
		return []step{{action: trace.InitAction, state: map[string]any{"conn": "live", "comp": "idle", "jobs": 0}}}
	}
	out := connTorn(s, e, "")
	switch e.Action {
	case actCompTrigger:
		return append(out, step{action: machines.CompactionTrigger, state: map[string]any{"comp": "running"}})
	case actCompFinish:
		return append(out, step{action: machines.CompactionJobEnds, state: map[string]any{"comp": "idle"}})
	}
	if st, ok := teardownEnd(s, e); ok {
		if v, _ := intOf(st["compaction"]); v == 2 {
			out = append(out, step{action: machines.CompactionShutdown, state: map[string]any{"comp": "terminated", "jobs": 0}})
		}
	}
	return out
}

// --- M5, a response's TTS pipeline ---

// ttsResp is what the tts projection keeps of one response.
type ttsResp struct {
	ended    bool // cancelled, finished or completed
	returned bool // its pipeline returned
	joined   bool // and its end was received
}

// audio is a response's audio stream as an event's detail "audio"
// describes it (impl/session: chunks sent, cut, and once cut the chunks
// discarded and those still readable).
type audio struct {
	ok                      bool
	sent, dropped, buffered int64
	cut, ended              bool
	returned, closed        bool // the pipeline had returned; teardown ended it
	running                 bool // teardown ended it before it had returned
}

func audioOf(e trace.Event) audio {
	d, _ := e.Detail["audio"].(map[string]any)
	if d == nil {
		return audio{}
	}
	a := audio{ok: true}
	a.sent, _ = intOf(d["sent"])
	a.dropped, _ = intOf(d["dropped"])
	a.buffered, _ = intOf(d["buffered"])
	a.cut, _ = d["cut"].(bool)
	a.ended, _ = d["ended"].(bool)
	a.returned, _ = d["returned"].(bool)
	a.closed, _ = d["closed"].(bool)
	a.running, _ = d["running"].(bool)
	return a
}

// chunks are the Send and Play steps that stand for a stream's chunks
// (TTS.tla bounds them at two, its buffer at one): if some were discarded
// or are still readable (left set), one chunk sent and played if the
// reader took any, then one sent and left buffered; else one chunk sent
// and played for each the reader took, up to two.
func chunks(inst string, a audio, left bool) []step {
	if !a.ok {
		return nil
	}
	var out []step
	played, kept := a.sent-a.dropped-a.buffered, left && a.dropped+a.buffered > 0
	for i := range min(played, 2) {
		if i == 1 && kept {
			break
		}
		out = append(out, step{instance: inst, action: machines.TTSSend, state: map[string]any{"buf": 1}},
			step{instance: inst, action: machines.TTSPlay, state: map[string]any{"buf": 0}})
	}
	if kept {
		out = append(out, step{instance: inst, action: machines.TTSSend, state: map[string]any{"buf": 1}})
	}
	return out
}

// ttsEnd projects the end of a live response r by its coordinator (its
// stream cut): action Cancel, Finish or Close, after its pipeline's
// return if it had returned (detail returned) and the coordinator had
// not yet received its end; the chunks still readable after it are its
// buf, which TTS.tla requires to be 0.
func ttsEnd(inst, action string, a audio, r *ttsResp) []step {
	out := chunks(inst, a, true)
	if a.returned && !r.returned {
		r.returned = true
		out = append(out, step{instance: inst, action: machines.TTSReturn, state: map[string]any{"worker": "returned"}})
	}
	resp := "cancelled"
	if action == machines.TTSFinish {
		resp = "finished"
	}
	st := map[string]any{"resp": resp, "stream": "cut"}
	if a.ok {
		st["buf"] = min(a.buffered, 1)
	}
	return append(out, step{instance: inst, action: action, state: st})
}

func ttsEvents(p *projector, s *sess, src cli.Source) []step {
	e := src.Event
	inst := func(id int64) string { return s.name + "/r" + strconv.FormatInt(id, 10) }
	// A response's number is its event's detail "response"; an emitter
	// that does not give it (a trace written by hand) numbers them as
	// impl/session does, from 1 in order of start, and ends the active one.
	id, ok := detailInt(e.Detail, "response")
	switch e.Action {
	case actRespStart:
		if !ok {
			id = s.lastResp + 1
		}
		s.lastResp = max(s.lastResp, id)
		var out []step
		old, ok := detailInt(e.Detail, "preempted")
		if !ok {
			old = s.activeResp
		}
		if r := s.resp[old]; r != nil && !r.ended {
			r.ended = true
			out = append(out, ttsEnd(inst(old), machines.TTSCancel, audioOf(e), r)...)
		}
		s.resp[id], s.activeResp = &ttsResp{}, id
		return append(out, step{instance: inst(id), action: trace.InitAction, state: map[string]any{"resp": "live", "worker": "running",
			"stream": "open", "buf": 0, "sent": 0, "dones": 0, "joins": 0, "late": false}})
	case actRespFinish:
		if !ok {
			id = s.activeResp
		}
		if id == s.activeResp {
			s.activeResp = 0
		}
		r := s.resp[id]
		if r == nil {
			return nil
		}
		cause, _ := e.Detail["cause"].(string)
		switch {
		case r.returned && !r.ended: // the pipeline returned first: the response completes
			r.ended = true
			return []step{{instance: inst(id), action: machines.TTSComplete, state: map[string]any{"resp": "complete", "worker": "joined"}}}
		case r.ended:
			return nil
		}
		r.ended = true
		if cause == "finish" {
			return ttsEnd(inst(id), machines.TTSFinish, audioOf(e), r)
		}
		return ttsEnd(inst(id), machines.TTSCancel, audioOf(e), r)
	case actTTSClosed:
		s.ttsClosed = true
		if !ok { // the oldest response whose pipeline has not returned
			for _, n := range slices.Sorted(maps.Keys(s.resp)) {
				if !s.resp[n].returned {
					id = n
					break
				}
			}
		}
		r := s.resp[id]
		if r == nil || r.joined {
			return nil
		}
		a := audioOf(e)
		var out []step
		switch {
		case !r.ended && (a.cut || a.ended): // ended by teardown, which cuts every live response
			r.ended = true
			if a.running { // before its pipeline returned (detail running)
				a.returned = false
			}
			out = ttsEnd(inst(id), machines.TTSClose, a, r)
		case !r.ended: // returned on its own: its chunks go to the reader
			out = chunks(inst(id), a, false)
		case a.closed: // ended before, and teardown closed it again
			out = []step{{instance: inst(id), action: machines.TTSClose, state: map[string]any{}}}
		}
		if !r.returned {
			r.returned = true
			out = append(out, step{instance: inst(id), action: machines.TTSReturn, state: map[string]any{"worker": "returned"}})
		}
		if r.ended {
			r.joined = true
			out = append(out, step{instance: inst(id), action: machines.TTSReap, state: map[string]any{"worker": "joined"}})
		}
		return out
	}
	if _, ok := teardownEnd(s, e); ok {
		// A response still live at the end of teardown is closed by it:
		// if its pipeline had returned (a TTSClosed without the details
		// that say teardown ended it: an older trace), its end is then
		// received; if not, it was abandoned, and nothing joins its
		// worker. A session whose trace never says that a pipeline
		// stopped (no TTSClosed at all: an emitter that does not trace
		// M5's end) leaves its pipelines' ends unknown: the projection
		// closes their instances, valid if nothing in them broke the spec.
		var out []step
		for _, n := range slices.Sorted(maps.Keys(s.resp)) {
			r := s.resp[n]
			if !r.ended {
				r.ended = true
				out = append(out, step{instance: inst(n), action: machines.TTSClose, state: map[string]any{"resp": "cancelled", "stream": "cut"}})
				if r.returned {
					r.joined = true
					out = append(out, step{instance: inst(n), action: machines.TTSReap, state: map[string]any{"worker": "joined"}})
				}
			}
			if !s.ttsClosed && !r.joined {
				p.closed[inst(n)] = true
			}
		}
		return out
	}
	return nil
}

// CoverageFloor is how much of a machine spec the projected traces of the
// bundled realistic workload (impl/session's RunDemo, 40 sessions and up,
// the default seed) cover at least; the gate fails below it
// (docs/machines.md, "Coverage", says what the rest is and why it is not
// reached).
type CoverageFloor struct {
	// Spec is the machine spec's name.
	Spec string
	// Min is the number of its required transitions (final-state
	// stutters left out) the traces exercise at least.
	Min int
	// Unreached names the transitions the workload does not reach
	// deterministically, and why.
	Unreached string
}

// MachineCoverageFloors returns the floor of each machine spec M1–M5.
func MachineCoverageFloors() []CoverageFloor {
	return []CoverageFloor{
		{Spec: "connection", Min: 20, Unreached: "a failure acted on with a close pending (TeardownOnPanic from {close, panic} and {close, drop, panic}, and the Close fired after a panic): " +
			"the connection checks for a waiting Close the instant a failure wakes it, before anything the workload supplies runs; only a race reaches them"},
		{Spec: "turn", Min: 9},
		{Spec: "response", Min: 19, Unreached: "a start committed after teardown began with no response active (Start from conn torn, r = <<ended, none>>): " +
			"the coordinator serves such a start without calling anything the workload supplies (a preempting start appends to the history, which the mix holds); " +
			"only a race between the request and the stop request reaches it"},
		{Spec: "compaction", Min: 6, Unreached: "a trigger or a job's end committed after teardown began: the coordinator runs nothing the workload supplies before " +
			"committing them; only a race between them and the stop request reaches them"},
		{Spec: "tts", Min: 24, Unreached: "the reader-vs-pipeline interleavings the end-of-response chunk counts cannot show (the trace has no per-chunk event); " +
			"which of the rest the traces reach depends on the audio's timing"},
	}
}
