#!/usr/bin/env bash
# Run TLC's trace validation (spec/TraceProgram.tla, in the style of
# etcd-raft's Traceetcdraft.tla) over every Program trace in traces/program/
# and in harness/tlccross/testdata/ (edge cases: composites, stutters,
# partial states, truncation, bad input), and retain its verdicts in formal-verification/tlc-traces/verdicts.tsv;
# then check that tracecheck agrees (go test ./harness/tlccross).
#
#   TLA2TOOLS=/path/to/tla2tools.jar [COMMUNITY_MODULES=/path/to/CommunityModules-deps.jar] make tlc-traces
#
# COMMUNITY_MODULES defaults to CommunityModules-deps.jar beside tla2tools.jar.
# Optional: JAVA (default: java), GO (default: go), PYTHON (default: python3).
#
# TraceProgram.tla validates one instance a file, as etcd-raft validates one
# file at a time: a file with several instances is split first, its lines
# copied verbatim into one file per instance. A last line without its '\n'
# (a writer killed mid-line) is dropped before TLC reads the file, as
# tracecheck's decoder drops it; the instance it belongs to (every instance,
# if the partial line does not name one) is then at best incomplete, as in
# tracecheck.
#
# TLC's result maps to tracecheck's verdicts as spec/TraceProgram.tla says:
#   exit 0                                     valid
#   exit 12 "Invariant TraceComplete"          incomplete
#   exit 10 "Postcondition TraceMatched"       violation
#   exit 12/13 naming another invariant or property   violation
#   exit 10 "assumption"                       input-error
#   anything else                              error (TLC failed; nothing retained)
#
# verdicts.tsv has one line per (trace, instance): the trace's path, the
# instance, TLC's exit code, the mapped verdict, TLC's version line, the
# sha256 of spec/TraceProgram.tla, spec/TraceProgram.cfg, spec/Program.tla
# and of the trace file. logs/ keeps each TLC run's output.
#
# Exit status: 0 when TLC ran on every trace and tracecheck agrees with every
# verdict; 1 otherwise; 2 when TLC is not configured.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/formal-verification/tlc-traces"
JAVA="${JAVA:-java}"
GO="${GO:-go}"
PYTHON="${PYTHON:-python3}"

if [[ -z "${TLA2TOOLS:-}" ]]; then
	echo "make tlc-traces: TLA2TOOLS (path to tla2tools.jar) is not set; nothing was run." >&2
	echo "make tlc-traces: 'go test ./harness/tlccross' checks the retained verdicts without TLC." >&2
	echo "make tlc-traces: usage: TLA2TOOLS=/path/to/tla2tools.jar [COMMUNITY_MODULES=/path/to/CommunityModules-deps.jar] make tlc-traces" >&2
	exit 2
