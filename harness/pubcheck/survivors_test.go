package pubcheck_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// These tests kill operator mutants of impl/checkpoint that every other
// test let survive (docs/mutation/matrix.md): error paths no fault case
// reached, and descriptors nothing counted.

// publishOnce runs a fast publishing run of the program prog (a name of
// fakeRunner's, or of programs) into pub with fsys (nil: the real
// filesystem) and returns its result and Publish's error.
func publishOnce(t *testing.T, pub, prog, runID string, fsys checkpoint.FS, programs map[string]pubcheck.Program) (*checkpoint.Result, error) {
	t.Helper()
	r := fakeRunner()
	for k, p := range programs {
		r.Programs[k] = p
	}
	cfg := checkpoint.Config{Runner: r, SkipRecovery: true, PublishDir: pub, Name: "model", Command: []string{"true", prog}, RunID: runID}
	if fsys != nil {
		cfg.FS = fsys
	}
	return checkpoint.Publish(context.Background(), cfg)
}

// A failed fsync of the runs directory, once the run directory is renamed
// into it, refuses the run as a storage error: the run's record would not
// be durable.
func TestRunsDirFsyncFails(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "pub")
	ffs := pubcheck.NewFS(pubcheck.Rule{Op: pubcheck.OpSyncDir, Path: filepath.Join(pub, ".tracecheck", "runs"), Exact: true, Err: syscall.EIO})
	res, err := publishOnce(t, pub, "good", "", ffs, nil)
	if ffs.Fired() == 0 {
		t.Fatal("the fault never fired")
	}
	if !errors.Is(err, checkpoint.ErrStorage) || !errors.Is(err, syscall.EIO) || res != nil {
		t.Fatalf("Publish = %+v, %v; want no result and ErrStorage wrapping EIO", res, err)
	}
}

// A read error while checking the journal at the end of the program is an
// I/O error (ErrJournal), not evidence of tampering: the journal is not
// "restored" over a file nobody changed.
func TestJournalCheckReadFails(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "pub")
	ffs := pubcheck.NewFS(pubcheck.Rule{Op: pubcheck.OpRead, Path: "journal.ndjson", Nth: 1, Err: syscall.EIO})
	res, err := publishOnce(t, pub, "good", "", ffs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ffs.Fired() == 0 {
		t.Fatal("the fault never fired")
	}
	if !errors.Is(res.Err, checkpoint.ErrJournal) || !errors.Is(res.Err, syscall.EIO) || errors.Is(res.Err, checkpoint.ErrTampered) {
		t.Errorf("Err %v: want ErrJournal wrapping EIO, not ErrTampered", res.Err)
	}
	if res.Outcome == checkpoint.PhasePublished {
		t.Errorf("published although the journal could not be checked")
	}
}

// A journal that the program appended to is restored; a failure to clear
// the restore's temporary name fails the restore, and the run says so.
func TestJournalRestoreFails(t *testing.T) {
	tamper := func(_ context.Context, env map[string]string) int {
		j := filepath.Join(filepath.Dir(env[checkpoint.EnvEvalFile]), "journal.ndjson")
		f, err := os.OpenFile(j, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return 2
		}
		defer f.Close()
		if _, err := f.WriteString("{\"forged\":true}\n"); err != nil {
			return 2
		}
		return 1
	}
	for _, fail := range []bool{false, true} {
		pub := filepath.Join(t.TempDir(), "pub")
		var rules []pubcheck.Rule
		if fail {
			rules = append(rules, pubcheck.Rule{Op: pubcheck.OpRemoveAll, Path: "journal.ndjson.restore", Err: syscall.EIO})
		}
		ffs := pubcheck.NewFS(rules...)
		res, err := publishOnce(t, pub, "tamper", "", ffs, map[string]pubcheck.Program{"tamper": tamper})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(res.Err, checkpoint.ErrTampered) {
			t.Fatalf("fault %v: Err %v, want ErrTampered", fail, res.Err)
		}
		if got := errors.Is(res.Err, syscall.EIO); got != fail || (ffs.Fired() > 0) != fail {
			t.Errorf("fault %v (fired %d): Err %v: the restore's failure reported %v", fail, ffs.Fired(), res.Err, got)
		}
	}
}

