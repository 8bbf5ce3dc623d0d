#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the heat-diffusion demo from a bundle made by scripts/gpu-bundle.sh, on the module path of
# the bundle's jlinked runtime, with the CUDA backend resolved. Arguments go to the demo
# (default backend: METRALE_BACKEND, else CUDA when a driver loads, else the simulator).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/jre/bin/java" --enable-native-access=metrale.gpu.cuda --add-modules metrale.gpu.cuda \
    "-Djava.util.logging.SimpleFormatter.format=%4\$s: %5\$s%6\$s%n" \
    -p "$here/demo" -m metrale.examples/metrale.examples.HeatDemo "$@"
