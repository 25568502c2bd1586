package monitor

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// The names the monitor and its emitters agree on. They are fixed, so that
// any emitter (Go, Python, a shell with the nats CLI) can publish to a
// monitor knowing only its URL; docs/monitor.md lists them.
const (
	// SubjectPrefix begins every subject: events go to
	// tracecheck.<spec>.<partition>, verdicts to tracecheck.verdicts.<spec>.
	SubjectPrefix = "tracecheck"
	// EventStream is the JetStream stream that holds the events of every
	// registered spec (subjects tracecheck.<spec>.*).
	EventStream = "TRACECHECK"
	// VerdictStream holds the verdicts published on
	// tracecheck.verdicts.<spec>, deduplicated by instance.
	VerdictStream = "TRACECHECK_VERDICTS"
	// VerdictBucket is the key-value bucket of verdicts, one key per
	// instance: <spec>.<instance, escaped> (VerdictKey).
	VerdictBucket = "tracecheck-verdicts"
	// LeaseBucket holds the partition leases (lease.<spec>.<partition>) and
	// the monitors' presence (member.<id>); its entries expire after the
	// lease time unless renewed.
	LeaseBucket = "tracecheck-leases"
	// StateBucket holds each partition's floor (floor.<spec>.<partition>)
	// and the number of partitions (partitions).
	StateBucket = "tracecheck-state"
	// reservedSpec cannot be a spec's name: its subjects are the verdicts'.
	reservedSpec = "verdicts"
)

// Message headers the Sink sets. A message without them (published by
// hand, or by another emitter) is checked all the same; it is only not
// deduplicated.
const (
	// HeaderSink names the Sink that published the message: a random ID
	// per Sink.
	HeaderSink = "Tracecheck-Sink"
	// HeaderN numbers the Sink's messages on one subject 1, 2, 3...: the
	// monitor drops a message whose number it has already seen (a
	// publication retried after its acknowledgement was lost) and tells a
	// late one (reordered by a failed publication) from a duplicate.
	HeaderN = "Tracecheck-N"
	// HeaderDropped, on an instance's event, counts that instance's
	// events the Sink dropped before it (its buffer was full: NATS slow or
	// down). The monitor then judges the instance incomplete: it cannot
	// vouch for a trace with holes.
	HeaderDropped = "Tracecheck-Dropped"
)

// DefaultPartitions is the number of partitions per spec unless the
// deployment says otherwise (Config.Partitions; the monitor records it in
// the state bucket, and a Sink reads it from there).
const DefaultPartitions = 16

// MaxPartitions bounds Config.Partitions.
const MaxPartitions = 4096

// ErrName reports a spec name that cannot be a subject token.
var ErrName = errors.New("bad spec name")

// CheckSpecName reports whether name can name a spec on the bus: 1 to 64
// characters of [A-Za-z0-9_-], and not "verdicts".
func CheckSpecName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%w %q: 1 to 64 characters of A-Z a-z 0-9 _ -", ErrName, name)
	}
	for i := 0; i < len(name); i++ {
		if !tokenByte(name[i]) {
			return fmt.Errorf("%w %q: 1 to 64 characters of A-Z a-z 0-9 _ -", ErrName, name)
		}
	}
	if name == reservedSpec {
		return fmt.Errorf("%w %q: reserved for the verdicts' subjects", ErrName, name)
	}
	return nil
}

func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// Partition returns the partition of instance among n: FNV-1a (32 bits) of
// the instance's bytes, modulo n. All of an instance's events go to one
// partition, so they stay in order on one subject.
func Partition(instance string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(instance))
	return int(h.Sum32() % uint32(n))
}

// EventSubject is the subject of spec's partition p: tracecheck.<spec>.<p>.
func EventSubject(spec string, p int) string {
	return SubjectPrefix + "." + spec + "." + strconv.Itoa(p)
}

// VerdictSubject is the subject verdicts of spec are published on.
func VerdictSubject(spec string) string {
	return SubjectPrefix + "." + reservedSpec + "." + spec
}

// parseSubject splits tracecheck.<spec>.<partition>; ok is false for any
// other shape or a partition that is not a decimal number below n.
func parseSubject(subject string, n int) (spec string, p int, ok bool) {
	rest, found := strings.CutPrefix(subject, SubjectPrefix+".")
	if !found {
		return "", 0, false
	}
	spec, num, found := strings.Cut(rest, ".")
	if !found || spec == "" {
		return "", 0, false
	}
	p, err := strconv.Atoi(num)
	if err != nil || p < 0 || p >= n || strconv.Itoa(p) != num {
		return spec, 0, false
	}
	return spec, p, true
}

// maxKeyInstance is the longest escaped instance name kept in a key;
// longer ones are replaced by their hash.
const maxKeyInstance = 200

// VerdictKey is the key of an instance's verdict in VerdictBucket:
// <spec>.<instance escaped>. Bytes of [A-Za-z0-9_-] stand for themselves,
// every other byte is =XX (two upper-case hex digits); an escaped name
// longer than 200 bytes is replaced by =H and the SHA-256 of the name in
// hex (the verdict itself holds the whole name).
func VerdictKey(spec, instance string) string {
	return spec + "." + escapeKey(instance)
}

func escapeKey(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if tokenByte(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "=%02X", c)
		}
		if b.Len() > maxKeyInstance {
			sum := sha256.Sum256([]byte(s))
			return "=H" + hex.EncodeToString(sum[:])
		}
	}
	return b.String()
}

func leaseKey(spec string, p int) string { return "lease." + spec + "." + strconv.Itoa(p) }
func floorKey(spec string, p int) string { return "floor." + spec + "." + strconv.Itoa(p) }
func memberKey(id string) string         { return "member." + escapeKey(id) }

const partitionsKey = "partitions"

// consumerName is the durable consumer of a partition for one lease: a
// new holder creates its own, so a holder that lost its lease without
// knowing it cannot take messages from its successor's consumer.
func consumerName(spec string, p int, epoch uint64) string {
	return fmt.Sprintf("tc_%s_%d_%d", spec, p, epoch)
}
