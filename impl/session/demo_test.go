package session_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/trace"
)

func TestRunDemo(t *testing.T) {
	var buf bytes.Buffer
	rep, err := session.RunDemo(context.Background(), session.DemoConfig{Sessions: 2, Turns: 2, Speed: 500, Mix: session.MixPlain, Sink: trace.NewWriter(&buf)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Turns != 4 || rep.Responses != 4 || rep.Compactions != 2 || rep.AudioBytes == 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, want := range []string{`"VadStart"`, `"VadStop"`, `"RespStart"`, `"RespFinish"`, `"CompTrigger"`, `"Teardown"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("trace lacks %s", want)
		}
	}
	for _, dc := range []session.DemoConfig{{Turns: -1}, {Speed: -1}, {Mix: 7}} {
		if _, err := session.RunDemo(context.Background(), dc); !errors.Is(err, session.ErrConfig) {
			t.Errorf("bad config %+v: %v", dc, err)
		}
	}
}

func TestEnergyDetector(t *testing.T) {
	d := &session.EnergyDetector{}
	tests := []struct {
		frame []int16
		want  bool
	}{
		{session.SyntheticFrame(true, 1), true},
		{session.SyntheticFrame(false, 1), false},
		{nil, false},
	}
	for i, tt := range tests {
		if got := d.Speech(tt.frame); got != tt.want {
			t.Errorf("case %d: Speech = %v, want %v", i, got, tt.want)
		}
	}
}

func TestTruncatingCompactor(t *testing.T) {
	h := []string{"one", "two", "three", "four", "five", "six"}
	got, err := session.TruncatingCompactor{Keep: 2, MaxSummary: 12}.Compact(context.Background(), h)
	if err != nil || len(got) != 3 || got[0] != "summary: one" || got[1] != "five" || got[2] != "six" {
		t.Fatalf("Compact = %q, %v", got, err)
	}
}
