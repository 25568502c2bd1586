package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tracecheck/tracecheck/trace"
)

// worker checks one partition for as long as its monitor holds the lease.
// Everything it keeps is its own: one goroutine, no lock.
//
// It reads the partition from its floor: the lowest stream sequence that
// an instance without a stored verdict may still need. Every instance
// whose first event is below the floor has a verdict, so a successor that
// starts at the floor sees, in order, every event of every instance it may
// have to judge; an instance judged already is judged again and its
// verdict refused by the bucket (Create), which keeps one verdict per
// instance.
type worker struct {
	m       *Monitor
	spec    Spec
	p       int
	subject string
	epoch   uint64
	name    string // the durable consumer's

	insts      map[string]*inst
	head, tail *inst // by last event, oldest first
	live       int

	next     uint64    // the next stream sequence to take
	lastCseq uint64    // the consumer sequence of the last delivery
	clock    time.Time // the partition's clock: its last event's time, advanced while caught up
	lastTick time.Time
	caughtUp bool
	lastMsg  jetstream.Msg // the last message taken, to acknowledge
	unacked  int

	outbox    []*pendingVerdict
	published []jetstream.PubAckFuture
	floor     uint64 // as last written
	floorRev  uint64
	recorded  bool // the floor record names this lease's consumer
	lastCkpt  time.Time
	lastSweep time.Time

	sinks     map[string]*sinkSeen
	lastSinks time.Time

	lastSaid time.Time
	unsaid   int
}

// say logs what a hostile message did, once a second at most: a flood of
// them must not flood the log.
func (w *worker) say(format string, args ...any) {
	if time.Since(w.lastSaid) < time.Second {
		w.unsaid++
		return
	}
	if w.unsaid > 0 {
		format += fmt.Sprintf(" (and %d more such messages not logged)", w.unsaid)
	}
	w.lastSaid, w.unsaid = time.Now(), 0
	w.m.logf(format, args...)
}

// inst is one instance of the partition.
type inst struct {
	name        string
	j           judge // nil once judged
	first, last uint64
	at          time.Time // the partition's clock at its last event
	events      int
	judged      bool
	prev, next  *inst
}

// pendingVerdict is a verdict sent to the bucket, not yet acknowledged.
type pendingVerdict struct {
	v     *Verdict
	data  []byte
	key   string
	first uint64
	fut   jetstream.PubAckFuture
	err   error
}

// floorRecord is what the state bucket holds for a partition.
type floorRecord struct {
	Floor    uint64    `json:"floor"`
	Next     uint64    `json:"next"`
	Monitor  string    `json:"monitor"`
	Consumer string    `json:"consumer"`
	Time     time.Time `json:"time"`
}

func newWorker(m *Monitor, spec Spec, p int, epoch uint64) *worker {
	return &worker{m: m, spec: spec, p: p, subject: EventSubject(spec.Name, p), epoch: epoch,
		name: consumerName(spec.Name, p, epoch), insts: map[string]*inst{}, sinks: map[string]*sinkSeen{}}
}

// Housekeeping periods.
const (
	checkpointEvery = time.Second // verdicts resolved, acknowledgement, floor
	checkpointMsgs  = 5000        // or after this many messages
	sweepEvery      = 100 * time.Millisecond
	pollWait        = 100 * time.Millisecond
	maxAckPending   = 20000
)

var errGap = errors.New("a delivery was lost (consumer sequence gap)")

