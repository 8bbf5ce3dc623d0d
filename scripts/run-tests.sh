#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the CUDA backend's test suite from a bundle made by scripts/gpu-bundle.sh, with
# -Dmetrale.gpu.required=true (a missing driver fails instead of skipping). Classes that cause a
# sticky device fault run in JVMs of their own. Then prints the context-binding measurements.
# Exit status: 0 only if every run passed.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
java="$here/jre/bin/java"
cp="$here/test-classes:$(ls "$here"/lib/*.jar | tr '\n' ':')"
reports="${REPORTS_DIR:-$here/reports}"
mkdir -p "$reports"

# NVRTC is optional; point the backend at one if the loader would not find it by itself.
nvrtc_flag=()
if ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then
    for c in /usr/local/cuda/lib64/libnvrtc.so* /usr/local/cuda-*/lib64/libnvrtc.so* \
             /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so* \
             $(ls -d /usr/lib/python3*/site-packages/nvidia/cu*/lib /opt/*/.venv/lib/python3*/site-packages/nvidia/cu*/lib \
                    /opt/*/.venv/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib 2>/dev/null | sed 's|$|/libnvrtc.so*|'); do
        for f in $c; do
            if [ -f "$f" ] && [[ "$f" != *builtins* ]] && [[ "$f" != *alt* ]]; then nvrtc_flag=("-Dmetrale.nvrtc.library=$f"); break 2; fi
        done
    done
fi
# NCCL, for the collective tests: the loader's, else a pip wheel's (nvidia-nccl-cu*), else absent (skipped).
nccl_flag=()
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2'; then
    for f in /usr/local/cuda/lib64/libnccl.so.2 /usr/lib/x86_64-linux-gnu/libnccl.so.2 \
             $(ls /usr/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 /usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2 \
                  /opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null); do
        if [ -f "$f" ]; then nccl_flag=("-Dmetrale.nccl.library=$f"); break; fi
    done
    # The wheel PyTorch depends on (nvidia-nccl-cu*), wherever that python keeps it.
    if [ ${#nccl_flag[@]} -eq 0 ] && command -v python3 >/dev/null; then
        f="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)"
        [ -n "$f" ] && [ -f "$f" ] && nccl_flag=("-Dmetrale.nccl.library=$f")
    fi
fi
echo "java: $("$java" -version 2>&1 | head -1); nvrtc: ${nvrtc_flag[*]:-found by the loader or absent}; nccl: ${nccl_flag[*]:-found by the loader or absent}"

# A test that hangs fails after 120 s, naming itself, instead of stalling the whole run.
jvm=("$java" --enable-native-access=ALL-UNNAMED -Dmetrale.gpu.required=true \
     -Djunit.jupiter.execution.timeout.default=120s -Djunit.jupiter.execution.timeout.thread.mode.default=SEPARATE_THREAD "${nvrtc_flag[@]}" "${nccl_flag[@]}" ${JAVA_OPTS:-})
status=0
run() {
    local name="$1"; shift
    # The launcher's default class-name filter would drop the jqwik *Properties classes.
    local select=(--scan-class-path "$here/test-classes" --include-classname '^(Test.*|.+[.$]Test.*|.*Tests?|.*Properties)$')
    [[ "$*" == *--select-method* ]] && select=()
    echo "=== $name"
    "${jvm[@]}" -jar "$here/junit-platform-console-standalone.jar" execute \
        --class-path "$cp" --fail-if-no-tests \
        --details=tree --disable-banner --disable-ansi-colors --reports-dir "$reports/$name" "${select[@]}" "$@"
    local rc=$?
    echo "=== $name: exit $rc"
    [ $rc -eq 0 ] || status=1
}
run main --exclude-tag sticky-driver --exclude-tag sticky-runtime --exclude-tag sticky-contract --exclude-tag lifetime
# The lifetime and misuse contract races close, frees and destroys against other threads: a bug
# there is a SIGSEGV, so each test method gets a JVM of its own and one crash hides no other result.
for m in $("${jvm[@]}" -cp "$cp$here/junit-platform-console-standalone.jar" metrale.gpu.cuda.contract.TestMethods metrale.gpu.cuda.contract.CudaLifetimeContractTest); do
    run "lifetime-${m#*#}" --select-method "$m" --include-tag lifetime
done
run sticky-driver --include-tag sticky-driver
run sticky-runtime --include-tag sticky-runtime
# Every fault-contract test poisons its process: one JVM per test method.
for m in $("${jvm[@]}" -cp "$cp$here/junit-platform-console-standalone.jar" metrale.gpu.cuda.contract.TestMethods metrale.gpu.cuda.contract.CudaFaultContractTest); do
    run "fault-${m#*#}" --select-method "$m" --include-tag sticky-contract
done

echo "=== summary"
for x in "$reports"/*/TEST-junit-jupiter.xml "$reports"/*/TEST-jqwik.xml; do
    [ -f "$x" ] || continue
    grep -o '<testsuite [^>]*' "$x" | sed -E 's/.*name="([^"]*)".*tests="([0-9]+)".*skipped="([0-9]+)".*failures="([0-9]+)".*errors="([0-9]+)".*/\1: tests=\2 skipped=\3 failures=\4 errors=\5/' \
        | sed "s|^|$(basename "$(dirname "$x")") |"
done

echo "=== data-parallel example (all-reduce) on every GPU"
"${jvm[@]}" -cp "$(ls "$here"/demo/*.jar | tr '\n' ':')" metrale.examples.DataParallelStep --backend cuda || status=1

echo "=== context binding cost"
"${jvm[@]}" -cp "$cp" metrale.gpu.cuda.internal.CtxBindBenchmark || status=1
crashes=$(ls hs_err_pid*.log "$here"/hs_err_pid*.log 2>/dev/null | wc -l)
echo "=== JVM crash logs (hs_err_pid*.log): $crashes"
[ "$crashes" -eq 0 ] || status=1
echo "=== overall: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
