package monitor

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the monitor's Prometheus metrics (docs/monitor.md lists
// them), and the totals Stats returns.
type metrics struct {
	events     *prometheus.CounterVec // spec
	live       *prometheus.GaugeVec   // spec
	verdicts   *prometheus.CounterVec // spec, verdict
	lag        *prometheus.GaugeVec   // spec, partition
	dropped    *prometheus.CounterVec // spec: events the emitters dropped (HeaderDropped)
	rejected   *prometheus.CounterVec // spec, reason
	duplicates *prometheus.CounterVec // spec: verdicts an instance had already
	held       prometheus.Gauge
	takeovers  prometheus.Counter
	members    prometheus.Gauge

	nEvents, nVerdicts, nDuplicates, nRejected, nLive, nTakeovers, nDropped atomic.Int64
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tracecheck_monitor_events_total",
			Help: "Events taken from the partitions (rate() gives events/s)."}, []string{"spec"}),
		live: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tracecheck_monitor_live_instances",
			Help: "Instances with events and no verdict yet, in the partitions this monitor holds."}, []string{"spec"}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tracecheck_monitor_verdicts_total",
			Help: "Verdicts this monitor stored, by kind (valid, incomplete, violation, input-error)."}, []string{"spec", "verdict"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tracecheck_monitor_consumer_lag",
			Help: "Messages of a held partition not yet delivered to this monitor (the consumer's pending count)."}, []string{"spec", "partition"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tracecheck_monitor_dropped_events_total",
			Help: "Events the emitters say they dropped (buffer full: NATS slow or down); their instances are judged incomplete."}, []string{"spec"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tracecheck_monitor_rejected_messages_total",
			Help: "Messages not checked: malformed without an instance, on a bad subject, duplicates, headers, after the instance's verdict."}, []string{"spec", "reason"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tracecheck_monitor_duplicate_verdicts_total",
			Help: "Verdicts not stored because the instance had one already (replays after a takeover)."}, []string{"spec"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tracecheck_monitor_partitions_held",
			Help: "Partitions this monitor holds the lease of."}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{Name: "tracecheck_monitor_partitions_acquired_total",
			Help: "Partition leases this monitor acquired (at start, on rebalancing, on another's death)."}),
		members: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tracecheck_monitor_members",
			Help: "Monitors sharing the partitions, as this one last counted them."}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.events, m.live, m.verdicts, m.lag, m.dropped, m.rejected, m.duplicates, m.held, m.takeovers, m.members} {
			reg.MustRegister(c)
		}
	}
	return m
}

func (m *metrics) event(spec string) {
	m.events.WithLabelValues(spec).Inc()
	m.nEvents.Add(1)
}

func (m *metrics) reject(spec, reason string) {
	m.rejected.WithLabelValues(spec, reason).Inc()
	m.nRejected.Add(1)
}

func (m *metrics) addLive(spec string, d int) {
	m.live.WithLabelValues(spec).Add(float64(d))
	m.nLive.Add(int64(d))
}

func (m *metrics) verdict(spec, kind string) {
	m.verdicts.WithLabelValues(spec, kind).Inc()
	m.nVerdicts.Add(1)
}

func (m *metrics) duplicate(spec string) {
	m.duplicates.WithLabelValues(spec).Inc()
	m.nDuplicates.Add(1)
}

func (m *metrics) emitterDropped(spec string, n int) {
	m.dropped.WithLabelValues(spec).Add(float64(n))
	m.nDropped.Add(int64(n))
}

func (m *metrics) setLag(spec string, p int, lag uint64) {
	m.lag.WithLabelValues(spec, strconv.Itoa(p)).Set(float64(lag))
}

func (m *metrics) forgetLag(spec string, p int) {
	m.lag.DeleteLabelValues(spec, strconv.Itoa(p))
}
