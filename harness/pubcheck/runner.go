package pubcheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// Program is a program simulated in Go: it gets the environment the
// publisher passes and returns an exit status. It should return early
// when ctx ends, as a signalled process would.
type Program func(ctx context.Context, env map[string]string) int

// FuncRunner is a [checkpoint.Runner] whose programs are Go functions,
// chosen by the last element of Argv (so Argv[0] can be a real executable
// such as "true", which the publisher looks up before running): fast,
// deterministic runs for fault injection.
type FuncRunner struct {
	// Programs maps the last element of Argv to the program to run.
	Programs map[string]Program
}

var _ checkpoint.Runner = FuncRunner{}

// Run implements checkpoint.Runner.
func (r FuncRunner) Run(ctx context.Context, p checkpoint.Process, started func(pid int) error) (checkpoint.Exit, error) {
	if len(p.Argv) == 0 {
		return checkpoint.Exit{}, fmt.Errorf("%w: empty command", checkpoint.ErrStart)
	}
	prog, ok := r.Programs[p.Argv[len(p.Argv)-1]]
	if !ok {
		return checkpoint.Exit{}, fmt.Errorf("%w: %s: no such program", checkpoint.ErrStart, p.Argv[len(p.Argv)-1])
	}
	const pid = 1 << 22 // fictitious; never signalled
	if started != nil {
		if err := started(pid); err != nil {
			return checkpoint.Exit{PID: pid, Code: -1, Signal: "killed"}, err
		}
	}
	env := make(map[string]string, len(p.Env))
	for _, kv := range p.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	code := prog(ctx, env)
	ex := checkpoint.Exit{PID: pid, Code: code}
	if ctx.Err() != nil {
		ex.Interrupted = true
		ex.Code, ex.Signal = -1, "terminated"
	}
	return ex, nil
}

// WriteCheckpoint returns a program that writes files into the staging
// directory and an evaluation result with the given verdict, naming every
// file's SHA-256 as evaluated.
func WriteCheckpoint(files map[string]string, passed bool) Program {
	return func(ctx context.Context, env map[string]string) int {
		dir := env[checkpoint.EnvStagingDir]
		claims := map[string]string{}
		for name, body := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return 70
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return 70
			}
			sum := sha256.Sum256([]byte(body))
			claims[name] = hex.EncodeToString(sum[:])
		}
		b, _ := json.Marshal(map[string]any{"passed": passed, "files": claims})
		if err := os.WriteFile(env[checkpoint.EnvEvalFile], b, 0o644); err != nil {
			return 70
		}
		return 0
	}
}

// Exit returns a program that exits with code at once.
func Exit(code int) Program {
	return func(context.Context, map[string]string) int { return code }
}

// Hang returns a program that runs until ctx ends.
func Hang() Program {
	return func(ctx context.Context, _ map[string]string) int {
		<-ctx.Done()
		return -1
	}
}
