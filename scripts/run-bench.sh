#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the JMH benchmarks and records how: JMH's JSON, a log, and a properties file describing the
# machine and the command, which metrale.bench.report.ResultsPage reads beside the JSON.
#
#   [OUT=DIR] [RUN_NAME=NAME] [JAVA=java] [BENCH_JAR=jar] run-bench.sh [JMH ARGS...]
#
# In a bundle made by scripts/gpu-bundle.sh, JAVA and BENCH_JAR default to the bundle's jlinked
# runtime and benchmarks.jar. With no JMH arguments it runs the CUDA benchmarks with the settings
# used for the published H200 results. Writes OUT/NAME-jmh.json, OUT/NAME-meta.properties and
# OUT/NAME.log (OUT defaults to ./results, NAME to jmh). Exit status: JMH's.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
java="${JAVA:-$here/jre/bin/java}"
jar="${BENCH_JAR:-$here/benchmarks.jar}"
out="${OUT:-$PWD/results}"
name="${RUN_NAME:-jmh}"
mkdir -p "$out"
if [ $# -eq 0 ]; then
    set -- 'metrale\.bench\.cuda\.' -f 1 -wi 3 -w 1s -i 5 -r 1s -prof gc
fi
args=(-rf json -rff "$out/$name-jmh.json" "$@")

gpu="$(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1)"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //') x $(nproc 2>/dev/null) cores"
{
    echo "machine=$(uname -srm), $(awk '/MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo 2>/dev/null)"
    echo "cpu=$cpu"
    [ -n "$gpu" ] && echo "gpu=$gpu"
    [ -n "$driver" ] && echo "driver=$driver"
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "command=java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar ${args[*]//\\/\\\\}"
} > "$out/$name-meta.properties"

set -o pipefail
"$java" --enable-native-access=ALL-UNNAMED -jar "$jar" "${args[@]}" 2>&1 | tee "$out/$name.log"
