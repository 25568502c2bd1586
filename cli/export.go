package cli

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tracecheck/tracecheck/trace"
)

const exportSynopsis = `--itf [--instance ID] [--out DIR] [--max-itf N] FILE|-  |  --ndjson [--max-itf N] FILE|-

--itf converts a trace (NDJSON, docs/trace-format.md, or ITF; "-" reads
standard input) to the Informal Trace Format of Apalache and Quint
(ADR-015), as docs/itf.md describes: one ITF document per instance, states
in event order, each step's action in "mbt::actionTaken", and seq, part,
stutter, time and detail in the state's "#meta". tracecheck check reads
the documents back.

Without --out the documents go to standard output one after another, in
order of each instance's first event (tracecheck check reads such a stream
back; other ITF readers want one document a file). With --out DIR each goes
to DIR/<instance>.itf.json: the instance name with characters other than
letters, digits, '.', '_' and '-' replaced by '_', and "-2", "-3" added if
two instances would share a file; the paths are printed. --instance ID
exports only that instance. Each file is written under a temporary name in
DIR and renamed into place, never through a symbolic link: a file already
there is replaced, but a symbolic link (or anything else that is not a
regular file) at a file's name is refused, left as it is, with an error
naming it, and what it points to is never opened. Names are resolved
within DIR only (os.Root).

--itf holds the whole trace in memory to group it by instance: a trace
larger than --max-itf (default 256 MiB) is refused, read no further than
that. An ITF input document larger than --max-itf is refused too.

A trace whose last line was cut off mid-write is exported without it; the
cut-off instance's document records "truncated" in its "#meta", and
tracecheck check reports that instance incomplete, as it would the NDJSON.

--ndjson converts the other way: ITF documents (or an NDJSON trace, which
is copied) to NDJSON on standard output, one line a state; a document's
instance is its "#meta" "instance", else the file's base name without
extensions ("stdin" for standard input).

A FILE must be a regular file (a named pipe is refused at once, never
waited on: read a pipe from standard input with -).

Exit codes: 0 exported; 3 input error (unreadable or malformed trace,
input too large, no such instance, unwritable output, a symbolic link in
DIR); 2 usage.`

func (a *app) runExport(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("export", exportSynopsis, stderr)
	itf := fs.Bool("itf", false, "write ITF, one document per instance")
	ndjson := fs.Bool("ndjson", false, "write NDJSON (read from ITF)")
	only := fs.String("instance", "", UsageInstance)
	outDir := fs.String("out", "", "write one file per instance into `DIR` instead of standard output")
	maxITF := fs.Int64("max-itf", trace.DefaultMaxITF, UsageMaxITF)
	files, code := Parse(fs, args)
	if code >= 0 {
		return code
	}
	if *maxITF <= 0 {
		fmt.Fprintln(stderr, "tracecheck export: --max-itf must be positive")
		return ExitUsage
	}
	switch {
	case *itf == *ndjson:
		fmt.Fprintln(stderr, "tracecheck export: choose one output format: --itf or --ndjson")
		fs.Usage()
		return ExitUsage
	case *ndjson && (*only != "" || *outDir != ""):
		fmt.Fprintln(stderr, "tracecheck export: --instance and --out go with --itf only")
		return ExitUsage
	case len(files) != 1:
		fmt.Fprintf(stderr, "tracecheck export: want one trace (a file, or - for standard input), got %d\n", len(files))
		fs.Usage()
		return ExitUsage
	}
	var root *os.Root
	if *outDir != "" {
		if st, err := os.Stat(*outDir); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "tracecheck export: --out %s is not a directory\n", *outDir)
			return ExitUsage
		}
		var err error
		if root, err = os.OpenRoot(*outDir); err != nil {
			fmt.Fprintf(stderr, "tracecheck export: --out: %v\n", err)
			return ExitInput
		}
		defer root.Close()
	}

	var r io.Reader = a.stdin
	name := "stdin"
	if files[0] != "-" {
		f, err := openFile(files[0])
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck export: %v\n", err)
			return ExitInput
		}
		defer f.Close()
		r, name = f, files[0]
	}
	if *ndjson {
		return exportNDJSON(r, name, *maxITF, stdout, stderr)
	}
	nd, _, err := trace.AsNDJSONSize(r, baseInstance(name), *maxITF) // ITF input is read too
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck export: %s: %v\n", name, err)
		return ExitInput
	}
	// The whole trace is held in memory: bound it.
	nd = trace.MaxReader(nd, *maxITF, "the trace (export --itf holds it whole; --max-itf)")
	events, truncated, err := readEvents(nd, name)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck export: %v\n", err)
		return ExitInput
	}
	names, byInstance := trace.SplitInstances(events)
	if *only != "" {
		if _, ok := byInstance[*only]; !ok {
			fmt.Fprintf(stderr, "tracecheck export: %s has no instance %q (it has %s)\n", name, *only, strings.Join(names, ", "))
			return ExitInput
		}
		names = []string{*only}
	}
	if truncated != nil {
		fmt.Fprintf(stderr, "tracecheck export: %s: the last line is cut off; exported without it\n", truncated.pos)
	}
	used := map[string]bool{}
	for _, inst := range names {
		doc, err := trace.EventsToITF(byInstance[inst])
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck export: %s: instance %s: %v\n", name, inst, err)
			return ExitInput
		}
		if truncated != nil && (truncated.instance == inst || truncated.instance == "") {
			doc.Meta[trace.ITFMetaTruncated] = truncated.pos.String()
		}
		if *outDir == "" {
			if err := doc.Write(stdout); err != nil {
				fmt.Fprintf(stderr, "tracecheck export: %v\n", err)
				return ExitInput
			}
			continue
		}
		base := fileSafe(inst)
		for k := 2; used[base]; k++ { // two instance names that map to one file name
			base = fmt.Sprintf("%s-%d", fileSafe(inst), k)
		}
		used[base] = true
		path := filepath.Join(*outDir, base+".itf.json")
		if err := writeOut(root, base+".itf.json", doc); err != nil {
			fmt.Fprintf(stderr, "tracecheck export: %s: %v\n", path, err)
			return ExitInput
		}
		fmt.Fprintln(stdout, path)
	}
	return ExitOK
}

