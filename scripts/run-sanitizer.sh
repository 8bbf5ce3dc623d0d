#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs the CUDA suite and the demo from a bundle made by scripts/gpu-bundle.sh under NVIDIA's
# compute-sanitizer (memcheck: out-of-bounds and misaligned device accesses, invalid frees), one
# JVM per test class so that each error is charged to the class that made it, then prints the
# error count per class. The simulator's classes in the bundle (Sim*) are left out: they make no
# CUDA work. About 30 JVMs; CLASSES picks a few.
#
#   bash BUNDLE/run-sanitizer.sh [LOG_DIR]     # default: $OUT, else BUNDLE/sanitizer
#   COMPUTE_SANITIZER=/path/to/compute-sanitizer bash BUNDLE/run-sanitizer.sh
#   SANITIZER_ARGS="--tool initcheck" bash BUNDLE/run-sanitizer.sh   # extra or overriding flags
#   CLASSES="metrale.gpu.cuda.contract.CudaMemoryContractTest" bash ...  # only these classes
#
# LOG_DIR receives one sanitizer log and one JUnit report folder per class (CLASS.log,
# reports/CLASS/), demo.log and summary.txt. Exit status: 0 only if the sanitizer found no error
# and every test passed.
#
# The flags, and why:
#   --tool memcheck            device memory errors in kernels and in the driver's copies.
#   --target-processes all     the JVM is the process to check, and the java launcher may re-exec
#                              itself; without it a child process would go unchecked.
#   --report-api-errors no     the suite calls the driver with bad arguments on purpose (a null
#                              pointer, a size past an allocation, a destroyed handle) and asserts
#                              on the CUresult; memcheck would report each as an API error. Kernel
#                              and copy errors are still reported. SANITIZER_ARGS="--report-api-errors
#                              explicit" shows them.
#   --check-api-memory no      the same bad-input tests hand some memory calls (cuMemcpy*, cuMemset*)
#                              ranges outside any allocation on purpose, to assert on the error;
#                              memcheck would count each as an error of the test. SANITIZER_ARGS=
#                              "--check-api-memory yes" checks them too.
#   --error-exitcode 86        a run with errors is told apart from a failing test (exit 1).
# The JVM itself never touches device memory, so what memcheck reports is the CUDA work the tests
# make. Classes that cause a sticky device fault on purpose (tags sticky-driver, sticky-runtime,
# sticky-contract) are left out: the faults they plant are real illegal accesses that memcheck
# would report, and they say nothing about the runtime.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
java="$here/jre/bin/java"
out="${1:-${OUT:-$here/sanitizer}}"
mkdir -p "$out/reports"
out="$(cd "$out" && pwd)"

sanitizer="${COMPUTE_SANITIZER:-}"
if [ -z "$sanitizer" ]; then
    sanitizer="$(command -v compute-sanitizer 2>/dev/null || true)"
fi
if [ -z "$sanitizer" ]; then
    # The toolkit's usual homes, newest version first.
    for c in /usr/local/cuda/bin/compute-sanitizer $(ls -d /usr/local/cuda-*/bin/compute-sanitizer 2>/dev/null | sort -rV) \
             /usr/local/cuda/compute-sanitizer/compute-sanitizer /opt/nvidia/*/compute-sanitizer/compute-sanitizer; do
        if [ -x "$c" ]; then sanitizer="$c"; break; fi
    done
fi
if [ -z "$sanitizer" ] || [ ! -x "$sanitizer" ]; then
    echo "run-sanitizer: compute-sanitizer not found (PATH, /usr/local/cuda*/bin); set COMPUTE_SANITIZER=/path/to/it" >&2
    exit 2
fi

cp="$here/test-classes:$(ls "$here"/lib/*.jar | tr '\n' ':')"
nvrtc_flag=()
if ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then
    for f in /usr/local/cuda/lib64/libnvrtc.so /usr/local/cuda/lib64/libnvrtc.so.* $(ls /usr/local/cuda-*/lib64/libnvrtc.so* 2>/dev/null); do
        if [ -f "$f" ] && [[ "$f" != *builtins* ]] && [[ "$f" != *alt* ]]; then nvrtc_flag=("-Dmetrale.nvrtc.library=$f"); break; fi
    done
