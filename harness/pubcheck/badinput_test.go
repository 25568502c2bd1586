package pubcheck_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// TestBadInput: every bad input is refused with a clear error that
// matches its sentinel, and nothing is lost: a checkpoint published earlier
// in the same directory still verifies, and no other checkpoint appears.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	pub := filepath.Join(root, "pub")
	keep, err := checkpoint.Publish(ctx, checkpoint.Config{PublishDir: pub, Name: "keep",
		Command: []string{"true", "good"}, Runner: fakeRunner()})
	if err != nil || keep.Outcome != checkpoint.PhasePublished {
		t.Fatalf("setup: %v %+v", err, keep)
	}
	other := filepath.Join(root, "other")
	otherRun, err := checkpoint.Publish(ctx, checkpoint.Config{PublishDir: other, Name: "m",
		Command: []string{"true", "good"}, Runner: fakeRunner()})
	if err != nil {
		t.Fatal(err)
	}
	otherJournal, _ := os.ReadFile(otherRun.Journal)

	good := []string{"true", "good"}
	base := func() checkpoint.Config {
		return checkpoint.Config{PublishDir: pub, Name: "new", Command: good, Runner: fakeRunner()}
	}
	cases := []struct {
		name string
		cfg  func() checkpoint.Config
		want error
		also error
	}{
		{"missing interpreter", func() checkpoint.Config {
			c := base()
			c.Command = []string{"python3-no-such-interpreter", "train.py"}
			return c
		}, checkpoint.ErrProgramNotFound, nil},
		{"missing script", func() checkpoint.Config {
			c := base()
			c.Command = []string{"python3", filepath.Join(root, "no-such-script.py")}
			return c
		}, checkpoint.ErrProgramNotFound, nil},
		{"script is a directory", func() checkpoint.Config {
			c := base()
			c.Command = []string{"python3", "-I", root}
			return c
		}, checkpoint.ErrProgramNotFound, nil},
		{"empty command", func() checkpoint.Config { c := base(); c.Command = nil; return c }, checkpoint.ErrConfig, nil},
		{"negative grace", func() checkpoint.Config { c := base(); c.Grace = -1; return c }, checkpoint.ErrConfig, nil},
		{"no publish dir", func() checkpoint.Config { c := base(); c.PublishDir = ""; return c }, checkpoint.ErrConfig, nil},
		{"name with slash", func() checkpoint.Config { c := base(); c.Name = "a/b"; return c }, checkpoint.ErrBadName, nil},
		{"name ..", func() checkpoint.Config { c := base(); c.Name = ".."; return c }, checkpoint.ErrBadName, nil},
		{"name ../escape", func() checkpoint.Config { c := base(); c.Name = "../escape"; return c }, checkpoint.ErrBadName, nil},
		{"name .", func() checkpoint.Config { c := base(); c.Name = "."; return c }, checkpoint.ErrBadName, nil},
		{"hidden name", func() checkpoint.Config { c := base(); c.Name = ".tracecheck"; return c }, checkpoint.ErrBadName, nil},
		{"empty name", func() checkpoint.Config { c := base(); c.Name = ""; return c }, checkpoint.ErrBadName, nil},
		{"name with newline", func() checkpoint.Config { c := base(); c.Name = "a\nb"; return c }, checkpoint.ErrBadName, nil},
		{"existing checkpoint", func() checkpoint.Config { c := base(); c.Name = "keep"; return c }, checkpoint.ErrAlreadyPublished, nil},
		{"journal of another run", func() checkpoint.Config { c := base(); c.Journal = otherRun.Journal; return c }, checkpoint.ErrForeignJournal, nil},
		{"journal in a missing directory", func() checkpoint.Config {
			c := base()
			c.Journal = filepath.Join(root, "no-such-dir", "journal.ndjson")
			return c
		}, checkpoint.ErrConfig, nil},
		{"read-only disk", func() checkpoint.Config {
			c := base()
			c.FS = pubcheck.NewFS(pubcheck.Rule{Op: pubcheck.OpMkdir, Path: checkpoint.MetaDir, Err: syscall.EROFS})
			return c
		}, checkpoint.ErrStorage, syscall.EROFS},
		{"full disk at start", func() checkpoint.Config {
			c := base()
			c.FS = pubcheck.NewFS(pubcheck.Rule{Op: pubcheck.OpWrite, Path: "run.json", Err: syscall.ENOSPC})
			return c
		}, checkpoint.ErrStorage, syscall.ENOSPC},
		{"I/O error creating the publish directory", func() checkpoint.Config {
			c := base()
			c.PublishDir = filepath.Join(root, "new-pub")
			c.FS = pubcheck.NewFS(pubcheck.Rule{Op: pubcheck.OpMkdir, Path: "new-pub", Err: syscall.EIO})
			return c
		}, checkpoint.ErrStorage, syscall.EIO},
		{"staging root inside the publish directory", func() checkpoint.Config {
			c := base()
			c.StagingRoot = filepath.Join(pub, "staging")
			return c
		}, checkpoint.ErrConfig, nil},
		{"staging root is the publish directory", func() checkpoint.Config { c := base(); c.StagingRoot = pub; return c }, checkpoint.ErrConfig, nil},
		{"publish directory inside the staging root", func() checkpoint.Config { c := base(); c.StagingRoot = root; return c }, checkpoint.ErrConfig, nil},
		{"name with a bidi override", func() checkpoint.Config { c := base(); c.Name = "model\u202egnp.exe"; return c }, checkpoint.ErrBadName, nil},
		{"name not valid UTF-8", func() checkpoint.Config { c := base(); c.Name = "model\xff"; return c }, checkpoint.ErrBadName, nil},
		{"full disk at the first receipt", func() checkpoint.Config {
			c := base()
			c.FS = pubcheck.NewFS(pubcheck.Rule{Op: pubcheck.OpWrite, Path: "journal.ndjson", Err: syscall.ENOSPC})
			return c
		}, checkpoint.ErrJournal, syscall.ENOSPC},
		{"staging on another filesystem", func() checkpoint.Config {
			c := base()
			c.StagingRoot = crossDeviceDir(t, pub)
			return c
		}, checkpoint.ErrCrossDevice, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := checkpoint.Publish(ctx, tc.cfg())
			if !errors.Is(err, tc.want) || (tc.also != nil && !errors.Is(err, tc.also)) {
				t.Fatalf("err = %v (result %+v), want %v / %v", err, res, tc.want, tc.also)
			}
			t.Logf("error: %v", err)
			if _, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, filepath.Join(pub, "keep"), nil); err != nil {
				t.Errorf("the earlier checkpoint was harmed: %v", err)
			}
			ents, _ := os.ReadDir(pub)
			for _, e := range ents {
				if e.Name() != "keep" && e.Name() != checkpoint.MetaDir {
					t.Errorf("unexpected entry %s in the publish directory", e.Name())
				}
			}
			if staging, _ := os.ReadDir(filepath.Join(pub, checkpoint.MetaDir, "staging")); len(staging) > 0 {
				t.Errorf("staging left: %v", staging)
			}
			if b, _ := os.ReadFile(otherRun.Journal); string(b) != string(otherJournal) {
				t.Errorf("the other run's journal changed")
			}
		})
	}

	// Recovery refuses journals that are not runs of the directory.
	for _, tc := range []struct {
		name    string
		journal string
	}{
		{"journal of another publish directory", otherRun.Journal},
		{"journal that is not a run here", writeJournal(t, root, `{"v":1,"instance":"20260101T000000Z-abcdef","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}`+"\n")},
		{"journal mixing runs", writeJournal(t, root, `{"v":1,"instance":"a","seq":0,"action":"Init","state":{}}`+"\n"+`{"v":1,"instance":"b","seq":1,"action":"Init","state":{}}`+"\n")},
	} {
		t.Run("recover: "+tc.name, func(t *testing.T) {
			_, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub, Journal: tc.journal})
			if !errors.Is(err, checkpoint.ErrForeignJournal) {
				t.Fatalf("err = %v, want ErrForeignJournal", err)
			}
			t.Logf("error: %v", err)
		})
	}
	t.Run("recover: its own journal", func(t *testing.T) {
		reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub, Journal: keep.Journal})
		if err != nil || len(reps) != 1 || reps[0].Outcome != checkpoint.OutcomePublished {
			t.Fatalf("recover = %+v, %v", reps, err)
		}
	})
}

var journalN int

func writeJournal(t *testing.T, dir, body string) string {
	journalN++
	p := filepath.Join(dir, "j"+string(rune('0'+journalN))+".ndjson")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// crossDeviceDir returns a directory on another filesystem than pub
// (/dev/shm is tmpfs on Linux), skipping the case if there is none.
func crossDeviceDir(t *testing.T, pub string) string {
	t.Helper()
	d, err := os.MkdirTemp("/dev/shm", "pubcheck-")
	if err != nil {
		t.Skipf("SKIP: no second filesystem (/dev/shm): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if device(t, d) == device(t, pub) {
		t.Skip("SKIP: /dev/shm is on the publish directory's filesystem")
	}
	return d
}

// device returns the ID of the filesystem holding dir.
func device(t *testing.T, dir string) uint64 {
	t.Helper()
	r, err := checkpoint.OSFS{}.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.Device()
}
