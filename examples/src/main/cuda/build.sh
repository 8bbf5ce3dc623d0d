#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the demo's PTX resource from heat.cu. Needs nvcc (CUDA 12 or later).
# compute_90 PTX is JIT-compiled by the driver for the GPU it runs on (Hopper and later). nvcc 13
# writes PTX ISA 9.0, which needs a CUDA 13 driver (R580+); an older driver says UNSUPPORTED_PTX_VERSION.
# -fmad=false keeps the float arithmetic identical to the Java reference. -lineinfo writes the .loc
# lines a fault on the simulator (and a profiler or sanitizer on the GPU) names as heat.cu:LINE; the
# .file directive keeps the file's name only, not this machine's folder.
set -euo pipefail
cd "$(dirname "$0")"
out=../resources/metrale/examples/heat.ptx
nvcc -ptx -arch=compute_90 -fmad=false -lineinfo -o "$out" heat.cu
sed -i -E 's|^(\s*\.file\s+[0-9]+\s+")[^"]*/([^"/]+")|\1\2|' "$out"
echo "wrote $(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
nvcc -ptx -arch=compute_90 -fmad=false -lineinfo -o ../resources/metrale/examples/dataparallel.ptx dataparallel.cu
sed -i -E 's|^(\s*\.file\s+[0-9]+\s+")[^"]*/([^"/]+")|\1\2|' ../resources/metrale/examples/dataparallel.ptx
echo "wrote dataparallel.ptx"
