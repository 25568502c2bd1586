// Package pubcheck joins the checkpoint publisher (impl/checkpoint) and its
// model (model/program): it validates publisher journals against
// spec/Program.tla's transcription with check, checks that the
// publish directory agrees with a run's final state, and provides the
// fault-injection pieces the tests use — [FS], a filesystem that fails
// chosen operations, and [FuncRunner], a process runner whose programs are
// Go functions.
//
// The tests here drive real runs of the bundled Python examples through
// every transition of seed 000's chart, inject interrupts and storage
// faults at every transition boundary, SIGKILL a publisher process at
// random points and recover (PUBCHECK_CRASH_N runs; `make crash`), and run
// a rapid model-based test of random fault schedules against the model.
package pubcheck
