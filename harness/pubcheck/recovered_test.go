package pubcheck_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// TestRecoverCompletesCutJournal publishes a checkpoint, then cuts the
// journal as a publisher killed at each point after its Verified receipt
// would have left it: after the rename but before the AtomicPublication
// receipt (recovery verifies the checkpoint and appends
// AtomicPublication), and in the middle of writing that receipt (the cut
// line is dropped, the same receipt appended). Each time the journal
// then checks valid against model/program, ends Published, and a second
// recovery leaves it as it is.
func TestRecoverCompletesCutJournal(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		cut  func(lines [][]byte) []byte // the journal the killed publisher left
	}{
		{"before the receipt", func(l [][]byte) []byte { return bytes.Join(l[:len(l)-1], nil) }},
		{"inside the receipt", func(l [][]byte) []byte {
			last := l[len(l)-1]
			return append(bytes.Join(l[:len(l)-1], nil), last[:len(last)/2]...)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pub := t.TempDir()
			res, err := checkpoint.Publish(ctx, checkpoint.Config{PublishDir: pub, Name: "m", Command: []string{"true", "good"}, Runner: fakeRunner()})
			if err != nil || res.Outcome != checkpoint.PhasePublished {
				t.Fatalf("publish: %v %+v", err, res)
			}
			b, err := os.ReadFile(res.Journal)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitAfter(b, []byte("\n"))
			lines = lines[:len(lines)-1] // the empty string after the last newline
			if !bytes.Contains(lines[len(lines)-1], []byte(`"AtomicPublication"`)) {
				t.Fatalf("the journal does not end with AtomicPublication:\n%s", b)
			}
			if err := os.WriteFile(res.Journal, tc.cut(lines), 0o644); err != nil {
				t.Fatal(err)
			}
			reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub})
			if err != nil || len(reps) != 1 {
				t.Fatalf("recover: %v %+v", err, reps)
			}
			rep := reps[0]
			if rep.Outcome != checkpoint.OutcomePublished || rep.JournalTerminal || strings.Join(rep.Appended, ",") != checkpoint.ActionAtomicPublication {
				t.Fatalf("recover: %+v", rep)
			}
			r, err := pubcheck.CheckJournal(ctx, res.Journal)
			if err != nil || r.Verdict() != check.Valid {
				t.Fatalf("after recovery: %v %+v", err, r)
			}
			s := journalSummary(t, res.Journal)
			d, ok := checkpoint.ReceiptDetail[checkpoint.RecoveredDetail](s, checkpoint.ActionAtomicPublication)
			if s.Last != "Published" || !ok || !d.Recovered || d.Outcome != checkpoint.OutcomePublished || d.Digest != res.Digest() || d.Reason == "" {
				t.Errorf("journal ends %s, receipt %+v (ok %v)", s.Last, d, ok)
			}
			before, _ := os.ReadFile(res.Journal)
			reps, err = checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub})
			if err != nil || len(reps) != 1 || len(reps[0].Appended) > 0 || !reps[0].JournalTerminal {
				t.Errorf("second recover: %v %+v", err, reps)
			}
			if after, _ := os.ReadFile(res.Journal); !bytes.Equal(after, before) {
				t.Errorf("the second recovery changed the journal")
			}
		})
	}
}

// TestRecoverLeavesForeignJournal: a journal recovery cannot trust (not
// this run's) is not appended to.
func TestRecoverLeavesForeignJournal(t *testing.T) {
	ctx := context.Background()
	pub := t.TempDir()
	res, err := checkpoint.Publish(ctx, checkpoint.Config{PublishDir: pub, Name: "m", Command: []string{"true", "fail"}, Runner: fakeRunner()})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(res.Journal)
	lines := bytes.SplitAfter(b, []byte("\n"))
	// The Init and ExecutePython receipts, renamed to another run.
	cut := bytes.ReplaceAll(bytes.Join(lines[:3], nil), []byte(res.RunID), []byte("20200101T000000Z-000000"))
	if err := os.WriteFile(res.Journal, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub})
	if err != nil || len(reps) != 1 || len(reps[0].Appended) > 0 {
		t.Fatalf("recover: %v %+v", err, reps)
	}
	if after, _ := os.ReadFile(res.Journal); !bytes.Equal(after, cut) {
		t.Errorf("recovery wrote into a foreign journal:\n%s", after)
	}
}

func journalSummary(t *testing.T, path string) *checkpoint.JournalSummary {
	t.Helper()
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := checkpoint.ReadJournal(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecoverCompletesEmptyJournal: a publisher killed after creating its
// journal and before its Init receipt leaves an empty journal (or only its
// header, or part of it), which check calls an input error. Recovery
// writes what is missing — the header, the Init receipt from run.json —
// and the ending of a run left in Ready; the journal then checks valid,
// and a second recovery leaves it alone.
func TestRecoverCompletesEmptyJournal(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		keep func(header []byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"header only", func(h []byte) []byte { return h }},
		{"half a header", func(h []byte) []byte { return h[:len(h)/2] }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pub := t.TempDir()
			res, err := checkpoint.Publish(ctx, checkpoint.Config{PublishDir: pub, Name: "m", Command: []string{"true", "fail"}, Runner: fakeRunner()})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(res.Journal)
			header, _, _ := bytes.Cut(b, []byte("\n"))
			if err := os.WriteFile(res.Journal, tc.keep(append(header, '\n')), 0o644); err != nil {
				t.Fatal(err)
			}
			reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub})
			if err != nil || len(reps) != 1 {
				t.Fatalf("recover: %v %+v", err, reps)
			}
			if got := strings.Join(reps[0].Appended, ","); reps[0].Outcome != checkpoint.OutcomeNotPublished || got != "Init,ExecutePython,Interrupt" {
				t.Fatalf("recover: %+v", reps[0])
			}
			r, err := pubcheck.CheckJournal(ctx, res.Journal)
			if err != nil || r.Verdict() != check.Valid {
				t.Fatalf("after recovery: %v %+v", err, r)
			}
			s := journalSummary(t, res.Journal)
			if s.Spec != "program" || s.Run != res.RunID || s.Name != "m" || s.PublishDir != pub || s.Last != "Interrupted" {
				t.Errorf("journal: spec %q, run %q, name %q, publish dir %q, ends %s", s.Spec, s.Run, s.Name, s.PublishDir, s.Last)
			}
			if d, _ := s.Receipt(checkpoint.ActionInit); d["recovered"] != true || d["run_dir"] != res.RunDir {
				t.Errorf("Init detail %v", d)
			}
			before, _ := os.ReadFile(res.Journal)
			reps, err = checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub})
			if err != nil || len(reps) != 1 || len(reps[0].Appended) > 0 {
				t.Errorf("second recover: %v %+v", err, reps)
			}
			if after, _ := os.ReadFile(res.Journal); !bytes.Equal(after, before) {
				t.Errorf("the second recovery changed the journal")
			}
		})
	}
}
