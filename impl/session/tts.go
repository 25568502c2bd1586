package session

import (
	"context"
	"fmt"
)

// pipeline is one response's work: the generator's text, piece by piece,
// through the synthesizer, out on the response's audio channel (M5, the TTS
// pipeline nested under the response). It is the task of one of the
// response coordinator's workers, in its own goroutine.
type pipeline struct {
	cfg    *Config
	resp   *Response
	prompt string
}

// run generates and speaks; it closes the audio stream when it returns, and
// turns a panic in the generator or synthesizer into an error.
func (p *pipeline) run(ctx context.Context) (_ []string, err error) {
	defer close(p.resp.audio)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: response %d: %v", ErrChildPanic, p.resp.id, r)
		}
	}()
	send := func(chunk []byte) error {
		select {
		case p.resp.audio <- chunk:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil, p.cfg.Generator.Generate(ctx, p.prompt, func(text string) error {
		return p.cfg.Synthesizer.Synthesize(ctx, text, send)
	})
}
