package session

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"time"
)

// TurnDetector decides whether one frame of PCM16 mono audio holds speech.
// It is called only from the VAD goroutine, one frame at a time.
type TurnDetector interface {
	Speech(frame []int16) bool
}

// Generator produces the text of a response, piece by piece, by calling
// emit. It must return when ctx is done (a well-behaved one does).
type Generator interface {
	Generate(ctx context.Context, prompt string, emit func(text string) error) error
}

// Synthesizer turns text into audio, streamed chunk by chunk through emit.
// It must return when ctx is done.
type Synthesizer interface {
	Synthesize(ctx context.Context, text string, emit func(audio []byte) error) error
}

// Compactor compacts a conversation history into a shorter one. It must
// return when ctx is done.
type Compactor interface {
	Compact(ctx context.Context, history []string) ([]string, error)
}

// EnergyDetector is the default TurnDetector: a frame is speech when its RMS
// amplitude exceeds Threshold.
type EnergyDetector struct {
	// Threshold is the RMS amplitude (int16 scale) above which a frame is
	// speech. Default 500 (about -36 dBFS).
	Threshold float64
}

// Speech reports whether frame's RMS energy is above the threshold.
func (d *EnergyDetector) Speech(frame []int16) bool {
	if len(frame) == 0 {
		return false
	}
	th := d.Threshold
	if th <= 0 {
		th = 500
	}
	var sum float64
	for _, s := range frame {
		f := float64(s)
		sum += f * f
	}
	return math.Sqrt(sum/float64(len(frame))) > th
}

// CannedGenerator is the default Generator: it answers every prompt with one
// of Replies (chosen by the prompt's length), a word at a time.
type CannedGenerator struct {
	// Replies are the canned answers. Default: one friendly sentence.
	Replies []string
}

// Generate emits the canned reply word by word.
func (g CannedGenerator) Generate(ctx context.Context, prompt string, emit func(string) error) error {
	replies := g.Replies
	if len(replies) == 0 {
		replies = []string{"Thanks, I heard you. Here is a canned answer from the demo generator."}
	}
	for _, w := range strings.Fields(replies[len(prompt)%len(replies)]) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(w + " "); err != nil {
			return err
		}
	}
	return nil
}

// PacedSynthesizer is the default Synthesizer: a stub that streams a sine
// tone as PCM16 mono chunks, as long as the text would take to say, paced in
// real time (or Speed times faster).
type PacedSynthesizer struct {
	// SampleRate in Hz. Default 16000.
	SampleRate int
	// Chunk is the duration of one audio chunk. Default 20ms.
	Chunk time.Duration
	// PerChar is the speaking time per character of text. Default 60ms.
	PerChar time.Duration
	// Speed divides the pacing: 1 is real time, 0 means 1, and a negative
	// value disables pacing entirely.
	Speed float64
}

// Synthesize streams audio for text, pacing chunks like a real TTS engine.
func (p *PacedSynthesizer) Synthesize(ctx context.Context, text string, emit func([]byte) error) error {
	rate, chunk, perChar, speed := p.SampleRate, p.Chunk, p.PerChar, p.Speed
	if rate <= 0 {
		rate = 16000
	}
	if chunk <= 0 {
		chunk = 20 * time.Millisecond
	}
	if perChar <= 0 {
		perChar = 60 * time.Millisecond
	}
	if speed == 0 {
		speed = 1
	}
	samples := int(int64(rate) * int64(chunk) / int64(time.Second))
	n := int((time.Duration(len(text))*perChar + chunk - 1) / chunk)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	phase := 0.0
	for i := 0; i < n; i++ {
		buf := make([]byte, 2*samples)
		for j := 0; j < samples; j++ {
			v := int16(3000 * math.Sin(phase))
			phase += 2 * math.Pi * 220 / float64(rate)
			binary.LittleEndian.PutUint16(buf[2*j:], uint16(v))
		}
		if err := emit(buf); err != nil {
			return err
		}
		if speed > 0 {
			d := time.Duration(float64(chunk) / speed)
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-timer.C:
			}
		} else if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// TruncatingCompactor is the default Compactor: it summarises by
// truncation, replacing all but the last Keep items with one summary item
// of at most MaxSummary bytes.
type TruncatingCompactor struct {
	// Keep is how many recent items stay verbatim. Default 4.
	Keep int
	// MaxSummary bounds the summary item's length in bytes. Default 200.
	MaxSummary int
}

// Compact returns the compacted history.
func (c TruncatingCompactor) Compact(ctx context.Context, history []string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	keep, max := c.Keep, c.MaxSummary
	if keep <= 0 {
		keep = 4
	}
	if max <= 0 {
		max = 200
	}
	if len(history) <= keep {
		return append([]string(nil), history...), nil
	}
	old := history[:len(history)-keep]
	summary := "summary: " + strings.Join(old, " | ")
	if len(summary) > max {
		summary = summary[:max]
	}
	return append([]string{summary}, history[len(history)-keep:]...), nil
}
