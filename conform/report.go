package conform

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ManifestFile is the name of the manifest formal-verification/run.sh writes
// next to each retained report.
const ManifestFile = "manifest.json"

// RegenCommand is how to regenerate the retained reports.
const RegenCommand = "TLA2TOOLS=/path/to/tla2tools.jar FIZZ=/path/to/fizz REGEN=1 make formal"

// ErrStale is returned when a spec differs from the one a retained report
// was produced from, or a report file from the one the tool wrote.
var ErrStale = errors.New("retained report is stale")

// ErrNoReport is returned when a retained report is absent.
var ErrNoReport = errors.New("retained report is absent")

// FileHash names a file and its sha256, as run.sh records them.
type FileHash struct {
	// Path is relative to the repository root for specs, and to the report
	// directory for output files.
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Manifest describes one retained tool run. formal-verification/run.sh
// writes it; nobody writes it by hand.
type Manifest struct {
	// Report names the report, e.g. "tlc-program".
	Report string `json:"report"`
	// Tool is "TLC" or "FizzBee".
	Tool string `json:"tool"`
	// ToolVersion is the tool's own version string (TLC's first line) or,
	// for FizzBee, which has none, its source commit.
	ToolVersion string `json:"tool_version"`
	// ToolBinarySHA256 is the sha256 of the jar or binary that ran.
	ToolBinarySHA256 string `json:"tool_binary_sha256"`
	// Command is the exact command line, run from the directory CWD names.
	Command string `json:"command"`
	// CWD is the directory the command ran in (a temporary copy of spec/).
	CWD string `json:"cwd"`
	// ExitCode is the tool's exit status.
	ExitCode int `json:"exit_code"`
	// Verdict is the verdict line run.sh read from the output.
	Verdict string `json:"verdict"`
	// Specs are the spec files the run read, by repository path.
	Specs []FileHash `json:"specs"`
	// Files are the retained output files, by path in the report directory.
	Files []FileHash `json:"files"`
	// Generated is when run.sh ran the tool (UTC, RFC 3339).
	Generated string `json:"generated"`
}

// Report is a retained (or freshly produced) tool run: its directory and
// manifest.
type Report struct {
	// Dir is the report's directory: the manifest and the tool's files.
	Dir string
	// Manifest is the report's manifest.json.
	Manifest Manifest
}

// LoadReport reads the manifest in dir. It returns an error wrapping
// [ErrNoReport] if there is none.
func LoadReport(dir string) (*Report, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (no %s)", dir, ErrNoReport, ManifestFile)
	}
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	r := &Report{Dir: dir}
	if err := json.Unmarshal(b, &r.Manifest); err != nil {
		return nil, fmt.Errorf("%s: %w: manifest: %v", dir, ErrSyntax, err)
	}
	m := &r.Manifest
	if m.Tool == "" || m.ToolVersion == "" || m.Command == "" || len(m.Specs) == 0 || len(m.Files) == 0 {
		return nil, fmt.Errorf("%s: %w: manifest lacks tool, version, command, specs or files", dir, ErrSyntax)
	}
	return r, nil
}

// Verify checks that every spec the report came from still has the recorded
// sha256 (paths relative to root, the repository root) and that every
// output file is the one the tool wrote. A mismatch wraps [ErrStale] and
// says how to regenerate the report.
func (r *Report) Verify(root string) error {
	var stale []string
	for _, s := range r.Manifest.Specs {
		got, err := fileSHA256(filepath.Join(root, s.Path))
		if err != nil {
			return fmt.Errorf("report %s: %w", r.Manifest.Report, err)
		}
		if got != s.SHA256 {
			stale = append(stale, fmt.Sprintf("spec %s has sha256 %s, but the report was produced from %s", s.Path, got, s.SHA256))
		}
	}
	for _, f := range r.Manifest.Files {
		got, err := fileSHA256(filepath.Join(r.Dir, f.Path))
		if err != nil {
			return fmt.Errorf("report %s: %w", r.Manifest.Report, err)
		}
		if got != f.SHA256 {
			stale = append(stale, fmt.Sprintf("output %s has sha256 %s, but %s wrote %s", f.Path, got, r.Manifest.Tool, f.SHA256))
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("report %s: %w:\n  %s\nregenerate it by running the real tools: %s",
			r.Manifest.Report, ErrStale, strings.Join(stale, "\n  "), RegenCommand)
	}
	return nil
}

// Path returns the path of a file in the report directory.
func (r *Report) Path(name string) string { return filepath.Join(r.Dir, name) }

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
