#!/usr/bin/env python3
# data-dependence.py -- does an elementwise kernel's time depend on its data?
# Each kind runs on a 16 x 416 x 416 map (YOLOv3-tiny's first activation)
# read straight from the network input, fed two inputs with the same values:
# in random order (half negative, signs in no order: what real activations
# look like to a branch predictor) and sorted (every branch predictable).  A
# kernel that branches on the data is slower on the first; a vectorised one
# takes the same time on both.  Per kind and input, the median over ROUNDS
# rounds (the inputs alternating) of the step's time in `dse exec --single 0
# --bench 4,20 --trace` (the median inference), and the ratio.
#
# usage: data-dependence.py DSE [KIND ...]     env ROUNDS (default 5)
# Why it exists: bench/README.md, "Branches on the data" (2026-11-28).
import json, os, statistics, subprocess, sys, tempfile

import numpy as np

dse = sys.argv[1]
kinds = sys.argv[2:] or ["ReLU", "LeakyReLU", "PReLU", "ELU", "Tanh", "Clip", "HardSigmoid",
                         "HardSwish", "Sigmoid"]
rounds = int(os.environ.get("ROUNDS", "5"))
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
tmp = tempfile.mkdtemp(prefix="dse-datadep-")
shape = (16, 416, 416)
rng = np.random.default_rng(1)
x = (rng.random(np.prod(shape), dtype=np.float32) * 8 - 4).astype(np.float32)  # reach every clamp
inputs = {"random": x, "sorted": np.sort(x)}
for name, v in inputs.items():
    v.tofile(os.path.join(tmp, name + ".f32"))
extra = {"Clip": {"min": -0.5, "max": 0.5}}


def step_us(net, inp):
    tr = os.path.join(tmp, "t.json")
    subprocess.run([dse, "mpirun", "-np", "2", dse, "exec", "--network", net, "--platform", "local-2",
                    "--single", "0", "--bench", "4,20", "--input", inp, "--trace", tr],
                   check=True, capture_output=True, env=env)
    ev = [e for e in json.load(open(tr))["traceEvents"] if e.get("ph") == "X" and e["name"] == "a"]
    return ev[0]["dur"]


print("%-12s %12s %12s %8s" % ("kind", "random us", "sorted us", "ratio"))
for k in kinds:
    layer = dict({"name": "a", "kind": k, "inputs": ["x"]}, **extra.get(k, {}))
    net = os.path.join(tmp, k + ".json")
    json.dump({"format": "dse-network", "version": 1, "name": "dd", "input": {"name": "x", "shape": list(shape)},
               "layers": [layer]}, open(net, "w"))
    t = {n: [] for n in inputs}
    for r in range(rounds):
        for n in inputs:
            t[n].append(step_us(net, os.path.join(tmp, n + ".f32")))
    a, b = statistics.median(t["random"]), statistics.median(t["sorted"])
    print("%-12s %12.0f %12.0f %8.2f" % (k, a, b, a / b))
subprocess.run(["rm", "-rf", tmp])
