#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the consumer example's PTX resource from pipeline.cu. Needs nvcc (CUDA 12 or later);
# compute_90 PTX is JIT-compiled by the driver for the GPU it runs on.
set -euo pipefail
cd "$(dirname "$0")"
out=../resources/com/example/pipeline/pipeline.ptx
nvcc -ptx -arch=compute_90 -fmad=false -o "$out" pipeline.cu
echo "wrote $(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
