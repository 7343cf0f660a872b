#!/usr/bin/python3
"""tails-crit.py MEASURED.json PREDICTED.json -- two traces of one mapping
(`dse exec --trace`, `dse eval --trace`): each receive's tail (from the later
of its start and the matching send's start to its end), summed for
receivers that were there before the send (early) and after it (late), a
line fitted to the early ones (tail = a + bytes / rate), and the critical
path of each trace from the output device's last step back, summed by what
it spends (compute, concat, tails, sends, receives already complete,
gaps between steps)."""
import json, sys
import numpy as np


def load(f):
    E = [e for e in json.load(open(f))["traceEvents"] if e.get("ph") == "X"]
    return E, json.load(open(f))["otherData"]


def key(e, send):
    a = e["args"]
    return ((e["tid"], a["peer_index"]) if send else (a["peer_index"], e["tid"])) + tuple(
        a[k] for k in ("layer_index", "c0", "nc", "h0", "nh", "w0", "nw"))


def tails(E):
    sends = {key(e, 1): e for e in E if e["args"]["op"] == "send"}
    out = []
    for e in E:
        if e["args"]["op"] != "recv":
            continue
        s = sends[key(e, 0)]
        out.append((e["args"]["bytes"], e["ts"] + e["dur"] - max(e["ts"], s["ts"]), e["ts"] < s["ts"]))
    return out


def critical(E, other):
    by = {}
    for e in E:
        by.setdefault(e["tid"], []).append(e)
    for t in by:
        by[t].sort(key=lambda e: e["ts"])
    pos = {}
    for t in by:
        for i, e in enumerate(by[t]):
            if e["args"]["op"] == "send":
                pos[key(e, 1)] = (t, i)
    r = other["devices"].index(other["output_device"])
    i = len(by[r]) - 1
    acc = dict(compute=0, concat=0, tail=0, send=0, gap=0, complete=0)
    while i >= 0:
        e = by[r][i]
        op = e["args"]["op"]
        if op == "recv":
            t, j = pos[key(e, 0)]
            if by[t][j]["ts"] > e["ts"]:
                acc["tail"] += e["ts"] + e["dur"] - by[t][j]["ts"]
                r, i = t, j
                continue
            acc["complete"] += e["dur"]
        else:
            acc[op] += e["dur"]
        if i > 0:
            acc["gap"] += e["ts"] - (by[r][i - 1]["ts"] + by[r][i - 1]["dur"])
        i -= 1
    return acc


for f in sys.argv[1:3]:
    E, other = load(f)
    T = tails(E)
    for early in (True, False):
        x = np.array([b for b, t, e in T if e == early], float)
        y = np.array([t for b, t, e in T if e == early])
        line = ""
        if len(x) >= 3:
            c = np.linalg.lstsq(np.vstack([np.ones(len(x)), x]).T, y, rcond=None)[0]
            line = ", fit %.1f us + bytes at %.2f GB/s" % (c[0], 1e-3 / c[1])
        print("%s: %s receives %d, tails %.0f us%s" % (f, "early" if early else "late", len(x), y.sum(), line))
    acc = critical(E, other)
    print("%s: critical path %.0f us: %s" % (f, sum(acc.values()), ", ".join("%s %.0f" % kv for kv in acc.items())))