fi
[[ -f "$TLA2TOOLS" ]] || { echo "make tlc-traces: TLA2TOOLS=$TLA2TOOLS: no such file" >&2; exit 2; }
TLA2TOOLS="$(cd "$(dirname "$TLA2TOOLS")" && pwd)/$(basename "$TLA2TOOLS")"
COMMUNITY_MODULES="${COMMUNITY_MODULES:-$(dirname "$TLA2TOOLS")/CommunityModules-deps.jar}"
[[ -f "$COMMUNITY_MODULES" ]] || { echo "make tlc-traces: COMMUNITY_MODULES=$COMMUNITY_MODULES: no such file (the TLA+ CommunityModules jar, for Json and IOUtils)" >&2; exit 2; }
COMMUNITY_MODULES="$(cd "$(dirname "$COMMUNITY_MODULES")" && pwd)/$(basename "$COMMUNITY_MODULES")"
command -v "$JAVA" >/dev/null || { echo "make tlc-traces: $JAVA not found (set JAVA)" >&2; exit 2; }
command -v "$PYTHON" >/dev/null || { echo "make tlc-traces: $PYTHON not found (set PYTHON)" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/tracecheck-tlc-traces.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/split" "$WORK/logs"

sha() { sha256sum "$1" | cut -d' ' -f1; }
# TLC runs on copies of the specs and the jars in a temporary directory, so
# that its logs name no path of this machine's checkout or tool install.
mkdir -p "$WORK/spec" "$WORK/tools"
cp "$ROOT/spec/TraceProgram.tla" "$ROOT/spec/TraceProgram.cfg" "$ROOT/spec/Program.tla" "$WORK/spec/"
cp "$TLA2TOOLS" "$WORK/tools/tla2tools.jar"
cp "$COMMUNITY_MODULES" "$WORK/tools/CommunityModules-deps.jar"
TOOLS_SHA="$(sha "$TLA2TOOLS")"
CM_SHA="$(sha "$COMMUNITY_MODULES")"
SPEC_SHA="$(sha "$ROOT/spec/TraceProgram.tla")"
CFG_SHA="$(sha "$ROOT/spec/TraceProgram.cfg")"
PROGRAM_SHA="$(sha "$ROOT/spec/Program.tla")"

# split TRACE OUTDIR: one file per instance, lines verbatim, in order of
# first appearance; prints "instance<TAB>file<TAB>truncated(0/1)" per
# instance. A partial last line is dropped and marks its instance (or, if it
# names none, every instance) truncated. A header line (docs/trace-format.md:
# what the trace is, not an event) is left out. A line that is not JSON
# leaves the whole file as one piece, instance "-", for TLC to reject.
split() {
	"$PYTHON" - "$1" "$2" <<'EOF'
import json, re, sys
src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
lines = data.split(b"\n")
partial = lines.pop()  # b"" when the file ends with "\n"
cut = None
if partial.strip():
    m = re.search(rb'"instance"\s*:\s*"((?:[^"\\]|\\.)*)"', partial)
    cut = json.loads(b'"' + m.group(1) + b'"') if m else ""
groups, order = {}, []
try:
    for line in lines:
        if not line.strip():
            continue
        obj = json.loads(line)
        if isinstance(obj, dict) and "tracecheck" in obj and "instance" not in obj:
            continue  # the trace's header
        inst = obj["instance"]
        if not isinstance(inst, str):
            raise ValueError("instance is not a string")
        if inst not in groups:
            groups[inst] = []
            order.append(inst)
        groups[inst].append(line + b"\n")
except Exception:
    groups, order = {"-": [l + b"\n" for l in lines]}, ["-"]
if not order:  # an empty file, or only a partial line: TLC reads it as it is
    groups, order = {"-": [l + b"\n" for l in lines]}, ["-"]
for n, inst in enumerate(order):
    path = "%s/%03d.ndjson" % (out, n)
    with open(path, "wb") as f:
        f.writelines(groups[inst])
    trunc = cut is not None and (cut == "" or cut == inst or inst == "-")
    print("%s\t%s\t%d" % (inst, path, trunc))
EOF
}

# verdict EXIT LOG: TLC's result as a tracecheck verdict.
verdict() {
	local code=$1 log=$2
	case $code in
	0) echo valid ;;
	10)
		if grep -q 'Postcondition TraceMatched' "$log"; then echo violation
		elif grep -qiE 'Evaluating assumption|Assumption .* is false' "$log"; then echo input-error
		else echo error; fi ;;
	12 | 13)
		if grep -q 'Invariant TraceComplete is violated' "$log"; then echo incomplete
		elif grep -qE 'Invariant [A-Za-z]+ is violated|property [A-Za-z]+ (was|is) violated' "$log"; then echo violation
		else echo error; fi ;;
	*) echo error ;;
	esac
}

