package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Build says which build of the program runs: what version prints.
type Build struct {
	// Path and Version are the main module's path and version ("(devel)"
	// for a build from a source tree, the tag for go install ...@vX).
	Path    string `json:"module"`
	Version string `json:"version"`
	// Revision is the VCS revision the binary was built from, Time its
	// commit time, and Modified whether the work tree had uncommitted
	// changes; empty when the build recorded none (go install of a
	// module, go run, a test binary).
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Go is the Go version that built the binary, Platform its GOOS/GOARCH.
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// ReadBuild returns the running program's [Build] from its build
// information (runtime/debug.ReadBuildInfo).
func ReadBuild() Build {
	b := Build{Version: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Path, b.Version = info.Main.Path, info.Main.Version
	if b.Version == "" {
		b.Version = "unknown"
	}
	if info.GoVersion != "" {
		b.Go = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is version's text: one line.
func (b Build) String() string {
	s := "tracecheck " + b.Version
	if b.Path != "" {
		s += " (" + b.Path + ")"
	}
	switch {
	case b.Revision != "":
		s += ", revision " + b.Revision
		if b.Modified {
			s += " with uncommitted changes"
		}
		if b.Time != "" {
			s += " of " + b.Time
		}
	default:
		s += ", no VCS revision recorded"
	}
	return s + ", built with " + b.Go + " for " + b.Platform
}

const versionSynopsis = `[--json]

Prints the program's main module and version (a tag when installed with
go install MODULE@VERSION, "(devel)" when built from a source tree), the
VCS revision it was built from and whether that work tree had uncommitted
changes (when the build recorded them: go build in a git checkout does),
and the Go version that built it. "tracecheck --version" is the same.

--json writes {"module", "version", "revision"?, "time"?, "modified"?,
"go", "platform"}.`

func (a *app) runVersion(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("version", versionSynopsis, stderr)
	asJSON := fs.Bool("json", false, UsageJSON)
	pos, code := Parse(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "tracecheck version: unexpected argument %q\n", pos[0])
		return ExitUsage
	}
	b := ReadBuild()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(b); err != nil {
			fmt.Fprintf(stderr, "tracecheck version: %v\n", err)
			return ExitInput
		}
		return ExitOK
	}
	fmt.Fprintln(stdout, b)
	return ExitOK
}
