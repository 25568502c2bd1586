// Package tpc is a small two-phase commit: one transaction manager (TM) and
// three resource managers (RMs), each a goroutine, exchanging messages over
// channels. Every step is taken under the transaction's lock and traced
// from the state it produced (never from the state it meant to reach), in
// spec/TwoPhase.tla's vocabulary, so tracecheck can check the code against
// the spec.
//
// The package never imports the transcription (example.com/twophase/model):
// the code is checked against the model, not derived from it.
package tpc

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

// RMs names the resource managers, as the spec's configuration does.
var RMs = []string{"r1", "r2", "r3"}

// Outcome is how a transaction ended, as the TM decided it.
type Outcome string

// The outcomes.
const (
	Committed Outcome = "committed"
	Aborted   Outcome = "aborted"
)

// Config configures one transaction.
type Config struct {
	// ID names the transaction: its trace instance.
	ID string
	// Sink receives the trace (nil: none).
	Sink trace.Sink
	// AbortChance is each RM's chance to give up instead of preparing.
	AbortChance float64
	// Patience is how long the TM waits for every RM to prepare before
	// it aborts (default 50 ms).
	Patience time.Duration
	// Seed seeds the RMs' choices.
	Seed uint64
}

type message struct {
	kind string // "Prepared", "Commit", "Abort"
	rm   int
}

// tx is one transaction's state, owned by its actors under mu.
type tx struct {
	mu         sync.Mutex
	id         string
	sink       trace.Sink
	seq        uint64
	rmState    []string
	tmState    string
	tmPrepared map[string]bool
	msgs       map[message]bool
}

// step applies change and emits its event, read from the state it left:
// the action, with the resource manager it is taken for (who >= 0; -1 for
// the TM's own actions) as its argument, as TLC labels the step
// (RMPrepare("r1")).
func (t *tx) step(action string, who int, change func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	change()
	if t.sink == nil {
		return
	}
	rm := map[string]any{}
	for i, s := range t.rmState {
		rm[RMs[i]] = s
	}
	prepared := []any{}
	for _, r := range RMs {
		if t.tmPrepared[r] {
			prepared = append(prepared, r)
		}
	}
	msgs := []any{}
	for m := range t.msgs {
		if m.kind == "Prepared" {
			msgs = append(msgs, map[string]any{"type": "Prepared", "rm": RMs[m.rm]})
		} else {
			msgs = append(msgs, map[string]any{"type": m.kind})
		}
	}
	var args []any
	if who >= 0 {
		args = []any{RMs[who]}
	}
	_ = t.sink.Emit(trace.Event{Instance: t.id, Seq: t.seq, Action: action, Args: args, State: map[string]any{
		"rmState": rm, "tmState": t.tmState,
		"tmPrepared": map[string]any{"#set": prepared}, "msgs": map[string]any{"#set": msgs},
	}})
	t.seq++
}

// Run runs one transaction to its end: every RM has followed the TM's
// decision. It returns the decision.
func Run(ctx context.Context, cfg Config) Outcome {
	if cfg.Patience <= 0 {
		cfg.Patience = 50 * time.Millisecond
	}
	t := &tx{id: cfg.ID, sink: cfg.Sink, rmState: make([]string, len(RMs)), tmState: "init",
		tmPrepared: map[string]bool{}, msgs: map[message]bool{}}
	for i := range t.rmState {
		t.rmState[i] = "working"
	}
	t.step("Init", -1, func() {})

	toTM := make(chan int, len(RMs))           // Prepared messages
	decisions := make([]chan string, len(RMs)) // the TM's decision, to each RM
	var wg sync.WaitGroup
	for i := range RMs {
		decisions[i] = make(chan string, 1)
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
		wg.Add(1)
		go func() { // RM i
			defer wg.Done()
			if rng.Float64() < cfg.AbortChance {
				t.step("RMChooseToAbort", i, func() { t.rmState[i] = "aborted" })
			} else {
				t.step("RMPrepare", i, func() {
					t.rmState[i] = "prepared"
					t.msgs[message{"Prepared", i}] = true
				})
				toTM <- i
			}
			switch <-decisions[i] {
			case "Commit":
				t.step("RMRcvCommitMsg", i, func() { t.rmState[i] = "committed" })
			case "Abort":
				t.step("RMRcvAbortMsg", i, func() { t.rmState[i] = "aborted" })
			}
		}()
	}

	// The TM.
	decision := "Abort"
	timer := time.NewTimer(cfg.Patience)
	defer timer.Stop()
	prepared := 0
wait:
	for prepared < len(RMs) {
		select {
		case i := <-toTM:
			t.step("TMRcvPrepared", i, func() { t.tmPrepared[RMs[i]] = true })
			prepared++
		case <-timer.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	if prepared == len(RMs) {
		decision = "Commit"
		t.step("TMCommit", -1, func() {
			t.tmState = "committed"
			t.msgs[message{kind: "Commit"}] = true
		})
	} else {
		t.step("TMAbort", -1, func() {
			t.tmState = "aborted"
			t.msgs[message{kind: "Abort"}] = true
		})
	}
	for i := range RMs {
		decisions[i] <- decision
	}
	wg.Wait()
	if decision == "Commit" {
		return Committed
	}
	return Aborted
}