// run checks the partition until ctx ends, then writes its floor.
func (w *worker) run(ctx context.Context) error {
	defer func() {
		w.m.m.addLive(w.spec.Name, -w.live)
		w.live = 0
	}()
	if err := w.readFloor(ctx); err != nil {
		return err
	}
	cons, err := w.consumer(ctx, w.floor, true)
	if err != nil {
		return err
	}
	w.next = w.floor
	it, err := cons.Messages(jetstream.PullMaxMessages(1000))
	if err != nil {
		return fmt.Errorf("consuming %s: %w", w.subject, err)
	}
	defer func() { it.Stop() }()
	w.lastTick, w.lastCkpt, w.lastSweep = time.Now(), time.Now(), time.Now()
	for ctx.Err() == nil {
		msg, err := it.Next(jetstream.NextMaxWait(pollWait))
		now := time.Now()
		switch {
		case err == nil:
			if err := w.take(msg); errors.Is(err, errGap) {
				w.m.logf("%s: %v; reading again from stream sequence %d", w.subject, err, w.next)
				it.Stop()
				if cons, err = w.consumer(ctx, w.next, false); err != nil {
					return err
				}
				if it, err = cons.Messages(jetstream.PullMaxMessages(1000)); err != nil {
					return err
				}
				w.lastCseq = 0
			}
		case errors.Is(err, nats.ErrTimeout):
			if w.caughtUp && w.m.nc.IsConnected() {
				// Nothing pending and nothing came: the partition's
				// clock goes on with ours.
				w.clock = w.clock.Add(now.Sub(w.lastTick))
			}
		case errors.Is(err, jetstream.ErrMsgIteratorClosed), errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, jetstream.ErrConsumerNotFound):
			if ctx.Err() != nil {
				break
			}
			return fmt.Errorf("consuming %s: %w", w.subject, err)
		default:
			if ctx.Err() == nil {
				select {
				case <-ctx.Done():
				case <-time.After(pollWait):
				}
			}
		}
		w.lastTick = now
		if now.Sub(w.lastSweep) >= sweepEvery {
			w.lastSweep = now
			w.sweep()
		}
		if now.Sub(w.lastCkpt) >= checkpointEvery || w.unacked >= checkpointMsgs {
			w.lastCkpt = now
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			w.checkpoint(cctx)
			cancel()
		}
	}
	// Hand over: what is judged is stored, and the floor says where the
	// next holder starts.
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w.checkpoint(cctx)
	return nil
}

// readFloor reads where the partition's last holder got to, and removes
// that holder's consumer.
func (w *worker) readFloor(ctx context.Context) error {
	w.floor = 1
	e, err := w.m.b.state.Get(ctx, floorKey(w.spec.Name, w.p))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the floor of %s: %w", w.subject, err)
	}
	w.floorRev = e.Revision()
	var rec floorRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil || rec.Floor == 0 {
		return fmt.Errorf("bad floor record of %s: %q", w.subject, e.Value())
	}
	w.floor = rec.Floor
	if rec.Consumer != "" && rec.Consumer != w.name {
		_ = w.m.js.DeleteConsumer(ctx, EventStream, rec.Consumer)
	}
	return nil
}

// consumer creates this lease's durable consumer of the partition,
// delivering from stream sequence from on; fresh replaces one of the
// same name.
func (w *worker) consumer(ctx context.Context, from uint64, fresh bool) (jetstream.Consumer, error) {
	_ = w.m.js.DeleteConsumer(ctx, EventStream, w.name)
	cfg := jetstream.ConsumerConfig{
		Durable:           w.name,
		Description:       "tracecheck monitor " + w.m.cfg.ID,
		FilterSubject:     w.subject,
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       max(from, 1),
		AckPolicy:         jetstream.AckAllPolicy,
		AckWait:           30 * time.Second,
		MaxAckPending:     maxAckPending,
		MaxDeliver:        -1,
		InactiveThreshold: time.Minute,
	}
	cons, err := w.m.js.CreateConsumer(ctx, EventStream, cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the consumer of %s: %w", w.subject, err)
	}
	return cons, nil
}

