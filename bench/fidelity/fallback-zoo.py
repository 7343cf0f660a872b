#!/usr/bin/env python3
# fallback-zoo.py -- the per-kind fallback on every zoo network (issue 16's
# goal: a network that was not calibrated, priced by the per-kind
# coefficients, within 25% on one device).  Each network's single-device
# latency predicted by `dse eval --single 0` with each coefficients file
# given, beside `dse exec --single 0 --bench 4,20` measured warm, the
# networks in turn for ROUNDS rounds (so drift slows them alike); the
# measured figure is the median of the rounds' medians.
#
# usage: fallback-zoo.py DSE PLATFORM COEFFS.json [COEFFS2.json ...]
#        env ROUNDS (default 3), NETS (default: every zoo network)
# Prints one row per network: measured ms, then per coefficients file the
# prediction, its error and its error relative to REF's (default
# alexnet-bvlc, the README job's calibration network, measured in the same
# rounds): (pred / measured) / (REF's pred / REF's measured) - 1, which
# takes out a machine that ran at another speed during calibration than
# during the rounds; and per file the worst error and how many networks
# are within 25%, both ways.
import json, os, statistics, subprocess, sys

dse, plat, coeffs = sys.argv[1], sys.argv[2], sys.argv[3:]
if not coeffs:
    sys.exit("usage: fallback-zoo.py DSE PLATFORM COEFFS.json [COEFFS2.json ...]")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
ndev = len(json.load(open(plat))["devices"]) if os.path.exists(plat) else \
    len(json.loads(subprocess.run([dse, "platform", "show", plat, "--json"], capture_output=True,
                                  text=True, check=True).stdout)["devices"])
nets = os.environ.get("NETS", "").split()
if not nets:
    out = subprocess.run([dse, "zoo", "list"], capture_output=True, text=True, check=True).stdout
    nets = [l.split()[0] for l in out.splitlines()[1:] if l.strip()]


def predict(net, c):
    out = subprocess.run([dse, "eval", "--network", net, "--platform", plat, "--coeffs", c, "--single",
                          "0", "--json"], capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out)["latency_ms"]


def measure(net):
    out = subprocess.run([dse, "mpirun", "-np", str(ndev), dse, "exec", "--network", net, "--platform",
                          plat, "--single", "0", "--bench", "4,20", "--json"], capture_output=True,
                         text=True, env=env, check=True).stdout
    return json.loads(out)["latency_ms"]["median"]


pred = {n: [predict(n, c) for c in coeffs] for n in nets}
meas = {n: [] for n in nets}
for r in range(int(os.environ.get("ROUNDS", "3"))):
    for n in nets:
        meas[n].append(measure(n))
ref = os.environ.get("REF", "alexnet-bvlc")
med = {n: statistics.median(meas[n]) for n in nets}
print("%-20s %12s" % ("network", "measured ms") +
      "".join(" %12s %8s %8s" % ("pred[%d] ms" % k, "error", "rel") for k in range(len(coeffs))))
worst, within = [[0.0, 0.0] for _ in coeffs], [[0, 0] for _ in coeffs]
for n in nets:
    row = "%-20s %12.4g" % (n, med[n])
    for k, p in enumerate(pred[n]):
        e = p / med[n] - 1
        rel = (p / med[n]) / (pred[ref][k] / med[ref]) - 1 if ref in med else float("nan")
        for j, x in enumerate((e, rel)):
            worst[k][j] = max(worst[k][j], abs(x))
            within[k][j] += abs(x) <= 0.25
        row += " %12.4g %+7.1f%% %+7.1f%%" % (p, 100 * e, 100 * rel)
    print(row)
for k, c in enumerate(coeffs):
    print("coefficients[%d] %s: worst %.1f%% (relative to %s: %.1f%%), within 25%%: %d of %d "
          "(relative: %d)" % (k, c, 100 * worst[k][0], ref, 100 * worst[k][1], within[k][0],
                               len(nets), within[k][1]))
