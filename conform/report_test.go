package conform

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fakeReport writes a spec under root and a report directory with one
// output file and a manifest recording both hashes.
func fakeReport(t *testing.T) (root, dir string) {
	t.Helper()
	root, dir = t.TempDir(), t.TempDir()
	spec, out := []byte("---- MODULE M ----\n===="), []byte("TLC2 Version x\n")
	if err := os.MkdirAll(filepath.Join(root, "spec"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "spec", "M.tla"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stdout.txt"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	m := Manifest{Report: "m", Tool: "TLC", ToolVersion: "TLC2 Version x", Command: "java tlc2.TLC M.tla",
		Specs: []FileHash{{"spec/M.tla", sum(spec)}}, Files: []FileHash{{"stdout.txt", sum(out)}}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return root, dir
}

func TestReportVerify(t *testing.T) {
	root, dir := fakeReport(t)
	r, err := LoadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(root); err != nil {
		t.Fatalf("fresh report: %v", err)
	}
	edits := []struct {
		name, which, want string
	}{
		{"spec edited", "spec", "spec spec/M.tla"},
		{"output edited by hand", "output", "output stdout.txt"},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			root, dir := fakeReport(t)
			path := filepath.Join(root, "spec", "M.tla")
			if e.which == "output" {
				path = filepath.Join(dir, "stdout.txt")
			}
			if err := os.WriteFile(path, []byte("edited"), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := LoadReport(dir)
			if err != nil {
				t.Fatal(err)
			}
			err = r.Verify(root)
			if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), e.want) || !strings.Contains(err.Error(), RegenCommand) {
				t.Fatalf("Verify: %v; want ErrStale naming %q and the regenerate command", err, e.want)
			}
		})
	}
	t.Run("spec deleted", func(t *testing.T) {
		root, dir := fakeReport(t)
		if err := os.Remove(filepath.Join(root, "spec", "M.tla")); err != nil {
			t.Fatal(err)
		}
		r, err := LoadReport(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(root); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("Verify: %v; want ErrNotExist", err)
		}
	})
}

func TestLoadReportMalformed(t *testing.T) {
	if _, err := LoadReport(filepath.Join(t.TempDir(), "absent")); !errors.Is(err, ErrNoReport) {
		t.Errorf("absent report: %v; want ErrNoReport", err)
	}
	for _, body := range []string{"", "garbage", `{"tool": 3}`, `{"tool":"TLC"}`, `{"tool":"TLC","tool_version":"v","command":"c","specs":[]}`} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadReport(dir); !errors.Is(err, ErrSyntax) {
			t.Errorf("manifest %q: %v; want ErrSyntax", body, err)
		}
	}
}
