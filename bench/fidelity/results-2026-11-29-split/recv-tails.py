#!/usr/bin/python3
"""recv-tails.py DSE OUT NETWORK INDEX... -- the receives of a split mapping,
measured (`dse exec --trace`, 2 ranks on local-2, --bench 4,20) beside the
model's (`dse eval --trace` with OUT/local-2-NETWORK.json): steps summed by
kind per rank, and each receive's tail -- from the later of its start and
the matching send's start on the peer to its end -- for messages over 64 KB
(OUT and NETWORK as run-fidelity SELF=1 leaves them)."""
import json, os, statistics, subprocess, sys, tempfile
D, OUT, NET, IDX = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
tag = os.path.basename(NET)[:-5] if NET.endswith(".json") else NET
tmp = tempfile.mkdtemp(prefix="dse-recv-tails-")


def events(path):
    return [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]


def kind(name):
    for k in ("send", "recv", "concat"):
        if name.startswith(k):
            return k
    return "compute"


for i in IDX:
    m = os.path.join(OUT, "%s-mapping-%s.json" % (tag, i))
    mt, pt = os.path.join(tmp, "m.json"), os.path.join(tmp, "p.json")
    subprocess.run([D, "mpirun", "-np", "2", D, "exec", "--network", NET, "--platform", "local-2",
                    "--mapping", m, "--bench", "4,20", "--trace", mt], env=env, capture_output=True, check=True)
    subprocess.run([D, "eval", "--network", NET, "--platform", "local-2", "--coeffs",
                    os.path.join(OUT, "local-2-%s.json" % tag), "--mapping", m, "--trace", pt],
                   capture_output=True, check=True)
    print("%s mapping %s" % (tag, i))
    for what, path in (("measured", mt), ("predicted", pt)):
        E = events(path)
        sums = {}
        for e in E:
            d = e["args"].get("median_us", e["dur"]) if what == "measured" else e["dur"]
            key = (e["tid"], kind(e["name"]))
            sums[key] = sums.get(key, 0) + (d or e["dur"])
        sends = {}
        for e in E:
            a = e["args"]
            if a["op"] == "send":
                sends[(e["tid"], a["peer_index"], a["layer_index"], a["c0"], a["nc"], a["h0"], a["nh"],
                       a["w0"], a["nw"])] = e
        tails, rates = [], []
        for e in E:
            a = e["args"]
            s = sends.get((a.get("peer_index"), e["tid"], a["layer_index"], a["c0"], a["nc"], a["h0"],
                           a["nh"], a["w0"], a["nw"])) if a["op"] == "recv" else None
            if s and a["bytes"] > 65536:
                tail = e["ts"] + e["dur"] - max(e["ts"], s["ts"])
                tails.append(tail)
                rates.append(a["bytes"] / max(tail, 1e-3) / 1e3)
        print("  %-9s %s" % (what, ", ".join("rank %d %s %.0f us" % (k[0], k[1], v) for k, v in sorted(sums.items()))))
        print("  %-9s receives over 64 KB: %d, tails %.0f us, median %.1f GB/s" %
              (what, len(tails), sum(tails), statistics.median(rates) if rates else 0))
subprocess.run(["rm", "-rf", tmp])
