#!/usr/bin/env bash
# Run TLC on spec/TwoPhase.tla and keep what it printed in formal/tlc/:
# stdout.txt, states.dot (the state graph) and manifest.json (the tool,
# the command, the spec's sha256), which model_test.go compares with the
# Go transcription. TLA2TOOLS is the path to tla2tools.jar.
#
#   TLA2TOOLS=/path/to/tla2tools.jar bash formal/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -n "${TLA2TOOLS:-}" && -f "$TLA2TOOLS" ]] || { echo "formal/run.sh: set TLA2TOOLS to tla2tools.jar" >&2; exit 2; }
JAVA="${JAVA:-java}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp spec/TwoPhase.tla spec/TwoPhase.cfg "$work/"
cmd=("$JAVA" -XX:+UseParallelGC -cp "$TLA2TOOLS" tlc2.TLC -fp 0 -workers 1 -dump dot,actionlabels states.dot
	-metadir states -noGenerateSpecTE -config TwoPhase.cfg TwoPhase.tla)
code=0
(cd "$work" && "${cmd[@]}") >"$work/stdout.txt" 2>&1 || code=$?
verdict="$(grep -m1 -E '^(Model checking completed\.|Error:)' "$work/stdout.txt" || true)"
[[ $code -eq 0 && $verdict == "Model checking completed. No error has been found." ]] || {
	cat "$work/stdout.txt" >&2
	echo "formal/run.sh: TLC failed (exit $code)" >&2
	exit 1
}
out=formal/tlc
rm -rf "$out" && mkdir -p "$out"
cp "$work/stdout.txt" "$work/states.dot" "$out/"
sha() { sha256sum "$1" | cut -d' ' -f1; }
shown="${cmd[*]}"
shown="${shown//$TLA2TOOLS/\$TLA2TOOLS}"
cat >"$out/manifest.json" <<JSON
{
  "report": "tlc",
  "tool": "TLC",
  "tool_version": "$(head -1 "$out/stdout.txt")",
  "tool_binary_sha256": "$(sha "$TLA2TOOLS")",
  "command": "$shown",
  "cwd": "(a temporary copy of spec/TwoPhase.tla and spec/TwoPhase.cfg)",
  "exit_code": $code,
  "verdict": "$verdict",
  "specs": [
    {"path": "spec/TwoPhase.tla", "sha256": "$(sha spec/TwoPhase.tla)"},
    {"path": "spec/TwoPhase.cfg", "sha256": "$(sha spec/TwoPhase.cfg)"}
  ],
  "files": [
    {"path": "states.dot", "sha256": "$(sha "$out/states.dot")"},
    {"path": "stdout.txt", "sha256": "$(sha "$out/stdout.txt")"}
  ],
  "generated": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
JSON
echo "formal/run.sh: $verdict $(grep -m1 'distinct states found' "$out/stdout.txt")"
