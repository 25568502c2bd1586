package monitor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tracecheck/tracecheck/trace"
)

// SinkConfig configures a Sink.
type SinkConfig struct {
	// URL is the NATS server (or cluster: comma-separated URLs). The Sink
	// connects at once and, if the server is not up yet, keeps trying
	// (buffering meanwhile, within MaxPending).
	URL string
	// Conn, if set, is used instead of URL; Close leaves it open.
	Conn *nats.Conn
	// Spec names the spec the events are written against (CheckSpecName):
	// they go to tracecheck.<Spec>.<partition>.
	Spec string
	// Partitions is the number of partitions; 0 means the number the
	// monitors recorded (bucket tracecheck-state), or DefaultPartitions
	// when none is recorded yet.
	Partitions int
	// MaxPending bounds the events buffered, not yet acknowledged by
	// JetStream (default 65,536); MaxPendingBytes bounds their bytes
	// (default 64 MiB).
	MaxPending      int
	MaxPendingBytes int64
	// Block is how long Emit waits for room when the buffer is full:
	// 0 drops the event at once (the default: a realtime emitter is never
	// slowed by NATS), a negative value waits as long as it takes
	// (back-pressure: nothing is dropped, the emitter slows down).
	Block time.Duration
	// Window is how many publications are in flight per partition
	// (default 256).
	Window int
	// AckTimeout is how long a publication waits for JetStream's
	// acknowledgement before it is retried (default 5s).
	AckTimeout time.Duration
	// InstancePrefix is put before every event's instance, to keep the
	// instances of separate runs of a program apart in the verdict bucket
	// (instance names must be unique per spec).
	InstancePrefix string
	// Name names the connection (default "tracecheck sink <spec>").
	Name string
	// Logf, if set, is told what is dropped (at most every 10 seconds) and
	// about connection trouble.
	Logf func(format string, args ...any)
}

// SinkStats counts what a Sink did with the events given to it.
type SinkStats struct {
	// Emitted counts the events taken into the buffer.
	Emitted int64
	// Published counts those JetStream acknowledged.
	Published int64
	// Dropped counts the events refused because the buffer was full (or
	// the Sink closed); their instances are marked (HeaderDropped).
	Dropped int64
	// Unflushed counts the events still unacknowledged when Close gave up.
	Unflushed int64
	// Retries counts publications sent again after a failure or timeout.
	Retries int64
	// Reordered counts events stored after a later event of their instance
	// (a failed publication retried after its successor succeeded): the
	// monitor sees it and judges the instance incomplete.
	Reordered int64
	// Pending is the number of events in the buffer now.
	Pending int
}

// ErrDropped is returned by Sink.Emit for an event it dropped.
var ErrDropped = errors.New("monitor sink: event dropped (buffer full: NATS slow or down)")

// Sink is a trace.Sink that publishes events to JetStream, each instance's
// events in order on its partition's subject, with acknowledgements,
// retries and a bounded buffer: when NATS is slow or down it buffers up to
// MaxPending events, then drops (or, with Block, makes Emit wait), and
// counts and says what it dropped. It is safe for concurrent use.
type Sink struct {
	cfg   SinkConfig
	nc    *nats.Conn
	owned bool
	js    jetstream.JetStream
	id    string
	parts []*sinkPart

	mu        sync.Mutex
	room      *sync.Cond // signalled when the buffer shrinks
	pending   int
	bytes     int64
	closing   bool
	dropped   map[string]int // instances whose events were dropped, not yet marked
	unmarked  int64          // drops that could not be marked (too many instances)
	lastSaid  time.Time
	saidDrops int64
	lastFail  time.Time

	stop      chan struct{} // closed by Close to stop the publishers
	kick      chan struct{} // closed (and replaced) when the connection is back
	wg        sync.WaitGroup
	emitted   atomic.Int64
	published atomic.Int64
	drops     atomic.Int64
	unflushed atomic.Int64
	retries   atomic.Int64
	reordered atomic.Int64

	encPool sync.Pool
}

type sinkPart struct {
	subject string
	q       []*outMsg // the partition's buffer, oldest first; q[head:] is live
	head    int
	nextN   uint64
	wake    chan struct{}
}

type outMsg struct {
	data     []byte
	instance string
	n        uint64
	dropped  int // events of the instance dropped before this one
}

