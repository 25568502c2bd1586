package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
	"github.com/tracecheck/tracecheck/monitor"
	"github.com/tracecheck/tracecheck/trace"
)

// journalForward publishes a run's journal to NATS JetStream as the run
// writes it (`tracecheck run --trace-nats URL`), for `tracecheck monitor`.
// The journal, fsynced receipt by receipt, stays the record: what goes to
// NATS is its lines, read back from the file, byte for byte. The Sink
// waits for room rather than drop (the forwarder has its own goroutine; the
// run never waits for NATS), so its memory is bounded and nothing of the
// journal is dropped, only delayed; what is not acknowledged when the run
// ends (10 seconds later at most) is said.
type journalForward struct {
	url, path string
	sink      *monitor.Sink
	stderr    io.Writer
	stop      chan struct{}
	done      chan struct{}
	lines     int
	err       error
}

// startJournalForward starts forwarding the journal of the run cfg
// describes, if url is set (nil otherwise: its finish does nothing). It
// gives the run its ID now, so that it knows the journal's path.
func startJournalForward(url string, cfg *checkpoint.Config, stderr io.Writer) (*journalForward, error) {
	if url == "" {
		return nil, nil
	}
	if cfg.RunID == "" {
		cfg.RunID = checkpoint.NewRunID(time.Now())
	}
	path := cfg.Journal
	if path == "" {
		path = filepath.Join(cfg.PublishDir, checkpoint.MetaDir, "runs", cfg.RunID, "journal.ndjson")
	}
	sink, err := monitor.NewSink(monitor.SinkConfig{URL: url, Spec: checkpoint.JournalSpec, Block: -1, Name: "tracecheck run " + cfg.RunID,
		Logf: func(format string, args ...any) {
			fmt.Fprintf(stderr, "tracecheck run: trace-nats: "+format+"\n", args...)
		}})
	if err != nil {
		return nil, fmt.Errorf("--trace-nats: %w", err)
	}
	f := &journalForward{url: url, path: path, sink: sink, stderr: stderr, stop: make(chan struct{}), done: make(chan struct{})}
	go f.loop()
	return f, nil
}

// loop reads the journal's new complete lines every 50ms and publishes
// them, until stopped; it reads once more after the stop.
func (f *journalForward) loop() {
	defer close(f.done)
	var file *os.File
	defer func() {
		if file != nil {
			file.Close()
		}
	}()
	var pending []byte
	var read int64
	buf := make([]byte, 64<<10)
	stopping := false
	for {
		if file == nil && f.err == nil {
			fd, err := os.OpenFile(f.path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
			switch {
			case err == nil:
				if st, serr := fd.Stat(); serr != nil || !st.Mode().IsRegular() {
					fd.Close()
					f.err = fmt.Errorf("%s is not a regular file", f.path)
				} else {
					file = fd
				}
			case !errors.Is(err, os.ErrNotExist):
				f.err = err
			}
		}
		for file != nil && f.err == nil {
			n, err := file.Read(buf)
			read += int64(n)
			if read > checkpoint.MaxJournalBytes {
				f.err = fmt.Errorf("the journal is over %d bytes: not forwarded further", checkpoint.MaxJournalBytes)
				break
			}
			pending = append(pending, buf[:n]...)
			for {
				i := bytes.IndexByte(pending, '\n')
				if i < 0 {
					break
				}
				f.forward(pending[:i])
				pending = pending[i+1:]
			}
			if n == 0 || err != nil {
				break
			}
		}
		if stopping {
			return
		}
		select {
		case <-f.stop:
			stopping = true
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// forward publishes one journal line; a header line is not an event.
func (f *journalForward) forward(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if _, ok, _ := trace.ParseHeader(line); ok || len(bytes.TrimSpace(line)) == 0 {
		return
	}
	instance, ok := trace.PeekInstance(line)
	if !ok {
		return
	}
	if err := f.sink.EmitLine(instance, line); err == nil {
		f.lines++
	}
}

// finish reads the journal's last lines, waits (10 seconds at most) for
// NATS to acknowledge them, and says what was published.
func (f *journalForward) finish() {
	if f == nil {
		return
	}
	close(f.stop)
	<-f.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := f.sink.Close(ctx)
	st := f.sink.Stats()
	fmt.Fprintf(f.stderr, "tracecheck run: trace-nats: %d of %d journal events acknowledged by %s (tracecheck.%s.*)\n", st.Published, f.lines, f.url, checkpoint.JournalSpec)
	if f.err != nil {
		fmt.Fprintf(f.stderr, "tracecheck run: trace-nats: warning: %v\n", f.err)
	}
	if err != nil {
		fmt.Fprintf(f.stderr, "tracecheck run: trace-nats: warning: %v; the journal (%s) is the record\n", err, f.path)
	}
}
