package pubcheck_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// forge rewrites file name of the checkpoint at dir with body and its
// manifest consistently: the entry's hash and size, and the digest, as the
// publisher computes them. The checkpoint then verifies against itself.
func forge(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := checkpoint.ReadManifest(checkpoint.OSFS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Files {
		if m.Files[i].Path == name {
			h := sha256.Sum256([]byte(body))
			m.Files[i].SHA256, m.Files[i].Size = hex.EncodeToString(h[:]), int64(len(body))
		}
	}
	fb, _ := json.Marshal(m.Files)
	d := sha256.Sum256(fb)
	m.Digest = "sha256:" + hex.EncodeToString(d[:])
	m.Eval = nil // the evaluation's claims would give the forgery away
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, checkpoint.ManifestName), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint.Verify(context.Background(), checkpoint.OSFS{}, dir, nil); err != nil {
		t.Fatalf("the forgery does not verify against itself: %v", err)
	}
}

// Inspect checks a published checkpoint against its manifest and against
// its run's journal: a checkpoint edited together with its manifest
// verifies against itself but not against the journal, and recovery then
// reports it failing verification too.
func TestInspect(t *testing.T) {
	ctx := context.Background()
	publish := func(t *testing.T) (*checkpoint.Result, string) {
		pub := filepath.Join(t.TempDir(), "pub")
		res, err := checkpoint.Publish(ctx, checkpoint.Config{PublishDir: pub, Name: "model",
			Command: []string{"true", "good"}, Runner: fakeRunner(), SkipRecovery: true})
		if err != nil || res.Outcome != checkpoint.PhasePublished {
			t.Fatalf("setup: %v %+v", err, res)
		}
		return res, pub
	}
	t.Run("published", func(t *testing.T) {
		res, pub := publish(t)
		in, err := checkpoint.Inspect(ctx, nil, filepath.Join(pub, "model"))
		if err != nil || in.JournalVerdict != checkpoint.JournalAgrees || in.Digest != res.Digest() || in.Files != 2 {
			t.Fatalf("Inspect = %+v, %v", in, err)
		}
	})
	t.Run("edited with its manifest", func(t *testing.T) {
		_, pub := publish(t)
		dir := filepath.Join(pub, "model")
		forge(t, dir, "model.bin", "WEIGHTS")
		in, err := checkpoint.Inspect(ctx, nil, dir)
		if !errors.Is(err, checkpoint.ErrVerification) || in == nil || in.JournalVerdict != checkpoint.JournalDisagrees {
			t.Fatalf("Inspect = %+v, %v; want the journal to disagree", in, err)
		}
		reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub})
		if err != nil || len(reps) != 1 || reps[0].Outcome != checkpoint.OutcomeUnverified {
			t.Fatalf("Recover = %+v, %v; want published-but-fails-verification", reps, err)
		}
	})
	t.Run("edited alone", func(t *testing.T) {
		_, pub := publish(t)
		dir := filepath.Join(pub, "model")
		if err := os.WriteFile(filepath.Join(dir, "model.bin"), []byte("WEIGHTS"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := checkpoint.Inspect(ctx, nil, dir); !errors.Is(err, checkpoint.ErrVerification) {
			t.Fatalf("Inspect = %v, want ErrVerification", err)
		}
	})
	t.Run("journal gone", func(t *testing.T) {
		res, pub := publish(t)
		if err := os.RemoveAll(res.RunDir); err != nil {
			t.Fatal(err)
		}
		in, err := checkpoint.Inspect(ctx, nil, filepath.Join(pub, "model"))
		if err != nil || in.JournalVerdict != checkpoint.JournalAbsent {
			t.Fatalf("Inspect = %+v, %v; want verified, journal absent", in, err)
		}
	})
	t.Run("journal replaced by a symlink", func(t *testing.T) {
		res, pub := publish(t)
		if err := os.Remove(res.Journal); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/zero", res.Journal); err != nil {
			t.Fatal(err)
		}
		in, err := checkpoint.Inspect(ctx, nil, filepath.Join(pub, "model"))
		if !errors.Is(err, checkpoint.ErrVerification) || in.JournalVerdict != checkpoint.JournalUnreadable {
			t.Fatalf("Inspect = %+v, %v; want the journal unreadable", in, err)
		}
	})
	t.Run("not a checkpoint", func(t *testing.T) {
		_, pub := publish(t)
		if err := os.Symlink(filepath.Join(pub, "model"), filepath.Join(pub, "alias")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{filepath.Join(pub, "nope"), filepath.Join(pub, "alias"), pub + "/.tracecheck", filepath.Join(pub, "model", "model.bin")} {
			if _, err := checkpoint.Inspect(ctx, nil, p); !errors.Is(err, checkpoint.ErrNotCheckpoint) {
				t.Errorf("Inspect(%s) = %v, want ErrNotCheckpoint", p, err)
			}
		}
	})
}
