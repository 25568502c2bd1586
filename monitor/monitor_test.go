package monitor

import (
	"sync"
	"testing"
	"time"
)

// TestMonitorMatchesOffline publishes generated sessions (valid, open,
// violating, malformed) through a Sink to an embedded JetStream, and checks
// that one monitor gives every instance exactly one verdict, in the bucket
// and on the verdict subject, equal to the offline check of its events.
func TestMonitorMatchesOffline(t *testing.T) {
	srv := startServer(t, "")
	var mu sync.Mutex
	seen := map[string]int{}
	m, stop := runMonitor(t, Config{URL: srv.URL(), Partitions: 4, Idle: time.Second, Lease: time.Second,
		OnVerdict: func(v Verdict) { mu.Lock(); seen[v.Instance]++; mu.Unlock() }})
	sessions := genSessions(1, 1500, "s")
	st := publish(t, srv.URL(), 4, sessions, 4)
	if st.Dropped != 0 || st.Published != st.Emitted {
		t.Fatalf("sink: %+v", st)
	}
	waitVerdicts(t, srv.URL(), len(sessions), time.Minute)
	stop()
	kinds := compare(t, sessions, verdicts(t, srv.URL()), 4)
	t.Logf("verdicts: %v; monitor: %+v", kinds, m.Stats())
	for _, k := range []string{VerdictValid, VerdictIncomplete, VerdictViolation, VerdictInputError} {
		if kinds[k] == 0 {
			t.Errorf("no %s verdict among the generated sessions", k)
		}
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s: OnVerdict called %d times", name, n)
		}
	}
	msgs := verdictMessages(t, srv.URL())
	for _, g := range sessions {
		if msgs[g.name] != 1 {
			t.Errorf("%s: %d messages on the verdict subject", g.name, msgs[g.name])
		}
	}
}