// take takes one delivered message.
func (w *worker) take(msg jetstream.Msg) error {
	meta, err := msg.Metadata()
	if err != nil {
		w.m.m.reject(w.spec.Name, "no_metadata")
		return nil
	}
	if w.lastCseq != 0 && meta.Sequence.Consumer != w.lastCseq+1 {
		return errGap
	}
	w.lastCseq = meta.Sequence.Consumer
	w.lastMsg = msg
	w.unacked++
	w.caughtUp = meta.NumPending == 0
	w.m.m.setLag(w.spec.Name, w.p, meta.NumPending)
	seq := meta.Sequence.Stream
	if seq < w.next {
		return nil // delivered again: taken already
	}
	w.next = seq + 1
	w.advance(meta.Timestamp)
	w.handle(msg.Headers(), msg.Data(), seq)
	return nil
}

// clockJump bounds how far one message moves the partition's clock.
const clockJump = time.Second

// advance moves the partition's clock to a message's time. A jump is
// counted up to clockJump only: a gap in the stream's times may be an
// outage of NATS, or a stream read again after a takeover, and neither is
// a pause of the instances; idle instances are then judged a little later,
// by the clock that goes on while the partition is caught up.
func (w *worker) advance(ts time.Time) {
	switch {
	case w.clock.IsZero():
		w.clock = ts
	case ts.After(w.clock.Add(clockJump)):
		w.clock = w.clock.Add(clockJump)
	case ts.After(w.clock):
		w.clock = ts
	}
}

// handle checks one event message of the partition, taken at stream
// sequence seq.
func (w *worker) handle(h nats.Header, data []byte, seq uint64) {
	spec := w.spec.Name
	w.m.m.event(spec)
	late := false
	if id := h.Get(HeaderSink); id != "" {
		if n, err := strconv.ParseUint(h.Get(HeaderN), 10, 64); err == nil && n > 0 {
			switch w.sink(id).see(n) {
			case seenDuplicate:
				w.m.m.reject(spec, "duplicate")
				return
			case seenLate:
				late = true
			}
		}
	}
	body := bytes.TrimSuffix(bytes.TrimSuffix(data, []byte("\n")), []byte("\r"))
	var raw *trace.Raw
	var perr error
	switch {
	case len(body) > w.m.cfg.MaxLine:
		perr = fmt.Errorf("%w (over %d bytes)", trace.ErrLineTooLong, w.m.cfg.MaxLine)
	case bytes.IndexByte(body, '\n') >= 0:
		perr = fmt.Errorf("%w: a message holds one event, this one several lines", trace.ErrSyntax)
	default:
		if hd, ok, herr := trace.ParseHeader(body); ok || herr != nil {
			switch {
			case herr != nil:
				w.m.m.reject(spec, "bad_header")
			case hd.Spec != spec:
				w.m.m.reject(spec, "header_of_another_spec")
				w.say("%s: a header says its events are of spec %s: headers are ignored, the subject decides", w.subject, trace.Printable(hd.Spec))
			}
			return
		}
		raw, perr = trace.ParseEvent(body, trace.Pos{File: w.subject})
	}
	var name string
	if perr == nil {
		name = string(raw.Instance)
	} else {
		head := body[:min(len(body), 64<<10)]
		n, ok := trace.PeekInstance(head)
		if !ok || n == "" {
			w.m.m.reject(spec, "malformed")
			w.say("%s: stream sequence %d: %v (no instance to charge it to)", w.subject, seq, perr)
			return
		}
		name = n
	}
	if Partition(name, w.m.parts) != w.p {
		w.misrouted(name, seq)
		return
	}
	in := w.insts[name]
	if in == nil {
		in = &inst{name: name, first: seq}
		w.insts[name] = in
		w.live++
		w.m.m.addLive(spec, 1)
	} else if in.judged {
		w.m.m.reject(spec, "after_verdict")
		w.touch(in)
		return
	}
	in.events++
	in.last = seq
	w.touch(in)
	if late {
		w.judge(in, VerdictIncomplete, CauseLost, fmt.Sprintf("event %d (stream sequence %d) came after a later event of its emitter on %s: the instance's events are out of order", in.events, seq, w.subject), nil)
		return
	}
	if d := h.Get(HeaderDropped); d != "" {
		n, _ := strconv.Atoi(d)
		w.m.m.emitterDropped(spec, max(n, 1))
		w.judge(in, VerdictIncomplete, CauseLost, fmt.Sprintf("its emitter dropped %s event(s) before event %d (stream sequence %d): NATS was slow or down", d, in.events, seq), nil)
		return
	}
	pos := trace.Pos{File: w.subject, Line: in.events}
	if perr != nil {
		var pe *trace.PosError
		if errors.As(perr, &pe) {
			pe.Pos = pos
		} else {
			perr = &trace.PosError{Pos: pos, Err: perr}
		}
		w.judge(in, VerdictInputError, CauseInput, perr.Error(), nil)
		return
	}
	raw.Pos = pos
	if in.j == nil {
		j, err := w.spec.newJudge(w.subject)
		if err != nil { // validated at New: cannot happen
			w.judge(in, VerdictInputError, CauseInput, err.Error(), nil)
			return
		}
		in.j = j
	}
	if err := in.j.feed(raw); err != nil {
		w.judge(in, VerdictInputError, CauseInput, err.Error(), nil)
		return
	}
	if in.j.broken() {
		res := in.j.result()
		w.judge(in, VerdictViolation, CauseViolation, res.Reason, resultOf(res))
	}
}