rows=()
errors=()
n=0
tlc_version=""
while IFS= read -r trace; do
	rel="${trace#"$ROOT"/}"
	dir="$WORK/split/$n"
	mkdir -p "$dir"
	n=$((n + 1))
	while IFS=$'\t' read -r inst piece trunc; do
		run="$WORK/run-$n-$(basename "$piece" .ndjson)"
		mkdir -p "$run"
		log="$WORK/logs/$(basename "$(dirname "$trace")")--$(basename "$trace" .ndjson)--${inst//[^A-Za-z0-9._-]/_}.txt"
		[[ -e $log ]] && log="${log%.txt}-$n.txt" # two traces of one name in different directories
		cmd=("$JAVA" -XX:+UseParallelGC -cp "$WORK/tools/tla2tools.jar:$WORK/tools/CommunityModules-deps.jar" tlc2.TLC
			-workers 1 -noGenerateSpecTE -metadir "$run/states"
			-config "$WORK/spec/TraceProgram.cfg" "$WORK/spec/TraceProgram.tla")
		code=0
		(cd "$run" && TRACE="$piece" "${cmd[@]}") >"$log" 2>&1 || code=$?
		v="$(verdict "$code" "$log")"
		if [[ $trunc == 1 && $v == valid ]]; then
			v=incomplete
		fi
		version="$(head -1 "$log")"
		tlc_version="${tlc_version:-$version}"
		echo "tlc-traces: $rel [$inst]: TLC exit $code -> $v$([[ $trunc == 1 ]] && echo ' (truncated)')"
		[[ $v == error ]] && errors+=("$rel [$inst]: TLC exit $code, see $log")
		rows+=("$rel"$'\t'"$inst"$'\t'"$code"$'\t'"$v"$'\t'"$version"$'\t'"$SPEC_SHA"$'\t'"$CFG_SHA"$'\t'"$PROGRAM_SHA"$'\t'"$(sha "$trace")")
	done < <(split "$trace" "$dir")
done < <(find "$ROOT/traces/program" "$ROOT/harness/tlccross/testdata" -name '*.ndjson' -type f | LC_ALL=C sort)

if ((${#errors[@]})); then
	printf 'tlc-traces: FAIL: %s\n' "${errors[@]}" >&2
	echo "tlc-traces: the retained verdicts are left as they were" >&2
	exit 1
fi

mkdir -p "$DEST"
{
	echo "# TLC trace validation of traces/program/**/*.ndjson and harness/tlccross/testdata/*.ndjson with spec/TraceProgram.tla."
	echo "# Written by formal-verification/tlc-traces.sh (make tlc-traces); do not edit."
	echo "# TLC: $tlc_version; java: $("$JAVA" -version 2>&1 | head -1)"
	echo "# tla2tools.jar sha256 $TOOLS_SHA; CommunityModules-deps.jar sha256 $CM_SHA"
	echo "# command (in a temporary directory holding copies of the jars and of spec/TraceProgram.tla, .cfg, Program.tla): TRACE=<instance file> java -XX:+UseParallelGC -cp \$TLA2TOOLS:\$COMMUNITY_MODULES tlc2.TLC -workers 1 -noGenerateSpecTE -metadir <tmp> -config TraceProgram.cfg TraceProgram.tla"
	echo "# generated: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	printf '# %s\n' "$(printf '%s\t' trace instance tlc_exit verdict tlc_version traceprogram_tla_sha256 traceprogram_cfg_sha256 program_tla_sha256 trace_sha256 | sed 's/\t$//')"
	printf '%s\n' "${rows[@]}"
} >"$WORK/verdicts.tsv"
rm -rf "$DEST/logs"
mkdir -p "$DEST/logs"
cp "$WORK"/logs/*.txt "$DEST/logs/"
mv "$WORK/verdicts.tsv" "$DEST/verdicts.tsv"
echo "tlc-traces: wrote formal-verification/tlc-traces/verdicts.tsv (${#rows[@]} instances) and logs/"

echo "tlc-traces: checking that tracecheck agrees"
(cd "$ROOT" && "$GO" test -count=1 -run '^TestTLCVerdicts' -v ./harness/tlccross/)
