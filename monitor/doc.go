// Package monitor checks traces live: emitters publish their events to NATS
// JetStream, monitors consume them, check each instance's events in order
// with the checker of `tracecheck check` (package check), and store one
// verdict per instance. docs/monitor.md has the design, the wire names and
// the measured figures.
//
// Emitting: a Sink is a trace.Sink that publishes each event to
// tracecheck.<spec>.<partition> (Partition: FNV-1a of the instance modulo
// the partitions, so an instance's events keep their order on one subject),
// with acknowledgements, retries in order, and a bounded buffer: when NATS
// is slow or down it drops (or, with SinkConfig.Block, waits), and counts,
// says and marks what it dropped.
//
// Checking: Run (or New and Monitor.Run) consumes the partitions it holds
// the lease of, shared with every other monitor of the deployment and
// rebalanced when one joins or dies. Each instance is judged once: at its
// first violation or malformed event, or when it has been idle for
// Config.Idle (its stream has ended). The Verdict goes to the key-value
// bucket tracecheck-verdicts under VerdictKey(spec, instance) and to the
// subject tracecheck.verdicts.<spec>. A monitor killed at any point loses
// nothing: its partitions are read again from their floor by the next
// holder, and the bucket refuses a second verdict.
//
// Serving: StartEmbedded runs a NATS server with JetStream in the process
// (the nats-server library), for a monitor given no URL. Command is the
// `monitor` command for a binary built on package cli:
//
//	cli.Run(cli.Config{Specs: specs, Commands: []cli.Command{
//		monitor.Command(monitor.Of("twophase", twophase.Spec())),
//	}}, os.Args[1:], os.Stdout, os.Stderr)
package monitor