// misrouted judges an instance whose event came on another partition's
// subject: its events are not in one ordered stream, so no verdict but an
// input error can be given.
func (w *worker) misrouted(name string, seq uint64) {
	w.m.m.reject(w.spec.Name, "misrouted")
	if in := w.insts[name]; in != nil {
		w.touch(in)
		return
	}
	in := &inst{name: name, first: seq, last: seq, events: 1}
	w.insts[name] = in
	w.live++
	w.m.m.addLive(w.spec.Name, 1)
	w.touch(in)
	want := Partition(name, w.m.parts)
	w.judge(in, VerdictInputError, CauseMisrouted, fmt.Sprintf("%s:1: an event of instance %s came on partition %d; its partition is %d of %d (FNV-1a of the instance modulo the partitions): its emitter uses another partition count or hash", w.subject, trace.Printable(name), w.p, want, w.m.parts), nil)
}

// judge gives in its verdict and sends it to the bucket; in stays, judged,
// until it has been idle for Config.Idle, so that its later events are
// counted and ignored.
func (w *worker) judge(in *inst, verdict, cause, reason string, res *Result) {
	v := &Verdict{Spec: w.spec.Name, Instance: in.name, Verdict: verdict, Cause: cause, Reason: reason,
		Events: in.events, Partition: w.p, FirstSeq: in.first, LastSeq: in.last, Monitor: w.m.cfg.ID,
		Time: time.Now().UTC(), Result: res}
	in.judged, in.j = true, nil
	w.live--
	w.m.m.addLive(w.spec.Name, -1)
	data, err := json.Marshal(v)
	if err != nil { // a result holds nothing json cannot encode
		data = fmt.Appendf(nil, `{"spec":%q,"instance":%q,"verdict":%q,"reason":%q}`, v.Spec, v.Instance, v.Verdict, "monitor: "+err.Error())
	}
	pv := &pendingVerdict{v: v, data: data, key: VerdictKey(w.spec.Name, in.name), first: in.first}
	if w.m.js == nil { // a worker without NATS: the benchmarks of checking alone
		w.outbox = append(w.outbox, pv)
		return
	}
	pv.fut, pv.err = w.m.js.PublishMsgAsync(&nats.Msg{Subject: "$KV." + VerdictBucket + "." + pv.key, Data: data},
		jetstream.WithExpectLastSequencePerSubject(0), jetstream.WithRetryAttempts(0))
	w.outbox = append(w.outbox, pv)
}

