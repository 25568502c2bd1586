package monitor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tracecheck/tracecheck/trace"
)

// Config configures a monitor.
type Config struct {
	// URL is the NATS server or cluster (comma-separated URLs).
	URL string
	// Specs are the specs whose events the monitor checks: it consumes
	// tracecheck.<spec>.* for each.
	Specs []Spec
	// Partitions is the number of partitions per spec. 0 means the number
	// the deployment recorded, or DefaultPartitions for a new one; another
	// number than the recorded one is an error.
	Partitions int
	// Idle is how long an instance may go without an event before its
	// stream is taken as ended: it is then judged (valid or incomplete, as
	// `tracecheck check` judges the end of a trace) and freed. Default
	// 30s. It must exceed the longest pause between two events of an
	// instance, or the instance is judged before its end.
	Idle time.Duration
	// Lease is how long a partition's lease lasts without renewal: the
	// time another monitor takes to take over the partitions of one that
	// died. Default 3s. It is the lease bucket's TTL, set by the first
	// monitor of a deployment.
	Lease time.Duration
	// Retain is how long the streams keep events and published verdicts
	// (default 24h). It must exceed the life of the longest instance.
	Retain time.Duration
	// Replicas is the streams' and buckets' replication on a cluster
	// (default 1).
	Replicas int
	// ID names this monitor among those sharing the partitions (default
	// host-pid-random).
	ID string
	// MaxLine bounds an event's size in bytes, as check's --max-line
	// (default trace.DefaultMaxLine); a larger message is an input error
	// of its instance.
	MaxLine int
	// Registerer, if set, receives the Prometheus metrics.
	Registerer prometheus.Registerer
	// OnVerdict, if set, is called with each verdict this monitor stored,
	// from the partition's goroutine. Across monitors, each instance's
	// verdict is stored, and so passed to one OnVerdict, once.
	OnVerdict func(Verdict)
	// Logf, if set, receives what the monitor has to say (leases taken and
	// lost, rejected messages, connection trouble).
	Logf func(format string, args ...any)
}

// Stats are a monitor's totals since it started.
type Stats struct {
	// Events counts the messages taken from the partitions.
	Events int64
	// Verdicts counts the verdicts this monitor stored.
	Verdicts int64
	// Duplicates counts the verdicts it did not store because the
	// instance had one already (replays after a takeover).
	Duplicates int64
	// Rejected counts the messages not checked (see the metric
	// tracecheck_monitor_rejected_messages_total for why).
	Rejected int64
	// EmitterDropped counts the events the emitters said they dropped.
	EmitterDropped int64
	// Live is the number of instances awaiting their verdict.
	Live int64
	// Held is the number of partitions held now; Acquired how many leases
	// it acquired in all.
	Held     int
	Acquired int64
}

// Monitor checks the events published on the partitions it holds.
type Monitor struct {
	cfg   Config
	specs []Spec
	m     *metrics
	logf  func(string, ...any)

	nc    *nats.Conn
	js    jetstream.JetStream
	b     *buckets
	parts int

	mu   sync.Mutex
	held map[string]*holding // by lease key

	badSeen map[string]uint64 // messages on bad subjects, counted already
}

