package monitor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// buckets are the key-value buckets a monitor works with.
type buckets struct {
	verdicts, leases, state jetstream.KeyValue
	leaseTTL                time.Duration
}

// setupOptions are what the streams and buckets are created with when
// they do not exist yet.
type setupOptions struct {
	specs      []string
	partitions int
	lease      time.Duration
	retain     time.Duration
	replicas   int
}

// setup creates the streams and buckets, or adds this monitor's specs to
// the event stream's subjects, and agrees on the number of partitions with
// the monitors before it.
func setup(ctx context.Context, js jetstream.JetStream, o setupOptions, logf func(string, ...any)) (*buckets, int, error) {
	var subjects []string
	for _, s := range o.specs {
		subjects = append(subjects, SubjectPrefix+"."+s+".*")
	}
	if err := ensureStream(ctx, js, jetstream.StreamConfig{
		Name:        EventStream,
		Description: "tracecheck trace events, tracecheck.<spec>.<partition> (docs/monitor.md)",
		Subjects:    subjects,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      o.retain,
		Storage:     jetstream.FileStorage,
		Replicas:    o.replicas,
		MaxMsgSize:  maxPayload,
	}); err != nil {
		return nil, 0, err
	}
	if err := ensureStream(ctx, js, jetstream.StreamConfig{
		Name:        VerdictStream,
		Description: "tracecheck verdicts, tracecheck.verdicts.<spec>, one per instance (docs/monitor.md)",
		Subjects:    []string{SubjectPrefix + "." + reservedSpec + ".*"},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      o.retain,
		Storage:     jetstream.FileStorage,
		Replicas:    o.replicas,
		Duplicates:  verdictDedupWindow,
	}); err != nil {
		return nil, 0, err
	}
	b := &buckets{}
	var err error
	if b.verdicts, err = ensureBucket(ctx, js, jetstream.KeyValueConfig{Bucket: VerdictBucket, Description: "tracecheck verdicts, <spec>.<instance>", History: 1, Storage: jetstream.FileStorage, Replicas: o.replicas}); err != nil {
		return nil, 0, err
	}
	if b.leases, err = ensureBucket(ctx, js, jetstream.KeyValueConfig{Bucket: LeaseBucket, Description: "tracecheck monitor leases and members", History: 1, TTL: o.lease, Storage: jetstream.FileStorage, Replicas: o.replicas}); err != nil {
		return nil, 0, err
	}
	if b.state, err = ensureBucket(ctx, js, jetstream.KeyValueConfig{Bucket: StateBucket, Description: "tracecheck monitor partition floors", History: 1, Storage: jetstream.FileStorage, Replicas: o.replicas}); err != nil {
		return nil, 0, err
	}
	st, err := b.leases.Status(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("monitor: bucket %s: %w", LeaseBucket, err)
	}
	b.leaseTTL = st.TTL()
	if b.leaseTTL <= 0 {
		return nil, 0, fmt.Errorf("monitor: bucket %s has no TTL: leases would never expire", LeaseBucket)
	}
	if b.leaseTTL != o.lease && logf != nil {
		logf("the lease time is %v, as the bucket %s was created with (not %v)", b.leaseTTL, LeaseBucket, o.lease)
	}
	p, err := agreePartitions(ctx, b.state, o.partitions)
	if err != nil {
		return nil, 0, err
	}
	return b, p, nil
}

// verdictDedupWindow is how long the verdict stream remembers the
// verdicts published (by instance), so that a takeover that publishes a
// verdict again does not publish it twice.
const verdictDedupWindow = 10 * time.Minute

// ensureStream creates the stream, or adds cfg's subjects to it.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	s, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = js.Stream(ctx, cfg.Name)
		} else if err == nil {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("monitor: stream %s: %w", cfg.Name, err)
	}
	have := s.CachedInfo().Config
	missing := false
	for _, subj := range cfg.Subjects {
		if !slices.Contains(have.Subjects, subj) {
			have.Subjects = append(have.Subjects, subj)
			missing = true
		}
	}
	if missing {
		if _, err := js.UpdateStream(ctx, have); err != nil {
			return fmt.Errorf("monitor: stream %s: adding subjects %v: %w", cfg.Name, cfg.Subjects, err)
		}
	}
	return nil
}

// ensureBucket creates the bucket, or opens it.
func ensureBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			kv, err = js.KeyValue(ctx, cfg.Bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("monitor: bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// agreePartitions records n as the number of partitions, or returns the
// number recorded before if n is 0; another n is an error: events would
// land on partitions no monitor reads.
func agreePartitions(ctx context.Context, state jetstream.KeyValue, n int) (int, error) {
	want := n
	if want == 0 {
		want = DefaultPartitions
	}
	if _, err := state.Create(ctx, partitionsKey, []byte(strconv.Itoa(want))); err == nil {
		return want, nil
	} else if !errors.Is(err, jetstream.ErrKeyExists) {
		return 0, fmt.Errorf("monitor: recording the number of partitions: %w", err)
	}
	have, err := readPartitions(ctx, state)
	if err != nil {
		return 0, err
	}
	if n != 0 && have != n {
		return 0, fmt.Errorf("monitor: the deployment has %d partitions (key %q of bucket %s), not %d: use --partitions %d, or a new deployment", have, partitionsKey, StateBucket, n, have)
	}
	return have, nil
}

func readPartitions(ctx context.Context, state jetstream.KeyValue) (int, error) {
	e, err := state.Get(ctx, partitionsKey)
	if err != nil {
		return 0, fmt.Errorf("monitor: reading the number of partitions: %w", err)
	}
	p, err := strconv.Atoi(string(e.Value()))
	if err != nil || p < 1 || p > MaxPartitions {
		return 0, fmt.Errorf("monitor: bucket %s holds a bad number of partitions %q", StateBucket, e.Value())
	}
	return p, nil
}

// connectOptions are the connection options of monitors and sinks: keep
// reconnecting for ever, quickly, and (Sink) never buffer publications
// while disconnected, so that what was not acknowledged is retried in
// order by the Sink itself.
func connectOptions(name string, logf func(string, ...any)) []nats.Option {
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, 100*time.Millisecond),
		nats.Timeout(5 * time.Second),
	}
	if logf != nil {
		opts = append(opts,
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				if err != nil {
					logf("nats: disconnected: %v", err)
				}
			}),
			nats.ReconnectHandler(func(nc *nats.Conn) { logf("nats: reconnected to %s", nc.ConnectedUrlRedacted()) }),
		)
	}
	return opts
}
