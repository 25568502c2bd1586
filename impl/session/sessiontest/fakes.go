// Package sessiontest provides deterministic fakes of the work behind a
// session.Session — turn detection, response generation, speech synthesis
// and compaction — whose timing a test controls: each can be made to block
// at a known point, ignore cancellation, or panic.
package sessiontest

import (
	"context"
	"errors"
	"sync"
)

// FrameLen is the number of samples in the frames this package makes (20 ms
// at 16 kHz).
const FrameLen = 320

// Speech returns a frame that session.EnergyDetector hears as speech.
func Speech() []int16 {
	f := make([]int16, FrameLen)
	for i := range f {
		f[i] = 4000
		if i%2 == 1 {
			f[i] = -4000
		}
	}
	return f
}

// Silence returns a frame of silence.
func Silence() []int16 { return make([]int16, FrameLen) }

// Gate lets a test hold a fake at a known point: the fake calls Wait, which
// signals Entered and then blocks until Release (or, if the gate respects
// cancellation, until ctx is done). The zero Gate is not usable; use
// NewGate.
type Gate struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// NewGate returns a closed-off gate.
func NewGate() *Gate {
	return &Gate{entered: make(chan struct{}, 1024), release: make(chan struct{})}
}

// Entered receives once for each Wait that has reached the gate.
func (g *Gate) Entered() <-chan struct{} { return g.entered }

// Release opens the gate for good; it is safe to call more than once.
func (g *Gate) Release() { g.once.Do(func() { close(g.release) }) }

// Wait signals Entered and blocks until Release, or until ctx is done when
// ctx is not nil.
func (g *Gate) Wait(ctx context.Context) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	select {
	case <-g.release:
		return nil
	case <-done:
		return ctx.Err()
	}
}

// Detector is a deterministic TurnDetector: a frame is speech when its first
// sample is non-zero. If Gate is set it waits there on every speech frame
// (and it cannot be canceled: detection takes no context). If Panic is set
// it panics on speech.
type Detector struct {
	Gate  *Gate
	Panic bool
}

// Speech implements session.TurnDetector.
func (d *Detector) Speech(frame []int16) bool {
	speech := len(frame) > 0 && frame[0] != 0
	if speech && d.Panic {
		panic("sessiontest: detector panic")
	}
	if speech && d.Gate != nil {
		_ = d.Gate.Wait(context.Background())
	}
	return speech
}

// Generator is a deterministic Generator: it emits Words, then, if Gate is
// set, waits at the gate (respecting ctx unless IgnoreCancel) before
// returning. If Panic is set it panics after the words.
type Generator struct {
	Words        []string
	Gate         *Gate
	IgnoreCancel bool
	Panic        bool
}

// Generate implements session.Generator.
func (g *Generator) Generate(ctx context.Context, prompt string, emit func(string) error) error {
	for _, w := range g.Words {
		if err := emit(w); err != nil {
			return err
		}
	}
	if g.Panic {
		panic("sessiontest: generator panic")
	}
	if g.Gate != nil {
		if g.IgnoreCancel {
			return g.Gate.Wait(context.Background())
		}
		return g.Gate.Wait(ctx)
	}
	return nil
}

// Synthesizer is a deterministic Synthesizer: each text becomes one chunk
// holding the text's bytes, with no pacing.
type Synthesizer struct{}

// Synthesize implements session.Synthesizer.
func (Synthesizer) Synthesize(ctx context.Context, text string, emit func([]byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return emit([]byte(text))
}

// ErrFailed is what a Compactor with Fail set returns.
var ErrFailed = errors.New("sessiontest: compaction failed")

// Compactor is a deterministic Compactor that keeps the last item. If Gate
// is set it waits there first (respecting ctx unless IgnoreCancel). If Panic
// is set it panics; if Fail is set it returns ErrFailed.
type Compactor struct {
	Gate         *Gate
	IgnoreCancel bool
	Panic        bool
	Fail         bool
}

// Compact implements session.Compactor.
func (c *Compactor) Compact(ctx context.Context, history []string) ([]string, error) {
	if c.Gate != nil {
		var err error
		if c.IgnoreCancel {
			err = c.Gate.Wait(context.Background())
		} else {
			err = c.Gate.Wait(ctx)
		}
		if err != nil {
			return nil, err
		}
	}
	if c.Panic {
		panic("sessiontest: compactor panic")
	}
	if c.Fail {
		return nil, ErrFailed
	}
	if len(history) == 0 {
		return nil, nil
	}
	return history[len(history)-1:], nil
}