// holding is a partition this monitor holds the lease of.
type holding struct {
	spec   Spec
	p      int
	key    string
	rev    uint64 // the lease's revision, renewed
	epoch  uint64 // the lease's first revision: names the consumer
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// New checks cfg and returns a monitor; Run starts it.
func New(cfg Config) (*Monitor, error) {
	if len(cfg.Specs) == 0 {
		return nil, errors.New("monitor: no spec to check")
	}
	seen := map[string]bool{}
	for _, s := range cfg.Specs {
		if err := s.validate(); err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("monitor: spec %s given twice", s.Name)
		}
		seen[s.Name] = true
	}
	switch {
	case cfg.Partitions < 0 || cfg.Partitions > MaxPartitions:
		return nil, fmt.Errorf("monitor: %d partitions: must be 1..%d", cfg.Partitions, MaxPartitions)
	case cfg.Idle < 0, cfg.Lease < 0, cfg.Retain < 0, cfg.Replicas < 0, cfg.MaxLine < 0:
		return nil, errors.New("monitor: negative duration, replicas or line bound")
	}
	if cfg.Idle == 0 {
		cfg.Idle = 30 * time.Second
	}
	if cfg.Lease == 0 {
		cfg.Lease = 3 * time.Second
	}
	if cfg.Lease < 300*time.Millisecond {
		return nil, fmt.Errorf("monitor: lease %v is too short (at least 300ms)", cfg.Lease)
	}
	if cfg.Retain == 0 {
		cfg.Retain = 24 * time.Hour
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.MaxLine == 0 {
		cfg.MaxLine = trace.DefaultMaxLine
	}
	if cfg.ID == "" {
		host, _ := os.Hostname()
		var b [3]byte
		_, _ = rand.Read(b[:])
		cfg.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	specs := slices.Clone(cfg.Specs)
	slices.SortFunc(specs, func(a, b Spec) int { return strings.Compare(a.Name, b.Name) })
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Monitor{cfg: cfg, specs: specs, m: newMetrics(cfg.Registerer), logf: logf, held: map[string]*holding{}, badSeen: map[string]uint64{}}, nil
}

// Run runs a monitor with cfg until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	m, err := New(cfg)
	if err != nil {
		return err
	}
	return m.Run(ctx)
}

// ID returns the monitor's ID.
func (m *Monitor) ID() string { return m.cfg.ID }

// Stats returns the monitor's totals.
func (m *Monitor) Stats() Stats {
	m.mu.Lock()
	held := len(m.held)
	m.mu.Unlock()
	return Stats{Events: m.m.nEvents.Load(), Verdicts: m.m.nVerdicts.Load(), Duplicates: m.m.nDuplicates.Load(),
		Rejected: m.m.nRejected.Load(), EmitterDropped: m.m.nDropped.Load(), Live: m.m.nLive.Load(),
		Held: held, Acquired: m.m.nTakeovers.Load()}
}

// Run connects, sets up the streams and buckets if they are missing, and
// checks the partitions it holds until ctx ends; then it hands them over
// (their floors written, their leases released) and returns nil. It
// returns an error if it cannot start (no server, a conflicting setup).
func (m *Monitor) Run(ctx context.Context) error {
	nc, err := nats.Connect(m.cfg.URL, connectOptions("tracecheck monitor "+m.cfg.ID, m.logf)...)
	if err != nil {
		return fmt.Errorf("monitor: connecting to %s: %w", m.cfg.URL, err)
	}
	defer nc.Close()
	m.nc = nc
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1<<16))
	if err != nil {
		return fmt.Errorf("monitor: %w", err)
	}
	m.js = js
	names := make([]string, len(m.specs))
	for i, s := range m.specs {
		names[i] = s.Name
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	m.b, m.parts, err = setup(sctx, js, setupOptions{specs: names, partitions: m.cfg.Partitions, lease: m.cfg.Lease,
		retain: m.cfg.Retain, replicas: m.cfg.Replicas}, m.logf)
	cancel()
	if err != nil {
		return err
	}
	m.manage(ctx)
	return nil
}

// Partitions returns the number of partitions per spec (once running).
func (m *Monitor) Partitions() int { return m.parts }

// member is what a monitor says of itself in the lease bucket.
type member struct {
	ID    string    `json:"id"`
	Specs []string  `json:"specs"`
	Since time.Time `json:"since"`
}

