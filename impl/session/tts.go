package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// pipeline is one response's work: the generator's text, piece by piece,
// through the synthesizer, out on the response's audio stream (M5, the TTS
// pipeline nested under the response). It is the task of one of the
// response coordinator's workers, in its own goroutine.
type pipeline struct {
	cfg    *Config
	resp   *Response
	prompt string
}

// errCut is what a send returns once the response's stream has been cut:
// the response was ended before its pipeline returned.
var errCut = errors.New("session: the response's audio stream was cut")

// run generates and speaks; it closes the audio stream when it returns
// (unless the stream was cut first), and turns a panic in the generator or
// synthesizer into an error.
func (p *pipeline) run(ctx context.Context) (_ []string, err error) {
	out := &p.resp.out
	defer out.close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: response %d: %v", ErrChildPanic, p.resp.id, r)
		}
	}()
	send := func(chunk []byte) error { return out.send(ctx, chunk) }
	return nil, p.cfg.Generator.Generate(ctx, p.prompt, func(text string) error {
		if err := p.cfg.Synthesizer.Synthesize(ctx, text, send); err != nil {
			return err
		}
		out.spoken(text)
		return nil
	})
}

// audioOut is a response's audio stream as its pipeline writes it, and the
// text whose audio it holds. Its channel is closed exactly once: by the
// pipeline when it returns (the chunks still buffered are the end of the
// response, and are delivered), or by cut, when the coordinator ends the
// response (the chunks still buffered are discarded). After cut no send
// succeeds, and cut has drained the channel: a reader sees the end of the
// stream, never a stale chunk.
type audioOut struct {
	ch      chan []byte
	stop    chan struct{} // closed by cut: a send blocked on a full stream gives up
	stopped sync.Once
	mu      sync.Mutex // held by a send for its whole duration, and by cut and close
	cutOff  bool       // the stream was cut
	closed  bool       // ch is closed
	sent    int64      // bytes sent
	chunks  int        // chunks sent
	last    time.Time  // when the last chunk was sent
	dropped int        // chunks cut discarded
	pieces  []piece    // the text synthesized in full, with where its audio ends
	played  atomic.Int64
	clock   func() time.Time
}

// piece is one piece of a response's text whose audio was sent in full, and
// the stream's byte offset at the end of its audio.
type piece struct {
	text string
	end  int64
}

func newAudioOut(buffer int, clock func() time.Time) audioOut {
	return audioOut{ch: make(chan []byte, buffer), stop: make(chan struct{}), clock: clock}
}

// send puts chunk on the stream, waiting for room (back-pressure), unless
// the stream is cut or ctx is done first.
func (a *audioOut) send(ctx context.Context, chunk []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cutOff || a.closed {
		return errCut
	}
	select {
	case a.ch <- chunk:
		a.sent += int64(len(chunk))
		a.chunks++
		a.last = a.clock()
		return nil
	case <-a.stop:
		return errCut
	case <-ctx.Done():
		return ctx.Err()
	}
}

// spoken records that text's audio has been sent in full.
func (a *audioOut) spoken(text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.cutOff {
		a.pieces = append(a.pieces, piece{text: text, end: a.sent})
	}
}

// cut stops the stream at once: a send in progress gives up, no later send
// succeeds, the chunks still buffered are discarded, and the channel is
// closed. It is idempotent, and returns how many chunks it discarded (0
// after the first call).
func (a *audioOut) cut() int {
	a.stopped.Do(func() { close(a.stop) })
	a.mu.Lock() // a send in progress has returned
	defer a.mu.Unlock()
	if a.cutOff {
		return 0
	}
	a.cutOff = true
drain:
	for {
		select {
		case _, ok := <-a.ch:
			if !ok {
				break drain
			}
			a.dropped++
		default:
			break drain
		}
	}
	if !a.closed {
		a.closed = true
		close(a.ch)
	}
	return a.dropped
}

// close closes the stream at the pipeline's end, keeping what is buffered
// for the reader; it is idempotent, and a no-op after cut.
func (a *audioOut) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed {
		a.closed = true
		close(a.ch)
	}
}

// audit describes the stream for the trace, from its real state: the
// chunks sent, whether it was cut, and when its last chunk was sent; once
// cut, or when ended says that its response was ended before its
// pipeline returned, the chunks the cut discarded and those still
// readable (buffered: 0, since an ended response's stream holds no stale
// chunk). The backlog of a stream that ends with its pipeline is the
// reader's business, and not reported.
func (a *audioOut) audit(ended bool) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := map[string]any{"sent": a.chunks, "cut": a.cutOff}
	if a.cutOff || ended {
		d["dropped"], d["buffered"] = a.dropped, len(a.ch)
	}
	if ended {
		d["ended"] = true
	}
	if !a.last.IsZero() {
		d["last"] = a.last.UTC().Format(time.RFC3339Nano)
	}
	return d
}

// text is the text whose audio was sent in full; with heard set, only the
// pieces whose audio the transport acknowledged as played in full.
func (a *audioOut) text(heard bool) string {
	played := a.played.Load()
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	for _, p := range a.pieces {
		if heard && p.end > played {
			break
		}
		b.WriteString(p.text)
	}
	return strings.TrimSpace(b.String())
}