// maxDropMarks bounds how many instances a Sink remembers as having lost
// events until their next event carries the mark.
const maxDropMarks = 1 << 16

// NewSink connects to NATS and returns a Sink for cfg.Spec. It does not
// wait for the server: if it is not up, the Sink buffers and keeps trying.
func NewSink(cfg SinkConfig) (*Sink, error) {
	if err := CheckSpecName(cfg.Spec); err != nil {
		return nil, err
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 1 << 16
	}
	if cfg.MaxPendingBytes <= 0 {
		cfg.MaxPendingBytes = 64 << 20
	}
	if cfg.Window <= 0 {
		cfg.Window = 256
	}
	if cfg.AckTimeout <= 0 {
		cfg.AckTimeout = 5 * time.Second
	}
	if cfg.Name == "" {
		cfg.Name = "tracecheck sink " + cfg.Spec
	}
	if cfg.Partitions < 0 || cfg.Partitions > MaxPartitions {
		return nil, fmt.Errorf("monitor sink: %d partitions: must be 1..%d", cfg.Partitions, MaxPartitions)
	}
	s := &Sink{cfg: cfg, nc: cfg.Conn, dropped: map[string]int{}, stop: make(chan struct{}), kick: make(chan struct{})}
	s.room = sync.NewCond(&s.mu)
	var idb [8]byte
	_, _ = rand.Read(idb[:])
	s.id = hex.EncodeToString(idb[:])
	if s.nc == nil {
		opts := append(connectOptions(cfg.Name, cfg.Logf), nats.RetryOnFailedConnect(true), nats.ReconnectBufSize(-1),
			nats.ConnectHandler(func(*nats.Conn) { s.kickAll() }),
			nats.ReconnectHandler(func(nc *nats.Conn) {
				s.kickAll()
				if cfg.Logf != nil {
					cfg.Logf("nats: reconnected to %s", nc.ConnectedUrlRedacted())
				}
			}))
		nc, err := nats.Connect(cfg.URL, opts...)
		if err != nil {
			return nil, fmt.Errorf("monitor sink: %w", err)
		}
		s.nc, s.owned = nc, true
	}
	js, err := jetstream.New(s.nc, jetstream.WithPublishAsyncTimeout(cfg.AckTimeout),
		jetstream.WithPublishAsyncMaxPending(cfg.Window*MaxPartitions))
	if err != nil {
		s.closeConn()
		return nil, fmt.Errorf("monitor sink: %w", err)
	}
	s.js = js
	n := cfg.Partitions
	if n == 0 {
		n = s.recordedPartitions()
	}
	for p := range n {
		part := &sinkPart{subject: EventSubject(cfg.Spec, p), nextN: 1, wake: make(chan struct{}, 1)}
		s.parts = append(s.parts, part)
		s.wg.Add(1)
		go s.publisher(part)
	}
	return s, nil
}

