#!/usr/bin/python3
"""pull-variants.py OUT -- the pull rate's alternatives, on the calibrations
of one run-fidelity output folder (SELF=1: OUT/local-2-NET.json, the
summary OUT/calibration-NET.txt, the reports in OUT/calib.db), so that
repredict.py can judge them on the very same measurements:

  exch-local-2-NET.json  the exchanges' rate (the summary's row
                         "link same_board pull (exchanges)"), what the
                         model used before the pull runs;
  ls-local-2-NET.json    least squares over the pull runs' receives of the
                         large sizes (x >= largest / 64), as calib_fit_link;
  (local-2-NET.json      as calibrated: calib_fit_rate, Theil-Sen.)

Also writes OUT/pull-samples.json (per network, the pull runs' bytes and
seconds from the report) and prints each network's three rates."""
import json, os, re, sqlite3, sys

OUT = sys.argv[1]
samples = {}
db = sqlite3.connect(os.path.join(OUT, 'calib.db'))
for net, rep in db.execute('SELECT network, report FROM calibrations ORDER BY id'):
    name = os.path.basename(net)[:-5] if net.endswith('.json') else net
    runs = json.loads(rep).get('pull_runs', [])
    if runs:
        samples[name] = runs[0]
json.dump(samples, open(os.path.join(OUT, 'pull-samples.json'), 'w'), indent=1)
for name, run in sorted(samples.items()):
    path = os.path.join(OUT, f'local-2-{name}.json')
    c = json.load(open(path))
    now = c['links']['same_board']['pull_bandwidth_mbs']['value']
    txt = open(os.path.join(OUT, f'calibration-{name}.txt')).read()
    m = re.search(r'link same_board pull \(exchanges\)\s+pull_bandwidth_mbs\s+([0-9.e+]+)', txt)
    b, s = run['bytes'], run['seconds']
    cut = min(max(b) / 64, max(x for x in b if x < max(b)))
    big = [(x, y) for x, y in zip(b, s) if x >= cut]
    mx = sum(x for x, _ in big) / len(big)
    my = sum(y for _, y in big) / len(big)
    slope = sum((x - mx) * (y - my) for x, y in big) / sum((x - mx) ** 2 for x, _ in big)
    for tag, rate in (('exch', float(m.group(1))), ('ls', 1 / slope / 1e6)):
        c['links']['same_board']['pull_bandwidth_mbs']['value'] = rate
        json.dump(c, open(os.path.join(OUT, f'{tag}-local-2-{name}.json'), 'w'), indent=1)
    print(f'{name:14s} receives {len(b):4d}  exchanges {float(m.group(1)):8.0f} MB/s  '
          f'least squares {1 / slope / 1e6:8.0f}  as calibrated {now:8.0f}')
