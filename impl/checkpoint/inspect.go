package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// ErrNotCheckpoint reports a path that is not a published checkpoint: not
// a directory of a publish directory, or without a readable manifest.
var ErrNotCheckpoint = errors.New("not a published checkpoint")

// Journal verdicts of an [Inspection].
const (
	// JournalAgrees: the run's journal recorded the verification (and the
	// publication, if it got that far) of exactly this checkpoint.
	JournalAgrees = "agrees"
	// JournalAbsent: the run's directory or journal is gone; the
	// checkpoint was checked against its manifest only.
	JournalAbsent = "absent"
	// JournalDisagrees: the journal recorded another checkpoint.
	JournalDisagrees = "disagrees"
	// JournalUnreadable: the journal exists but could not be read (it is
	// not a regular file, too large, or malformed).
	JournalUnreadable = "unreadable"
)

// Inspection is what [Inspect] found.
type Inspection struct {
	// Path is the checkpoint directory; Name its name in the publish
	// directory.
	Path string `json:"path"`
	Name string `json:"name"`
	// Run, Digest, Files and Bytes come from the manifest.
	Run    string `json:"run"`
	Digest string `json:"digest"`
	Files  int    `json:"files"`
	Bytes  int64  `json:"bytes"`
	// Journal is the journal compared; JournalVerdict one of the Journal*
	// constants.
	Journal        string `json:"journal,omitempty"`
	JournalVerdict string `json:"journal_verdict"`
	// Notes say what else was seen (a checkpoint renamed since it was
	// published).
	Notes []string `json:"notes,omitempty"`
}

// Inspect verifies the published checkpoint at dir: it reloads every byte
// and checks it against the manifest, as [Verify] does, and checks the
// manifest against the receipts of the run that published it, when the
// run's journal (PublishDir/.tracecheck/runs/RUN/journal.ndjson, PublishDir
// being dir's parent) still exists: the run must have verified exactly this
// checkpoint. dir itself must be a directory, not a symlink; nothing below
// the publish directory is reached through a symlink.
//
// The error wraps [ErrVerification] if the checkpoint fails either check
// (the Inspection then says what was found), [ErrNotCheckpoint] if dir is
// not a checkpoint at all.
func Inspect(ctx context.Context, fsys FS, dir string) (*Inspection, error) {
	if fsys == nil {
		fsys = OSFS{}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotCheckpoint, err)
	}
	name := filepath.Base(abs)
	if err := ValidateName(name); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotCheckpoint, abs, err)
	}
	pub, err := fsys.OpenRoot(filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotCheckpoint, err)
	}
	defer pub.Close()
	fi, err := pub.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotCheckpoint, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is a %s (a published checkpoint is a directory)", ErrNotCheckpoint, abs, fileKind(fi.Mode()))
	}
	m, _, err := readManifest(pub, name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotCheckpoint, err)
	}
	in := &Inspection{Path: abs, Name: name, Run: m.Run, Digest: m.Digest, Files: len(m.Files), Bytes: m.Bytes(), JournalVerdict: JournalAbsent}
	if m.Name != name {
		in.Notes = append(in.Notes, fmt.Sprintf("the manifest was written for checkpoint %q: renamed since", m.Name))
	}
	if _, err := verify(ctx, pub, name, verifyOptions{}); err != nil {
		return in, err
	}
	if ValidateName(m.Run) != nil {
		in.Notes = append(in.Notes, fmt.Sprintf("the manifest names run %q, which is not a run ID: no journal to compare", m.Run))
		return in, nil
	}
	jname := runDirName(m.Run) + "/journal.ndjson"
	s, err := readJournalAt(pub, jname)
	switch {
	case isNotExist(err):
		in.Notes = append(in.Notes, "the run's journal is gone: checked against the manifest only")
		return in, nil
	case err != nil:
		in.Journal, in.JournalVerdict = filepath.Join(pub.Path(), filepath.FromSlash(jname)), JournalUnreadable
		return in, fmt.Errorf("%w: the run's journal: %w", ErrVerification, err)
	}
	in.Journal = filepath.Join(pub.Path(), filepath.FromSlash(jname))
	if err := journalAgrees(s, m); err != nil {
		in.JournalVerdict = JournalDisagrees
		return in, err
	}
	in.JournalVerdict = JournalAgrees
	return in, nil
}
