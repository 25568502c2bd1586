package session

import (
	"context"
	"fmt"
)

// pipeline is one response's work: the generator's text, piece by piece,
// through the synthesizer, out on the response's audio channel (M5, the TTS
// pipeline nested under the response). Its fields other than the context
// belong to the response coordinator's goroutine; the work runs in its own
// goroutine and reports back on the coordinator's exits channel.
type pipeline struct {
	c      *respCoord
	resp   *Response
	prompt string
	ctx    context.Context
	cancel context.CancelFunc
	ended  bool
}

func newPipeline(c *respCoord, id uint64, prompt string) *pipeline {
	ctx, cancel := context.WithCancel(context.Background())
	return &pipeline{c: c, prompt: prompt, ctx: ctx, cancel: cancel,
		resp: &Response{id: id, audio: make(chan []byte, c.s.cfg.AudioBuffer), done: make(chan struct{})}}
}

func (p *pipeline) start() { go p.work() }

// end records how the response ended and closes its Done; only the first
// call counts. Called from the coordinator's goroutine only.
func (p *pipeline) end(err error) {
	if p.ended {
		return
	}
	p.ended = true
	p.resp.err = err
	close(p.resp.done)
}

func (p *pipeline) work() {
	err := p.run()
	p.cancel()
	select {
	case p.c.exits <- pipelineExit{id: p.resp.id, err: err}:
	case <-p.c.done: // the coordinator is gone (it abandoned us)
	}
}

// run generates and speaks; it closes the audio stream when it returns, and
// turns a panic in the generator or synthesizer into an error.
func (p *pipeline) run() (err error) {
	defer close(p.resp.audio)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: response %d: %v", ErrChildPanic, p.resp.id, r)
		}
	}()
	cfg := &p.c.s.cfg
	send := func(chunk []byte) error {
		select {
		case p.resp.audio <- chunk:
			return nil
		case <-p.ctx.Done():
			return p.ctx.Err()
		}
	}
	return cfg.Generator.Generate(p.ctx, p.prompt, func(text string) error {
		return cfg.Synthesizer.Synthesize(p.ctx, text, send)
	})
}
