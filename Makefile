# tracecheck — see README.md. Every target works on a fresh machine with Go
# and python3; `formal` and `tlc-traces` also need TLA2TOOLS / FIZZ set.
GO      ?= go
BIN     := bin/tracecheck
BENCHTIME ?= 1x

.PHONY: all build verify test vet lint bench bench-explore formal tlc-traces crash fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/tracecheck

# The whole gate on the bundled specs and implementations (docs/verify.md);
# no external service, no TLC or FizzBee needed (their retained reports are
# checked). The run directory bin/verify keeps the traces, summary.json and
# report.html. VERIFY_FLAGS=--quick for pre-commit, --full for nightly
# (TLC/FizzBee live with TLA2TOOLS, FIZZ); verify-mutants adds every named
# code mutant.
VERIFY_DIR   := bin/verify
VERIFY_FLAGS ?=
.PHONY: verify-mutants
verify: build
	rm -rf $(VERIFY_DIR)
	$(BIN) verify --dir $(VERIFY_DIR) $(VERIFY_FLAGS)

verify-mutants: build
	rm -rf $(VERIFY_DIR)
	$(BIN) verify --dir $(VERIFY_DIR) --mutants $(VERIFY_FLAGS)

# The tests: vet and staticcheck, then every package under the race
# detector, each package's tests given TEST_TIMEOUT so a deadlock fails fast.
TEST_TIMEOUT ?= 10m
STATICCHECK  ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# examples/twophase is a module of its own (tracecheck as another team
# uses it): its tests run too.
EXAMPLES := examples/twophase
test: vet lint
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	@for m in $(EXAMPLES); do echo "== $$m"; (cd $$m && $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...) || exit 1; done

vet:
	$(GO) vet ./...
	@for m in $(EXAMPLES); do (cd $$m && $(GO) vet ./...) || exit 1; done

lint:
	$(GO) run $(STATICCHECK) ./...
	@for m in $(EXAMPLES); do (cd $$m && $(GO) run $(STATICCHECK) ./...) || exit 1; done

# Every benchmark (figures in README.md): the explorer, trace validation,
# the session coordinators and the publisher (1 GiB). BENCHTIME=5x for
# steadier explorer/trace numbers; bench-tlc also needs TLA2TOOLS.
bench: bench-explore bench-trace bench-check bench-graph bench-session bench-publish

bench-explore:
	$(GO) test -run '^$$' -bench 'BenchmarkExplore' -benchmem -benchtime $(BENCHTIME) ./model/

# Rerun TLC and FizzBee live on the committed specs and compare with the Go
# model (TLA2TOOLS=/path/to/tla2tools.jar, FIZZ=/path/to/fizz). With
# REGEN=1 it rewrites the retained reports under formal-verification/.
formal:
	bash formal-verification/run.sh

clean:
	rm -rf bin

# Fuzz the TLA+ value parser of the conformance gate (FUZZTIME=5m for longer).
FUZZTIME ?= 30s
fuzz-conform:
	$(GO) test -run '^$$' -fuzz '^FuzzParseTLAValue$$' -fuzztime $(FUZZTIME) ./conform/

# Run TLC's trace validation (spec/TraceProgram.tla) over the Program traces
# in traces/program/, retain its verdicts in formal-verification/tlc-traces/
# and check that tracecheck agrees (TLA2TOOLS=/path/to/tla2tools.jar;
# COMMUNITY_MODULES defaults to CommunityModules-deps.jar beside it).
tlc-traces:
	bash formal-verification/tlc-traces.sh

# TLC vs tracecheck on 100 generated Program traces, one file at a time
# (TLA2TOOLS as for tlc-traces); figures in formal-verification/tlc-traces/bench-tlc.md.
.PHONY: bench-tlc
bench-tlc:
	@test -n "$(TLA2TOOLS)" || { echo "make bench-tlc: TLA2TOOLS (path to tla2tools.jar) is not set; nothing was run" >&2; exit 2; }
	BENCH_TLC_OUT=$(CURDIR)/formal-verification/tlc-traces/bench-tlc.md $(GO) test -run '^$$' -bench '^BenchmarkTLCTraceValidation$$' -benchtime 1x -timeout 60m -v ./harness/tlccross/

# Trace validation throughput: events/s, MB/s and peak heap on generated
# traces of 1,000 interleaved sessions (100k and 1M events: memory is flat
# in the trace length), and the decoder alone. Figures in README.md.
.PHONY: bench-trace fuzz-trace
bench-trace:
	$(GO) test -run '^$$' -bench 'BenchmarkCheckSessions|BenchmarkDecode' -benchmem -benchtime $(BENCHTIME) -cpu 1 ./check/

