package tpc_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	tp "example.com/twophase/model"
	"example.com/twophase/tpc"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/trace"
)

// run runs n transactions at once, all traced into one stream.
func run(t *testing.T, n int, abortChance float64) ([]byte, map[tpc.Outcome]int) {
	t.Helper()
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	if err := w.WriteHeader(trace.Header{Spec: "twophase", Emitter: "example.com/twophase/tpc"}); err != nil {
		t.Fatal(err)
	}
	outcomes := map[tpc.Outcome]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := tpc.Run(context.Background(), tpc.Config{ID: fmt.Sprintf("tx%03d", i), Sink: w, AbortChance: abortChance, Seed: uint64(i)})
			mu.Lock()
			outcomes[o]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return buf.Bytes(), outcomes
}

// Hundreds of concurrent transactions, with and without RMs that give
// up: every transaction's trace, whose events name the resource manager
// each step is taken for ("args": ["r1"]), is a behaviour of TwoPhase.tla,
// checked against the Go transcription and against the graph TLC
// computed, with the same verdicts; so is the same trace with the
// arguments left out (the action alone); both outcomes happen.
func TestTransactionsFollowTheSpec(t *testing.T) {
	data, outcomes := run(t, 300, 0.1)
	if outcomes[tpc.Committed] == 0 || outcomes[tpc.Aborted] == 0 {
		t.Fatalf("outcomes %v: want both", outcomes)
	}
	if !bytes.Contains(data, []byte(`"action":"RMPrepare","args":["r`)) {
		t.Fatalf("the trace names no RMPrepare's argument:\n%.500s", data)
	}
	g, err := conform.LoadGraph(filepath.Join("..", "formal", "tlc", "states.dot"))
	if err != nil {
		t.Fatal(err)
	}
	graph, err := conform.Spec(g, "twophase (TLC's graph)")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"with args", data}, {"without args", withoutArgs(t, data)}} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := check.Check(context.Background(), tp.Spec(), bytes.NewReader(c.data), "trace", check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict() != check.Valid || rep.Count(check.Valid) != 300 {
				for _, in := range rep.Instances {
					if in.Verdict != check.Valid {
						var b bytes.Buffer
						_ = in.WriteText(&b)
						t.Log(b.String())
						break
					}
				}
				t.Fatalf("verdict %s: %d of 300 valid", rep.Verdict(), rep.Count(check.Valid))
			}
			grep, err := check.Check(context.Background(), graph, bytes.NewReader(c.data), "trace", check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if grep.Verdict() != check.Valid || grep.Count(check.Valid) != 300 {
				t.Fatalf("against TLC's graph: %s, %d valid", grep.Verdict(), grep.Count(check.Valid))
			}
			cov, err := check.CoverageOf(context.Background(), tp.Spec(), rep)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%v; %d/%d of TwoPhase's transitions exercised", outcomes, cov.Exercised, cov.Total)
		})
	}
}

// withoutArgs is the trace data with every event's arguments left out.
func withoutArgs(t *testing.T, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := trace.NewWriter(&out)
	dec := trace.NewDecoder(bytes.NewReader(data), "trace")
	for {
		e, err := dec.Decode()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		e.Args = nil
		if err := w.Emit(e); err != nil {
			t.Fatal(err)
		}
	}
	if bytes.Contains(out.Bytes(), []byte(`"args"`)) {
		t.Fatal("args left in")
	}
	return out.Bytes()
}