// touch makes in the most recently active instance.
func (w *worker) touch(in *inst) {
	in.at = w.clock
	if w.tail == in {
		return
	}
	w.unlink(in)
	in.prev = w.tail
	if w.tail != nil {
		w.tail.next = in
	}
	w.tail = in
	if w.head == nil {
		w.head = in
	}
}

func (w *worker) unlink(in *inst) {
	if in.prev != nil {
		in.prev.next = in.next
	} else if w.head == in {
		w.head = in.next
	}
	if in.next != nil {
		in.next.prev = in.prev
	} else if w.tail == in {
		w.tail = in.prev
	}
	in.prev, in.next = nil, nil
}

// sweep judges the instances idle for Config.Idle by the partition's
// clock (the end of their stream), and frees the judged ones.
func (w *worker) sweep() {
	idle := w.m.cfg.Idle
	for in := w.head; in != nil && w.clock.Sub(in.at) > idle; in = w.head {
		w.unlink(in)
		delete(w.insts, in.name)
		if !in.judged {
			res := in.j.result()
			w.judge(in, res.Verdict.String(), CauseIdle, res.Reason, resultOf(res))
		}
	}
	if time.Since(w.lastSinks) > time.Minute {
		w.lastSinks = time.Now()
		for id, s := range w.sinks {
			if w.clock.Sub(s.at) > max(idle, 10*time.Minute) {
				delete(w.sinks, id)
			}
		}
	}
}

// checkpoint resolves the verdicts sent, acknowledges what was taken and
// writes the floor.
func (w *worker) checkpoint(ctx context.Context) {
	w.resolve(ctx)
	if w.lastMsg != nil && w.unacked > 0 {
		if err := w.lastMsg.Ack(); err == nil {
			w.unacked = 0
		}
	}
	floor := w.next
	for _, in := range w.insts {
		if !in.judged && in.first < floor {
			floor = in.first
		}
	}
	for _, pv := range w.outbox {
		floor = min(floor, pv.first)
	}
	if (floor == w.floor && w.recorded) || ctx.Err() != nil {
		return
	}
	rec, _ := json.Marshal(floorRecord{Floor: floor, Next: w.next, Monitor: w.m.cfg.ID, Consumer: w.name, Time: time.Now().UTC()})
	key := floorKey(w.spec.Name, w.p)
	var rev uint64
	var err error
	if w.floorRev == 0 {
		rev, err = w.m.b.state.Create(ctx, key, rec)
	} else {
		rev, err = w.m.b.state.Update(ctx, key, rec, w.floorRev)
	}
	if err != nil && (errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) || isWrongLastSeq(err)) {
		// Written by another holder (one that lost its lease without
		// knowing it yet): any holder's floor is safe, ours too.
		if e, gerr := w.m.b.state.Get(ctx, key); gerr == nil {
			rev, err = w.m.b.state.Update(ctx, key, rec, e.Revision())
		}
	}
	if err != nil {
		w.m.logf("%s: writing the floor: %v", w.subject, err)
		return
	}
	w.floor, w.floorRev, w.recorded = floor, rev, true
}