# tracecheck check at scale, one core: a trace of 1,000,000 program instances
# of one Init event each, in the library (events/s, heap per live instance)
# and end to end through the CLI (events/s, output bytes, peak heap per
# instance). Figures in README.md.
.PHONY: bench-check
bench-check:
	$(GO) test -run '^$$' -bench 'BenchmarkCheckInstances' -benchmem -benchtime $(BENCHTIME) -count 5 -cpu 1 ./check/
	$(GO) test -run '^$$' -bench 'BenchmarkCheckCLI' -benchtime $(BENCHTIME) -count 5 -cpu 1 ./cmd/tracecheck/

# The live monitor (figures in docs/monitor.md): events/s through the
# embedded JetStream with 1 and 2 monitors next to the in-process checker on
# the same events, heap per live instance, and the time from a monitor's
# SIGKILL to the takeover of its partitions. MONITOR_BENCH_SESSIONS
# generated sessions (about 7.5 events each).
MONITOR_BENCH_SESSIONS ?= 20000
.PHONY: bench-monitor monitor-campaign
bench-monitor:
	TRACECHECK_BENCH_SESSIONS=$(MONITOR_BENCH_SESSIONS) $(GO) test -run '^$$' -bench '^BenchmarkMonitor' -benchtime 1x -count 3 -timeout 30m ./monitor/

# A longer kill campaign than `make test`: MONITOR_SESSIONS sessions published
# while monitor processes are SIGKILLed MONITOR_KILLS times; every verdict is
# compared with the offline check.
MONITOR_SESSIONS ?= 20000
MONITOR_KILLS ?= 20
monitor-campaign:
	TRACECHECK_KILL_SESSIONS=$(MONITOR_SESSIONS) TRACECHECK_KILL_KILLS=$(MONITOR_KILLS) $(GO) test -count=1 -timeout 60m -run '^TestKillMonitors$$' -v ./monitor/

# Checking against the Go transcription and against TLC's own graph
# (check --graph) on the same 1,000,000 Program events, one core.
.PHONY: bench-graph
bench-graph:
	$(GO) test -run '^$$' -bench 'BenchmarkGraphSpec' -benchtime $(BENCHTIME) -count 5 -cpu 1 ./conform/

# Fuzz the trace decoders (NDJSON, ITF) and the validation engine, seeded from traces/
# (FUZZTIME each; the seed corpus also runs in plain `go test`).
fuzz-trace:
	$(GO) test -run '^$$' -fuzz '^FuzzDecoder$$' -fuzztime $(FUZZTIME) ./trace/
	$(GO) test -run '^$$' -fuzz '^FuzzReadITF$$' -fuzztime $(FUZZTIME) ./trace/
	$(GO) test -run '^$$' -fuzz '^FuzzCheck$$' -fuzztime $(FUZZTIME) ./check/

# Every fuzz target of every package (found with go test -list), FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# Checkpoint publisher crash campaign: SIGKILL a publisher process CRASH_N
# times at random points of real runs of examples/train.py, recover, and
# check (never a partial/unverified/double publication); prints the tally.
# CRASH_SEED=N reproduces a campaign.
CRASH_N ?= 500
.PHONY: crash bench-publish
crash:
	PUBCHECK_CRASH_N=$(CRASH_N) $(if $(CRASH_SEED),PUBCHECK_CRASH_SEED=$(CRASH_SEED)) \
		$(GO) test -count=1 -timeout 120m -run '^TestCrashRecovery$$' -v ./harness/pubcheck/

# Crash before every storage operation of a run, each once (deterministic;
# the test default covers the publish step's 12).
.PHONY: crash-points
crash-points:
	PUBCHECK_CRASH_POINTS=all $(GO) test -count=1 -timeout 30m -run '^TestCrashPoints$$' -v ./harness/pubcheck/

# Publishing a 1 GiB checkpoint (stage + verify + publish) against a plain
# copy + sha256 of the same data, in one run (figures in docs/publisher.md).
BENCH_PUBLISH_BYTES ?= 1073741824
bench-publish:
	TRACECHECK_BENCH_BYTES=$(BENCH_PUBLISH_BYTES) $(GO) test -run '^$$' -bench '^BenchmarkPublishVsCopy$$' -benchtime 1x -timeout 60m ./impl/checkpoint/

