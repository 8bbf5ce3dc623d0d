# SPDX-License-Identifier: Apache-2.0
"""PyTorch's and CuPy's costs for the operations the results page sets the Java runtime beside.

    python3 sidebyside.py [SCALE]

Measures, each in nanoseconds per op as a Python caller pays it (the interpreter's loop
included, as in any Python program):

- torch.cacheHit1MiB: torch.empty(1 MiB, uint8, device='cuda') then del, a hit of PyTorch's
  caching allocator after a warm-up;
- cupy.poolHit1MiB: cupy.empty(1 MiB, uint8) then del, a hit of CuPy's default memory pool;
- torch.{h2d,d2h}{Pageable,Pinned}4KiB: Tensor.copy_ of 4 KiB between a CUDA tensor and a CPU
  tensor (pin_memory=True for pinned); copy_ without non_blocking returns when the copy is done;
- cupy.{h2d,d2h}{Pageable,Pinned}4KiB: ndarray.set from and ndarray.get(out=...) into a NumPy
  array (pinned: over cupyx.empty_pinned), each followed by a sync of the current stream, so
  each op is complete when it returns, as a blocking driver copy is.

Like sidebyside.c: ROUNDS rounds of many iterations per case, the rounds of all cases of a
library interleaved, after one untimed warm-up round; the median, least and most of the rounds.
SCALE (default 1) multiplies every iteration count. Output: one JSON object per line on standard
output, {"name", "ns", "min", "max", "rounds", "iterations", "what"}; a library that cannot be
imported, or has no CUDA device, gives one row per case it would have measured with "ns": null
and "skipped": the reason. Any other failure raises: the exit status is non-zero.
"""

import json
import statistics
import sys
import time

ROUNDS = 5
MIB = 1 << 20
SMALL = 4096


def rounds(cases):
    """Runs every case ROUNDS times, interleaved; returns one result row per case."""
    for _, _, iters, fn in cases:
        fn(iters // 10 + 1)
    per_op = {name: [] for name, _, _, _ in cases}
    for r in range(ROUNDS):
        for k in range(len(cases)):
            name, _, iters, fn = cases[(r + k) % len(cases)]
            t0 = time.perf_counter_ns()
            fn(iters)
            per_op[name].append((time.perf_counter_ns() - t0) / iters)
    rows = []
    for name, what, iters, _ in cases:
        ns = per_op[name]
        rows.append({"name": name, "ns": round(statistics.median(ns), 1), "min": round(min(ns), 1),
                     "max": round(max(ns), 1), "rounds": ROUNDS, "iterations": iters, "what": what})
    return rows


def skipped(names, why):
    return [{"name": n, "ns": None, "skipped": why} for n in names]


TORCH_NAMES = ["torch.cacheHit1MiB", "torch.h2dPageable4KiB", "torch.h2dPinned4KiB",
               "torch.d2hPageable4KiB", "torch.d2hPinned4KiB"]
CUPY_NAMES = ["cupy.poolHit1MiB", "cupy.h2dPageable4KiB", "cupy.h2dPinned4KiB",
              "cupy.d2hPageable4KiB", "cupy.d2hPinned4KiB"]


def torch_rows(scale):
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install failing while it loads
        return skipped(TORCH_NAMES, "torch not importable: %s: %s" % (type(e).__name__, e))
    if not torch.cuda.is_available():
        return skipped(TORCH_NAMES, "torch %s sees no CUDA device" % torch.__version__)
    dev = torch.device("cuda")

    def hit(n):
        for _ in range(n):
            t = torch.empty(MIB, dtype=torch.uint8, device=dev)
            del t

    d = torch.empty(SMALL, dtype=torch.uint8, device=dev)
    pageable = torch.arange(SMALL, dtype=torch.int32).to(torch.uint8)
    pinned = pageable.clone().pin_memory()
    if not pinned.is_pinned():
        raise RuntimeError("torch: pin_memory() gave memory that is not page-locked")

    def h2d(src):
        def run(n):
            for _ in range(n):
                d.copy_(src)
        return run

    def d2h(dst):
        def run(n):
            for _ in range(n):
                dst.copy_(d)
        return run

    cases = [
        ("torch.cacheHit1MiB", "torch.empty(1 MiB, uint8, cuda) + del, caching-allocator hit", 100000 * scale, hit),
        ("torch.h2dPageable4KiB", "Tensor.copy_ 4 KiB, pageable CPU tensor to CUDA", 20000 * scale, h2d(pageable)),
        ("torch.h2dPinned4KiB", "Tensor.copy_ 4 KiB, pinned CPU tensor to CUDA", 20000 * scale, h2d(pinned)),
        ("torch.d2hPageable4KiB", "Tensor.copy_ 4 KiB, CUDA to pageable CPU tensor", 20000 * scale, d2h(pageable)),
        ("torch.d2hPinned4KiB", "Tensor.copy_ 4 KiB, CUDA to pinned CPU tensor", 20000 * scale, d2h(pinned)),
    ]
    rows = [{"name": "torch.version", "info": "torch %s, CUDA %s, %s" % (
        torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))}]
    rows += rounds(cases)
    torch.cuda.synchronize()
    return rows


