#!/usr/bin/python3
"""repredict.py DSE OUT COEFFS... -- the measurements of one run-fidelity
output folder OUT against the predictions of several coefficient files, so
that two models are judged on the very same runs (no drift between them).

For every network with OUT/NET.csv (run with PAIR=1), every mapping
OUT/NET-mapping-I.json is evaluated with `DSE eval --json` under each
coefficients file, and, as bench_fidelity does, its predicted ratio to the
single-device runs beside it (sum over devices of compute share x that
device's single-device prediction) is compared with the measured ratio
(meas_ratio).  Prints per network and coefficients file: the mean signed
error of the naive and hybrid mappings (the split bias), of the vertical
ones, the MAPE of all ratios and their Spearman correlation; the slow
launches (slow_launch or reference_slow 1) left out as bench_fidelity leaves them out.

A coefficients path may hold "{net}", replaced by each network's name
(run-fidelity SELF=1 calibrates every network on itself: OUT/local-2-{net}.json).
Network files (nets not in the zoo) are looked for as NET.json in the
folders of NETDIR (environment, default /tmp/rs)."""
import csv, json, os, subprocess, sys, statistics


def spearman(a, b):
    def ranks(v):
        o = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(o):
            j = i
            while j + 1 < len(o) and v[o[j + 1]] == v[o[i]]:
                j += 1
            for k in range(i, j + 1):
                r[o[k]] = (i + j) / 2.0
            i = j + 1
        return r
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return num / den if den else float("nan")


def evaluate(dse, net, coeffs, mapping):
    out = subprocess.run([dse, "eval", "--network", net, "--platform", "local-2", "--coeffs", coeffs,
                          "--mapping", mapping, "--json"], capture_output=True, text=True, check=True)
    j = json.loads(out.stdout)
    work = [d["compute_ms"] + d["concat_ms"] if d["used"] else 0 for d in j["devices"]]
    return j["latency_ms"], work


def main():
    dse, out, coeffs = sys.argv[1], sys.argv[2], sys.argv[3:]
    netdir = os.environ.get("NETDIR", "/tmp/rs")
    for name in ("resnestish", "skish", "resnet50", "alexnet-bvlc", "densenet121", "mobilenetv2"):
        path = "%s/%s.csv" % (out, name)
        if not os.path.exists(path):
            continue
        rows = list(csv.DictReader(open(path)))
        net = "%s/%s.json" % (netdir, name) if os.path.exists("%s/%s.json" % (netdir, name)) else name
        for cpat in coeffs:
            c = cpat.replace("{net}", name)
            pred = {}
            for r in rows:
                m = "%s/%s-mapping-%s.json" % (out, name, r["index"])
                if os.path.exists(m):
                    pred[r["index"]] = evaluate(dse, net, c, m)
            single = {}
            for r in rows:
                if r["source"].startswith("single rank") and r["index"] in pred:
                    single[int(r["source"][len("single rank"):])] = pred[r["index"]][0]
            split, vert, ape, pa, ma = [], [], [], [], []
            for r in rows:
                if r["source"].startswith("single") or r["index"] not in pred:
                    continue
                if r.get("slow_launch", "0") == "1" or r.get("reference_slow", "0") == "1" or not r.get("meas_ratio"):
                    continue
                lat, work = pred[r["index"]]
                tot = sum(work)
                if tot <= 0 or any(w > 0 and d not in single for d, w in enumerate(work)):
                    continue
                ref = sum(w / tot * single[d] for d, w in enumerate(work) if w > 0)
                pr, mr = lat / ref, float(r["meas_ratio"])
                e = pr / mr - 1
                (split if ("naive" in r["source"] or "hybrid" in r["source"]) else vert).append(e)
                ape.append(abs(e))
                pa.append(pr)
                ma.append(mr)
            print("%-13s %-40s split %+6.1f%% (n %2d)  vertical %+6.1f%% (n %2d)  MAPE %5.1f%%  Spearman %.3f"
                  % (name, os.path.basename(c), 100 * statistics.mean(split) if split else float("nan"),
                     len(split), 100 * statistics.mean(vert) if vert else float("nan"), len(vert),
                     100 * statistics.mean(ape) if ape else float("nan"), spearman(pa, ma) if pa else float("nan")))


main()