# Mutation: every named code mutant of the bundled systems, applied with
# go's -overlay (never in the checkout), and the kill matrix (what caught
# each, or SURVIVED). MUTANTS='publisher/*' selects some.
MUTANTS ?=
.PHONY: mutants
mutants: build
	$(BIN) mutate $(MUTANTS)

# Realtime session coordinators (figures in docs/session.md): Close latency
# p50/p99 with 10,000 concurrent sessions and alone, memory per idle
# session, operations/s through one coordinator, tracing on vs off.
.PHONY: bench-session session-campaign
bench-session:
	$(GO) test -run '^$$' -bench '^Benchmark(Teardown10k|IdleMemory)$$' -benchtime 3x ./impl/session/
	$(GO) test -run '^$$' -bench '^Benchmark(TeardownOne|Ops|Tracing|TracedTurn)$$' -benchmem -benchtime 1s ./impl/session/
	$(GO) test -run '^$$' -bench '^BenchmarkBargeIn1k$$' -benchtime 5x ./impl/session/

# A longer session campaign than `make test`: porcupine with SESSION_OPS
# operations per goroutine, rapid with 2000 sequences, and every test of
# harness/sessioncheck (fault injection included) SESSION_COUNT times.
SESSION_OPS ?= 10000
SESSION_COUNT ?= 5
session-campaign:
	TRACECHECK_SESSION_OPS=$(SESSION_OPS) $(GO) test -race -count=$(SESSION_COUNT) -timeout 60m ./harness/sessioncheck/ -rapid.checks=2000

# Model transition coverage of the checkpoint publisher's real runs: keep the
# journals of harness/pubcheck's real runs and fault cases, then let
# tracecheck check and coverage judge them against model/program.
.PHONY: coverage-publisher
coverage-publisher: build
	rm -rf bin/publisher-journals && mkdir -p bin/publisher-journals
	PUBCHECK_JOURNALS=$(CURDIR)/bin/publisher-journals $(GO) test -count=1 -run '^(TestRealRuns|TestFaultInjection)$$' ./harness/pubcheck/
	@echo "verdicts of $$(ls bin/publisher-journals | wc -l) journals (incomplete = a receipt-failure case):"
	@$(BIN) check bin/publisher-journals | grep -E ': (VALID|INCOMPLETE|VIOLATION) ' | awk '{print $$2}' | sort | uniq -c
	$(BIN) coverage --model program bin/publisher-journals

# TLC against tracecheck on TLC_DIFF random Program traces, valid and
# mutated (TLA2TOOLS as for tlc-traces; TLC_DIFF_SEED replays a run).
TLC_DIFF ?= 100
.PHONY: tlc-diff
tlc-diff:
	@test -n "$(TLA2TOOLS)" || { echo "make tlc-diff: TLA2TOOLS (path to tla2tools.jar) is not set; nothing was run" >&2; exit 2; }
	TLC_DIFF=$(TLC_DIFF) $(GO) test -count=1 -timeout 60m -run '^TestTLCDifferential$$' -v ./harness/tlccross/

# Operator mutants (go/ast, type-checked; each runs only the tests covering
# it) and the kill matrices in docs/mutation/ (docs/mutation.md).
OPERATOR_SHARD ?= 1/20
.PHONY: operator-mutants bench-mutants
operator-mutants: build
	$(BIN) mutate --operators ./impl/checkpoint --tests ./harness/pubcheck --shard $(OPERATOR_SHARD) -j 2 --equivalents docs/mutation/equivalents.txt --min-score 0 --title "Operator mutants of impl/checkpoint, shard $(OPERATOR_SHARD), its own tests and harness/pubcheck's" --json-file docs/mutation/matrix.json --markdown docs/mutation/matrix.md
	$(BIN) mutate --operators ./model -j 2 --equivalents docs/mutation/equivalents.txt --min-score 0 --title "Operator mutants of model/" --json-file docs/mutation/model.json --markdown docs/mutation/model.md

# Coverage selection against the whole suite on one sample (figures in
# docs/mutation.md).
bench-mutants: build
	$(BIN) mutate --operators ./impl/checkpoint --tests ./harness/pubcheck --shard 1/100 -j 2 --no-cache --min-score 0 --json-file /dev/null
	$(BIN) mutate --operators ./impl/checkpoint --tests ./harness/pubcheck --shard 1/100 -j 2 --no-cache --staged=false --min-score 0 --json-file /dev/null
	$(BIN) mutate --operators ./impl/checkpoint --shard 1/100 -j 2 --no-cache --no-select --min-score 0 --json-file /dev/null
