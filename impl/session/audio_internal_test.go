package session

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestVADCoreBargeIn: the VAD's pure core counts a turn's speech in audio
// time and says BargeIn once per turn, on the frame that reaches the
// threshold; silent frames inside the turn do not count; a new turn
// counts afresh; a threshold <= 0 never fires.
func TestVADCoreBargeIn(t *testing.T) {
	const n = 320 // samples: 20 ms at 16 kHz
	tests := []struct {
		name      string
		minSpeech time.Duration
		frames    string // s speech, . silence (quiet 2: two in a row end the turn)
		want      string // b where BargeIn, - elsewhere
	}{
		{"at the threshold", 60 * time.Millisecond, "sssss", "--b--"},
		{"a silent frame does not count", 60 * time.Millisecond, "s.sss", "---b-"},
		{"once per turn, afresh in the next", 40 * time.Millisecond, "sss..sss", "-b----b-"},
		{"a short turn never reaches it", 60 * time.Millisecond, "ss..ss..", "--------"},
		{"within the first frame", time.Millisecond, "s..s", "b..b"},
		{"off", -1, "ssssss", "------"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := vadCore{quiet: 2, minSpeech: tt.minSpeech, rate: 16000}
			got := ""
			for _, f := range tt.frames {
				var o out[TurnEvent]
				c, o = c.step(frameIn{pcm: make([]int16, n), speech: f == 's'})
				switch {
				case o.reply.BargeIn:
					got += "b"
				case f == '.':
					got += "."
				default:
					got += "-"
				}
			}
			want := ""
			for i, w := range tt.want {
				if w == '-' && tt.frames[i] == '.' {
					w = '.'
				}
				want += string(w)
			}
			if got != want {
				t.Fatalf("frames %s: barge-ins %s, want %s", tt.frames, got, want)
			}
		})
	}
}

// TestAudioOutCut: cutting a response's stream discards what is buffered,
// closes the channel, makes every later send fail, releases a send blocked
// on a full stream, and is idempotent; the pipeline's own close keeps what
// is buffered and is idempotent too, and a cut after it still discards.
func TestAudioOutCut(t *testing.T) {
	ctx := context.Background()
	fill := func(a *audioOut, n int) {
		for i := 0; i < n; i++ {
			if err := a.send(ctx, []byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("cut discards and closes, once", func(t *testing.T) {
		a := newAudioOut(4, time.Now)
		fill(&a, 3)
		if got := a.cut(); got != 3 {
			t.Fatalf("first cut discarded %d chunks, want 3", got)
		}
		if got := a.cut(); got != 0 {
			t.Fatalf("second cut discarded %d chunks, want 0", got)
		}
		if chunk, ok := <-a.ch; ok {
			t.Fatalf("read %v after the cut", chunk)
		}
		if err := a.send(ctx, []byte{9}); !errors.Is(err, errCut) {
			t.Fatalf("send after the cut: %v, want errCut", err)
		}
		a.close() // the pipeline returning afterwards: no double close
	})
	t.Run("cut releases a send blocked on a full stream", func(t *testing.T) {
		a := newAudioOut(1, time.Now)
		fill(&a, 1)
		var wg sync.WaitGroup
		var err error
		wg.Add(1)
		go func() {
			defer wg.Done()
			err = a.send(ctx, []byte{1}) // blocks (full) or finds the stream cut
		}()
		a.cut()
		wg.Wait()
		if !errors.Is(err, errCut) {
			t.Fatalf("blocked send: %v, want errCut", err)
		}
		if _, ok := <-a.ch; ok {
			t.Fatal("a chunk after the cut")
		}
	})
	t.Run("close keeps the tail; a later cut discards it", func(t *testing.T) {
		a := newAudioOut(4, time.Now)
		fill(&a, 2)
		a.close()
		a.close()
		if c := <-a.ch; len(c) != 1 || c[0] != 0 {
			t.Fatalf("first chunk after close %v, want [0]", c)
		}
		if got := a.cut(); got != 1 {
			t.Fatalf("cut after close discarded %d, want 1", got)
		}
		if _, ok := <-a.ch; ok {
			t.Fatal("a chunk after the cut")
		}
	})
	t.Run("heard text follows the acknowledgements", func(t *testing.T) {
		a := newAudioOut(4, time.Now)
		for _, w := range []string{"one ", "two ", "three "} {
			if err := a.send(ctx, []byte(w)); err != nil {
				t.Fatal(err)
			}
			a.spoken(w)
		}
		for _, tc := range []struct {
			played int64
			want   string
		}{{0, ""}, {3, ""}, {4, "one"}, {7, "one"}, {8, "one two"}, {100, "one two three"}} {
			a.played.Store(tc.played)
			if got := a.text(true); got != tc.want {
				t.Fatalf("played %d: heard %q, want %q", tc.played, got, tc.want)
			}
		}
		if got := a.text(false); got != "one two three" {
			t.Fatalf("text %q", got)
		}
	})
}
