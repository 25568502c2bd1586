// Package machines holds the Go transcriptions of the per-machine specs
// under spec/machines: the five coordinators of impl/session, each checked
// in isolation, as seed 001 names them beside its composition spec
// (spec/session.fizz, transcribed in model/session):
//
//   - M1, connection (spec/machines/Connection.tla): [Connection];
//   - M2, turn detection (spec/machines/Turn.tla): [Turn];
//   - M3, response (spec/machines/Response.tla): [Response];
//   - M4, compaction (spec/machines/Compaction.tla): [Compaction];
//   - M5, the TTS pipeline (spec/machines/TTS.tla): [TTS].
//
// Each transcription's variables, values and action names are its spec's
// own, and its whole labelled state graph equals the one TLC dumps (the
// retained reports under formal-verification/reports/tlc-machine-*, checked
// by internal/formal). Each spec has named mutants ([Mutant]) that break
// its safety property; the mutants' TLA+ files are under
// spec/machines/mutants.
//
// Each machine's state projects onto session.fizz's variables (the
// Session methods of the state types) and each of its actions onto the
// session.fizz actions it may take (the ...SessionActions maps);
// [RefinesSession] checks that every reachable step of a machine, so
// projected, is a step of session.fizz or a stutter, and
// [SessionRefinements] checks all five (docs/machines.md gives each
// projection).
package machines
