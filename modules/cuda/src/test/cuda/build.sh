#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the test PTX from the CUDA C sources beside this script.
# PTX for compute_90 (Hopper) JIT-compiles on sm_90 and newer devices.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../resources/ptx"
mkdir -p "$out"
for cu in "$here"/*.cu; do
    name="$(basename "$cu" .cu)"
    nvcc -ptx -arch=compute_90 -o "$out/$name.ptx" "$cu"
    echo "wrote $out/$name.ptx"
done
