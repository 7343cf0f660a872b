#!/usr/bin/python3
"""torch_latency.py -- single-thread PyTorch latency of the zoo networks that
torchvision also defines, the reference the runtime's kern_forward is
compared with (bench/README.md, section "Kernels").

    /usr/bin/python3 bench/kernels/torch_latency.py [--reps R] [--warmup W] NET...

NET is alexnet, vgg16 or resnet50 (same definitions as dse's zoo; weights=None,
torch.manual_seed(1), eval mode, no_grad, batch 1, 224x224x3, one thread).
Prints one "NET torch_ms=... min_ms=... cpu_ms=..." line per network (median
and minimum wall time, median process CPU time, of R timed runs after W
warm-up runs).
"""
import argparse
import statistics
import time

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("nets", nargs="+")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1)
    for name in args.nets:
        model = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.rand(1, 3, 224, 224) * 2 - 1
        times, cpu = [], []
        with torch.no_grad():
            for r in range(args.warmup + args.reps):
                t, c = time.perf_counter(), time.process_time()
                model(x)
                t, c = time.perf_counter() - t, time.process_time() - c
                if r >= args.warmup:
                    times.append(t)
                    cpu.append(c)
        print("%s torch_ms=%.2f min_ms=%.2f cpu_ms=%.2f (median/min wall, median CPU time of %d "
              "after %d warm-up, torch %s, %d thread)"
              % (name, statistics.median(times) * 1e3, min(times) * 1e3,
                 statistics.median(cpu) * 1e3, args.reps, args.warmup, torch.__version__,
                 torch.get_num_threads()))


if __name__ == "__main__":
    main()
