#!/usr/bin/env python3
# comm-share.py -- how communication-heavy the mappings run-cluster validated
# are (issue 19 asks the benchmark to span communication-light and
# communication-heavy mappings and to report the share of latency spent
# communicating).  A measured receive also holds the wait for the sender's
# compute, so the share is taken from the model instead: for each validated
# point, 1 - (its latency with free links) / (its latency), both by `dse
# eval` with the calibrated coefficients, "free links" being the same
# coefficients with every link at 1e9 MB/s and no latency or pickup.
#
# usage: comm-share.py DSE PLATFORM COEFFS CAMPAIGNS.db   (run-cluster's files)
import json, os, sqlite3, subprocess, sys, tempfile

dse, plat, coeffs, dbf = sys.argv[1:5]
tmp = tempfile.mkdtemp(prefix="dse-comm-share-")
free = json.load(open(coeffs))
for link in [free.get("links", {}).get(k) for k in ("same_board", "network")] + \
        free.get("links", {}).get("pairs", []):
    if not link: continue
    link["bandwidth_mbs"] = {"value": 1e9, "source": "assumption"}
    link["latency_us"] = {"value": 0, "source": "assumption"}
    link.pop("pickup_us", None)
    link.pop("pull_bandwidth_mbs", None)
fc = os.path.join(tmp, "free-links.json")
json.dump(free, open(fc, "w"))


def latency(net, mapping, c):
    out = subprocess.run([dse, "eval", "--network", net, "--platform", plat, "--coeffs", c, "--mapping",
                          mapping, "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["latency_ms"]


db = sqlite3.connect(dbf)
rows = db.execute("""SELECT v.campaign, c.name, v.point FROM validations v JOIN campaigns c
                     ON c.id = v.campaign WHERE v.device IS NULL AND v.status = 'ok'
                     ORDER BY v.campaign, v.point""").fetchall()
per = {}
for cid, name, point in rows:
    net = name.split("/")[0]
    d = os.path.join(tmp, "%d-%d" % (cid, point))
    subprocess.run([dse, "export", "--campaign", str(cid), "--db", dbf, "--point", str(point), "-o", d],
                   capture_output=True, check=True)
    m = os.path.join(d, "dse-mapping.json")
    lat, lat0 = latency(net, m, coeffs), latency(net, m, fc)
    per.setdefault(net, []).append(1 - lat0 / lat if lat > 0 else 0.0)
print("| network | points | communication share of latency (model: min / median / max) | "
      "points < 10% | 10-40% | > 40% |")
print("|---|---|---|---|---|---|")
for net, s in per.items():
    s.sort()
    print("| %s | %d | %.0f / %.0f / %.0f %% | %d | %d | %d |" % (
        net, len(s), 100 * s[0], 100 * s[len(s) // 2], 100 * s[-1], sum(x < 0.1 for x in s),
        sum(0.1 <= x <= 0.4 for x in s), sum(x > 0.4 for x in s)))
subprocess.run(["rm", "-rf", tmp])