fi
# Kernels run many times slower under memcheck: a generous per-test timeout.
jvm=("$java" --enable-native-access=ALL-UNNAMED -Dmetrale.gpu.required=true \
     -Djunit.jupiter.execution.timeout.default=900s -Djunit.jupiter.execution.timeout.thread.mode.default=SEPARATE_THREAD \
     "${nvrtc_flag[@]}" ${JAVA_OPTS:-})
san=("$sanitizer" --tool memcheck --target-processes all --report-api-errors no --check-api-memory no \
     --error-exitcode 86 ${SANITIZER_ARGS:-})
echo "sanitizer: $sanitizer ($("$sanitizer" --version 2>/dev/null | grep -i version | head -1)); java: $("$java" -version 2>&1 | head -1)"
echo "logs: $out"

classes="${CLASSES:-$(cd "$here/test-classes" && find . -name '*.class' ! -name '*$*' | sed 's|^\./||; s|\.class$||; s|/|.|g' \
    | grep -E '(^|\.)(Test[^.]*|[^.]*Tests?|[^.]*Properties)$' | grep -vE '\.(Sim[^.]*|TestMethods)$' | sort)}"
status=0
summary="$out/summary.txt"
: > "$summary"
errors_of() {
    # compute-sanitizer ends its log with "========= ERROR SUMMARY: N errors"; no line means it did not finish.
    local n
    n="$(grep -o 'ERROR SUMMARY: [0-9]*' "$1" 2>/dev/null | tail -1 | grep -o '[0-9]*$')"
    echo "${n:-?}"
}
for cls in $classes; do
    log="$out/$cls.log"
    "${san[@]}" --log-file "$log" "${jvm[@]}" -jar "$here/junit-platform-console-standalone.jar" execute \
        --class-path "$cp" --select-class "$cls" \
        --exclude-tag sticky-driver --exclude-tag sticky-runtime --exclude-tag sticky-contract \
        --details=summary --disable-banner --disable-ansi-colors --reports-dir "$out/reports/$cls" > "$out/$cls.out" 2>&1
    rc=$?
    n="$(errors_of "$log")"
    tests="$(grep -o '[0-9]* tests successful' "$out/$cls.out" | head -1 | grep -o '^[0-9]*')"
    failed="$(grep -o '[0-9]* tests failed' "$out/$cls.out" | head -1 | grep -o '^[0-9]*')"
    if [ "$n" = "?" ] && grep -q 'terminated before first instrumented API call' "$log" 2>/dev/null \
            && [ "${failed:-0}" = 0 ]; then
        # A class that made no CUDA call (only sticky-tagged tests, which are left out, or a test of
        # the binding's parsing): memcheck then exits 255 with nothing to check, which is not an error.
        n="none (no CUDA work)"
        rc=0
    fi
    line="$(printf '%-70s sanitizer errors: %-4s tests passed: %-4s failed: %-4s exit: %s' "$cls" "$n" "${tests:-?}" "${failed:-?}" "$rc")"
    echo "$line" | tee -a "$summary"
    if [ "$rc" -ne 0 ] || { [ "$n" != 0 ] && [ "$n" != "none (no CUDA work)" ]; }; then status=1; fi
done

echo "=== demo (--backend cuda)"
"${san[@]}" --log-file "$out/demo.log" "$java" --enable-native-access=metrale.gpu.cuda --add-modules metrale.gpu.cuda \
    -p "$here/demo" -m metrale.examples/metrale.examples.HeatDemo --backend cuda > "$out/demo.out" 2>&1
rc=$?
n="$(errors_of "$out/demo.log")"
line="$(printf '%-70s sanitizer errors: %-4s result: %-4s exit: %s' "demo" "$n" "$(tail -1 "$out/demo.out")" "$rc")"
echo "$line" | tee -a "$summary"
if [ "$rc" -ne 0 ] || [ "$n" != 0 ]; then status=1; fi

total="$(awk '{for (i = 1; i <= NF; i++) if ($i == "errors:" && $(i+1) ~ /^[0-9]+$/) s += $(i+1)} END {print s + 0}' "$summary")"
echo "=== sanitizer errors in all: $total (per class: $summary; details: $out/CLASS.log)"
echo "=== overall: $([ $status -eq 0 ] && echo CLEAN || echo 'NOT CLEAN')"
exit $status
