#!/usr/bin/env python3
"""torch.distributed.all_reduce (NCCL backend) by size at world size 1, measured the way
metrale.bench.nccl.AllReduceBench measures: one in-place float32 sum on the current
stream, then torch.cuda.synchronize(), averaged over many iterations after a warm-up.

    python3 benchmarks/torch_allreduce.py [--iters 200]

Prints one line per size: bytes, microseconds per all-reduce, algorithm bandwidth (GB/s). At
world size 1 the bus bandwidth (algBw * 2(n-1)/n) is 0 by definition; compare times and algBw.
torch's all_reduce is in place (NCCL's sendbuff == recvbuff), AllReduceBench's out of place:
at one rank both are a device-local copy or less.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist

SIZES = [4096, 1048576, 16777216, 268435456]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    args = ap.parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.set_device(0)
    print(f"torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
          f"{torch.cuda.get_device_name(0)}, world_size {dist.get_world_size()}")
    print(f"{'bytes':>12} {'us/op':>10} {'algBw GB/s':>11}")
    for nbytes in SIZES:
        x = torch.zeros(nbytes // 4, dtype=torch.float32, device="cuda")
        for _ in range(args.warmup):
            dist.all_reduce(x, op=dist.ReduceOp.SUM)
        torch.cuda.synchronize()
        iters = args.iters if nbytes < (64 << 20) else max(20, args.iters // 10)
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x, op=dist.ReduceOp.SUM)
            torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) / iters
        print(f"{nbytes:>12} {dt * 1e6:>10.2f} {nbytes / dt / 1e9:>11.2f}")
        del x
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