// A run ID whose lock exists is taken: the run is refused as a
// configuration error, not as an unusable publish directory.
func TestRunIDTaken(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "pub")
	first, err := publishOnce(t, pub, "fail", "", nil, nil) // nothing published: only the run ID is taken
	if err != nil {
		t.Fatal(err)
	}
	res, err := publishOnce(t, pub, "good", first.RunID, nil, nil)
	if !errors.Is(err, checkpoint.ErrConfig) || errors.Is(err, checkpoint.ErrStorage) || res != nil {
		t.Fatalf("second run with ID %s: %+v, %v; want ErrConfig", first.RunID, res, err)
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// Recovery limited to one journal closes what it opens: repeated, it
// leaves the count of open descriptors where it was.
func TestRecoverJournalClosesDescriptors(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "pub")
	res, err := publishOnce(t, pub, "good", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	before := openFDs(t)
	for range rounds {
		if _, err := checkpoint.Recover(context.Background(), checkpoint.RecoverOptions{PublishDir: pub, Journal: res.Journal}); err != nil {
			t.Fatal(err)
		}
	}
	if after := openFDs(t); after-before >= rounds/2 {
		t.Errorf("%d descriptors open before %d recoveries, %d after: a descriptor leaks per recovery", before, rounds, after)
	}
}

// farClock is a clock past the year 9999, whose times JSON cannot encode.
type farClock struct{}

func (farClock) Now() time.Time { return time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }

// A recovery whose record cannot be encoded says so in its report (and
// leaves no empty recovery.json behind).
func TestRecoveryRecordUnencodable(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "pub")
	res, err := publishOnce(t, pub, "good", "", nil, nil)
	if err != nil || res.Outcome != checkpoint.PhasePublished {
		t.Fatalf("publish: %v %+v", err, res)
	}
	b, err := os.ReadFile(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if err := os.WriteFile(res.Journal, bytes.Join(lines[:len(lines)-2], nil), 0o644); err != nil { // cut before AtomicPublication
		t.Fatal(err)
	}
	reps, err := checkpoint.Recover(context.Background(), checkpoint.RecoverOptions{PublishDir: pub, Clock: farClock{}})
	if err != nil || len(reps) != 1 {
		t.Fatalf("recover: %v %+v", err, reps)
	}
	if !strings.Contains(reps[0].Error, "recording recovery: ") {
		t.Errorf("report error %q: the unwritten record is not reported", reps[0].Error)
	}
	if _, err := os.Stat(filepath.Join(res.RunDir, "recovery.json")); !os.IsNotExist(err) {
		t.Errorf("recovery.json: %v, want none", err)
	}
}

// The progress callback hears the long steps of a run, hashing and
// verifying, one call at a time, each with Done within Total.
func TestPublishProgress(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "pub")
	var (
		steps   = map[string]int{}
		inside  atomic.Int32
		overlap atomic.Bool
		bad     []checkpoint.Progress
	)
	cfg := checkpoint.Config{Runner: fakeRunner(), SkipRecovery: true, PublishDir: pub, Name: "model", Command: []string{"true", "good"},
		Progress: func(p checkpoint.Progress) {
			if inside.Add(1) > 1 {
				overlap.Store(true)
			}
			defer inside.Add(-1)
			steps[p.Step]++
			if p.Total > 0 && p.Done > p.Total {
				bad = append(bad, p)
			}
		}}
	res, err := checkpoint.Publish(context.Background(), cfg)
	if err != nil || res.Outcome != checkpoint.PhasePublished {
		t.Fatalf("publish: %v %+v", err, res)
	}
	if steps["hashing"] == 0 || steps["verifying"] == 0 {
		t.Errorf("progress steps %v, want hashing and verifying", steps)
	}
	if overlap.Load() || len(bad) > 0 {
		t.Errorf("overlapping calls %v, Done past Total %+v", overlap.Load(), bad)
	}
}