// recordedPartitions reads the number of partitions the monitors
// recorded, if the server answers soon; else DefaultPartitions.
func (s *Sink) recordedPartitions() int {
	if !s.nc.IsConnected() {
		return DefaultPartitions
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	kv, err := s.js.KeyValue(ctx, StateBucket)
	if err != nil {
		return DefaultPartitions
	}
	n, err := readPartitions(ctx, kv)
	if err != nil {
		return DefaultPartitions
	}
	return n
}

// kickAll wakes the publishers waiting to retry: the connection is back.
func (s *Sink) kickAll() {
	s.mu.Lock()
	close(s.kick)
	s.kick = make(chan struct{})
	s.mu.Unlock()
}

// Partitions returns the number of partitions the Sink publishes to.
func (s *Sink) Partitions() int { return len(s.parts) }

type encoder struct {
	buf bytes.Buffer
	w   *trace.Writer
}

// Emit encodes e as one NDJSON line (as trace.Writer does) and queues it
// for its partition. It returns the encoding error of an event that is not
// JSON, and ErrDropped for an event dropped because the buffer is full.
func (s *Sink) Emit(e trace.Event) error {
	if s.cfg.InstancePrefix != "" {
		e.Instance = s.cfg.InstancePrefix + e.Instance
	}
	enc, _ := s.encPool.Get().(*encoder)
	if enc == nil {
		enc = &encoder{}
		enc.w = trace.NewWriter(&enc.buf)
	}
	enc.buf.Reset()
	err := enc.w.Emit(e)
	data := bytes.Clone(bytes.TrimSuffix(enc.buf.Bytes(), []byte("\n")))
	s.encPool.Put(enc)
	if err != nil {
		return err
	}
	return s.enqueue(e.Instance, data)
}

// EmitLine publishes line, an event already encoded as one NDJSON line
// (without its newline), as read from a journal: its bytes go as they are.
// instance must be the line's instance (it chooses the partition);
// InstancePrefix does not apply. The line is not checked here: the
// monitor judges it.
func (s *Sink) EmitLine(instance string, line []byte) error {
	return s.enqueue(instance, bytes.Clone(line))
}

func (s *Sink) enqueue(instance string, data []byte) error {
	m := &outMsg{data: data, instance: instance}
	part := s.parts[Partition(instance, len(s.parts))]

	s.mu.Lock()
	if !s.fits(len(data)) && s.cfg.Block != 0 && !s.closing {
		var deadline time.Time
		if s.cfg.Block > 0 {
			deadline = time.Now().Add(s.cfg.Block)
			t := time.AfterFunc(s.cfg.Block, func() { s.mu.Lock(); s.room.Broadcast(); s.mu.Unlock() })
			defer t.Stop()
		}
		for !s.fits(len(data)) && !s.closing && (deadline.IsZero() || time.Now().Before(deadline)) {
			s.room.Wait()
		}
	}
	if !s.fits(len(data)) || s.closing {
		s.drop(instance)
		s.mu.Unlock()
		return ErrDropped
	}
	if k, ok := s.dropped[instance]; ok {
		m.dropped = k
		delete(s.dropped, instance)
	}
	m.n = part.nextN
	part.nextN++
	part.q = append(part.q, m)
	s.pending++
	s.bytes += int64(len(data))
	s.mu.Unlock()
	s.emitted.Add(1)
	select {
	case part.wake <- struct{}{}:
	default:
	}
	return nil
}

func (s *Sink) fits(n int) bool {
	return s.pending == 0 || s.pending < s.cfg.MaxPending && s.bytes+int64(n) <= s.cfg.MaxPendingBytes
}

// drop counts a dropped event of instance and marks the instance, so that
// its next event tells the monitor; s.mu is held.
func (s *Sink) drop(instance string) {
	n := s.drops.Add(1)
	if _, ok := s.dropped[instance]; ok || len(s.dropped) < maxDropMarks {
		s.dropped[instance]++
	} else {
		s.unmarked++
	}
	if s.cfg.Logf != nil && time.Since(s.lastSaid) >= 10*time.Second {
		s.lastSaid = time.Now()
		s.cfg.Logf("monitor sink %s: dropped %d events so far (%d new): the buffer of %d events is full, NATS is slow or down", s.cfg.Spec, n, n-s.saidDrops, s.cfg.MaxPending)
		s.saidDrops = n
	}
}

// publisher publishes the partition's buffer in order, a window at a
// time, and retries from the first failure.
func (s *Sink) publisher(p *sinkPart) {
	defer s.wg.Done()
	backoff := 50 * time.Millisecond
	for {
		s.mu.Lock()
		batch := p.q[p.head:min(len(p.q), p.head+s.cfg.Window)]
		batch = append([]*outMsg(nil), batch...)
		s.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-p.wake:
				continue
			case <-s.stop:
				return
			}
		}
		ok := s.publishWindow(p, batch)
		failed := s.settle(p, batch, ok)
		if failed == 0 {
			backoff = 50 * time.Millisecond
			continue
		}
		s.retries.Add(int64(failed))
		s.mu.Lock()
		kick := s.kick
		s.mu.Unlock()
		select {
		case <-time.After(backoff):
			backoff = min(2*backoff, time.Second)
		case <-kick:
			backoff = 50 * time.Millisecond
		case <-s.stop:
			return
		}
	}
}