// resolve waits for the bucket's answer to each verdict sent: stored (then
// it is published on the verdict subject and passed to OnVerdict), refused
// because the instance has a verdict already (a replay after a takeover),
// or failed (then it is sent again, until ctx ends).
func (w *worker) resolve(ctx context.Context) {
	keep := w.outbox[:0]
	for i, pv := range w.outbox {
		err := pv.err
		if pv.fut != nil && err == nil {
			select {
			case <-pv.fut.Ok():
			case err = <-pv.fut.Err():
			case <-ctx.Done():
				keep = append(keep, w.outbox[i:]...)
				w.outbox = keep
				return
			}
		}
		for err != nil && !isExists(err) && ctx.Err() == nil {
			_, err = w.m.b.verdicts.Create(ctx, pv.key, pv.data)
			if err != nil && !isExists(err) {
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		}
		switch {
		case err == nil:
			w.publish(pv.data, pv.key)
			w.m.m.verdict(w.spec.Name, pv.v.Verdict)
			if w.m.cfg.OnVerdict != nil {
				w.m.cfg.OnVerdict(*pv.v)
			}
		case isExists(err) && w.ours(ctx, pv):
			// Stored by us: the acknowledgement was lost (NATS
			// restarted).
			w.publish(pv.data, pv.key)
			w.m.m.verdict(w.spec.Name, pv.v.Verdict)
			if w.m.cfg.OnVerdict != nil {
				w.m.cfg.OnVerdict(*pv.v)
			}
		case isExists(err):
			w.m.m.duplicate(w.spec.Name)
			w.republish(ctx, pv.key)
		default:
			keep = append(keep, pv)
			pv.fut, pv.err = nil, err
		}
	}
	w.outbox = keep
	// The verdict subject's acknowledgements: a failed one is published
	// again (the stream drops a duplicate by its ID).
	for _, f := range w.published {
		select {
		case <-f.Ok():
		case <-f.Err():
			m := f.Msg()
			_, _ = w.m.js.PublishMsg(ctx, m)
		case <-ctx.Done():
		}
	}
	w.published = w.published[:0]
}

// publish publishes a stored verdict on the verdict subject, with the
// instance's key as message ID.
func (w *worker) publish(data []byte, key string) {
	f, err := w.m.js.PublishMsgAsync(&nats.Msg{Subject: VerdictSubject(w.spec.Name), Data: data}, jetstream.WithMsgID(key))
	if err == nil {
		w.published = append(w.published, f)
	}
}

// ours reports whether the verdict stored under pv's key is pv's.
func (w *worker) ours(ctx context.Context, pv *pendingVerdict) bool {
	e, err := w.m.b.verdicts.Get(ctx, pv.key)
	return err == nil && bytes.Equal(e.Value(), pv.data)
}

// republish publishes again the verdict another holder stored shortly
// before: it may have died before publishing it; the verdict stream drops
// it if it did not.
func (w *worker) republish(ctx context.Context, key string) {
	e, err := w.m.b.verdicts.Get(ctx, key)
	if err != nil || time.Since(e.Created()) > verdictDedupWindow/2 {
		return
	}
	w.publish(e.Value(), key)
}

func isExists(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || isWrongLastSeq(err)
}

// sinkSeen is what a partition has seen of one Sink's numbered messages:
// the highest number, and which of the window below it came.
type sinkSeen struct {
	last uint64
	bits [seenWindow / 64]uint64
	at   time.Time
}

const seenWindow = 1024

type seen int

const (
	seenNew seen = iota
	seenDuplicate
	seenLate
)

func (w *worker) sink(id string) *sinkSeen {
	s := w.sinks[id]
	if s == nil {
		s = &sinkSeen{}
		w.sinks[id] = s
	}
	s.at = w.clock
	return s
}

// see records message number n: new (the next, or beyond), a duplicate
// (seen already, or too old to tell), or late (not seen, below the
// highest: it was overtaken).
func (s *sinkSeen) see(n uint64) seen {
	switch {
	case s.last == 0 || n > s.last:
		if s.last != 0 && n-s.last < seenWindow {
			for k := s.last + 1; k < n; k++ {
				s.bits[(k%seenWindow)/64] &^= 1 << (k % 64)
			}
		} else {
			s.bits = [seenWindow / 64]uint64{}
		}
		s.last = n
		s.bits[(n%seenWindow)/64] |= 1 << (n % 64)
		return seenNew
	case s.last-n >= seenWindow:
		return seenDuplicate
	case s.bits[(n%seenWindow)/64]&(1<<(n%64)) != 0:
		return seenDuplicate
	}
	s.bits[(n%seenWindow)/64] |= 1 << (n % 64)
	return seenLate
}
