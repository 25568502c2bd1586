// Package session implements the realtime voice session of seed 001 as real
// concurrent Go: a connection coordinator (M1) that is the parent of three
// children — voice activity detection (M2), the response coordinator (M3,
// which owns one TTS pipeline per response, M5) and history compaction (M4).
// None of the children may outlive the connection.
//
// # Shape
//
// Each child coordinator is single-writer, in the style of etcd-raft, and
// all three have one shape, written once (coord.go): a pure, deterministic
// step function over a small value (vadCore, respCore, compCore) decides
// every transition and returns what it produced as data (the caller's
// reply, the trace event, the work to start or end), and one generic
// goroutine owns that value: it takes requests, commits each step and emits
// its event, runs the work a step starts and steps its end. Everyone else
// goes through the [Session] API:
//
//   - audio frames in: [Session.PushAudio] (which also interrupts the
//     active response when the user talks over it: barge-in);
//   - start, cancel and finish a response: [Session.StartResponse],
//     [Session.CancelResponse], [Session.FinishResponse];
//   - streamed TTS audio out: [Response.Audio], and what of it was
//     played: [Response.Played];
//   - compaction of the conversation history: [Session.TriggerCompaction];
//   - close, or the connection dropping: [Session.Close], or cancelling the
//     context given to [New].
//
// # Audio, barge-in and history
//
// A response's audio streams on [Response.Audio], up to
// [Config.AudioBuffer] chunks ahead of its reader. A response that
// completes on its own has its stream closed after its last chunk, and
// what is buffered is delivered. A response ended before that —
// canceled, preempted, finished, interrupted, or torn down — has its TTS
// pipeline stopped and its buffered audio discarded before the call that
// ended it returns and before its Done is closed: from then on its reader
// sees the end of the stream, never a stale chunk. (The stream is cut
// before the end is committed, so this holds of the trace too: no audio
// after the response's RespFinish.) Stopping is idempotent; each
// pipeline's worker is joined once (one TTSClosed event).
//
// Barge-in is on by default: when the speech frames of the user's turn
// reach [Config.BargeInMinSpeech] (default 200 ms of audio, measured with
// [Config.SampleRate]), the frame's [Session.PushAudio] cancels the active
// response (ErrCanceled, RespFinish with cause "barge-in") before it
// returns, once per turn; [BargeInOff] disables it.
//
// A response leaves one item in the history (prefix [HistoryItemPrefix])
// when it ends: all of its text if it completed, and if it was cut short
// only the text whose audio the transport acknowledged as played in full
// ([Response.Played]), as OpenAI's conversation.item.truncate does; none
// if nothing was heard, or if the session was torn down.
//
// The work inside sits behind small interfaces — [TurnDetector],
// [Generator], [Synthesizer], [Compactor] — with simple working defaults
// ([EnergyDetector], [CannedGenerator], [PacedSynthesizer],
// [TruncatingCompactor]).
//
// # Teardown
//
// Teardown (Close, a dropped connection, or a panic in a child's work) stops
// and joins the VAD goroutine, shuts down the response coordinator (closing
// every TTS pipeline) and cancels and joins an in-flight compaction. Every
// later start is refused with [ErrClosed]. A child that ignores cancellation
// gets [Config.JoinTimeout]; teardown then reports it as abandoned
// ([ErrAbandoned], [TeardownReport.Abandoned]) and leaves its real,
// non-terminal state in the trace. A panic in a child's work is recovered and
// turns into a teardown whose cause wraps [ErrChildPanic].
//
// # Trace
//
// With [Config.Sink] set, every committed transition is emitted as a
// trace.Event in the vocabulary of spec/session.fizz: variables conn, vad,
// resp and compaction, actions VadStart, VadStop, RespStart, RespFinish,
// CompTrigger, CompFinish and Teardown (see docs/trace-format.md). This
// package does not import the model: the names are its own constants
// ([VarConn], [ActVadStart], ...). Each event carries the variable(s) of the
// coordinator that committed it, read from that coordinator's state after
// the step, never inferred from the action's name. The spec's atomic
// Teardown is emitted as ONE step, by the connection coordinator, after
// every child has been joined (or abandoned); its state holds the four
// variables as each child reported them. A child commits nothing after it
// has been stopped, and the step is emitted after the last child stopped,
// so every child transition is either before the Teardown step or refused:
// placing the atomic step there is a valid linearization. (A child may still
// commit, say, a VadStop between the moment teardown begins and the moment
// that child is stopped; the trace shows it before Teardown, where the
// spec allows it.)
// Commits and emission share a per-session lock, so the order of a
// session's events is the order of its commits. With no sink, tracing costs
// one nil check per transition.
//
// Encoding of the spec's values (the same integers the spec uses):
//
//	conn       0 live, 1 torn
//	vad        0 silent, 1 speech (a turn in progress), 2 terminated
//	resp       0 idle, 1 active, 2 terminated
//	compaction 0 idle, 1 running, 2 terminated
package session