// publishWindow publishes batch asynchronously and waits for every
// acknowledgement; it stops sending at the first publication that cannot
// be sent, so that nothing after it overtakes it.
func (s *Sink) publishWindow(p *sinkPart, batch []*outMsg) []bool {
	futs := make([]jetstream.PubAckFuture, len(batch))
	for i, m := range batch {
		h := nats.Header{HeaderSink: []string{s.id}, HeaderN: []string{strconv.FormatUint(m.n, 10)}}
		if m.dropped > 0 {
			h.Set(HeaderDropped, strconv.Itoa(m.dropped))
		}
		f, err := s.js.PublishMsgAsync(&nats.Msg{Subject: p.subject, Data: m.data, Header: h},
			jetstream.WithRetryAttempts(0), jetstream.WithStallWait(s.cfg.AckTimeout))
		if err != nil {
			s.failed(p, err)
			break
		}
		futs[i] = f
	}
	ok := make([]bool, len(batch))
	for i, f := range futs {
		if f == nil {
			continue
		}
		select {
		case <-f.Ok():
			ok[i] = true
		case err := <-f.Err():
			s.failed(p, err)
		case <-s.stop:
			return ok
		}
	}
	return ok
}

// failed says why publications fail, every 10 seconds at most.
func (s *Sink) failed(p *sinkPart, err error) {
	if s.cfg.Logf == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.lastFail) < 10*time.Second {
		return
	}
	s.lastFail = time.Now()
	hint := ""
	if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
		hint = fmt.Sprintf(" (no JetStream stream takes %s: has a monitor checking spec %s set the deployment up?)", p.subject, s.cfg.Spec)
	}
	s.cfg.Logf("monitor sink %s: publishing on %s: %v%s; retrying, %d events buffered", s.cfg.Spec, p.subject, err, hint, s.pending)
}

// settle removes the acknowledged events of batch (the head of p's
// buffer) and keeps the failed ones at the head, in order. It returns how
// many failed.
func (s *Sink) settle(p *sinkPart, batch []*outMsg, ok []bool) int {
	var failed []*outMsg
	var freed int64
	lost := map[string]bool{} // instances with a failed event before a success
	for i, m := range batch {
		if ok[i] {
			freed += int64(len(m.data))
			if lost[m.instance] {
				s.reordered.Add(1)
			}
			continue
		}
		failed = append(failed, m)
		lost[m.instance] = true
	}
	s.published.Add(int64(len(batch) - len(failed)))
	s.mu.Lock()
	rest := p.q[p.head+len(batch):]
	if len(failed) == 0 {
		p.head += len(batch)
		if p.head > len(p.q)/2 {
			p.q = append(p.q[:0], rest...)
			p.head = 0
		}
	} else {
		p.q = append(failed, rest...)
		p.head = 0
	}
	s.pending -= len(batch) - len(failed)
	s.bytes -= freed
	s.room.Broadcast()
	s.mu.Unlock()
	return len(failed)
}

// Stats returns what the Sink did so far.
func (s *Sink) Stats() SinkStats {
	s.mu.Lock()
	pending := s.pending
	s.mu.Unlock()
	return SinkStats{Emitted: s.emitted.Load(), Published: s.published.Load(), Dropped: s.drops.Load(),
		Unflushed: s.unflushed.Load(), Retries: s.retries.Load(), Reordered: s.reordered.Load(), Pending: pending}
}

// Flush waits until every event emitted so far is acknowledged, or ctx
// ends.
func (s *Sink) Flush(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.mu.Lock(); s.room.Broadcast(); s.mu.Unlock() })
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.pending > 0 {
		if ctx.Err() != nil {
			return fmt.Errorf("monitor sink: %d events not acknowledged: %w", s.pending, ctx.Err())
		}
		s.room.Wait()
	}
	return nil
}

// Close stops taking events, waits (until ctx ends) for the buffered ones
// to be acknowledged, and closes the connection it opened. What it could
// not publish is counted in Stats().Unflushed, and said in the error.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	s.room.Broadcast()
	s.mu.Unlock()
	err := s.Flush(ctx)
	close(s.stop)
	s.wg.Wait()
	s.mu.Lock()
	s.unflushed.Store(int64(s.pending))
	s.mu.Unlock()
	s.closeConn()
	if d := s.drops.Load(); d > 0 {
		err = errors.Join(err, fmt.Errorf("monitor sink %s: %d events dropped (buffer full: NATS slow or down); their instances are judged incomplete", s.cfg.Spec, d))
	}
	return err
}

func (s *Sink) closeConn() {
	if s.owned {
		s.nc.Close()
	}
}