// With the working directory gone, a relative staging root or checkpoint
// path cannot be made absolute: the run is refused as a configuration
// error, the inspection as not a checkpoint, each saying why.
func TestRelativePathsWithoutWorkingDirectory(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "pub")
	gone := t.TempDir()
	t.Chdir(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Getwd(); err == nil {
		t.Skip("the working directory is still found after its removal")
	}
	cfg := checkpoint.Config{Runner: fakeRunner(), SkipRecovery: true, PublishDir: pub, Name: "model", Command: []string{"true", "good"}, StagingRoot: "staging"}
	res, err := checkpoint.Publish(context.Background(), cfg)
	if !errors.Is(err, checkpoint.ErrConfig) || !strings.Contains(err.Error(), "staging root") || res != nil {
		t.Errorf("Publish = %+v, %v; want ErrConfig about the staging root", res, err)
	}
	_, err = checkpoint.Inspect(context.Background(), nil, "model")
	if !errors.Is(err, checkpoint.ErrNotCheckpoint) || !errors.Is(err, syscall.ENOENT) {
		t.Errorf("Inspect = %v; want ErrNotCheckpoint wrapping the working directory's ENOENT", err)
	}
}

// cutJournal publishes a checkpoint (staged under stagingRoot, if set) and
// cuts its journal before the AtomicPublication receipt, as a publisher
// killed there leaves it: a run that recovery completes.
func cutJournal(t *testing.T, pub, stagingRoot string) *checkpoint.Result {
	t.Helper()
	cfg := checkpoint.Config{Runner: fakeRunner(), SkipRecovery: true, PublishDir: pub, Name: "model", Command: []string{"true", "good"}, StagingRoot: stagingRoot}
	res, err := checkpoint.Publish(context.Background(), cfg)
	if err != nil || res.Outcome != checkpoint.PhasePublished {
		t.Fatalf("publish: %v %+v", err, res)
	}
	b, err := os.ReadFile(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if err := os.WriteFile(res.Journal, bytes.Join(lines[:len(lines)-2], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	return res
}

// Recovery notes what it cannot settle alone: a run staged under a
// staging root it was not told about (and says nothing when told), and a
// run.json that names another checkpoint than the journal (and nothing
// when they agree).
func TestRecoveryNotes(t *testing.T) {
	has := func(notes []string, s string) bool {
		for _, n := range notes {
			if strings.Contains(n, s) {
				return true
			}
		}
		return false
	}
	for _, told := range []bool{false, true} {
		dir := t.TempDir()
		pub, st := filepath.Join(dir, "pub"), filepath.Join(dir, "staging")
		if err := os.Mkdir(st, 0o755); err != nil {
			t.Fatal(err)
		}
		cutJournal(t, pub, st)
		opt := checkpoint.RecoverOptions{PublishDir: pub}
		if told {
			opt.StagingRoot = st
		}
		reps, err := checkpoint.Recover(context.Background(), opt)
		if err != nil || len(reps) != 1 {
			t.Fatalf("recover: %v %+v", err, reps)
		}
		if got := has(reps[0].Notes, "pass --staging-root "+st); got == told {
			t.Errorf("told the staging root %v: notes %q", told, reps[0].Notes)
		}
	}
	for _, renamed := range []bool{false, true} {
		pub := filepath.Join(t.TempDir(), "pub")
		res := cutJournal(t, pub, "")
		if renamed {
			meta := filepath.Join(res.RunDir, "run.json")
			b, err := os.ReadFile(meta)
			if err != nil {
				t.Fatal(err)
			}
			b2 := bytes.Replace(b, []byte(`"model"`), []byte(`"other"`), 1)
			if bytes.Equal(b, b2) {
				t.Fatalf("run.json does not name the checkpoint \"model\": %s", b)
			}
			if err := os.WriteFile(meta, b2, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		reps, err := checkpoint.Recover(context.Background(), checkpoint.RecoverOptions{PublishDir: pub})
		if err != nil || len(reps) != 1 {
			t.Fatalf("recover: %v %+v", err, reps)
		}
		if got := has(reps[0].Notes, `run.json names checkpoint "other", the journal "model"`); got != renamed {
			t.Errorf("run.json renamed %v: notes %q", renamed, reps[0].Notes)
		}
		if has(reps[0].Notes, "run.json names checkpoint") != renamed {
			t.Errorf("run.json renamed %v: notes %q", renamed, reps[0].Notes)
		}
	}
}