// cutOff is where a trace's partial last line was, and its instance if the
// line got that far.
type cutOff struct {
	pos      trace.Pos
	instance string
}

// readEvents decodes a whole NDJSON trace. A partial last line is not an
// error: it is returned as a cutOff.
func readEvents(r io.Reader, name string) ([]trace.Event, *cutOff, error) {
	dec := trace.NewDecoder(r, name)
	var events []trace.Event
	for {
		raw, err := dec.Next()
		if err == io.EOF {
			return events, nil, nil
		}
		if errors.Is(err, trace.ErrTruncated) {
			inst, _ := trace.PeekInstance(raw.Line)
			return events, &cutOff{raw.Pos, inst}, nil
		}
		if err != nil {
			return nil, nil, err
		}
		e, err := raw.Event()
		if err != nil {
			return nil, nil, err
		}
		events = append(events, e)
	}
}

// errNotFile: export --out found something other than a regular file (a
// symbolic link, a directory) at the name of a file it writes.
var errNotFile = errors.New("not a regular file")

// writeOut writes doc to the file name in root, never through a symbolic
// link: into a new temporary file (O_EXCL, O_NOFOLLOW), then renamed over
// name. A regular file at name is replaced; anything else there (a
// symbolic link, planted to make the export write elsewhere) is refused
// and left as it is. The rename replaces a directory entry and never
// follows a link, so a link planted after the check is replaced, not
// followed.
func writeOut(root *os.Root, name string, doc *trace.ITF) error {
	if st, err := root.Lstat(name); err == nil && !st.Mode().IsRegular() {
		what := "neither a file nor a directory"
		switch m := st.Mode(); {
		case m&fs.ModeSymlink != 0:
			what = "a symbolic link"
		case m.IsDir():
			what = "a directory"
		}
		return fmt.Errorf("%w: it is %s, which export never writes through or over (remove it to export there)", errNotFile, what)
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := fmt.Sprintf(".%s.%x.tmp", name, rnd)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o666)
	if err != nil {
		return err
	}
	err = doc.Write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// fileSafe maps an instance name to a file name.
func fileSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		return "_" + string(b)
	}
	return string(b)
}

// exportNDJSON writes the trace in r (ITF or NDJSON) as NDJSON.
func exportNDJSON(r io.Reader, name string, maxITF int64, stdout, stderr io.Writer) int {
	out, _, err := trace.AsNDJSONSize(r, baseInstance(name), maxITF)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck export: %s: %v\n", name, err)
		return ExitInput
	}
	if _, err := io.Copy(stdout, out); err != nil {
		fmt.Fprintf(stderr, "tracecheck export: %s: %v\n", name, err)
		return ExitInput
	}
	return ExitOK
}

// baseInstance is the instance an ITF document without one gets: the file's
// base name without extensions.
func baseInstance(name string) string {
	instance := filepath.Base(name)
	if i := strings.IndexByte(instance, '.'); i > 0 {
		instance = instance[:i]
	}
	return instance
}
