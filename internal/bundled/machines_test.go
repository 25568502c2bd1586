package bundled_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
)

// The machine specs are registered M1 to M5, each with the files on disk
// whose hash it gives, and its mutants.
func TestMachinesRegistered(t *testing.T) {
	var names []string
	for _, s := range bundled.Machines() {
		names = append(names, s.Name)
		h := sha256.New()
		for _, f := range s.Files {
			b, err := os.ReadFile(filepath.Join("..", "..", f))
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != s.SHA256 {
			t.Errorf("%s: SHA256 %s, the files on disk hash to %s", s.Name, s.SHA256, got)
		}
		if len(s.Mutants) == 0 {
			t.Errorf("%s: no mutants", s.Name)
		}
		for _, m := range s.Mutants {
			mod := strings.TrimSuffix(filepath.Base(s.Files[0]), ".tla")
			file := filepath.Join("..", "..", "spec", "machines", "mutants", mod+"_"+strings.ReplaceAll(m.Name, "-", "_")+".tla")
			b, err := os.ReadFile(file)
			if err != nil || !bytes.Contains(b, []byte("MUTANT "+m.Name+":")) {
				t.Errorf("%s mutant %s: %s does not name it (%v)", s.Name, m.Name, file, err)
			}
		}
		if !slices.ContainsFunc(bundled.Specs(), func(b cli.Spec) bool { return b.Name == s.Name && b.SHA256 == s.SHA256 }) {
			t.Errorf("%s is not among bundled.Specs()", s.Name)
		}
	}
	if want := []string{"connection", "turn", "response", "compaction", "tts"}; !slices.Equal(names, want) {
		t.Errorf("machine specs %v, want %v", names, want)
	}
}

// Issue 15's stale audio, as a trace of one response's TTS pipeline: a
// chunk buffered, the response cancelled, the chunk still read. The TTS
// spec refuses the cancel that leaves the chunk buffered; its mutant
// cancel-keeps-audio takes it, and then refuses the read by its invariant.
func TestStaleAudioTrace(t *testing.T) {
	const stale = `{"v":1,"instance":"r-1","seq":0,"action":"Init","state":{"resp":"live","worker":"running","stream":"open","buf":0,"sent":0,"dones":0,"joins":0,"late":false}}
{"v":1,"instance":"r-1","seq":1,"action":"Send","state":{"buf":1,"sent":1}}
{"v":1,"instance":"r-1","seq":2,"action":"Cancel","state":{"resp":"cancelled","stream":"cut","buf":1,"dones":1}}
{"v":1,"instance":"r-1","seq":3,"action":"Play","state":{"buf":0,"late":true}}
`
	const cut = `{"v":1,"instance":"r-1","seq":0,"action":"Init","state":{"resp":"live","worker":"running","stream":"open","buf":0,"sent":0,"dones":0,"joins":0,"late":false}}
{"v":1,"instance":"r-1","seq":1,"action":"Send","state":{"buf":1,"sent":1}}
{"v":1,"instance":"r-1","seq":2,"action":"Cancel","state":{"resp":"cancelled","stream":"cut","buf":0,"dones":1}}
{"v":1,"instance":"r-1","seq":3,"action":"Return","state":{"worker":"returned"}}
{"v":1,"instance":"r-1","seq":4,"action":"Reap","state":{"worker":"joined","joins":1}}
`
	for _, c := range []struct {
		name, model, trace string
		verdict            check.Verdict
		action, reason     string
	}{
		{"stale audio", "tts", stale, check.Violation, "Cancel", "no Cancel successor"},
		{"stale audio, mutant", "tts-mutant-cancel-keeps-audio", stale, check.Violation, "Play", "NoAudioAfterEnd"},
		{"audio cut", "tts", cut, check.Valid, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := cli.CheckWith(context.Background(), bundled.Specs(), c.model, strings.NewReader(c.trace), "tts.ndjson", check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Instances) != 1 {
				t.Fatalf("%d instances", len(rep.Instances))
			}
			in := rep.Instances[0]
			if in.Verdict != c.verdict {
				t.Fatalf("verdict %v (%s), want %v", in.Verdict, in.Reason, c.verdict)
			}
			if c.verdict == check.Violation {
				if in.Divergence == nil || in.Divergence.Action != c.action || !strings.Contains(in.Reason, c.reason) {
					t.Errorf("divergence %+v, reason %q; want at %s, saying %q", in.Divergence, in.Reason, c.action, c.reason)
				}
			}
		})
	}
}
