package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the work behind a session of the realistic demo mix
// (mix.go): the default workers — EnergyDetector, a canned generator,
// PacedSynthesizer, TruncatingCompactor — with the script's hand on when a
// response's generation and a compaction end (a hold), how they end
// (normally, with an error, or with a panic), and whether the VAD's
// detector crashes.

// outcome is how held work ends.
type outcome int8

const (
	endOK    outcome = iota // the work completes
	endFail                 // the work returns an error (the session survives it)
	endPanic                // the work panics (the session tears down)
)

// Errors the mix's work returns when the script makes it fail.
var (
	errMixTTS        = errors.New("demo: TTS engine returned an error")
	errMixCompaction = errors.New("demo: compaction model returned an error")
)

// hold keeps one piece of work (a response's generation, a compaction)
// from ending until the script ends it, or, with after set, until after
// has passed (the work ends on its own: free-running sessions).
type hold struct {
	release chan struct{}
	once    sync.Once
	how     outcome // written before release is closed
	after   time.Duration
	words   []string // a response's text
}

func newHold(after time.Duration) *hold { return &hold{release: make(chan struct{}), after: after} }

// end lets the work end, as o; only the first call counts.
func (h *hold) end(o outcome) {
	h.once.Do(func() {
		h.how = o
		close(h.release)
	})
}

// wait blocks until the hold is ended, the deadline (if not zero) has
// passed, or ctx is done, and returns the outcome (endOK at the deadline)
// or ctx's error.
func (h *hold) wait(ctx context.Context, deadline time.Time) (outcome, error) {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-h.release:
		return h.how, nil
	case <-timeout:
		return endOK, nil
	case <-ctx.Done():
		return endOK, ctx.Err()
	}
}

// deadline is when work started at start ends on its own (zero: never).
func (h *hold) deadline(start time.Time) time.Time {
	if h.after <= 0 {
		return time.Time{}
	}
	return start.Add(h.after)
}

// ended reports whether the hold has been ended (without blocking).
func (h *hold) ended() bool {
	select {
	case <-h.release:
		return true
	default:
		return false
	}
}

var mixReplies = []string{
	"Sure. Your order shipped this morning and should arrive on Thursday.",
	"I can help with that. Which account would you like to use?",
	"The next train to the airport leaves at ten past four from platform two.",
	"Got it, I have moved your appointment to Monday at nine.",
	"Let me check. It looks like the store closes at eight tonight.",
	"Okay. I have added milk, eggs and bread to your list.",
}

// mixWorkers is one session's work.
type mixWorkers struct {
	detector EnergyDetector
	crashVAD atomic.Bool // the detector panics on its next frame
	compaction
	synth PacedSynthesizer
	// sentLate counts audio chunks the pipeline put on a response's stream
	// although the response's work had been canceled before the send.
	sentLate atomic.Int64
	mu       sync.Mutex
	resps    map[string]*hold // by prompt, until the response's generation starts
	holds    []*hold          // every hold made, to end them all at the end
}

// compaction is the hold of the next compaction job to start (the
// coordinator runs one at a time).
type compaction struct {
	next      atomic.Pointer[hold]
	compactor TruncatingCompactor
}

func newMixWorkers(speed float64) *mixWorkers {
	return &mixWorkers{resps: map[string]*hold{}, synth: PacedSynthesizer{Speed: speed}}
}

// Synthesize is the paced TTS stub; it counts the chunks the pipeline's
// emit took although the work was already canceled when it was called.
func (w *mixWorkers) Synthesize(ctx context.Context, text string, emit func([]byte) error) error {
	return w.synth.Synthesize(ctx, text, func(chunk []byte) error {
		canceled := ctx.Err() != nil
		err := emit(chunk)
		if canceled && err == nil {
			w.sentLate.Add(1)
		}
		return err
	})
}

// hold returns a new hold (see newHold), which releaseAll will end.
func (w *mixWorkers) hold(after time.Duration) *hold {
	h := newHold(after)
	w.mu.Lock()
	w.holds = append(w.holds, h)
	w.mu.Unlock()
	return h
}

// releaseAll ends every hold: work a teardown abandoned (without
// canceling it) can then end.
func (w *mixWorkers) releaseAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range w.holds {
		h.end(endOK)
	}
}

// expect registers the hold of the response that will be started with
// prompt.
func (w *mixWorkers) expect(prompt string, h *hold) {
	w.mu.Lock()
	w.resps[prompt] = h
	w.mu.Unlock()
}

// Speech is the energy detector, unless the script crashed it.
func (w *mixWorkers) Speech(frame []int16) bool {
	if w.crashVAD.Load() {
		panic("demo: VAD model crashed")
	}
	return w.detector.Speech(frame)
}

// Generate emits the response's words, one by one (each synthesized, paced,
// before the next), then waits; generation ends when the script ends the
// hold (or its time passes): the response completes, fails or panics then,
// even in the middle of its text.
func (w *mixWorkers) Generate(ctx context.Context, prompt string, emit func(string) error) error {
	w.mu.Lock()
	h := w.resps[prompt]
	delete(w.resps, prompt)
	w.mu.Unlock()
	if h == nil { // not the script's: a canned answer
		return CannedGenerator{Replies: mixReplies}.Generate(ctx, prompt, emit)
	}
	deadline := h.deadline(time.Now())
	for _, word := range h.words {
		if h.ended() || (!deadline.IsZero() && time.Now().After(deadline)) {
			break
		}
		if err := emit(word + " "); err != nil {
			return err
		}
	}
	how, err := h.wait(ctx, deadline)
	if err != nil {
		return err
	}
	switch how {
	case endFail:
		return errMixTTS
	case endPanic:
		panic("demo: TTS engine crashed")
	}
	return nil
}

// Compact waits for the script (or its time), then compacts by
// truncation, fails or panics.
func (c *compaction) Compact(ctx context.Context, history []string) ([]string, error) {
	if h := c.next.Swap(nil); h != nil {
		how, err := h.wait(ctx, h.deadline(time.Now()))
		if err != nil {
			return nil, err
		}
		switch how {
		case endFail:
			return nil, errMixCompaction
		case endPanic:
			panic("demo: compaction model crashed")
		}
	}
	return c.compactor.Compact(ctx, history)
}

// replyWords returns the words of reply n, cut to at most max words
// (at least 3).
func replyWords(n, max int) []string {
	words := strings.Fields(mixReplies[n%len(mixReplies)])
	if max < 3 {
		max = 3
	}
	if len(words) > max {
		words = words[:max]
	}
	return words
}
