package checkpoint_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// FuzzReadJournal: any bytes give a summary or an error, never a panic, and
// a summary's phase is that of its last complete receipt.
func FuzzReadJournal(f *testing.F) {
	f.Add([]byte(`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}` + "\n"))
	f.Add([]byte(`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":"Ready"}}` + "\n" + `{"v":1,"instance":"r","seq":1,"action":"ExecutePython","state":{"phase":"Running"}}` + "\n{\"v\":1,"))
	f.Add([]byte(`{"instance":"a"}` + "\n" + `{"instance":"b"}` + "\n"))
	f.Add([]byte("\n\n\xff\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := checkpoint.ReadJournal(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(s.Events) > 0 {
			if ph, ok := s.Events[len(s.Events)-1].State[checkpoint.VarPhase].(string); ok && ph != s.Last {
				t.Fatalf("last phase %q, last receipt's %q", s.Last, ph)
			}
		}
	})
}

// FuzzReadManifest: any manifest bytes are read or refused, never a panic;
// and Verify of a directory holding only that manifest never passes a
// manifest that lists files.
func FuzzReadManifest(f *testing.F) {
	f.Add([]byte(`{"format":1,"run":"r","name":"n","created":"2026-01-01T00:00:00Z","files":[],"digest":"sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"}`))
	f.Add([]byte(`{"format":1,"files":[{"path":"a","size":1,"sha256":"00"}],"digest":"x"}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, checkpoint.ManifestName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := checkpoint.ReadManifest(checkpoint.OSFS{}, dir)
		if err != nil {
			return
		}
		if _, err := checkpoint.Verify(t.Context(), checkpoint.OSFS{}, dir, nil); err == nil && len(m.Files) > 0 {
			t.Fatalf("a manifest listing %d files verified in a directory without them", len(m.Files))
		}
	})
}
