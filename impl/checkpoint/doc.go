// Package checkpoint is the checkpoint publisher of seed 000: it runs a
// Python program in its own process group, stages the checkpoint the
// program wrote, reloads and verifies it, and publishes it with one atomic
// rename — recording every transition as a receipt in an fsynced NDJSON
// journal that is the run's trace.
//
// # Lifecycle
//
// A run moves through the phases of seed 000's chart, named as
// spec/Program.tla names them (this package defines the names itself; it
// never imports the model it is checked against):
//
//	Ready --ExecutePython--> Running
//	Running --ProgramSucceeds--> Staging     Running --ExecutionFails--> Failed
//	Staging --ReloadAndVerify--> Verified    Staging --SaveOrVerificationFails--> Failed
//	Verified --AtomicPublication--> Published
//	Verified --PublicationFails--> Failed
//	Running, Staging --Interrupt--> Interrupted
//	Verified --InterruptBeforePublication--> Interrupted
//
// # The success rule
//
// The program succeeds, and its checkpoint is staged, only if all of these
// hold:
//
//  1. it exits with status 0 (not signalled, not interrupted);
//  2. it wrote the file named by $TRACECHECK_EVAL_FILE, a JSON object whose
//     "passed" member is the boolean true;
//  3. the staging directory $TRACECHECK_STAGING_DIR holds at least one entry.
//
// The evaluation object may also carry "files": {"rel/path": "<sha256 hex>"},
// the hashes of the files the program evaluated; verification then checks
// that the staged files are exactly those bytes, so that the checkpoint
// published is the checkpoint that was evaluated.
//
// # Staging, verification, publication
//
// Staging walks the staging directory, refuses symlinks and special files
// (fifos, devices, sockets), hashes every regular file with SHA-256, fsyncs
// every file and directory, and writes the manifest [ManifestName] (every
// file's path, size and hash, the evaluation result, and a digest over the
// list). Verification reloads the manifest from disk, walks the directory
// again, re-reads every file through a fresh descriptor and compares it with
// the manifest and with the evaluation's claims; then an optional user
// verify command loads the checkpoint as its consumer would
// ($TRACECHECK_CHECKPOINT_DIR). Publication is one rename(2) with
// RENAME_NOREPLACE of the staging directory to PublishDir/Name, then an
// fsync of PublishDir: an existing checkpoint of that name is never
// overwritten or half-replaced.
//
// Staging lives in PublishDir/.tracecheck/staging/<run>, on the publish
// directory's filesystem; a configured staging root on another filesystem
// is refused before anything runs. A run that fails or is interrupted
// removes its staging directory; a killed run leaves it for [Recover].
//
// # The journal
//
// Every transition is one receipt ([trace.Event], instance = run ID) written
// and fsynced before the run goes on; its state is read from the
// publisher's own variables. If a receipt cannot be written before
// publication the run stops (Failed) without publishing: nothing irreversible
// happens unrecorded. The journal then ends early and is incomplete, which
// [Recover] treats as uncertain. A receipt failure after the rename never
// relabels the run: it stays Published.
//
// # Faults
//
// The outside world sits behind small interfaces — [FS], [Runner], [Clock]
// — so tests can inject failures at every boundary.
package checkpoint
