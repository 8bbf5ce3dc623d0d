#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds a self-contained bundle that runs the CUDA backend's tests on a GPU host with no Java,
# Maven or network: the module jars, the test classes and their test dependencies, the JUnit
# console launcher and a jlinked Java runtime, plus run-tests.sh.
#
#   scripts/gpu-bundle.sh [OUTPUT_DIR]      (default: .bundle in the repository root)
#
# Then on the GPU host: bash OUTPUT_DIR/run-tests.sh   (exit status 0 only if every test passed)
#                  and: OUT=DIR bash OUTPUT_DIR/run-bench.sh [JMH ARGS]   (the JMH benchmarks, JSON in DIR)
#                  and: bash OUTPUT_DIR/run-demo.sh [DEMO ARGS]   (the heat-diffusion demo, on CUDA when a driver loads)
#                  and: OUT=DIR bash OUTPUT_DIR/run-sanitizer.sh   (the CUDA suite and the demo under compute-sanitizer; summary in DIR)
#                  and: OUT=DIR [RUN_NAME=NAME] bash OUTPUT_DIR/sidebyside/run.sh   (the C driver-API, PyTorch and CuPy side-by-side; DIR/[NAME-]sidebyside.json)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/.bundle}"
: "${JAVA_HOME:=/usr/lib/jvm/temurin-25-jdk-amd64}"
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
console_version="1.14.4"   # the JUnit Platform of JUnit 5.14.4

cd "$root"
rm -rf "$out"
mkdir -p "$out/lib"

# Jars of the modules (the contract suite's among them: the test classes extend it), then every
# test-scope dependency of the cuda module. The nccl module's tests (collectives on every GPU, and
# on the simulator) run in the same bundle. -DskipTests still compiles the test classes.
./mvnw -q -pl modules/cuda,modules/nccl -am package dependency:copy-dependencies -DskipTests \
    -DincludeScope=test -DoutputDirectory="$out/lib"
cp modules/telemetry/target/metrale-telemetry-*.jar modules/api/target/metrale-gpu-0*.jar \
   modules/contract/target/metrale-gpu-contract-*.jar \
   modules/cuda/target/metrale-gpu-cuda-*.jar modules/nccl/target/metrale-gpu-nccl-*.jar "$out/lib/"
# The console launcher carries the JUnit Platform and Jupiter itself: a second copy of an engine
# on the class path stops the launcher ("multiple engines with the same ID").
rm -f "$out"/lib/junit-* "$out"/lib/opentest4j-* "$out"/lib/apiguardian-*
# Byte Buddy (9 MiB) serves only AssertJ's soft assertions and assumptions, which these tests do not use.
rm -f "$out"/lib/byte-buddy-*
# Javadoc and sources jars (the verify and package phases build them) are not code, and a sources
# jar on the module path would read as a second module of the same name.
rm -f "$out"/lib/*-javadoc.jar "$out"/lib/*-sources.jar
# No module builds a test-jar: one in a target folder is stale, and its classes would shadow the
# contract module's.
rm -f "$out"/lib/*-tests.jar
./mvnw -q dependency:copy -Dartifact="org.junit.platform:junit-platform-console-standalone:$console_version" \
    -DoutputDirectory="$out" -Dmdep.stripVersion=true

# Test classes as a directory: the launcher scans directories without the zip file system
# (jdk.zipfs), which the runtime below leaves out. Only the backends' own test classes are
# scanned; the abstract contract classes they extend come from the contract jar in lib/.
mkdir -p "$out/test-classes"
cp -R modules/cuda/target/test-classes/. modules/nccl/target/test-classes/. "$out/test-classes/"
rm -rf "$out/test-classes/META-INF"

jlink --add-modules java.base,java.logging,java.xml,jdk.jfr,java.management,jdk.management,jdk.unsupported \
      --strip-debug --no-header-files --no-man-pages --compress=zip-9 --output "$out/jre"

cp "$root/scripts/run-tests.sh" "$out/run-tests.sh"
chmod +x "$out/run-tests.sh"

# The JMH uber-jar (its own copy of every module, on the class path) and its runner.
./mvnw -q -pl benchmarks -am package -DskipTests
cp benchmarks/target/benchmarks.jar "$out/benchmarks.jar"
cp "$root/scripts/run-bench.sh" "$out/run-bench.sh"
chmod +x "$out/run-bench.sh"
# The demo and the module jars it runs on (the demo's own module path; see run-demo.sh).
./mvnw -q -pl examples -am package -DskipTests
mkdir -p "$out/demo"
cp examples/target/modules/*.jar "$out/demo/"
rm -f "$out"/demo/*-javadoc.jar "$out"/demo/*-sources.jar
for j in examples/target/metrale-examples-*.jar; do
    case "$j" in *-javadoc.jar|*-sources.jar|*-tests.jar) ;; *) cp "$j" "$out/demo/" ;; esac
done
cp "$root/scripts/run-demo.sh" "$out/run-demo.sh"
chmod +x "$out/run-demo.sh"
# compute-sanitizer over the CUDA suite and the demo (run-sanitizer.sh; the toolkit must be on the GPU host).
cp "$root/scripts/run-sanitizer.sh" "$out/run-sanitizer.sh"
chmod +x "$out/run-sanitizer.sh"

# The side-by-side measurements, as sources: run.sh builds the C program with the GPU host's nvcc.
mkdir -p "$out/sidebyside"
cp benchmarks/sidebyside/sidebyside.c benchmarks/sidebyside/sidebyside.py benchmarks/sidebyside/run.sh "$out/sidebyside/"
chmod +x "$out/sidebyside/run.sh"

echo "bundle: $out ($(du -sh "$out" | cut -f1))"
