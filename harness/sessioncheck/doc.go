// Package sessioncheck joins the realtime session implementation
// (impl/session) to its model (model/session, the transcription of
// spec/session.fizz). It is the only place that knows both.
//
//   - [Check] validates a session trace — many concurrent sessions in one
//     NDJSON stream — with check against the spec, or against the
//     M4 mutant of the spec.
//   - [Clock] and [Recorder] stamp operations and trace events from one
//     atomic counter, so that a test can tell whether each trace event falls
//     inside its caller's call/return window ([Recorder.Windows]).
//   - [Model] (and [ModelWith]) is the sequential model of the
//     coordinators' externally visible operations for porcupine,
//     partitioned per session and per coordinator ([Op], [Result]).
//   - [TTSClosedBeforeTeardown] checks what session.fizz leaves inside
//     resp: every response's TTS pipeline (M5) is closed before Teardown.
//
// The tests drive real coordinators: porcupine linearizability with many
// goroutines, rapid model-based testing from model/session's actions,
// teardown injected at every point of each child's lifecycle, and the
// scenarios that kill the session's named code mutants (internal/mutants):
// a compaction in flight at teardown, and a finish racing a start.
package sessioncheck
