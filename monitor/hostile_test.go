package monitor

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestHostileMessages publishes what an emitter should not: bad JSON with
// and without an instance, binary bytes, a message over the size bound,
// several lines in one message, header lines, an event on the wrong
// partition, on a subject that is no partition, duplicates, a late message
// and an emitter's drop mark. Each is counted or charged to its instance,
// none stops the monitor, and the valid sessions published after them on
// the same partitions are judged as usual.
func TestHostileMessages(t *testing.T) {
	defer func(d time.Duration) { badSubjectScan = d }(badSubjectScan)
	badSubjectScan = 100 * time.Millisecond
	srv := startServer(t, "")
	const parts = 4
	m, stop := runMonitor(t, Config{URL: srv.URL(), Partitions: parts, Idle: time.Second, Lease: time.Second, MaxLine: 4096})
	waitPartitions(t, srv.URL(), parts)
	js := jetStream(t, srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pub := func(subject string, data []byte, h nats.Header) {
		t.Helper()
		if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data, Header: h}); err != nil {
			t.Fatalf("publishing on %s: %v", subject, err)
		}
	}
	on := func(instance string) string { return EventSubject("session", Partition(instance, parts)) }
	ev := func(instance string, seq int, action, state string) []byte {
		return fmt.Appendf(nil, `{"v":1,"instance":%q,"seq":%d,"action":%q,"state":{%s}}`, instance, seq, action, state)
	}
	initS := `"conn":0,"vad":0,"resp":0,"compaction":0`
	down := `"conn":1,"vad":2,"resp":2,"compaction":2`

	want := map[string]string{} // instance: verdict and cause
	// Malformed without an instance: counted, charged to nobody.
	for p := range parts {
		pub(EventSubject("session", p), []byte(`{"v":1,"seq":`), nil)
		pub(EventSubject("session", p), []byte("\x00\x01\x02 not json"), nil)
		pub(EventSubject("session", p), []byte(`{"tracecheck":1,"spec":"program"}`), nil)
	}
	// Malformed with an instance: its input error.
	pub(on("cut"), ev("cut", 0, "Init", initS), nil)
	pub(on("cut"), []byte(`{"v":1,"instance":"cut","seq":1,"action":"VadStart","state":{"vad":`), nil)
	want["cut"] = "input-error/input"
	pub(on("nul"), []byte("{\"v\":1,\"instance\":\"nul\",\"seq\":0,\"action\":\"Init\x00\"}"), nil)
	want["nul"] = "input-error/input"
	big := ev("big", 0, "Init", initS)
	big = append(big[:len(big)-1], []byte(`,"detail":{"pad":"`+strings.Repeat("x", 5000)+`"}}`)...)
	pub(on("big"), big, nil)
	want["big"] = "input-error/input"
	pub(on("two"), append(append(ev("two", 0, "Init", initS), '\n'), ev("two", 1, "VadStart", `"vad":1`)...), nil)
	want["two"] = "input-error/input"
	// On another partition than its own.
	pub(EventSubject("session", (Partition("astray", parts)+1)%parts), ev("astray", 0, "Init", initS), nil)
	want["astray"] = "input-error/misrouted"
	// On subjects that are no partition: never read, counted by the scan.
	pub("tracecheck.session.99", ev("nowhere", 0, "Init", initS), nil)
	pub("tracecheck.session.x", ev("nowhere", 0, "Init", initS), nil)
	// A duplicate (a retried publication) is dropped; the instance is valid.
	h := func(n int, extra ...string) nats.Header {
		hd := nats.Header{HeaderSink: {"test-sink"}, HeaderN: {fmt.Sprint(n)}}
		for i := 0; i+1 < len(extra); i += 2 {
			hd.Set(extra[i], extra[i+1])
		}
		return hd
	}
	pub(on("dup"), ev("dup", 0, "Init", initS), h(1))
	pub(on("dup"), ev("dup", 0, "Init", initS), h(1))
	pub(on("dup"), ev("dup", 1, "Teardown", down), h(2))
	want["dup"] = "valid/idle"
	// A late message (overtaken by its successor): the order is lost.
	hl := func(n int) nats.Header { return nats.Header{HeaderSink: {"late-sink"}, HeaderN: {fmt.Sprint(n)}} }
	pub(on("late"), ev("late", 0, "Init", initS), hl(1))
	pub(on("late"), ev("late", 2, "Teardown", down), hl(3))
	pub(on("late"), ev("late", 1, "VadStart", `"vad":1`), hl(2))
	want["late"] = "incomplete/lost"
	// An emitter that dropped events says so: incomplete.
	pub(on("holes"), ev("holes", 0, "Init", initS), nil)
	pub(on("holes"), ev("holes", 3, "Teardown", down), nats.Header{HeaderDropped: {"2"}})
	want["holes"] = "incomplete/lost"
	// An event after the instance's verdict: counted, not judged again.
	pub(on("after"), ev("after", 0, "VadStop", `"vad":0`), nil)
	pub(on("after"), ev("after", 1, "VadStart", `"vad":1`), nil)
	want["after"] = "violation/violation"
	// A subject of a spec no monitor registered: no stream takes it.
	if _, err := js.Publish(ctx, "tracecheck.nosuchspec.0", ev("x", 0, "Init", initS)); err == nil {
		t.Error("a publication on an unregistered spec's subject was accepted")
	}
	// Then, on every partition, ordinary sessions: judged as usual.
	sessions := genSessions(7, 200, "after-")
	publish(t, srv.URL(), parts, sessions, 2)
	waitVerdicts(t, srv.URL(), len(sessions)+len(want), 30*time.Second)
	time.Sleep(300 * time.Millisecond) // one more scan of the subjects
	stop()
	got := verdicts(t, srv.URL())
	for _, name := range []string{"big", "two", "astray", "holes"} {
		v := got[name]
		var b bytes.Buffer
		_ = v.WriteText(&b)
		t.Logf("%s", b.String())
	}
	for name, w := range want {
		v, ok := got[name]
		if !ok {
			t.Errorf("%s: no verdict, want %s", name, w)
			continue
		}
		if v.Verdict+"/"+v.Cause != w {
			t.Errorf("%s: %s/%s (%s), want %s", name, v.Verdict, v.Cause, v.Reason, w)
		}
		delete(got, name)
	}
	compare(t, sessions, got, parts)
	st := m.Stats()
	// 3 a partition, the duplicate, the bad subjects' 2, after's second
	// event, big's and two's nothing (charged), astray's nothing.
	if st.Rejected < 3*parts+1+2+1 {
		t.Errorf("rejected %d messages, want at least %d", st.Rejected, 3*parts+4)
	}
	if st.EmitterDropped != 2 {
		t.Errorf("emitters dropped %d, want 2", st.EmitterDropped)
	}
	t.Logf("monitor: %+v", st)
}
