#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs the side-by-side measurements (sidebyside.c on the CUDA driver API, sidebyside.py
# on PyTorch and CuPy) and writes their rows as one JSON array, which
# metrale.bench.report.ResultsPage reads beside the JMH results of the same run.
#
#   [OUT=DIR] [RUN_NAME=NAME] [NVCC=nvcc] [PYTHON=python3] [SCALE=1] bash run.sh
#
# Writes DIR/sidebyside.json, or DIR/NAME-sidebyside.json with RUN_NAME (the name of the JMH run
# it belongs to, as run-bench.sh's RUN_NAME), and DIR/NAME-sidebyside.log (OUT defaults to
# ./results). A missing Python, torch or CuPy gives "skipped" rows, not a failure. Exit status:
# non-zero if the C program fails to build or run, or if the Python script fails for any reason
# but a missing library; the JSON is still written with what was measured.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$PWD/results}"
name="${RUN_NAME:+$RUN_NAME-}sidebyside"
nvcc="${NVCC:-nvcc}"
python="${PYTHON:-python3}"
scale="${SCALE:-1}"
mkdir -p "$out"
json="$out/$name.json"
log="$out/$name.log"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
: > "$log"
status=0

# Each side prints one JSON object per line; a side that cannot run adds a row saying why.
if ! command -v "$nvcc" > /dev/null; then
    echo "run.sh: $nvcc not found: the C side needs the CUDA toolkit's nvcc" | tee -a "$log" >&2
    echo "{\"name\": \"c\", \"ns\": null, \"skipped\": \"$nvcc not found\"}" > "$work/c.jsonl"
    status=1
elif ! "$nvcc" -O2 "$here/sidebyside.c" -lcuda -o "$work/sidebyside" >> "$log" 2>&1; then
    echo "run.sh: building sidebyside.c failed; see $log" >&2
    echo '{"name": "c", "ns": null, "skipped": "sidebyside.c did not build"}' > "$work/c.jsonl"
    status=1
elif ! "$work/sidebyside" "$scale" > "$work/c.jsonl" 2>> "$log"; then
    echo "run.sh: sidebyside failed; see $log" >&2
    echo '{"name": "c", "ns": null, "skipped": "sidebyside failed; see the log"}' >> "$work/c.jsonl"
    status=1
fi

if ! command -v "$python" > /dev/null; then
    echo "run.sh: $python not found: the Python side is skipped" | tee -a "$log" >&2
    echo "{\"name\": \"py\", \"ns\": null, \"skipped\": \"$python not found\"}" > "$work/py.jsonl"
elif ! "$python" "$here/sidebyside.py" "$scale" > "$work/py.jsonl" 2>> "$log"; then
    echo "run.sh: sidebyside.py failed; see $log" >&2
    echo '{"name": "py", "ns": null, "skipped": "sidebyside.py failed; see the log"}' >> "$work/py.jsonl"
    status=1
fi

{
    echo '['
    cat "$work/c.jsonl" "$work/py.jsonl" | grep -v '^[[:space:]]*$' | sed '$!s/$/,/'
    echo ']'
} > "$json"
cat "$log" >&2
echo "run.sh: wrote $json" >&2
cat "$json"
exit "$status"
