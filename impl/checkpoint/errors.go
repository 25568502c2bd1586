package checkpoint

import "errors"

// Errors that refuse a run before it starts: nothing was executed and
// nothing in the publish directory changed.
var (
	// ErrConfig reports an invalid or incomplete Config.
	ErrConfig = errors.New("invalid configuration")
	// ErrBadName reports a checkpoint name that is not a single safe path
	// element (it contains "/", is "." or "..", starts with ".", ...).
	ErrBadName = errors.New("invalid checkpoint name")
	// ErrAlreadyPublished reports that a checkpoint of that name exists;
	// it is never overwritten.
	ErrAlreadyPublished = errors.New("checkpoint already published")
	// ErrProgramNotFound reports a missing interpreter or program file.
	ErrProgramNotFound = errors.New("program not found")
	// ErrCrossDevice reports a staging root on another filesystem than the
	// publish directory, where no rename could be atomic.
	ErrCrossDevice = errors.New("staging and publish directory on different filesystems")
	// ErrForeignJournal reports a journal that belongs to another run or
	// another publish directory.
	ErrForeignJournal = errors.New("journal belongs to another run")
	// ErrStorage reports a publish directory (or staging root, or journal
	// directory) that cannot be written: a full or read-only disk, an I/O
	// error. It wraps the system's error (syscall.ENOSPC, EROFS, EIO...).
	ErrStorage = errors.New("publish directory unusable")
)

// Errors about what a path turned out to be. They are wrapped by the
// errors above (a symlinked staging directory fails a run with
// [ErrUnsafeFile] wrapping [ErrUnsafePath]).
var (
	// ErrUnsafePath reports a name that would leave its directory, pass
	// through a symlink or cross a mount point: the publisher follows no
	// symlink under the publish directory and the staging root.
	ErrUnsafePath = errors.New("unsafe path")
	// ErrNotRegular reports a FIFO, device, socket or directory where a
	// regular file was expected. It is detected after a non-blocking open,
	// without reading.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge reports an input over one of the documented limits
	// (evaluation result, manifest, journal, number of files, nesting).
	ErrTooLarge = errors.New("over the limit")
)

// Errors that end a run: Result.Err wraps one of them.
var (
	// ErrStart reports that the program's process could not be started.
	ErrStart = errors.New("cannot start program")
	// ErrProgramFailed reports a non-zero exit status or a fatal signal.
	ErrProgramFailed = errors.New("program failed")
	// ErrEvaluation reports a missing, malformed or failing evaluation
	// result ($TRACECHECK_EVAL_FILE).
	ErrEvaluation = errors.New("evaluation did not pass")
	// ErrEmptyCheckpoint reports an empty staging directory.
	ErrEmptyCheckpoint = errors.New("program wrote no checkpoint")
	// ErrUnsafeFile reports a symlink or special file in the checkpoint.
	ErrUnsafeFile = errors.New("unsafe file in checkpoint")
	// ErrSave reports a failure to stage: read, hash, fsync or write the
	// manifest.
	ErrSave = errors.New("cannot stage checkpoint")
	// ErrVerification reports a reloaded checkpoint that does not match
	// its manifest or its evaluation's claims.
	ErrVerification = errors.New("checkpoint verification failed")
	// ErrVerifyCommand reports a user verify command that failed.
	ErrVerifyCommand = errors.New("verify command failed")
	// ErrPublication reports a failed atomic rename into the publish
	// directory.
	ErrPublication = errors.New("publication failed")
	// ErrInterrupted reports a run ended by its context (SIGINT/SIGTERM).
	ErrInterrupted = errors.New("interrupted")
	// ErrJournal reports a receipt that could not be written. Before
	// publication it stops the run; after publication it is only reported.
	ErrJournal = errors.New("journal receipt not written")
	// ErrTampered reports that the program or the verify command modified
	// the publisher's own files (the journal, run.json, the run's lock).
	// The publisher restores the journal and fails the run.
	ErrTampered = errors.New("publisher's files were modified")
	// ErrEscaped reports processes of the program that could not all be
	// killed after it ended (they kept forking).
	ErrEscaped = errors.New("program's processes survive it")
)

// ErrRunActive reports, in recovery, a run whose publisher still holds its
// lock: it is left alone.
var ErrRunActive = errors.New("run still active")