def cupy_rows(scale):
    try:
        import cupy
        import cupyx
        import numpy
    except Exception as e:
        return skipped(CUPY_NAMES, "cupy not importable: %s: %s" % (type(e).__name__, e))
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return skipped(CUPY_NAMES, "cupy %s sees no CUDA device: %s: %s" % (cupy.__version__, type(e).__name__, e))
    if count == 0:
        return skipped(CUPY_NAMES, "cupy %s sees no CUDA device" % cupy.__version__)

    def hit(n):
        for _ in range(n):
            a = cupy.empty(MIB, dtype=cupy.uint8)
            del a

    d = cupy.empty(SMALL, dtype=cupy.uint8)
    pageable = (numpy.arange(SMALL, dtype=numpy.int32) & 0xff).astype(numpy.uint8)
    pinned = cupyx.empty_pinned(SMALL, dtype=numpy.uint8)
    pinned[...] = pageable

    def h2d(src):
        def run(n):
            for _ in range(n):
                d.set(src)
                cupy.cuda.get_current_stream().synchronize()
        return run

    def d2h(dst):
        def run(n):
            for _ in range(n):
                d.get(out=dst)
                cupy.cuda.get_current_stream().synchronize()
        return run

    cases = [
        ("cupy.poolHit1MiB", "cupy.empty(1 MiB, uint8) + del, memory-pool hit", 100000 * scale, hit),
        ("cupy.h2dPageable4KiB", "ndarray.set 4 KiB from a NumPy array, then stream sync", 20000 * scale, h2d(pageable)),
        ("cupy.h2dPinned4KiB", "ndarray.set 4 KiB from pinned (cupyx.empty_pinned), then stream sync", 20000 * scale,
         h2d(pinned)),
        ("cupy.d2hPageable4KiB", "ndarray.get 4 KiB into a NumPy array, then stream sync", 20000 * scale, d2h(pageable)),
        ("cupy.d2hPinned4KiB", "ndarray.get 4 KiB into pinned (cupyx.empty_pinned), then stream sync", 20000 * scale,
         d2h(pinned)),
    ]
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    rows = [{"name": "cupy.version", "info": "cupy %s, CUDA runtime %d, %s" % (
        cupy.__version__, cupy.cuda.runtime.runtimeGetVersion(), name)}]
    rows += rounds(cases)
    cupy.cuda.Device().synchronize()
    return rows


def main(argv):
    scale = int(argv[1]) if len(argv) > 1 else 1
    if scale < 1:
        raise SystemExit("sidebyside.py: SCALE must be at least 1, not %d" % scale)
    print("sidebyside.py: Python %s" % sys.version.split()[0], file=sys.stderr)
    for part in (torch_rows, cupy_rows):
        print("sidebyside.py: %s" % part.__name__, file=sys.stderr)
        for row in part(scale):
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv)
