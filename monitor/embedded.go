package monitor

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbeddedConfig configures an embedded NATS server.
type EmbeddedConfig struct {
	// Dir is JetStream's data directory (created if missing). Required:
	// what the stream and the buckets hold outlives the process.
	Dir string
	// Host is the address it listens on; default 127.0.0.1 (loopback only).
	Host string
	// Port is its port; 0 means 4222 (NATS's default), -1 any free port.
	Port int
	// MaxStore bounds JetStream's disk use in bytes; 0: the server's
	// default (most of the disk).
	MaxStore int64
	// Logf, if set, receives the server's warnings and errors.
	Logf func(format string, args ...any)
}

// Embedded is a NATS server with JetStream running in this process (the
// nats-server library), for a monitor that is given no --nats URL.
type Embedded struct {
	srv *server.Server
	url string
}

// StartEmbedded starts a NATS server with JetStream on cfg.Host:cfg.Port,
// storing under cfg.Dir, and waits until it accepts connections.
func StartEmbedded(cfg EmbeddedConfig) (*Embedded, error) {
	if cfg.Dir == "" {
		return nil, errors.New("monitor: the embedded server needs a data directory")
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("monitor: embedded server: %w", err)
	}
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	port := cfg.Port
	if port == 0 {
		port = 4222
	}
	opts := &server.Options{
		ServerName:            "tracecheck-embedded",
		Host:                  host,
		Port:                  port,
		JetStream:             true,
		StoreDir:              cfg.Dir,
		JetStreamMaxStore:     cfg.MaxStore,
		NoSigs:                true,
		NoLog:                 cfg.Logf == nil,
		MaxPayload:            maxPayload,
		DisableShortFirstPing: true,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("monitor: embedded server: %w", err)
	}
	if cfg.Logf != nil {
		srv.SetLoggerV2(&serverLog{cfg.Logf}, false, false, false)
	}
	srv.Start()
	if !srv.ReadyForConnections(15 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("monitor: embedded server on %s did not start (port in use?)", net.JoinHostPort(host, strconv.Itoa(port)))
	}
	return &Embedded{srv: srv, url: srv.ClientURL()}, nil
}

// maxPayload is the largest message the embedded server takes: an event
// line of trace.DefaultMaxLine plus room for the headers.
const maxPayload = 1<<20 + 4<<10

// URL is the server's client URL, nats://HOST:PORT: what emitters and
// other monitors are given.
func (e *Embedded) URL() string { return e.url }

// Shutdown stops the server and waits for it to be gone.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// serverLog forwards the server's notices, warnings and errors.
type serverLog struct {
	logf func(string, ...any)
}

func (l *serverLog) Noticef(format string, v ...any) {}
func (l *serverLog) Warnf(format string, v ...any)   { l.logf("nats: warning: "+format, v...) }
func (l *serverLog) Fatalf(format string, v ...any)  { l.logf("nats: fatal: "+format, v...) }
func (l *serverLog) Errorf(format string, v ...any)  { l.logf("nats: error: "+format, v...) }
func (l *serverLog) Debugf(format string, v ...any)  {}
func (l *serverLog) Tracef(format string, v ...any)  {}
