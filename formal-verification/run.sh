#!/usr/bin/env bash
# Rerun TLC and FizzBee live on the committed specs, compare their state
# graphs with the Go model (go test ./conform -run TestLive), and
# with REGEN=1 replace the retained reports under formal-verification/reports.
#
#   TLA2TOOLS=/path/to/tla2tools.jar FIZZ=/path/to/fizz [REGEN=1] [ONLY=REGEX] make formal
#
# ONLY, if set, is an extended regular expression (bash =~) on report names:
# only the matching reports are run, compared and (REGEN=1) rewritten, e.g.
# ONLY='^tlc-machine-' for the per-machine specs under spec/machines.
#
# Optional: JAVA (default: java), FIZZ_VERSION (FizzBee has no version flag;
# default: read from the README's pin), GO (default: go).
#
# Exit status: 0 when every tool gave its expected verdict and every graph
# equals the Go model's; 1 otherwise; 2 when the tools are not configured.
# FizzBee exits 0 even when it reports FAILED, so this script reads its
# verdict line instead of trusting its exit status.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPORTS="$ROOT/formal-verification/reports"
JAVA="${JAVA:-java}"
GO="${GO:-go}"

missing=()
[[ -n "${TLA2TOOLS:-}" ]] || missing+=("TLA2TOOLS (path to tla2tools.jar)")
[[ -n "${FIZZ:-}" ]] || missing+=("FIZZ (path to FizzBee's fizz script)")
if ((${#missing[@]})); then
	echo "make formal: cannot run the tools live: not set: ${missing[*]}." >&2
	echo "make formal: nothing was run. 'make verify' and 'go test ./conform' check the" >&2
	echo "make formal: retained reports in formal-verification/reports without the tools." >&2
	echo "make formal: usage: TLA2TOOLS=/path/to/tla2tools.jar FIZZ=/path/to/fizz [REGEN=1] make formal" >&2
	exit 2
fi
[[ -f "$TLA2TOOLS" ]] || { echo "make formal: TLA2TOOLS=$TLA2TOOLS: no such file" >&2; exit 2; }
[[ -x "$FIZZ" ]] || { echo "make formal: FIZZ=$FIZZ: not an executable file" >&2; exit 2; }
command -v "$JAVA" >/dev/null || { echo "make formal: $JAVA not found (set JAVA)" >&2; exit 2; }

TLA2TOOLS="$(cd "$(dirname "$TLA2TOOLS")" && pwd)/$(basename "$TLA2TOOLS")"
FIZZ="$(cd "$(dirname "$FIZZ")" && pwd)/$(basename "$FIZZ")"

# FizzBee's fizz script runs the binary named in fizz.env next to it.
FIZZBEE_BIN="$(
	FIZZBEE_BIN=""
	# shellcheck disable=SC1091
	[[ -f "$(dirname "$FIZZ")/fizz.env" ]] && . "$(dirname "$FIZZ")/fizz.env"
	echo "${FIZZBEE_BIN:-$(dirname "$FIZZ")/bazel-bin/fizzbee_/fizzbee}"
)"
if [[ -z "${FIZZ_VERSION:-}" ]]; then
	FIZZ_VERSION="$(sed -n 's/^FizzBee pin: *//p' "$ROOT/formal-verification/README.md" 2>/dev/null | head -1 || true)"
	FIZZ_VERSION="${FIZZ_VERSION:-unknown (set FIZZ_VERSION)}"
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/tracecheck-formal.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
OUT="$WORK/reports"
mkdir -p "$OUT" "$WORK/tools"
# TLC runs a temporary copy of the jar: it prints where it found the
# standard modules a spec EXTENDS (jar:file:<jar>!/...), and the retained
# output must name no path of this machine (the copy's is temporary).
TLC_JAR="$WORK/tools/tla2tools.jar"
cp "$TLA2TOOLS" "$TLC_JAR"
failures=()

ran=() # the reports run (all of them, or those ONLY selects)
selected() { # selected NAME: whether ONLY selects the report NAME
	[[ -z ${ONLY:-} || $1 =~ $ONLY ]] || return 1
	ran+=("$1")
}

sha() { sha256sum "$1" | cut -d' ' -f1; }
json_str() { # a JSON string literal for $1 (no control characters expected)
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\t'/\\t}
	printf '"%s"' "$s"
}

# write_manifest DIR REPORT TOOL VERSION BINARY CWD EXIT VERDICT COMMAND SPEC...
write_manifest() {
	local dir=$1 report=$2 tool=$3 version=$4 binary=$5 cwd=$6 code=$7 verdict=$8 cmd=$9
	shift 9
	local f first
	{
		printf '{\n'
		printf '  "report": %s,\n' "$(json_str "$report")"
		printf '  "tool": %s,\n' "$(json_str "$tool")"
		printf '  "tool_version": %s,\n' "$(json_str "$version")"
		printf '  "tool_binary_sha256": %s,\n' "$(json_str "$( [[ -f $binary ]] && sha "$binary" || echo "absent: $binary")")"
		printf '  "command": %s,\n' "$(json_str "$cmd")"
		printf '  "cwd": %s,\n' "$(json_str "$cwd")"
		printf '  "exit_code": %d,\n' "$code"
		printf '  "verdict": %s,\n' "$(json_str "$verdict")"
		printf '  "specs": ['
		first=1
		for f in "$@"; do
			((first)) || printf ','
			first=0
			printf '\n    {"path": %s, "sha256": %s}' "$(json_str "$f")" "$(json_str "$(sha "$ROOT/$f")")"
		done
		printf '\n  ],\n  "files": ['
		first=1
		for f in $(cd "$dir" && ls | sort); do
			((first)) || printf ','
			first=0
			printf '\n    {"path": %s, "sha256": %s}' "$(json_str "$f")" "$(json_str "$(sha "$dir/$f")")"
		done
		printf '\n  ],\n'
		printf '  "generated": %s\n' "$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")"
		printf '}\n'
	} >"$WORK/manifest-$report.json"
	mv "$WORK/manifest-$report.json" "$dir/manifest.json"
}

# run_tlc NAME TLA CFG [PROPERTY]: TLC on spec TLA with configuration CFG
# (paths under the repository), from a temporary copy so that its output
# names no checkout path. Without PROPERTY it must find no error and dump
# the state graph; with it (a mutant) it must report PROPERTY violated.
run_tlc() {
	local name=$1 tla=$2 cfg=$3 prop=${4:-}
	selected "$name" || return 0
	local run="$WORK/run-$name" dir="$OUT/$name" base cbase
	base="$(basename "$tla")" cbase="$(basename "$cfg")"
	mkdir -p "$run" "$dir"
	cp "$ROOT/$tla" "$ROOT/$cfg" "$run/"
	local cmd=("$JAVA" -XX:+UseParallelGC -cp "$TLC_JAR" tlc2.TLC -fp 0 -workers 1)
	[[ -z $prop ]] && cmd+=(-dump dot,actionlabels states.dot)
	cmd+=(-metadir states -noGenerateSpecTE -config "$cbase" "$base")
	echo "formal: TLC: (cd $run && ${cmd[*]})"
	local code=0
	(cd "$run" && "${cmd[@]}") >"$dir/stdout.txt" 2>&1 || code=$?
	[[ -z $prop && -f "$run/states.dot" ]] && cp "$run/states.dot" "$dir/states.dot"
	local version verdict shown
	version="$(head -1 "$dir/stdout.txt")"
	verdict="$(grep -m1 -E '^(Model checking completed\.|Error: (Invariant|Action property) )' "$dir/stdout.txt" || true)"
	# The command as anyone can rerun it: the tools by their variables.
	shown="${cmd[*]}"
	shown="${shown//$TLC_JAR/\$TLA2TOOLS}"
	write_manifest "$dir" "$name" TLC "$version" "$TLA2TOOLS" "(a temporary copy of $tla and $cfg)" "$code" "$verdict" "$shown" \
		"$tla" "$cfg"
	echo "formal: TLC $tla: exit $code; $verdict; $(grep -m1 'distinct states found' "$dir/stdout.txt" || echo 'no summary')"
	if [[ -z $prop ]]; then
		if [[ $code -ne 0 || $verdict != "Model checking completed. No error has been found." || ! -f $dir/states.dot ]]; then
			failures+=("TLC on $tla: exit $code, verdict '${verdict:-none}' (want exit 0 and no error)")
		fi
	elif [[ $verdict != "Error: Invariant $prop is violated." && $verdict != "Error: Action property $prop is violated." ]]; then
		failures+=("TLC on $tla: exit $code, verdict '${verdict:-none}' (want $prop violated)")
	fi
}

# run_fizz NAME SPEC WANT [INVARIANT]: FizzBee on SPEC, wanting verdict WANT.
run_fizz() {
	local name=$1 spec=$2 want=$3 inv=${4:-}
	selected "$name" || return 0
	local run="$WORK/run-$name" dir="$OUT/$name" base
	base="$(basename "$spec")"
	mkdir -p "$run" "$dir"
	cp "$ROOT/$spec" "$run/"
	local cmd=("$FIZZ" "$base")
	echo "formal: FizzBee: (cd $run && ${cmd[*]})"
	local code=0
	(cd "$run" && "${cmd[@]}") >"$dir/stdout.txt" 2>&1 || code=$?
	local outdir
	outdir="$(find "$run/out" -mindepth 1 -maxdepth 1 -type d -name 'run_*' 2>/dev/null | sort | tail -1 || true)"
	if [[ -n $outdir ]]; then
		local f
		for f in graph.dot state_config.json error-graph.json \
			nodes_000000_of_000000.pb adjacency_lists_000000_of_000000.pb \
			nodes_errors.pb adjacency_lists_errors.pb; do
			[[ -f "$outdir/$f" ]] && cp "$outdir/$f" "$dir/$f"
		done
	fi
	local verdict shown
	verdict="$(grep -m1 -E '^(PASSED|FAILED)' "$dir/stdout.txt" || true)"
	shown="${cmd[*]}"
	shown="${shown//$FIZZ/\$FIZZ}"
	write_manifest "$dir" "$name" FizzBee "$FIZZ_VERSION" "$FIZZBEE_BIN" "(a temporary copy of $spec)" "$code" "$verdict" "$shown" "$spec"
	echo "formal: FizzBee $spec: exit $code; ${verdict:-no verdict line}; $(grep -m1 'Unique states' "$dir/stdout.txt" || true)"
	if [[ $code -ne 0 || $verdict != "$want"* || ($want == FAILED && $verdict != *"$inv"*) ]]; then
		failures+=("FizzBee on $spec: exit $code, verdict '${verdict:-none}' (want exit 0 and $want${inv:+ $inv})")
	fi
}

run_tlc tlc-program spec/Program.tla spec/Program.cfg
# The spec mutants (model/program's Mutants): each must break its property.
run_tlc tlc-program-publish-from-staging spec/mutants/Program_publish_from_staging.tla spec/mutants/Program_publish_from_staging.cfg PublishedOnlyVerified
run_tlc tlc-program-failed-to-published spec/mutants/Program_failed_to_published.tla spec/mutants/Program_failed_to_published.cfg PublishedOnlyVerified
run_tlc tlc-program-leave-published spec/mutants/Program_leave_published.tla spec/mutants/Program_leave_published.cfg FailedNeverPublished
run_tlc tlc-program-interrupt-after-published spec/mutants/Program_interrupt_after_published.tla spec/mutants/Program_interrupt_after_published.cfg PublicationIsTerminal
run_fizz fizzbee-session spec/session.fizz PASSED
run_fizz fizzbee-session-no-compaction-teardown spec/mutants/session_no_compaction_teardown.fizz FAILED ChildrenDieWithParent
run_fizz fizzbee-session-no-vad-teardown spec/mutants/session_no_vad_teardown.fizz FAILED ChildrenDieWithParent
run_fizz fizzbee-session-no-resp-teardown spec/mutants/session_no_resp_teardown.fizz FAILED ChildrenDieWithParent
run_fizz fizzbee-session-child-starts-after-teardown spec/mutants/session_child_starts_after_teardown.fizz FAILED ChildrenDieWithParent
# The per-machine specs of seed 001 (M1-M5, spec/machines; model/machines):
# each as written, then each mutant, which must break its invariant.
run_tlc tlc-machine-tts spec/machines/TTS.tla spec/machines/TTS.cfg
run_tlc tlc-machine-tts-cancel-keeps-audio spec/machines/mutants/TTS_cancel_keeps_audio.tla spec/machines/mutants/TTS_cancel_keeps_audio.cfg NoAudioAfterEnd
run_tlc tlc-machine-tts-close-twice spec/machines/mutants/TTS_close_twice.tla spec/machines/mutants/TTS_close_twice.cfg CloseOnce
run_tlc tlc-machine-compaction spec/machines/Compaction.tla spec/machines/Compaction.cfg
run_tlc tlc-machine-compaction-fire-and-forget spec/machines/mutants/Compaction_fire_and_forget.tla spec/machines/mutants/Compaction_fire_and_forget.cfg NoneAfterTeardown
run_tlc tlc-machine-response spec/machines/Response.tla spec/machines/Response.cfg
run_tlc tlc-machine-response-supersede-keeps-old spec/machines/mutants/Response_supersede_keeps_old.tla spec/machines/mutants/Response_supersede_keeps_old.cfg AtMostOneLive
run_tlc tlc-machine-response-shutdown-leaves-response spec/machines/mutants/Response_shutdown_leaves_response.tla spec/machines/mutants/Response_shutdown_leaves_response.cfg NoneAfterTeardown
run_tlc tlc-machine-connection spec/machines/Connection.tla spec/machines/Connection.cfg
run_tlc tlc-machine-connection-teardown-per-exit spec/machines/mutants/Connection_teardown_per_exit.tla spec/machines/mutants/Connection_teardown_per_exit.cfg TeardownOnce
run_tlc tlc-machine-turn spec/machines/Turn.tla spec/machines/Turn.cfg
run_tlc tlc-machine-turn-abort-keeps-turn spec/machines/mutants/Turn_abort_keeps_turn.tla spec/machines/mutants/Turn_abort_keeps_turn.cfg TurnIsSpeech

if ((${#ran[@]} == 0)); then
	echo "formal: ONLY=$ONLY selects no report" >&2
	exit 2
fi
live='^TestLive$'
if [[ -n ${ONLY:-} ]]; then
	live+="/^($(IFS='|'; echo "${ran[*]}"))\$"
fi
echo "formal: comparing the fresh graphs with the Go model"
if ! (cd "$ROOT" && CONFORM_LIVE_DIR="$OUT" "$GO" test -count=1 -run "$live" -v ./conform/); then
	failures+=("the fresh tool output does not conform to the Go model (see the go test output above)")
fi

if ((${#failures[@]})); then
	printf 'formal: FAIL: %s\n' "${failures[@]}" >&2
	[[ "${REGEN:-}" == 1 ]] && echo "formal: REGEN=1 refused: the retained reports are left as they were" >&2
	exit 1
fi
if [[ "${REGEN:-}" == 1 ]]; then
	mkdir -p "$REPORTS"
	for d in "$OUT"/*/; do
		name="$(basename "$d")"
		rm -rf "${REPORTS:?}/$name"
		cp -R "$d" "$REPORTS/$name"
		echo "formal: REGEN: wrote formal-verification/reports/$name"
	done
fi
echo "formal: PASS: TLC and FizzBee agree with the Go model"
