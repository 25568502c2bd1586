package check_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// FuzzCheck feeds arbitrary bytes to the engine under both bundled specs
// and a spec with parameterised actions (argSpec), starting from the
// traces/ corpus and a trace with arguments: it must never panic, every
// error must be an input error (or nothing), one line long and
// positioned, and every instance must get a real verdict.
func FuzzCheck(f *testing.F) {
	paths, _ := filepath.Glob("../traces/*/*.ndjson")
	more, _ := filepath.Glob("../traces/*/*/*.ndjson")
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(progInit + "\n" + `{"v":1,"instance":"r","seq":1,"action":"ExecutePython","state":{"phase":{"#set":[1]}}}` + "\n"))
	odd := `{"v":1,"instance":"a\u2028\nb","seq":1,"action":"Init","state":{"x\ny":1}}` + "\n"
	f.Add([]byte(odd + odd))
	f.Add([]byte(pInit + "\n" + aev(1, "Bump", `2,"a"`, `"x":2`) + "\n" + aev(2, "Poke", `{"#set":[1]}`, ``) + "\n" +
		`{"v":1,"instance":"c","seq":3,"action":"Bump","part":"begin","args":[1,"b"],"state":{}}` + "\n" + aev(4, "Finish", `"x"`, ``) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, run := range []func() (*check.Report, error){
			func() (*check.Report, error) {
				return check.Check(context.Background(), program.Spec(), bytes.NewReader(data), "f", check.Options{MaxLine: 1 << 12})
			},
			func() (*check.Report, error) {
				return check.Check(context.Background(), session.Spec(session.Options{}), bytes.NewReader(data), "f", check.Options{MaxLine: 1 << 12})
			},
			func() (*check.Report, error) {
				return check.Check(context.Background(), argSpec(), bytes.NewReader(data), "f", check.Options{MaxLine: 1 << 12})
			},
		} {
			rep, err := run()
			if err != nil {
				if !errors.Is(err, check.ErrInput) {
					t.Fatalf("non-input error: %v", err)
				}
				if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "f:") {
					t.Fatalf("bad error text %q", msg)
				}
			}
			if rep == nil {
				t.Fatal("nil report")
			}
			for _, in := range rep.Instances {
				if in.Verdict < check.Valid || in.Verdict > check.Violation {
					t.Fatalf("instance %s without a verdict", in.Instance)
				}
				if in.Verdict == check.Violation && in.Divergence == nil {
					t.Fatalf("violation without divergence")
				}
			}
			var b bytes.Buffer
			if err := rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
		}
	})
}
