#!/usr/bin/python3
"""torch_latency.py -- single-thread PyTorch latency of the zoo networks that
torchvision also defines, the reference the runtime's kern_forward is
compared with (bench/README.md, section "Kernels").

    /usr/bin/python3 bench/kernels/torch_latency.py [--reps R] [--warmup W] NET...

NET is alexnet, vgg16 or resnet50 (same definitions as dse's zoo; weights=None,
torch.manual_seed(1), eval mode, no_grad, batch 1, 224x224x3, one thread).
Prints one "NET torch_ms=... min_ms=... cpu_ms=..." line per network (median
and minimum wall time, median process CPU time, of R timed runs after W
warm-up runs).  With --layers, R more runs with a timer around every leaf
module then give the mean time per kind of operation (Conv2d by kernel and
stride), to set beside `bench_kernels forward NET --layers` (the hooks add
a little time of their own).
"""
import collections
import argparse
import statistics
import time

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--layers", action="store_true")
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
        if args.layers:
            by_kind(model, x, args.reps)


def kind(mod):
    if isinstance(mod, torch.nn.Conv2d):
        return "Conv2d %dx%d/s%d" % (mod.kernel_size[0], mod.kernel_size[1], mod.stride[0])
    return type(mod).__name__


def by_kind(model, x, reps):
    """Mean time per kind of leaf module over reps runs (timed by hooks)."""
    spent, start = collections.defaultdict(float), {}
    leaves = [m for m in model.modules() if not list(m.children())]
    for m in leaves:
        m.register_forward_pre_hook(lambda m, i: start.__setitem__(m, time.perf_counter()))
        m.register_forward_hook(
            lambda m, i, o: spent.__setitem__(kind(m), spent[kind(m)] + time.perf_counter() - start[m]))
    with torch.no_grad():
        model(x)
        spent.clear()
        for _ in range(reps):
            model(x)
    for k, v in sorted(spent.items(), key=lambda kv: -kv[1]):
        print("  %-16s %8.2f ms" % (k, v / reps * 1e3))


if __name__ == "__main__":
    main()