// manage keeps this monitor's share of the partitions: it renews its
// presence and its leases every third of the lease time, counts the
// monitors, and acquires free partitions up to its share or releases
// those above it.
func (m *Monitor) manage(ctx context.Context) {
	var names []string
	for _, s := range m.specs {
		names = append(names, s.Name)
	}
	me, _ := json.Marshal(member{ID: m.cfg.ID, Specs: names, Since: time.Now().UTC()})
	tick := m.b.leaseTTL / 3
	t := time.NewTicker(tick)
	defer t.Stop()
	lastScan := time.Now()
	for {
		rctx, cancel := context.WithTimeout(ctx, tick)
		if _, err := m.b.leases.Put(rctx, memberKey(m.cfg.ID), me); err != nil && ctx.Err() == nil {
			m.logf("renewing presence: %v", err)
		}
		m.renew(rctx)
		if n, err := m.countMembers(rctx); err == nil {
			m.m.members.Set(float64(n))
			m.balance(ctx, rctx, n)
		}
		if time.Since(lastScan) > badSubjectScan {
			lastScan = time.Now()
			m.scanSubjects(rctx)
		}
		cancel()
		select {
		case <-ctx.Done():
			m.shutdown()
			return
		case <-t.C:
		}
	}
}

// badSubjectScan is how often the holder of a spec's partition 0 looks for
// messages on subjects that are not partitions (a variable for the tests).
var badSubjectScan = 30 * time.Second

// renew renews every lease held, and stops the partitions whose lease was
// lost (another monitor holds it: this one was too slow to renew) or whose
// worker ended.
func (m *Monitor) renew(ctx context.Context) {
	m.mu.Lock()
	held := make([]*holding, 0, len(m.held))
	for _, h := range m.held {
		held = append(held, h)
	}
	m.mu.Unlock()
	for _, h := range held {
		select {
		case <-h.done:
			if h.err != nil {
				m.logf("partition %s/%d stopped: %v", h.spec.Name, h.p, h.err)
			}
			m.release(h)
			continue
		default:
		}
		rev, err := m.b.leases.Update(ctx, h.key, m.leaseValue(), h.rev)
		switch {
		case err == nil:
			h.rev = rev
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyNotFound) || isWrongLastSeq(err):
			m.logf("lease of %s/%d lost (not renewed in time); stopping it", h.spec.Name, h.p)
			m.stop(h)
			m.forget(h)
		default:
			// NATS unreachable: keep the partition; the next renewal
			// tells whether the lease survived.
		}
	}
}

func (m *Monitor) leaseValue() []byte { return []byte(m.cfg.ID) }

// countMembers counts the monitors present.
func (m *Monitor) countMembers(ctx context.Context) (int, error) {
	kl, err := m.b.leases.ListKeysFiltered(ctx, "member.>")
	if err != nil {
		return 0, err
	}
	defer kl.Stop()
	n := 0
	for range kl.Keys() {
		n++
	}
	return max(n, 1), nil
}

