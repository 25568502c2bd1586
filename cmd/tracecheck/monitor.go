package main

import (
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
	"github.com/tracecheck/tracecheck/monitor"
)

// The monitor checks the bundled specs' events published to NATS
// JetStream: the publisher's journals (run --trace-nats) and the session
// coordinators' traces (session-demo --nats). Package monitor is the
// product; this registers the bundled specs with it.
func init() {
	register(monitor.Command(monitorSpecs()...))
}

// monitorSpecs are the specs the bundled monitor checks, under the names
// the trace headers and `check --model` use.
func monitorSpecs() []monitor.Spec {
	p, s := program.Spec(), session.Spec(session.Options{})
	return []monitor.Spec{monitor.Of(p.Name, p), monitor.Of(s.Name, s)}
}
