package monitor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/trace"
)

const commandSynopsis = `[--nats URL] [--data DIR] [--listen HOST:PORT] [--partitions N] [--idle D]
       [--lease D] [--metrics HOST:PORT] [--id NAME] [--all] [--json]

Checks the trace events that emitters publish to NATS JetStream
(tracecheck.<spec>.<partition>), live, with the checker of "tracecheck
check": each instance's events in order, and one verdict per instance,
stored in the key-value bucket tracecheck-verdicts (key <spec>.<instance>)
and published on tracecheck.verdicts.<spec>; a violation with its full
divergence report. An instance without an event for --idle has ended: it
is judged valid or incomplete, as check judges the end of a trace, and
freed. A malformed event is its instance's input error.

Several monitors share the partitions (leases in the bucket
tracecheck-leases) and rebalance when one joins or dies; a monitor that is
killed loses nothing: the one that takes its partitions over reads them
again from their floor, and no instance gets a second verdict
(docs/monitor.md).

Without --nats it starts an embedded NATS server with JetStream on
--listen (loopback) storing under --data, and prints the URL emitters use:
  tracecheck session-demo --nats URL
  tracecheck run --trace-nats URL ...
With --nats it uses that server or cluster.

It prints each verdict other than valid as it is stored (--all: every
verdict; --json: one JSON object a line), and Prometheus metrics on
http://--metrics/metrics. It runs until interrupted (SIGINT, SIGTERM), then
hands its partitions over.

Exit codes: 0 stopped by a signal; 2 usage; 3 NATS unreachable or set up
otherwise (another partition count).`

// commandContext is the context the command runs in until a signal (a
// variable, for the tests).
var commandContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Command returns the "monitor" command for a cli.Main binary, checking
// specs. A team's own binary offers it with
//
//	cli.Run(cli.Config{Specs: specs, Commands: []cli.Command{monitor.Command(monitor.Of("twophase", twophase.Spec()))}}, ...)
func Command(specs ...Spec) cli.Command {
	return cli.Command{Name: "monitor", Summary: "check the events published to NATS JetStream live, with durable, shared, exactly-once verdicts",
		Run: func(args []string, stdout, stderr io.Writer) int { return runCommand(specs, args, stdout, stderr) }}
}

func runCommand(specs []Spec, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("monitor", commandSynopsis, stderr)
	url := fs.String("nats", "", "NATS `URL` of a server or cluster (comma-separated); default: start an embedded server")
	data := fs.String("data", filepath.Join(".tracecheck", "nats"), "the embedded server's JetStream data `directory`")
	listen := fs.String("listen", "127.0.0.1:4222", "the embedded server's `address` (port 0: any free port)")
	partitions := fs.Int("partitions", 0, "partitions per spec, for a new deployment (default: the deployment's, or 16)")
	idle := fs.Duration("idle", 30*time.Second, "an instance without an event for this long has ended: it is judged and freed")
	lease := fs.Duration("lease", 3*time.Second, "lease time: how soon a dead monitor's partitions are taken over (a new deployment's)")
	retain := fs.Duration("retain", 24*time.Hour, "how long the streams keep events and verdicts (a new deployment's)")
	replicas := fs.Int("replicas", 1, "stream and bucket replicas, on a cluster (a new deployment's)")
	metrics := fs.String("metrics", "127.0.0.1:9464", "serve Prometheus metrics on `HOST:PORT`/metrics (\"\": none)")
	id := fs.String("id", "", "this monitor's `name` among those sharing the partitions (default host-pid-random)")
	maxLine := fs.Int("max-line", trace.DefaultMaxLine, cli.UsageMaxLine)
	all := fs.Bool("all", false, "print valid verdicts too")
	asJSON := fs.Bool("json", false, cli.UsageJSON)
	rest, code := cli.Parse(fs, args)
	if code >= 0 {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "tracecheck monitor: unexpected argument %q\n", rest[0])
		return cli.ExitUsage
	}
	logw := &lockedWriter{w: stderr}
	logf := func(format string, args ...any) {
		logw.printf("tracecheck monitor: %s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
	ctx, stop := commandContext()
	defer stop()

	natsURL := *url
	if natsURL == "" {
		host, port, err := net.SplitHostPort(*listen)
		p, perr := strconv.Atoi(port)
		if err != nil || perr != nil || p < 0 || p > 65535 {
			fmt.Fprintf(stderr, "tracecheck monitor: --listen %q: want HOST:PORT\n", *listen)
			return cli.ExitUsage
		}
		if p == 0 {
			p = -1
		}
		srv, err := StartEmbedded(EmbeddedConfig{Dir: *data, Host: host, Port: p, Logf: logf})
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck monitor: %v\n", err)
			return cli.ExitInput
		}
		defer srv.Shutdown()
		natsURL = srv.URL()
		logw.printf("tracecheck monitor: embedded NATS with JetStream at %s (data %s)\n", natsURL, *data)
		logw.printf("tracecheck monitor: emitters: tracecheck session-demo --nats %s; tracecheck run --trace-nats %s ...\n", natsURL, natsURL)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if *metrics != "" {
		l, err := net.Listen("tcp", *metrics)
		if err != nil {
			logf("warning: no metrics endpoint: %v", err)
		} else {
			hs := &http.Server{Handler: metricsMux(reg), ReadHeaderTimeout: 5 * time.Second}
			go func() { _ = hs.Serve(l) }()
			defer hs.Close()
			logw.printf("tracecheck monitor: metrics at http://%s/metrics\n", l.Addr())
		}
	}
	out := &lockedWriter{w: stdout}
	m, err := New(Config{URL: natsURL, Specs: specs, Partitions: *partitions, Idle: *idle, Lease: *lease, Retain: *retain,
		Replicas: *replicas, ID: *id, MaxLine: *maxLine, Registerer: reg, Logf: logf,
		OnVerdict: func(v Verdict) {
			switch {
			case *asJSON:
				b, _ := json.Marshal(v)
				out.printf("%s\n", b)
			case *all || v.Verdict != VerdictValid:
				out.do(func(w io.Writer) { _ = v.WriteText(w) })
			}
		}})
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck monitor: %v\n", err)
		return cli.ExitUsage
	}
	logw.printf("tracecheck monitor: %s checking %d spec(s)\n", m.ID(), len(specs))
	if err := m.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "tracecheck monitor: %v\n", err)
		return cli.ExitInput
	}
	st := m.Stats()
	logw.printf("tracecheck monitor: stopped: %d events, %d verdicts stored, %d duplicate verdicts refused, %d messages rejected, %d events dropped by emitters\n",
		st.Events, st.Verdicts, st.Duplicates, st.Rejected, st.EmitterDropped)
	return cli.ExitOK
}

func metricsMux(reg *prometheus.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

// lockedWriter serializes the lines of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.do(func(w io.Writer) { fmt.Fprintf(w, format, args...) })
}

func (l *lockedWriter) do(f func(io.Writer)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	bw := bufio.NewWriter(l.w)
	f(bw)
	_ = bw.Flush()
}