// balance acquires free partitions up to this monitor's share,
// ceil(partitions / members), or releases those above it.
func (m *Monitor) balance(ctx, rctx context.Context, members int) {
	total := len(m.specs) * m.parts
	share := (total + members - 1) / members
	m.mu.Lock()
	n := len(m.held)
	var extra []*holding
	if n > share {
		keys := make([]string, 0, n)
		for k := range m.held {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys[share:] {
			extra = append(extra, m.held[k])
		}
	}
	m.mu.Unlock()
	for _, h := range extra {
		m.logf("releasing %s/%d to rebalance (%d monitors, share %d)", h.spec.Name, h.p, members, share)
		m.release(h)
	}
	if n >= share || ctx.Err() != nil {
		return
	}
	taken := map[string]bool{}
	kl, err := m.b.leases.ListKeysFiltered(rctx, "lease.>")
	if err != nil {
		return
	}
	for k := range kl.Keys() {
		taken[k] = true
	}
	_ = kl.Stop()
	// Start at a place of our own, so that monitors starting together do
	// not all race for the same partitions.
	h := fnv.New32a()
	h.Write([]byte(m.cfg.ID))
	start := int(h.Sum32() % uint32(total))
	var got []string
	for i := 0; i < total && n < share; i++ {
		k := (start + i) % total
		spec, p := m.specs[k/m.parts], k%m.parts
		key := leaseKey(spec.Name, p)
		if taken[key] {
			continue
		}
		rev, err := m.b.leases.Create(rctx, key, m.leaseValue())
		if err != nil {
			continue // another monitor was quicker
		}
		m.acquire(ctx, spec, p, key, rev)
		got = append(got, fmt.Sprintf("%s/%d", spec.Name, p))
		n++
	}
	if len(got) > 0 {
		m.logf("acquired %d partition(s) (%d monitor(s), share %d): %s", len(got), members, share, strings.Join(got, " "))
	}
}

// acquire starts checking a partition whose lease was just created.
func (m *Monitor) acquire(ctx context.Context, spec Spec, p int, key string, rev uint64) {
	wctx, cancel := context.WithCancel(ctx)
	h := &holding{spec: spec, p: p, key: key, rev: rev, epoch: rev, cancel: cancel, done: make(chan struct{})}
	m.mu.Lock()
	m.held[key] = h
	m.m.held.Set(float64(len(m.held)))
	m.mu.Unlock()
	m.m.takeovers.Inc()
	m.m.nTakeovers.Add(1)
	w := newWorker(m, spec, p, rev)
	go func() {
		defer close(h.done)
		h.err = w.run(wctx)
	}()
}

// stop stops a partition's worker and waits for it: the worker writes its
// floor first.
func (m *Monitor) stop(h *holding) {
	h.cancel()
	<-h.done
}

func (m *Monitor) forget(h *holding) {
	m.mu.Lock()
	delete(m.held, h.key)
	m.m.held.Set(float64(len(m.held)))
	m.mu.Unlock()
	m.m.forgetLag(h.spec.Name, h.p)
}

// release stops a partition and gives its lease up, so that another
// monitor can take it at once.
func (m *Monitor) release(h *holding) {
	m.stop(h)
	m.forget(h)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Only our own lease: if it was lost meanwhile, the delete fails.
	if err := m.b.leases.Delete(ctx, h.key, jetstream.LastRevision(h.rev)); err != nil {
		m.logf("releasing %s/%d: %v", h.spec.Name, h.p, err)
	}
}

// shutdown hands every partition over and withdraws this monitor.
func (m *Monitor) shutdown() {
	m.mu.Lock()
	held := make([]*holding, 0, len(m.held))
	for _, h := range m.held {
		held = append(held, h)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, h := range held {
		wg.Add(1)
		go func() { defer wg.Done(); m.release(h) }()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = m.b.leases.Delete(ctx, memberKey(m.cfg.ID))
}

// scanSubjects counts and reports the messages on subjects of a
// spec that are not one of its partitions (tracecheck.session.x,
// tracecheck.session.99 with 16 partitions): no consumer reads them. The
// holder of a spec's partition 0 does it.
func (m *Monitor) scanSubjects(ctx context.Context) {
	s, err := m.js.Stream(ctx, EventStream)
	if err != nil {
		return
	}
	for _, spec := range m.specs {
		m.mu.Lock()
		_, mine := m.held[leaseKey(spec.Name, 0)]
		m.mu.Unlock()
		if !mine {
			continue
		}
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(SubjectPrefix+"."+spec.Name+".*"))
		if err != nil {
			continue
		}
		for subj, n := range info.State.Subjects {
			if _, _, ok := parseSubject(subj, m.parts); ok {
				continue
			}
			if n <= m.badSeen[subj] {
				continue
			}
			for range n - m.badSeen[subj] {
				m.m.reject(spec.Name, "bad_subject")
			}
			m.logf("%d message(s) on %s, which is not a partition of %s (0..%d): not checked (an emitter with another partition count?)", n, trace.Printable(subj), spec.Name, m.parts-1)
			m.badSeen[subj] = n
		}
	}
}

// isWrongLastSeq reports a failed compare-and-set.
func isWrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
